//! The merge workload's planted bugs: each is found from random seeds, and every violation it
//! causes is reported under its own ID (a specific rule before the general one its failure also
//! breaks; what a lost message does later is the loss's).

use history::BugId;
use sim::run::{run_seed, RunConfig};

#[test]
fn each_planted_merge_bug_is_found_and_reported_under_its_own_id_only() {
    let ids = [
        BugId::M1,
        BugId::M2,
        BugId::M3,
        BugId::M4,
        BugId::M5,
        BugId::M6,
    ];
    for id in ids {
        let mut config = RunConfig::only("merge");
        config.planted = Some(id);
        let mut failing = 0;
        for seed in 0..40 {
            let report = run_seed(seed, &config);
            for v in &report.violations {
                assert_eq!(v.id, id, "seed {seed} with {id} planted: {}", v.message);
            }
            failing += usize::from(!report.violations.is_empty());
        }
        assert!(
            failing >= 5,
            "{id} planted fails only {failing} of 40 seeds"
        );
    }
}

#[test]
fn a_clean_client_passes_the_widened_sessions() {
    let config = RunConfig::only("merge");
    for seed in 0..80 {
        let report = run_seed(seed, &config);
        assert!(
            report.passed(),
            "seed {seed}: {:?}",
            report.first_violation()
        );
    }
}
