//! A failing live run becomes a deterministic regression: the scenario it played (for display,
//! its recorded delivery as the replay scenario of [`super::delivery`]; for runs,
//! [`super::runs::regression::replay_scenario`]) written as a scenario file under a name that
//! says the seed and the finding, then played by the simulation with the run's planted bug to
//! say whether the simulation reproduces it. One function of each for both workloads.

use super::outcome::LiveOutcome;
use crate::display::DisplayWorkload;
use crate::outcome::Violation;
use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use crate::workload::{AnyScenario, StoreKind, WorldConfig};
use history::Planted;
use std::path::{Path, PathBuf};

/// What a failing live run writes as its scenario file.
pub struct LiveScenario<'a> {
    /// The file's name without `.toml`, before `-{ID}` (`live-seed-3`).
    pub name: String,
    pub violations: &'a [Violation],
    /// What the title says the run was (`live run of seed 3`).
    pub what: String,
    pub description: &'static str,
    /// The command that ran it.
    pub origin: String,
    pub scenario: AnyScenario,
}

/// Writes `live`'s scenario file into `dir`, named after its first finding; its path.
pub fn write(live: LiveScenario<'_>, dir: &Path) -> Result<PathBuf, String> {
    let first = live.violations.first().ok_or("the run did not fail")?;
    let file = ScenarioFile {
        format: SCENARIO_FORMAT,
        id: first.id,
        // The finding's first clause: the message lists every place it was seen.
        title: format!(
            "{}: {}",
            live.what,
            first.message.split("; ").next().unwrap_or_default()
        ),
        description: live.description.into(),
        origin: Some(live.origin),
        system: None,
        found_in: None,
        scenario: live.scenario,
    };
    let text = file.to_toml()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{}-{}.toml", live.name, first.id));
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The catalog IDs the simulation finds playing the file at `path` with `planted`, on the
/// live run's store.
pub fn replay_in_simulation(
    path: &Path,
    store: StoreKind,
    planted: Planted,
) -> Result<Vec<String>, String> {
    let file = ScenarioFile::load(path).map_err(|e| e.to_string())?;
    let run = file.scenario.play(&WorldConfig::new(store, planted));
    if let Some(failure) = run.failure {
        return Err(format!("the simulated world broke: {failure}"));
    }
    Ok(run.violations.iter().map(|v| v.id.to_string()).collect())
}

/// A failing display run's file: its recorded delivery as disconnect, duplicate and delay
/// faults.
pub fn display_scenario(o: &LiveOutcome) -> LiveScenario<'_> {
    let planted = (o.setup.planted.active()).map_or(String::new(), |p| format!(" --planted {p}"));
    LiveScenario {
        name: format!("live-seed-{}", o.setup.seed),
        violations: &o.violations,
        what: format!("live run of seed {}", o.setup.seed),
        description: "The delivery a live run recorded (nats-server, replica processes, one \
                      shared SQLite file): which replica's persister received which event, as \
                      disconnect, duplicate and delay faults. Kills, pauses and server restarts \
                      show only through the deliveries they cost.",
        origin: format!(
            "histsim live --seed {} --replicas {}{planted}",
            o.setup.seed, o.setup.scenario.replicas
        ),
        scenario: AnyScenario::new::<DisplayWorkload>(o.expectation.replay.clone()),
    }
}
