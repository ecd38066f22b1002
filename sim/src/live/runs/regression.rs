//! A failing live runs run becomes a runs scenario file: the cut scenario with each run a
//! SIGKILL stopped written as the scenario's own stop of that kind (`stop = kill` after the
//! messages it had emitted: the worker process dies, the journal's buffer with it), and each
//! run that never started (its worker was down at the dispatch) taken out of the client's ops;
//! written and played by [`crate::live::regression`] with the run's planted bug.

use super::line::WorkerLine;
use super::outcome::RunsOutcome;
use crate::live::regression::LiveScenario;
use crate::runs::record::TruthEvent;
use crate::runs::scenario::{Op, RunsScenario, Stop};
use crate::runs::RunsWorkload;
use crate::workload::AnyScenario;
use model::runs::RunOutcome;

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
        Op::Start { run } | Op::Wait { run } | Op::Receipt { run, .. } => !never.contains(run),
        _ => true,
    });
    scenario
}

/// A failing runs run's file: the scenario it played, its kills as the scenario's own.
pub fn runs_scenario(o: &RunsOutcome) -> LiveScenario<'_> {
    let planted = (o.setup.planted.active()).map_or(String::new(), |p| format!(" --planted {p}"));
    LiveScenario {
        name: format!("live-runs-seed-{}", o.setup.seed),
        violations: &o.violations,
        what: format!("live runs run of seed {}", o.setup.seed),
        description: "A live runs run (worker processes writing one shared store) as the runs \
                      scenario it played: each run a SIGKILL stopped as a kill after the \
                      messages it had emitted, runs that never started left out. Pauses, the \
                      interleaving of the processes' writes and when each read landed are not \
                      in the file.",
        origin: format!(
            "histsim live --workload runs --store {} --seed {} --workers {}{planted}",
            o.setup.store_kind.as_str(),
            o.setup.seed,
            o.setup.workers
        ),
        scenario: AnyScenario::new::<RunsWorkload>(replay_scenario(o)),
    }
}
