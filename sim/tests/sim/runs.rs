//! The runs workload: deterministic, clean without planted bugs, finds every R planted bug under
//! its own ID, and every R scenario file reproduces its ID.

use history::BugId;
use sim::bugs::hunt;
use sim::campaign::{run_campaign, CampaignConfig};
use sim::run::{run_scenario_file, run_seed, RunConfig};
use sim::scenario_file::{discover, ScenarioFile};
use sim::workload::StoreKind;
use std::path::Path;
use std::process::Command;

fn runs(store: StoreKind) -> RunConfig {
    RunConfig {
        store,
        ..RunConfig::only("runs")
    }
}

#[test]
fn a_runs_seed_replayed_twice_gives_one_trace_hash() {
    for seed in [0u64, 1, 7, 41] {
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            let a = run_seed(seed, &runs(store));
            let b = run_seed(seed, &runs(store));
            assert_eq!(a.workload, "runs");
            assert_eq!(a.trace_hash, b.trace_hash, "seed {seed} {store:?}");
            assert!(a.trace_events > 5, "seed {seed} ran almost nothing");
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
    for seed in [3u64, 19, 52] {
        let m = run_seed(seed, &runs(StoreKind::Memory));
        let s = run_seed(seed, &runs(StoreKind::Sqlite));
        assert_eq!(m.trace_hash, s.trace_hash, "seed {seed}");
    }
}

#[test]
fn a_runs_seed_replayed_in_separate_processes_gives_one_trace_hash() {
    let hash = || {
        let out = Command::new(env!("CARGO_BIN_EXE_histsim"))
            .args(["replay", "--seed", "11", "--workload", "runs"])
            .output()
            .expect("histsim runs");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(text.contains("runs workload"), "{text}");
        text.lines()
            .find_map(|l| l.strip_prefix("trace-hash: "))
            .unwrap_or_else(|| panic!("no trace-hash line in:\n{text}"))
            .to_string()
    };
    let first = hash();
    assert_eq!(first, hash());
    assert_eq!(first, run_seed(11, &runs(StoreKind::Memory)).trace_hash);
}

fn clean(store: StoreKind, seeds: std::ops::Range<u64>) {
    let result = run_campaign(&CampaignConfig {
        seeds: seeds.clone(),
        shard: None,
        jobs: 2,
        stop_at_first: false,
        progress: false,
        budget: None,
        run: runs(store),
    });
    assert_eq!(result.seeds_run(), (seeds.end - seeds.start) as usize);
    if let Some(f) = result.failures.first() {
        panic!(
            "seed {} failed on {store:?}: {:?} {:?}\n{}",
            f.seed, f.violations, f.failure, f.options
        );
    }
    assert!(result.steps_total > 0);
}

#[test]
fn a_short_clean_runs_campaign_passes_on_the_memory_store() {
    clean(StoreKind::Memory, 0..80);
}

#[test]
fn a_short_clean_runs_campaign_passes_on_the_sqlite_store() {
    clean(StoreKind::Sqlite, 500..540);
}

#[test]
fn random_simulation_finds_every_planted_runs_bug_under_its_own_id() {
    let ids: Vec<BugId> = BugId::ALL
        .iter()
        .copied()
        .filter(|id| id.family() == 'R')
        .collect();
    assert_eq!(ids.len(), 30);
    for id in ids {
        assert_eq!(sim::registry::covering(id).map(|w| w.name()), Some("runs"));
        let d = hunt(id, &RunConfig::new(), 0, 10_000, 2);
        assert!(
            d.detected(),
            "{id}: fired {:?} after {:?} seeds ({:?})",
            d.fired,
            d.seeds_to_detection,
            d.message
        );
    }
}

#[test]
fn every_r_id_has_a_scenario_that_reports_it_first_and_passes_without_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/runs");
    let files = discover(&dir).expect("scenarios/runs is readable");
    let mut covered = std::collections::BTreeSet::new();
    for path in files {
        let file = ScenarioFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file.id.family(), 'R', "{}", path.display());
        assert_eq!(file.workload().name(), "runs", "{}", path.display());
        assert!(!file.title.is_empty() && !file.description.is_empty());
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            let with_bug = run_scenario_file(
                &file,
                &sim::workload::WorldConfig::new(store, history::Planted::none()),
                Some(file.id),
            );
            assert_eq!(
                with_bug.violations.first().map(|v| v.id),
                Some(file.id),
                "{} ({store:?}) with its bug: {:?}",
                path.display(),
                with_bug.violations
            );
            let without = run_scenario_file(
                &file,
                &sim::workload::WorldConfig::new(store, history::Planted::none()),
                None,
            );
            assert!(
                without.violations.is_empty() && without.failure.is_none(),
                "{} ({store:?}) without its bug: {:?} {:?}",
                path.display(),
                without.violations,
                without.failure
            );
        }
        covered.insert(file.id);
    }
    for id in BugId::ALL.iter().filter(|id| id.family() == 'R') {
        assert!(covered.contains(id), "no scenario for {id}");
    }
}
