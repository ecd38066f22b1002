//! Short clean campaigns: no violation on either store.

use sim::campaign::{run_campaign, CampaignConfig};
use sim::display::StoreKind;
use sim::run::RunConfig;

fn clean(store: StoreKind, seeds: std::ops::Range<u64>) {
    let result = run_campaign(&CampaignConfig {
        seeds: seeds.clone(),
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
    let seeds = |r: &sim::campaign::CampaignResult| r.failures.iter().map(|f| f.seed).collect::<Vec<_>>();
    assert_eq!(seeds(&one), seeds(&two));
    assert_eq!(one.failures.len(), 1, "stop at the first failing seed");
}
