//! Every invariant can fire: random simulation finds each planted bug, and the violation that
//! fires first names that bug's own ID.

use super::support::assert_family_found;
use sim::bugs::{hunt, planted_ids};
use sim::run::RunConfig;

#[test]
fn random_simulation_finds_every_planted_display_bug_under_its_own_id() {
    let found = assert_family_found('P');
    let ids: Vec<_> = found.iter().map(|d| d.id).collect();
    let planted: Vec<_> = planted_ids()
        .into_iter()
        .filter(|id| id.family() == 'P')
        .collect();
    assert_eq!(ids, planted);
}

#[test]
fn a_hunt_from_another_first_seed_counts_its_seeds_from_there() {
    let id = history::BugId::P4;
    let from_zero = hunt(id, &RunConfig::new(), 0, 10_000, 1);
    let failing = from_zero.first_seed.expect("P4 found from seed 0");
    let from_failing = hunt(id, &RunConfig::new(), failing, 10_000, 1);
    assert_eq!(from_failing.first_seed, Some(failing));
    assert_eq!(from_failing.seeds_to_detection, Some(1));
    let after = hunt(id, &RunConfig::new(), failing + 1, 10_000, 1);
    let next = after
        .first_seed
        .expect("P4 found again after its first seed");
    assert!(next > failing);
    assert_eq!(after.seeds_to_detection, Some(next - failing));
}
