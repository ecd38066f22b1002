//! A failing live run becomes a deterministic regression: its recorded delivery (the replay
//! scenario of [`super::delivery`]) written as a scenario file, then played by the simulation
//! to say whether the simulation reproduces the finding.

use super::outcome::LiveOutcome;
use crate::display::DisplayWorkload;
use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use crate::workload::{AnyScenario, StoreKind, WorldConfig};
use std::path::{Path, PathBuf};

/// Writes the failing run's scenario file into `dir`; its path.
pub fn write(o: &LiveOutcome, dir: &Path) -> Result<PathBuf, String> {
    let first = o.violations.first().ok_or("the run did not fail")?;
    let planted = o
        .setup
        .planted
        .active()
        .map_or(String::new(), |p| format!(" with --planted {p}"));
    let file = ScenarioFile {
        format: SCENARIO_FORMAT,
        id: first.id,
        title: format!("live run of seed {}: {}", o.setup.seed, first.message),
        description: "The delivery a live run recorded (nats-server, replica processes, one \
                      shared SQLite file): which replica's persister received which event, as \
                      disconnect, duplicate and delay faults. Kills, pauses and server restarts \
                      show only through the deliveries they cost."
            .into(),
        origin: Some(format!(
            "histsim live --seed {} --replicas {}{planted}",
            o.setup.seed, o.setup.scenario.replicas
        )),
        system: None,
        found_in: None,
        scenario: AnyScenario::new::<DisplayWorkload>(o.expectation.replay.clone()),
    };
    let text = file.to_toml()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("live-seed-{}-{}.toml", o.setup.seed, first.id));
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The catalog IDs the simulation finds playing the file at `path` with the run's planted bug
/// (on the SQLite store, as the live run's).
pub fn replay_in_simulation(path: &Path, o: &LiveOutcome) -> Result<Vec<String>, String> {
    let file = ScenarioFile::load(path).map_err(|e| e.to_string())?;
    let world = WorldConfig::new(StoreKind::Sqlite, o.setup.planted);
    let run = file.scenario.play(&world);
    if let Some(failure) = run.failure {
        return Err(format!("the simulated world broke: {failure}"));
    }
    Ok(run.violations.iter().map(|v| v.id.to_string()).collect())
}
