//! `histsim bugs`: proof that every invariant can fire.
//!
//! For each planted bug, a campaign with that bug on runs seeds from 0 (or `--first-seed`) until
//! the first violation;
//! the bug counts as detected only when the invariant that fired first is the bug's own ID. A
//! clean campaign over the same workloads must find nothing.

use crate::campaign::{run_campaign, CampaignConfig};
use crate::registry;
use crate::run::RunConfig;
use history::BugId;
use serde::Serialize;
use std::time::Instant;

#[derive(Clone, Debug, Serialize)]
pub struct Detection {
    pub id: BugId,
    /// The workload whose checkers cover the ID.
    pub workload: &'static str,
    /// Seeds run until the first violation (the failing seed included), counted from the first
    /// seed of the hunt; `None`: not found.
    pub seeds_to_detection: Option<u64>,
    pub first_seed: Option<u64>,
    pub seconds: f64,
    /// The ID of the invariant that fired first.
    pub fired: Option<BugId>,
    pub message: Option<String>,
}

impl Detection {
    pub fn detected(&self) -> bool {
        self.fired == Some(self.id)
    }
}

/// Every planted bug a workload of this build covers.
pub fn planted_ids() -> Vec<BugId> {
    BugId::ALL
        .iter()
        .copied()
        .filter(|id| registry::covering(*id).is_some())
        .collect()
}

/// Whether `id`'s planted switch lives in the system under test when its workload plays through
/// `--sut` (it crosses in `open`'s `planted`, and only a system that declares `planted` in
/// `hello` turns it on). Every display bug does: the whole display system (stores, persister,
/// projector, replicas) is the system. Of the runs bugs, those of the run-event store do (R3's
/// reads that write and R5's legacy writer included); the rest live in histsim's runs world
/// around the store (the run journal R4, the views R1 R2 R7 R10, the mapper R6 R8,
/// summarization R11 R20, feedback R21 R22, the API's thread deletion R27) and are planted
/// there whatever the system.
pub(crate) fn switch_in_system(id: BugId) -> bool {
    use BugId::*;
    let histsims_side = [R1, R2, R4, R6, R7, R8, R10, R11, R20, R21, R22, R27];
    !histsims_side.contains(&id)
}

/// Runs seeds `first_seed..first_seed + max_seeds` with `id` planted until the first violation.
/// Another `first_seed` is another sample of the seeds a bug takes, for expected-time figures
/// (fuzz/detection_table.sh); from 0 it is the one every closing note compares.
pub fn hunt(
    id: BugId,
    base: &RunConfig,
    first_seed: u64,
    max_seeds: u64,
    jobs: usize,
) -> Detection {
    let start = Instant::now();
    let mut run = base.clone();
    run.planted = Some(id);
    let result = run_campaign(&CampaignConfig {
        seeds: first_seed..first_seed.saturating_add(max_seeds),
        shard: None,
        jobs,
        stop_at_first: true,
        progress: false,
        budget: None,
        run,
    });
    let first = result.failures.first();
    Detection {
        id,
        workload: registry::covering(id).map_or("none", |w| w.name()),
        seeds_to_detection: first.map(|f| f.seed - first_seed + 1),
        first_seed: first.map(|f| f.seed),
        seconds: start.elapsed().as_secs_f64(),
        fired: first.and_then(|f| f.first_violation().map(|v| v.id)),
        message: first.map(|f| match (f.first_violation(), &f.failure) {
            (Some(v), _) => v.message.clone(),
            (None, Some(e)) => format!("world failure: {e}"),
            (None, None) => String::new(),
        }),
    }
}
