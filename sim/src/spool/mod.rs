//! The spool workload (seed 004, J14): histories streamed row by row into sealed request spools
//! and sent with Content-Length equal to the sealed size, checked against the in-memory oracle.
//!
//! Seed -> [`generate`] -> [`SpoolScenario`] -> [`world::play`] -> [`check::check`].

pub mod check;
pub(crate) mod generate;
pub(crate) mod options;
mod picture;
pub(crate) mod probes;
pub(crate) mod responder;
pub(crate) mod scenario;
pub(crate) mod shrink;
pub(crate) mod source;
pub(crate) mod world;

pub use crate::workload::WorldConfig;
pub use options::SpoolSimOptions;
pub use scenario::SpoolScenario;

use crate::coverage::Coverage;
use crate::workload::{Workload, WorkloadRun};
use history::BugId;

/// Plays `scenario` and checks every invariant.
pub fn run_scenario(scenario: &SpoolScenario, config: &WorldConfig) -> WorkloadRun {
    let record = world::play(scenario, config);
    let violations = check::check(scenario, &record);
    let mut coverage = Coverage::default();
    probes::probes(scenario, &record, &mut coverage);
    let details = config.keep_trace.then(|| {
        record
            .requests
            .iter()
            .enumerate()
            .map(|(k, r)| {
                format!(
                    "  request {k} {:?}: {} rows, spool {} bytes, report {:?}\n",
                    r.shape,
                    r.rows,
                    r.spool.len(),
                    r.report
                )
            })
            .collect()
    });
    WorkloadRun {
        left_out: Default::default(),
        answers: Default::default(),
        sut_log: None,
        violations,
        failure: None,
        steps: record.requests.len(),
        sim_elapsed_ms: 0,
        converged_after_ms: None,
        coverage,
        details,
        picture: config.keep_trace.then(|| picture::facts(scenario, &record)),
        trace: record.trace,
    }
}

/// The spool workload in the registry.
pub(crate) struct SpoolWorkload;

impl Workload for SpoolWorkload {
    const NAME: &'static str = "spool";
    const ABOUT: &'static str =
        "Request bodies streamed from histories into sealed spools and sent (J14)";
    /// The o200k vocabulary: its journals count every row's tokens.
    const LOAD_SHARED_TABLES: Option<fn()> = Some(|| {
        let _ = history::journal::Tokenizer::o200k();
    });

    fn covers(id: BugId) -> bool {
        id == BugId::J14
    }
    crate::workload_items::workload_items!(SpoolSimOptions, SpoolScenario);
}
