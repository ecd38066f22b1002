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
