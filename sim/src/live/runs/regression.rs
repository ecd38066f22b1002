//! A failing live runs run becomes a runs scenario file: the cut scenario with each SIGKILL of a
//! worker as a worker crash (`crashes`, at the kill's wall time and down for the restart's,
//! both in scenario milliseconds), played by the simulation with the run's planted bug.

use super::outcome::RunsOutcome;
use crate::runs::scenario::{Crash, CRASH_AT_MS_MAX};
use crate::runs::RunsWorkload;
use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use crate::workload::{AnyScenario, StoreKind, WorldConfig};
use std::path::{Path, PathBuf};

/// The run's kills as the scenario's worker crashes.
pub fn crashes(o: &RunsOutcome) -> Vec<Crash> {
    let rec = &o.recording;
    let ms = |us: u64| ((us as f64 / rec.us_per_ms.max(1.0)) as u64).clamp(1, u64::from(CRASH_AT_MS_MAX)) as u32;
    (rec.kills.iter())
        .map(|(proc, at)| {
            // The restart is when the fault healed (its worker ready again).
            let healed = (rec.faults.iter())
                .find(|f| f.from_us <= *at && *at <= f.healed_us)
                .map_or(*at, |f| f.healed_us);
            Crash {
                worker: proc.worker,
                at_ms: ms(at.saturating_sub(rec.started_us)),
                down_ms: ms(healed.saturating_sub(*at)),
            }
        })
        .collect()
}

/// Writes the failing run's scenario file into `dir`; its path.
pub fn write(o: &RunsOutcome, dir: &Path) -> Result<PathBuf, String> {
    let first = o.violations.first().ok_or("the run did not fail")?;
    let mut scenario = o.setup.live.scenario.clone();
    scenario.crashes = crashes(o);
    scenario.validate()?;
    let planted = (o.setup.planted.active()).map_or(String::new(), |p| format!(" --planted {p}"));
    let file = ScenarioFile {
        format: SCENARIO_FORMAT,
        id: first.id,
        title: format!("live runs run of seed {}: {}", o.setup.seed, first.message),
        description: "A live runs run (worker processes writing one shared SQLite file) as the \
                      runs scenario it played, each SIGKILL of a worker as a worker crash at its \
                      time in scenario milliseconds. Pauses, the interleaving of the processes' \
                      writes and when each read landed are not in the file."
            .into(),
        origin: Some(format!(
            "histsim live --workload runs --seed {} --workers {}{planted}",
            o.setup.seed, o.setup.workers
        )),
        system: None,
        found_in: None,
        scenario: AnyScenario::new::<RunsWorkload>(scenario),
    };
    let text = file.to_toml()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("live-runs-seed-{}-{}.toml", o.setup.seed, first.id));
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The catalog IDs the simulation finds playing the file at `path` with the run's planted bug.
pub fn replay_in_simulation(path: &Path, o: &RunsOutcome) -> Result<Vec<String>, String> {
    let file = ScenarioFile::load(path).map_err(|e| e.to_string())?;
    let world = WorldConfig::new(StoreKind::Sqlite, o.setup.planted);
    let run = file.scenario.play(&world);
    if let Some(failure) = run.failure {
        return Err(format!("the simulated world broke: {failure}"));
    }
    Ok(run.violations.iter().map(|v| v.id.to_string()).collect())
}
