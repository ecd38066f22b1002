//! The merge workload (catalog M1 to M6): a chat client's session, its history pages, live
//! frames, summarization resets, reconnects, optimistic and injected copies and thread
//! switches fed to `history::client_merge`, each list it shows checked against
//! `model::merge`.
//!
//! Seed -> [`generate`] -> [`MergeScenario`] -> [`world::play`] (with [`server`]) ->
//! [`check::check`] against [`expect::expect`].

pub mod check;
pub mod expect;
pub mod generate;
pub mod options;
pub mod probes;
pub mod scenario;
pub mod server;
pub mod shrink;
pub mod world;

pub use crate::workload::WorldConfig;
pub use options::MergeSimOptions;
pub use scenario::MergeScenario;

use crate::coverage::Coverage;
use crate::workload::{FuzzTuning, Workload, WorkloadRun};
use history::BugId;
use std::fmt::Write as _;

/// Plays `scenario` and checks every render.
pub fn run_scenario(scenario: &MergeScenario, config: &WorldConfig) -> WorkloadRun {
    let record = world::play(scenario, config);
    let expected = expect::expect(scenario);
    let (violations, failure) = match check::check(scenario, &record, &expected) {
        Ok(v) => (v, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    let mut coverage = Coverage::default();
    probes::probes(scenario, &expected, &mut coverage);
    let details = config.keep_trace.then(|| details(&record, &expected));
    WorkloadRun {
        left_out: Default::default(),
        answers: Default::default(),
        sut_log: None,
        violations,
        failure,
        steps: scenario.steps.len(),
        sim_elapsed_ms: 0,
        converged_after_ms: None,
        coverage,
        details,
        picture: None,
        trace: record.trace,
    }
}

/// Each render's list beside the model's, for `replay --trace`.
fn details(record: &world::WorldRecord, expected: &expect::Expectation) -> String {
    let mut out = String::new();
    for (k, (r, e)) in record.renders.iter().zip(&expected.renders).enumerate() {
        let shown: Vec<&str> = r.shown.iter().map(|s| s.id.as_str()).collect();
        let _ = writeln!(
            out,
            "  render {k} (step {}, thread {}): shows [{}], the model expects [{}]",
            r.step,
            e.thread,
            shown.join(", "),
            e.keys.join(", ")
        );
    }
    out
}

/// The merge workload in the registry.
pub struct MergeWorkload;

impl Workload for MergeWorkload {
    const NAME: &'static str = "merge";
    const ABOUT: &'static str =
        "A chat client's merge of history pages, live frames and summarization resets (M1-M6)";
    /// A generated session is 20 to 160 steps, each a few microseconds of pure merging.
    const FUZZ: FuzzTuning = FuzzTuning {
        steps_bound: 160,
        edit_room: 1,
        entropic: true,
    };

    fn covers(id: BugId) -> bool {
        id.family() == 'M'
    }
    crate::workload_items::workload_items!(MergeSimOptions, MergeScenario);
}
