//! Every invariant can fire: random simulation finds each planted bug, and the violation that
//! fires first names that bug's own ID.

use sim::bugs::{hunt, planted_ids};
use sim::run::RunConfig;

#[test]
fn random_simulation_finds_every_planted_display_bug_under_its_own_id() {
    let ids: Vec<_> = planted_ids()
        .into_iter()
        .filter(|id| id.family() == 'P')
        .collect();
    assert_eq!(ids.len(), 14);
    for id in ids {
        let d = hunt(id, &RunConfig::new(), 10_000, 2);
        assert!(
            d.detected(),
            "{id}: fired {:?} after {:?} seeds ({:?})",
            d.fired,
            d.seeds_to_detection,
            d.message
        );
    }
}
