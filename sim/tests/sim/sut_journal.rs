//! The run journal's callbacks over the protocol (`docs/sut-protocol.md`, "Journal
//! operations"): a system that declares the journal ops decides what the journal records of
//! them, so a journal bug built into the system is found there under its own ID, and the same
//! system without the ops in its `hello` leaves the callbacks to histsim's own journal.

use history::BugId;
use sim::run::{run_seed, RunConfig};
use sim::sut::SutOptions;

/// `histsim serve runs` with `id` built in, its `hello` edited by the `sed` script `script`.
fn broken_server(id: BugId, script: &str) -> RunConfig {
    let command = format!(
        "{} serve runs --planted {id} | stdbuf -oL sed '{script}'",
        env!("CARGO_BIN_EXE_histsim")
    );
    RunConfig {
        sut: Some(SutOptions::new(command)),
        ..RunConfig::only("runs")
    }
}

/// The journal ops struck from `hello`.
const WITHOUT_JOURNAL: &str =
    r#"s/,"journal_chain_start","journal_model_start","journal_chain_end","journal_chain_error"//"#;

#[test]
fn a_journal_bug_in_the_system_is_found_through_the_journal_ops_and_only_there() {
    for id in [BugId::R25, BugId::R26] {
        // Histsim's world plants nothing: only the system's journal is broken.
        let hosting = broken_server(id, "");
        let report = (0..30)
            .map(|seed| (seed, run_seed(seed, &hosting)))
            .find(|(_, r)| !r.passed())
            .unwrap_or_else(|| panic!("{id} found within 30 seeds"));
        let (seed, report) = report;
        assert_eq!(report.failure, None, "{id}");
        assert_eq!(report.first_violation().map(|v| v.id), Some(id));
        // The same system, its journal ops not declared: histsim's journal hears the
        // callbacks, and the seed passes.
        let not_hosting = run_seed(seed, &broken_server(id, WITHOUT_JOURNAL));
        assert!(
            not_hosting.passed(),
            "{id} seed {seed}: {:?} {:?}",
            not_hosting.violations,
            not_hosting.failure
        );
    }
}
