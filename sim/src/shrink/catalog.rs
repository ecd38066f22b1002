//! Every planted bug's first failing seed shrunk in process: the figures `histsim shrink
//! --every-planted` prints, one line a catalog ID, for the table of docs/usage.md.

use super::{shrink_failure, Budget, Shrunk};
use crate::bugs::{hunt, planted_ids};
use crate::run::{scenario_of, RunConfig};
use history::BugId;

/// One planted bug's shrink: the seed its hunt found first, and the shrink of that seed.
pub struct CatalogShrink {
    pub id: BugId,
    pub workload: &'static str,
    pub seed: Option<u64>,
    /// The ID that fired first on `seed` (another than `id`: not shrunk).
    pub fired: Option<BugId>,
    pub shrunk: Option<Shrunk>,
}

impl CatalogShrink {
    /// One line of the table [`header`] heads.
    pub fn line(&self) -> String {
        let seed = self.seed.map_or("-".into(), |s| s.to_string());
        match &self.shrunk {
            Some(s) => format!(
                "{:<5} {:<8} {:>6} {:>6} {:>5} {:>6} {:>6} {:>8.1}{}",
                self.id.as_str(),
                self.workload,
                seed,
                s.steps_before,
                s.steps,
                s.faults,
                s.attempts,
                s.elapsed.as_secs_f64(),
                if s.capped { "  cap reached" } else { "" }
            ),
            None => format!(
                "{:<5} {:<8} {:>6}  not shrunk: {}",
                self.id.as_str(),
                self.workload,
                seed,
                match self.fired {
                    Some(other) => format!("{other} fired first"),
                    None => "no failing seed found".into(),
                }
            ),
        }
    }
}

/// The head of the table of [`CatalogShrink::line`]s.
pub fn header() -> String {
    format!(
        "{:<5} {:<8} {:>6} {:>6} {:>5} {:>6} {:>6} {:>8}",
        "ID", "workload", "seed", "steps", "after", "faults", "plays", "seconds"
    )
}

/// For each of `ids` (every planted one when empty): the first seed from 0 that fails with it
/// planted (at most `max_seeds`, `jobs` at once), shrunk in `base`'s world within `budget`;
/// `each` sees every result as it is made.
pub fn shrink_every_planted(
    ids: &[BugId],
    base: &RunConfig,
    max_seeds: u64,
    jobs: usize,
    budget: Budget,
    mut each: impl FnMut(&CatalogShrink),
) -> Vec<CatalogShrink> {
    let ids = if ids.is_empty() {
        planted_ids()
    } else {
        ids.to_vec()
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let found = hunt(id, base, 0, max_seeds, jobs);
        let config = RunConfig {
            planted: Some(id),
            ..base.clone()
        };
        let shrunk = match (found.first_seed, found.detected()) {
            (Some(seed), true) => Some(shrink_failure(
                &scenario_of(seed, &config),
                id,
                &config.world(),
                budget,
            )),
            _ => None,
        };
        let row = CatalogShrink {
            id,
            workload: found.workload,
            seed: found.first_seed,
            fired: found.fired,
            shrunk,
        };
        each(&row);
        out.push(row);
    }
    out
}
