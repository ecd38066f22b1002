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
    &Registered::<crate::merge::MergeWorkload>::new(),
];

/// A named weight table a mixed seed (`--workload all`) draws its workload from. A table is
/// never edited once released: a build with a new workload adds a new table and makes it the
/// default, and `--mix NAME` keeps every older table's seeds meaning what they meant.
#[derive(Debug)]
pub struct Mix {
    /// `mix-1`, `mix-2`, ...: the name `--mix` takes and replay lines print.
    pub name: &'static str,
    /// Each workload's name and weight, in draw order; `usize` weights, as the draw is a
    /// `usize` range (another integer type would consume the stream differently).
    weights: &'static [(&'static str, usize)],
}

/// Every mix this build knows, oldest first; the last is the default.
pub(crate) static MIXES: &[Mix] = &[
    Mix {
        name: "mix-1",
        weights: &[("display", 1), ("runs", 1), ("journal", 1), ("spool", 1)],
    },
    Mix {
        name: "mix-2",
        weights: &[
            ("display", 1),
            ("runs", 1),
            ("journal", 1),
            ("spool", 1),
            ("merge", 1),
        ],
    },
];

impl Mix {
    /// The default mix: the newest table.
    pub fn newest() -> &'static Mix {
        MIXES.last().expect("at least one mix")
    }

    /// The mix named `name`.
    pub fn by_name(name: &str) -> Option<&'static Mix> {
        MIXES.iter().find(|m| m.name == name)
    }

    /// The workload this mix gives the draw `rng` makes (one `usize` range draw).
    pub fn pick(&self, rng: &mut impl rand::Rng) -> &'static dyn DynWorkload {
        let total: usize = self.weights.iter().map(|(_, w)| w).sum();
        let mut draw = rng.random_range(0..total);
        for (name, weight) in self.weights {
            if draw < *weight {
                return by_name(name).expect("a mix names registered workloads");
            }
            draw -= weight;
        }
        unreachable!("a draw below the total falls in some weight")
    }
}

/// The workload named `name` (`display`, `runs`, ...).
pub fn by_name(name: &str) -> Option<&'static dyn DynWorkload> {
    REGISTRY.iter().copied().find(|w| w.name() == name)
}

/// The workload whose scenario-file table is `[section]`.
pub(crate) fn by_section(section: &str) -> Option<&'static dyn DynWorkload> {
    REGISTRY.iter().copied().find(|w| w.section() == section)
}

/// The workload whose checkers cover catalog ID `id`.
pub fn covering(id: BugId) -> Option<&'static dyn DynWorkload> {
    REGISTRY.iter().copied().find(|w| w.covers(id))
}

/// The catalog IDs `workload` checks.
pub(crate) fn ids_of(workload: &dyn DynWorkload) -> Vec<BugId> {
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

    /// The workload mix `name` picks for each of the mixed seeds 0..24.
    fn picked_by(name: &str) -> Vec<&'static str> {
        let mix = Mix::by_name(name).expect(name);
        (0..24u64)
            .map(|seed| {
                let mut rng = SeedRng::new(seed).stream(crate::rng::Stream::Mix);
                mix.pick(&mut rng).name()
            })
            .collect()
    }

    /// What mixed seeds 0..24 mean under `mix-1`, pinned: a change here changes what every
    /// recorded `--mix mix-1` seed and replay line means (add a new mix instead).
    #[test]
    fn mix_1_keeps_its_meaning() {
        assert_eq!(picked_by("mix-1"), PINNED_MIX_1);
    }

    /// Computed with the draw mixed seeds made before mixes were named
    /// (`REGISTRY[random_range(0..4)]`), so mix-1 is what every earlier mixed seed meant.
    const PINNED_MIX_1: [&str; 24] = [
        "spool", "display", "runs", "journal", "journal", "display", "journal", "journal",
        "display", "journal", "runs", "runs", "journal", "runs", "spool", "journal", "display",
        "spool", "runs", "display", "spool", "spool", "display", "display",
    ];

    /// What mixed seeds 0..24 mean under `mix-2`, pinned as `mix-1`'s are.
    #[test]
    fn mix_2_keeps_its_meaning() {
        assert_eq!(picked_by("mix-2"), PINNED_MIX_2);
    }

    /// Measured with `histsim run --seeds 0..24` when mix-2 became the default.
    const PINNED_MIX_2: [&str; 24] = [
        "merge", "display", "runs", "journal", "spool", "display", "spool", "journal", "runs",
        "spool", "runs", "runs", "spool", "runs", "merge", "journal", "display", "merge", "runs",
        "display", "merge", "merge", "runs", "display",
    ];

    #[test]
    fn every_mix_names_registered_workloads_once_with_weight() {
        for mix in MIXES {
            let mut names: Vec<&str> = mix.weights.iter().map(|(n, _)| *n).collect();
            assert!(names.iter().all(|n| by_name(n).is_some()), "{}", mix.name);
            assert!(mix.weights.iter().all(|(_, w)| *w > 0), "{}", mix.name);
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), mix.weights.len(), "{}", mix.name);
        }
        let newest = Mix::newest();
        assert_eq!(
            newest.weights.len(),
            REGISTRY.len(),
            "the newest mix draws every workload"
        );
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
