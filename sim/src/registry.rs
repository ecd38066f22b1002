//! The workloads this build has: one line each. Everything that loops over workloads (a mixed
//! campaign, `--workload`, scenario-file tables, reports, `histsim bugs`) reads this list.

use crate::workload::{DynWorkload, Registered};
use history::BugId;

/// Every workload of this build, in the order a mixed campaign draws them from (never reorder:
/// the order is part of what a seed means).
pub static REGISTRY: &[&dyn DynWorkload] = &[
    &Registered::<crate::display::DisplayWorkload>::new(),
    &Registered::<crate::runs::RunsWorkload>::new(),
    &Registered::<crate::journal::JournalWorkload>::new(),
    &Registered::<crate::spool::SpoolWorkload>::new(),
];

/// The workload named `name` (`display`, `runs`, ...).
pub fn by_name(name: &str) -> Option<&'static dyn DynWorkload> {
    REGISTRY.iter().copied().find(|w| w.name() == name)
}

/// The workload whose scenario-file table is `[section]`.
pub fn by_section(section: &str) -> Option<&'static dyn DynWorkload> {
    REGISTRY.iter().copied().find(|w| w.section() == section)
}

/// The workload whose checkers cover catalog ID `id`.
pub fn covering(id: BugId) -> Option<&'static dyn DynWorkload> {
    REGISTRY.iter().copied().find(|w| w.covers(id))
}

/// The catalog IDs `workload` checks.
pub fn ids_of(workload: &dyn DynWorkload) -> Vec<BugId> {
    BugId::ALL
        .iter()
        .copied()
        .filter(|id| workload.covers(*id))
        .collect()
}

/// The names of every registered workload, for errors and help.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|w| w.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeedRng;
    use crate::workload::OptionOverrides;

    #[test]
    fn every_catalog_id_is_covered_by_exactly_one_workload() {
        for id in BugId::ALL {
            let n = REGISTRY.iter().filter(|w| w.covers(id)).count();
            assert_eq!(n, 1, "{id} is covered by {n} workloads");
        }
    }

    #[test]
    fn names_and_sections_are_unique() {
        let mut names: Vec<_> = REGISTRY.iter().map(|w| w.name()).collect();
        let mut sections: Vec<_> = REGISTRY.iter().map(|w| w.section()).collect();
        names.sort_unstable();
        names.dedup();
        sections.sort_unstable();
        sections.dedup();
        assert_eq!(
            (names.len(), sections.len()),
            (REGISTRY.len(), REGISTRY.len())
        );
    }

    #[test]
    fn a_scenario_round_trips_through_the_erased_face() {
        for w in REGISTRY {
            let s = w.scenario_of(SeedRng::new(7), &OptionOverrides::default());
            assert_eq!(s.workload().name(), w.name());
            assert_eq!(s.clone(), s, "{}", w.name());
            assert!(
                w.validate(&s).is_ok(),
                "{}: a generated scenario is valid",
                w.name()
            );
            let candidates = w.shrink_candidates(&s);
            assert!(
                !candidates.is_empty(),
                "{}: a generated scenario can shrink",
                w.name()
            );
            for c in candidates.iter().take(3) {
                assert!(w.validate(c).is_ok(), "{}: a candidate is valid", w.name());
                assert_ne!(c, &s, "{}: a candidate changes something", w.name());
            }
        }
    }
}
