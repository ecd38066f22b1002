//! The spool workload (seed 004, J14): histories streamed row by row into sealed request spools
//! and sent with Content-Length equal to the sealed size, checked against the in-memory oracle.
//!
//! Seed -> [`generate`] -> [`SpoolScenario`] -> [`world::play`] -> [`check::check`].

pub mod check;
pub mod generate;
pub mod options;
pub mod probes;
pub mod responder;
pub mod scenario;
pub mod shrink;
pub mod source;
pub mod world;

pub use options::SpoolSimOptions;
pub use scenario::SpoolScenario;
pub use world::WorldConfig;

use crate::coverage::Coverage;
use crate::outcome::Violation;
use crate::trace::Trace;

/// What one played spool scenario produced.
pub struct SpoolRun {
    pub violations: Vec<Violation>,
    pub trace: Trace,
    /// Requests sent.
    pub requests: usize,
    pub coverage: Coverage,
    /// With `keep_trace`: every request's figures, as text.
    pub details: Option<String>,
}

/// Plays `scenario` and checks every invariant.
pub fn run_scenario(scenario: &SpoolScenario, config: &WorldConfig) -> SpoolRun {
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
    SpoolRun {
        violations,
        requests: record.requests.len(),
        coverage,
        details,
        trace: record.trace,
    }
}
