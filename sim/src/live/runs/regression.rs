//! A failing live runs run becomes a runs scenario file: the cut scenario with each run a
//! SIGKILL stopped written as the scenario's own stop of that kind (`stop = kill` after the
//! messages it had emitted: the worker process dies, the journal's buffer with it), and each
//! run that never started (its worker was down at the dispatch) taken out of the client's ops;
//! played by the simulation with the run's planted bug.

use super::line::WorkerLine;
use super::outcome::RunsOutcome;
use crate::runs::record::TruthEvent;
use crate::runs::scenario::{Op, RunsScenario, Stop};
use crate::runs::RunsWorkload;
use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use crate::workload::{AnyScenario, StoreKind, WorldConfig};
use model::runs::RunOutcome;
use std::path::{Path, PathBuf};

/// The live run as a runs scenario: kills as `stop = kill`, runs never started left out.
pub fn replay_scenario(o: &RunsOutcome) -> RunsScenario {
    let mut scenario = o.setup.live.scenario.clone();
    let record = &o.mapped.record;
    for (_, run, event) in record.log.truth() {
        if *event != TruthEvent::Stop(RunOutcome::Killed) {
            continue;
        }
        let messages = (o.recording.lines.iter())
            .filter(|(_, l)| matches!(l, WorkerLine::Emit { run: r, emission: Some(_), .. } if r == run))
            .count();
        scenario.runs[*run].stop = Stop::Kill {
            after: messages as u32,
        };
    }
    let never: Vec<String> = (0..scenario.runs.len())
        .filter(|r| o.recording.started_on(*r).is_none())
        .map(|r| scenario.runs[r].id.clone())
        .collect();
    scenario.ops.retain(|op| match op {
        Op::Start { run } | Op::Wait { run } => !never.contains(run),
        _ => true,
    });
    scenario
}

/// Writes the failing run's scenario file into `dir`; its path.
pub fn write(o: &RunsOutcome, dir: &Path) -> Result<PathBuf, String> {
    let first = o.violations.first().ok_or("the run did not fail")?;
    let scenario = replay_scenario(o);
    scenario.validate()?;
    let planted = (o.setup.planted.active()).map_or(String::new(), |p| format!(" --planted {p}"));
    let file = ScenarioFile {
        format: SCENARIO_FORMAT,
        id: first.id,
        // The finding's first clause: the message lists every place it was seen.
        title: format!(
            "live runs run of seed {}: {}",
            o.setup.seed,
            first.message.split("; ").next().unwrap_or_default()
        ),
        description: "A live runs run (worker processes writing one shared SQLite file) as the \
                      runs scenario it played: each run a SIGKILL stopped as a kill after the \
                      messages it had emitted, runs that never started left out. Pauses, the \
                      interleaving of the processes' writes and when each read landed are not \
                      in the file."
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
