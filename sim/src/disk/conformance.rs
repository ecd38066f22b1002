//! One test body, three storages: the real filesystem (a temp dir), memory and the simulated
//! disk. Random mutation sequences must fold to what the model says, reopen to the same history,
//! and read incrementally to the same statistics, whatever the storage.

use std::sync::Arc;

use history::journal::{
    FsStorage, Journal, JournalOptions, JournalReader, MemStorage, Origin, Row, SharedStorage,
    Speaker,
};
use model::journal::ModelHistory;
use proptest::prelude::*;

use super::{SimDisk, SimDiskOptions};
use crate::journal::crash::{describe, model_view, next_op, WorkloadOp};

#[derive(Clone, Debug)]
enum Step {
    /// The `n`th operation of the crash workload's cycle, with a random origin.
    Op { cycle: usize, subagent: bool },
    /// A replacement abandoned: dropped (unterminated) or aborted.
    AbandonedReplace { abort: bool },
    /// Drop the writer and open the journal again.
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0usize..8, any::<bool>()).prop_map(|(cycle, subagent)| Step::Op { cycle, subagent }),
        1 => any::<bool>().prop_map(|abort| Step::AbandonedReplace { abort }),
        1 => Just(Step::Reopen),
    ]
}

/// The shared body: runs `steps` on `storage` and compares with the model after each.
fn check_steps(storage: SharedStorage, steps: &[Step]) -> Result<(), TestCaseError> {
    let opts = JournalOptions::default();
    let name = "conformance.journal";
    let mut j = Journal::create(storage.clone(), name, opts.clone(), None)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut reader = JournalReader::new(storage.clone(), name, opts.clone());
    let mut model: ModelHistory<Row> = ModelHistory::new();
    for (i, s) in steps.iter().enumerate() {
        match s {
            Step::Op { cycle, subagent } => {
                let origin = if *subagent {
                    Origin::Subagent("helper".into())
                } else {
                    Origin::Main
                };
                let op: WorkloadOp = next_op(*cycle, &model, &origin);
                op.run(&mut j, &origin)
                    .map_err(|e| TestCaseError::fail(format!("step {i} {s:?}: {e}")))?;
                model = model
                    .apply(&op.model_op())
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            Step::AbandonedReplace { abort } => {
                let mut g = j
                    .begin_replace(Origin::Main)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                g.push_rows(vec![Row::text(Speaker::Ai, Origin::Main, "never seen")])
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                if *abort {
                    g.abort().map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
            }
            Step::Reopen => {
                drop(j);
                j = history::journal::resume_journal(storage.clone(), name, opts.clone())
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
        }
        let shown = model_view(j.fold());
        prop_assert_eq!(&shown, &model, "step {} {:?}: {}", i, s, describe(&shown));
        let stats = reader
            .statistics()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(stats, j.fold().statistics());
    }
    let reopened =
        Journal::open(storage, name, opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(model_view(reopened.fold()), model);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_same_history_on_every_storage(steps in proptest::collection::vec(step(), 1..24)) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let fs = FsStorage::new(dir.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_steps(Arc::new(fs), &steps)?;
        check_steps(Arc::new(MemStorage::new()), &steps)?;
        check_steps(Arc::new(SimDisk::new(SimDiskOptions::default())), &steps)?;
    }
}
