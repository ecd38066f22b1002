//! What every workload folder states the same way, written once: the [`crate::workload::Workload`]
//! items that forward to the folder's own `generate`, `run_scenario`, `shrink` and probes, its
//! options' `Display` (one `name = value` a line), and the test every workload's seeds pass.
//! A workload's `impl Workload` then says only what differs: its name, what it covers, its
//! tuning.

/// The [`crate::workload::Workload`] items a workload folder forwards by convention: `type
/// Options` and `type Scenario` as given, `PROBES` from its `probes` module, `generate` from
/// `generate::generate`, `play` from its `run_scenario`, `validate` from the scenario's own,
/// the shrinker's moves, integers and size from `shrink` (`size` as `(steps, faults)`).
/// `from_seed` is the options' `from_seed(rng)` unless given as `from_seed(rng, overrides) =>
/// expression`.
macro_rules! workload_items {
    ($options:ty, $scenario:ty) => {
        $crate::workload_items::workload_items!(
            $options, $scenario, from_seed(rng, _overrides) => <$options>::from_seed(rng)
        );
    };
    ($options:ty, $scenario:ty, from_seed($rng:ident, $overrides:ident) => $from_seed:expr) => {
        type Options = $options;
        type Scenario = $scenario;
        const PROBES: &'static [&'static str] = probes::PROBES;
        fn from_seed(
            $rng: $crate::rng::SeedRng,
            $overrides: &$crate::workload::OptionOverrides,
        ) -> $options {
            $from_seed
        }
        fn generate(rng: $crate::rng::SeedRng, options: &$options) -> $scenario {
            generate::generate(rng, options)
        }
        fn play(
            scenario: &$scenario,
            world: &$crate::workload::WorldConfig,
        ) -> $crate::workload::WorkloadRun {
            run_scenario(scenario, world)
        }
        fn validate(scenario: &$scenario) -> Result<(), String> {
            scenario.validate()
        }
        fn shrink_moves(scenario: &$scenario) -> Vec<$crate::workload::Move<$scenario>> {
            shrink::moves(scenario)
        }
        fn shrink_integers(scenario: &$scenario) -> Vec<$crate::workload::Integer<$scenario>> {
            shrink::integers(scenario)
        }
        fn size(scenario: &$scenario) -> $crate::workload::ScenarioSize {
            let (steps, faults) = shrink::size(scenario);
            $crate::workload::ScenarioSize { steps, faults }
        }
    };
}
pub(crate) use workload_items;

/// `impl Display` for a workload's options: one `name = value` a line, as
/// [`crate::options_text::write_options`] writes every serializable options struct.
macro_rules! options_display {
    ($options:ty) => {
        impl std::fmt::Display for $options {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                $crate::options_text::write_options(f, self)
            }
        }
    };
}
pub(crate) use options_display;

/// The helpers a workload's `shrink.rs` writes its moves and integers with, named for its
/// scenario type so that their closures need no annotation: `int` (an [`crate::workload::integer`]
/// of the scenario), `edit` (a move that changes a copy in place), `removals` (a move per element
/// of a list, each without it) and, given the function that drops what a removal left dangling,
/// `cut` (a move that removes something, then that).
macro_rules! shrink_helpers {
    ($scenario:ty) => {
        /// An integer of the scenario ([`crate::workload::integer`], its type named for the
        /// closure).
        fn int(
            path: String,
            value: u64,
            min: u64,
            write: impl Fn(&mut $scenario, u64) + 'static,
        ) -> Option<$crate::workload::Integer<$scenario>> {
            $crate::workload::integer(path, value, min, write)
        }

        /// A move that changes a copy of the scenario in place.
        fn edit(change: impl Fn(&mut $scenario) + 'static) -> $crate::workload::Move<$scenario> {
            $crate::workload::move_by(change, std::convert::identity)
        }

        /// One move per element of a list of the scenario ([`crate::workload::removals`], its
        /// type named for the closure).
        fn removals<T: 'static>(
            len: usize,
            list: fn(&mut $scenario) -> &mut Vec<T>,
        ) -> impl DoubleEndedIterator<Item = $crate::workload::Move<$scenario>> {
            $crate::workload::removals(len, list)
        }
    };
    ($scenario:ty, cut then $prune:path) => {
        $crate::workload_items::shrink_helpers!($scenario);

        /// A move that removes something, then what the removal left dangling.
        fn cut(change: impl Fn(&mut $scenario) + 'static) -> $crate::workload::Move<$scenario> {
            $crate::workload::move_by(change, $prune)
        }
    };
}
pub(crate) use shrink_helpers;

/// The scenarios of seeds 0 to 19 of workload `W` (from the options each seed derives), each
/// with its shrink candidates, every one of which validates: what a shrinker's test judges.
#[cfg(test)]
pub(crate) fn seeds_with_shrink_candidates<W: crate::workload::Workload>(
) -> Vec<(u64, W::Scenario, Vec<W::Scenario>)> {
    let overrides = crate::workload::OptionOverrides::default();
    let scenario = |rng| W::generate(rng, &W::from_seed(rng, &overrides));
    (0..20)
        .map(|seed| {
            let s = scenario(crate::rng::SeedRng::new(seed));
            let cands = W::shrink_candidates(&s);
            for c in &cands {
                W::validate(c).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            }
            (seed, s, cands)
        })
        .collect()
}

/// Every shrink candidate of the scenarios of seeds 0 to 19 of `W` validates and is no larger
/// ([`crate::workload::Workload::size`]): smaller or plainer; and every scenario has some.
#[cfg(test)]
pub(crate) fn assert_shrink_candidates_no_larger<W: crate::workload::Workload>() {
    for (seed, s, cands) in seeds_with_shrink_candidates::<W>() {
        assert!(!cands.is_empty(), "seed {seed}");
        assert!(
            cands.iter().all(|c| W::size(c) <= W::size(&s)),
            "seed {seed}"
        );
    }
}

/// How many different sets of switches the swarm turns on over `options` (one a seed), as
/// `switched` lists an options' switches: a workload's options test asks for many.
#[cfg(test)]
pub(crate) fn switch_subsets<O>(
    options: impl IntoIterator<Item = O>,
    switched: impl Fn(&O) -> Vec<bool>,
) -> usize {
    let subsets: std::collections::BTreeSet<Vec<bool>> =
        options.into_iter().map(|o| switched(&o)).collect();
    subsets.len()
}

#[cfg(test)]
mod tests {
    use crate::rng::SeedRng;
    use crate::workload::OptionOverrides;

    /// What every registered workload's seeds must do: the same seed derives the same options
    /// (as printed) and the same scenario, and the scenario validates.
    #[test]
    fn every_workloads_seeds_derive_the_same_valid_scenario_again() {
        let overrides = OptionOverrides::default();
        for workload in crate::registry::REGISTRY {
            for s in 0..200 {
                let seed = SeedRng::new(s);
                let (scenario, options) = workload.derive(seed, &overrides);
                let (again, options_again) = workload.derive(seed, &overrides);
                let name = workload.name();
                assert_eq!(options, options_again, "{name} seed {s}: options");
                assert_eq!(scenario, again, "{name} seed {s}");
                workload
                    .validate(&scenario)
                    .unwrap_or_else(|e| panic!("{name} seed {s}: {e}"));
            }
        }
    }
}
