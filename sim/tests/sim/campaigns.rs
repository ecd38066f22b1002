//! Short clean campaigns: no violation on either store.

use sim::campaign::{run_campaign, CampaignConfig};
use sim::run::RunConfig;
use sim::workload::StoreKind;

fn clean(store: StoreKind, seeds: std::ops::Range<u64>) {
    let result = run_campaign(&CampaignConfig {
        seeds: seeds.clone(),
        shard: None,
        jobs: 2,
        stop_at_first: false,
        progress: false,
        budget: None,
        run: RunConfig {
            store,
            ..RunConfig::new()
        },
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
fn a_short_clean_campaign_passes_on_the_memory_store() {
    clean(StoreKind::Memory, 0..60);
}

#[test]
fn a_short_clean_campaign_passes_on_the_sqlite_store() {
    clean(StoreKind::Sqlite, 1000..1040);
}

#[test]
fn a_campaign_verdict_does_not_depend_on_threads() {
    let run = |jobs| {
        run_campaign(&CampaignConfig {
            seeds: 0..12,
            shard: None,
            jobs,
            stop_at_first: true,
            progress: false,
            budget: None,
            run: RunConfig {
                planted: Some(history::BugId::P8),
                ..RunConfig::new()
            },
        })
    };
    let one = run(1);
    let two = run(2);
    let seeds =
        |r: &sim::campaign::CampaignResult| r.failures.iter().map(|f| f.seed).collect::<Vec<_>>();
    assert_eq!(seeds(&one), seeds(&two));
    assert_eq!(one.failures.len(), 1, "stop at the first failing seed");
}

#[test]
fn shards_are_disjoint_and_their_merged_report_equals_the_whole_campaign() {
    use sim::report::{summary, Summary};
    let config = RunConfig::new();
    let run = |shard| {
        let result = run_campaign(&CampaignConfig {
            seeds: 10..31,
            shard,
            jobs: 2,
            stop_at_first: false,
            progress: false,
            budget: None,
            run: config.clone(),
        });
        summary("c", &config, 10..31, shard, &result)
    };
    let whole = run(None);
    let parts = [run(Some((0, 3))), run(Some((1, 3))), run(Some((2, 3)))];
    let mut seen = std::collections::BTreeSet::new();
    for p in &parts {
        for l in &p.seeds {
            assert!(seen.insert(l.seed), "seed {} in two shards", l.seed);
        }
    }
    assert_eq!(seen.len(), 21);
    let merged = Summary::merge(&parts, "c").expect("merge");
    assert_eq!(merged.deterministic_view(), whole.deterministic_view());
    assert!(whole.coverage.values().any(|n| *n > 0));
    let junit = sim::report::junit(&merged);
    assert!(junit.contains(r#"name="P4""#));
    // Shards of another commit are another campaign.
    let mut stale = parts.clone();
    stale[1].commit = Some("000000000000".into());
    stale[0].commit = Some("111111111111".into());
    let err = Summary::merge(&stale, "c").expect_err("two commits");
    assert!(err.contains("commit"), "{err}");
}

#[test]
fn a_history_that_never_converges_is_a_liveness_failure_apart_from_safety() {
    use sim::outcome::ViolationKind;
    use sim::run::run_seed;
    // Missing dedup keeps duplicates forever: the replicas never converge on the model.
    let report = run_seed(
        2,
        &RunConfig {
            planted: Some(history::BugId::P4),
            ..RunConfig::new()
        },
    );
    assert_eq!(
        report.first_violation().map(|v| v.id),
        Some(history::BugId::P4)
    );
    assert_eq!(
        report.first_violation().map(|v| v.kind),
        Some(ViolationKind::Safety)
    );
    assert!(
        report
            .violations
            .iter()
            .any(|v| v.kind == ViolationKind::Liveness && v.id == history::BugId::P14),
        "{:?}",
        report.violations
    );
    assert_eq!(report.converged_after_ms, None);
    // The same display world without the bug converges.
    let clean = run_seed(2, &RunConfig::only("display"));
    assert!(clean.passed(), "{:?}", clean.violations);
    assert!(clean.converged_after_ms.is_some());
}
