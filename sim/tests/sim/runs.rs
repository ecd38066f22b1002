//! The runs workload: deterministic, clean without planted bugs, finds every R planted bug under
//! its own ID, and every R scenario file reproduces its ID.

use super::support::{
    assert_clean_campaigns, assert_family_found, assert_reproduces_first, assert_stores_alike,
    only_on, printed_trace_hash, replayed_alike, scenario_dir,
};
use history::BugId;
use sim::run::{run_seed, RunConfig};
use sim::scenario_file::{discover, ScenarioFile};
use sim::workload::StoreKind;

fn runs(store: StoreKind) -> RunConfig {
    only_on("runs", store)
}

#[test]
fn a_runs_seed_replayed_twice_gives_one_trace_hash() {
    for seed in [0u64, 1, 7, 41] {
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            let a = replayed_alike("runs", seed, store, 5);
            assert!(a.passed(), "seed {seed} {store:?}: {:?}", a.violations);
            // Healed, every run stopped within the liveness bound, and the report says when.
            assert!(
                a.converged_after_ms.is_some_and(|ms| ms <= 30_000),
                "seed {seed}: {:?}",
                a.converged_after_ms
            );
        }
    }
}

#[test]
fn both_backends_see_the_same_world_whichever_the_client_uses() {
    // Every write and read goes to both backends; the client's choice only picks whose answers it
    // renders, and in a clean world they are the same.
    assert_stores_alike("runs", &[3, 19, 52]);
}

#[test]
fn a_runs_seed_replayed_in_separate_processes_gives_one_trace_hash() {
    let hash = || {
        printed_trace_hash(&["replay", "--seed", "11", "--workload", "runs"], |text| {
            assert!(text.contains("runs workload"), "{text}")
        })
    };
    let first = hash();
    assert_eq!(first, hash());
    assert_eq!(first, run_seed(11, &runs(StoreKind::Memory)).trace_hash);
}

#[test]
fn a_short_clean_runs_campaign_passes_on_each_store() {
    assert_clean_campaigns(
        runs,
        [(StoreKind::Memory, 0..80), (StoreKind::Sqlite, 500..540)],
    );
}

#[test]
fn random_simulation_finds_every_planted_runs_bug_under_its_own_id() {
    for d in assert_family_found('R') {
        let covering = sim::registry::covering(d.id).map(|w| w.name());
        assert_eq!(covering, Some("runs"), "{}", d.id);
    }
}

#[test]
fn every_r_id_has_a_scenario_that_reports_it_first_and_passes_without_it() {
    let files = discover(&scenario_dir("runs")).expect("scenarios/runs is readable");
    let mut covered = std::collections::BTreeSet::new();
    for path in files {
        let file = ScenarioFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file.id.family(), 'R', "{}", path.display());
        assert_eq!(file.workload().name(), "runs", "{}", path.display());
        assert!(!file.title.is_empty() && !file.description.is_empty());
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            assert_reproduces_first(&path, &file, store);
        }
        covered.insert(file.id);
    }
    for id in BugId::ALL.iter().filter(|id| id.family() == 'R') {
        assert!(covered.contains(id), "no scenario for {id}");
    }
}
