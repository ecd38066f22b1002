//! The live runs scenario: the runs workload's generator makes the seed's scenario (runs, their
//! scripts, the client's ops), and what live mode does not play is taken out of it, counted by
//! name for the report (never a silent pass): the client's ops other than dispatching, waiting,
//! sleeping and reading the views; the simulated faults (failing batch writes, worker crashes,
//! crashes of the store's host), which the live fault plan's real kills and pauses replace;
//! summarization (its checkpoint is the world's shared state, one process's here); the seed's
//! JSONL store when the live store is SQLite.

use crate::registry;
use crate::rng::SeedRng;
use crate::runs::scenario::{Op, RunsScenario};
use crate::runs::RunsWorkload;
use crate::workload::{OptionOverrides, StoreKind};
use std::collections::BTreeMap;

/// The seed's scenario as live mode plays it, and what was taken out of it (name: how many).
#[derive(Clone, Debug)]
pub struct LiveRunsScenario {
    pub scenario: RunsScenario,
    pub left_out: BTreeMap<String, u64>,
    /// The cut scenario with the generator's simulated faults kept (failing batch writes,
    /// worker crashes, crashes of the store's host): what `--compare-sim` plays in the
    /// simulation beside the live run's real kills and pauses.
    pub simulated: RunsScenario,
}

/// The runs workload's scenario of `seed`, with `workers` workers (runs keep their worker
/// modulo `workers`), cut to what live mode plays on the shared store `store`.
pub fn of_seed(seed: u64, workers: u8, store: StoreKind) -> Result<LiveRunsScenario, String> {
    let workload = registry::by_name("runs").ok_or("no runs workload")?;
    let any = workload.scenario_of(SeedRng::new(seed), &OptionOverrides::default());
    let scenario = any
        .get::<RunsWorkload>()
        .cloned()
        .ok_or("the runs workload made another workload's scenario")?;
    Ok(cut(scenario, workers, store))
}

/// Whether live mode plays this op of the client's.
fn plays(op: &Op) -> bool {
    super::client_reads::is_read(op)
        || matches!(
            op,
            Op::Start { .. }
                | Op::Wait { .. }
                | Op::Sleep { .. }
                | Op::Views { .. }
                | Op::Receipt { .. }
        )
}

fn op_name(op: &Op) -> String {
    let value = serde_json::to_value(op).unwrap_or_default();
    let name = value.get("op").and_then(|v| v.as_str()).unwrap_or("?");
    format!("op {name}")
}

/// `scenario` without what live mode does not play; on the JSONL store the scenario says so
/// (its simulation plays that store too).
pub fn cut(mut scenario: RunsScenario, workers: u8, store: StoreKind) -> LiveRunsScenario {
    let mut left_out: BTreeMap<String, u64> = BTreeMap::new();
    let mut count = |name: &str, n: usize| {
        if n > 0 {
            *left_out.entry(name.to_string()).or_default() += n as u64;
        }
    };
    for op in scenario.ops.iter().filter(|op| !plays(op)) {
        count(&op_name(op), 1);
    }
    scenario.ops.retain(plays);
    let faults = (
        scenario.failing_write_calls.clone(),
        scenario.crashes.clone(),
        scenario.store_crashes.clone(),
    );
    count(
        "failing batch write (simulated)",
        scenario.failing_write_calls.len(),
    );
    scenario.failing_write_calls.clear();
    count(
        "worker crash (simulated; live kills replace it)",
        scenario.crashes.len(),
    );
    scenario.crashes.clear();
    count("store host crash (simulated)", scenario.store_crashes.len());
    scenario.store_crashes.clear();
    let jsonl = store == StoreKind::Jsonl;
    count(
        "JSONL store (the live store is SQLite)",
        usize::from(scenario.jsonl_store && !jsonl),
    );
    scenario.jsonl_store = jsonl;
    let summarized = scenario
        .runs
        .iter()
        .filter(|r| r.summarize.is_some())
        .count();
    count("summarization of a run's checkpoint", summarized);
    count(
        "table read at the end (simulated)",
        scenario.table_reads.len(),
    );
    scenario.table_reads.clear();
    scenario.workers = workers.max(1);
    for run in &mut scenario.runs {
        run.summarize = None;
        run.worker %= scenario.workers;
    }
    debug_assert!(scenario.validate().is_ok(), "{:?}", scenario.validate());
    let mut simulated = scenario.clone();
    simulated.failing_write_calls = faults.0;
    simulated.crashes = (faults.1.into_iter())
        .filter(|c| c.worker < simulated.workers)
        .collect();
    simulated.store_crashes = faults.2;
    if simulated.validate().is_err() {
        simulated = scenario.clone();
    }
    LiveRunsScenario {
        scenario,
        left_out,
        simulated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_is_cut_to_what_live_mode_plays_and_the_rest_is_counted() {
        let live = of_seed(3, 2, StoreKind::Sqlite).unwrap();
        assert!(live.scenario.ops.iter().all(plays));
        assert!(live
            .scenario
            .runs
            .iter()
            .all(|r| r.worker < 2 && r.summarize.is_none()));
        assert!(live.scenario.crashes.is_empty() && live.scenario.store_crashes.is_empty());
        assert_eq!(live.scenario.validate(), Ok(()));
        let whole = of_seed(3, 2, StoreKind::Sqlite).unwrap();
        assert_eq!(whole.left_out, live.left_out, "a seed gives one cut");
    }
}
