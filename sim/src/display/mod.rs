//! The display workload (seed 000): a thread's conversation persisted by every API replica from a
//! fan-out bus and rebuilt by the display-scoped projector, checked against the client-view model.
//!
//! Seed -> [`generate`] -> [`DisplayScenario`] -> [`world::play`] -> [`check::check`] against
//! [`model::display::client_transcript`] of the [`truth`].

pub mod check;
pub mod faults;
pub mod generate;
pub mod options;
pub mod rows;
pub mod scenario;
pub mod truth;
pub mod wire;
pub mod world;

pub use options::DisplayOptions;
pub use scenario::DisplayScenario;
pub use world::{StoreKind, WorldConfig};

use crate::outcome::Violation;
use crate::trace::Trace;

/// What one played display scenario produced.
pub struct DisplayRun {
    pub violations: Vec<Violation>,
    /// The world did not finish (a host error or a hang): neither safe nor unsafe, broken.
    pub failure: Option<String>,
    pub trace: Trace,
    pub emissions: usize,
    pub reads: usize,
    pub sim_elapsed_ms: u64,
}

/// Plays `scenario` and checks every invariant.
pub fn run_scenario(scenario: &DisplayScenario, config: &WorldConfig) -> DisplayRun {
    let record = world::play(scenario, config);
    let plan = faults::FaultPlan::new(scenario);
    let conversation = truth::conversation(scenario, &plan, &record.emissions);
    let transcript = model::display::client_transcript(&conversation);
    let violations = if record.failure.is_some() {
        Vec::new()
    } else {
        check::check(scenario, &conversation, &transcript, &record.reads)
    };
    DisplayRun {
        violations,
        failure: record.failure,
        emissions: record.emissions.len(),
        reads: record.reads.len(),
        trace: record.trace,
        sim_elapsed_ms: record.sim_elapsed_ms,
    }
}
