//! What a set of fuzz inputs reaches in the workload's own terms: its coverage probes, and the
//! pairs of probes fired together in one play (what a target hands libFuzzer beside code edges,
//! [`super::probes`]); and the same figures for random seeds, so a campaign's corpus can be set
//! beside `histsim run` over the same workload. Inputs are played on the release build of
//! `histsim`, without instrumentation, on the memory store and with no bug planted.

use super::input::{self, STREAM_BYTES};
use super::target::{self, Played};
use crate::coverage::Coverage;
use crate::rng::{SeedRng, STREAMS};
use crate::workload::{DynWorkload, OptionOverrides, StoreKind, WorldConfig};
use history::Planted;
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// What a set of plays reached.
#[derive(Debug, Default)]
pub struct Reach {
    /// Inputs or seeds looked at.
    pub plays: usize,
    /// Inputs that decode to nothing playable (never a seed).
    pub rejected: usize,
    /// Plays that broke an invariant, or whose world broke down.
    pub failed: usize,
    /// Every probe fired, with its count summed over the plays.
    pub coverage: Coverage,
    /// Pairs of probes (by their index in the workload's list) that fired in one play.
    pub pairs: BTreeSet<(usize, usize)>,
}

impl Reach {
    fn add(&mut self, probes: &[&str], played: &Played, coverage: &Coverage) {
        self.plays += 1;
        match played {
            Played::Rejected(_) => self.rejected += 1,
            Played::Violated(_) | Played::Broken(_) => self.failed += 1,
            Played::Passed => {}
        }
        self.coverage.add(coverage);
        let fired: Vec<usize> = (0..probes.len())
            .filter(|&i| coverage.get(probes[i]) > 0)
            .collect();
        for (k, &i) in fired.iter().enumerate() {
            self.pairs.extend(fired[k + 1..].iter().map(|&j| (i, j)));
        }
    }

    /// Probes of `probes` that fired at least once.
    pub fn probes_fired(&self, probes: &[&str]) -> usize {
        probes.len() - self.coverage.never_fired(probes).len()
    }
}

/// Plays every input file in `paths` (files, or folders whose files are inputs, as libFuzzer
/// keeps a corpus), in name order. A path that cannot be read is an error naming it.
pub fn of_inputs(workload: &'static dyn DynWorkload, paths: &[PathBuf]) -> Result<Reach, String> {
    let mut files = Vec::new();
    for path in paths {
        files.extend(input_files(path)?);
    }
    let mut reach = Reach::default();
    for file in files {
        let data = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let (played, coverage) = target::play_covered(workload, &data, None);
        reach.add(workload.probes(), &played, &coverage);
    }
    Ok(reach)
}

fn input_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Plays `seeds` as `histsim run` plays them (no size bound; the memory store, a third of runs
/// seeds drawing the JSONL store as the campaign does).
pub fn of_seeds(workload: &'static dyn DynWorkload, seeds: Range<u64>) -> Reach {
    let world = WorldConfig::new(StoreKind::Memory, Planted::none());
    let mut reach = Reach::default();
    for seed in seeds {
        let scenario = workload.scenario_of(SeedRng::new(seed), &OptionOverrides::default());
        let run = scenario.play(&world);
        let played = Played::of(run.violations, run.failure);
        reach.add(workload.probes(), &played, &run.coverage);
    }
    reach
}

/// The generator-mode input that decodes to seed `seed`'s scenario: every stream seeded with
/// `seed`, as [`SeedRng::new`] seeds them. A target rejects it when the scenario is over the
/// workload's size bound ([`input::steps_bound`]).
pub fn input_of_seed(seed: u64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(1 + STREAM_BYTES);
    bytes.push(0);
    bytes.extend((0..STREAMS * 8).map(|k| (seed >> (8 * (k / STREAMS))) as u8));
    debug_assert_ne!(bytes[0], input::SCENARIO_MODE);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn the_input_of_a_seed_is_that_seed() {
        for w in registry::REGISTRY {
            let mut same = 0;
            for seed in [0, 1, 7, 300, 0x0102_0304_0506_0708] {
                let Ok(decoded) = input::decode(*w, &input_of_seed(seed)) else {
                    continue;
                };
                let drawn = w.scenario_of(SeedRng::new(seed), &OptionOverrides::default());
                assert_eq!(decoded, drawn, "{} seed {seed}", w.name());
                same += 1;
            }
            assert!(same > 0, "every {} seed over the bound", w.name());
        }
    }

    #[test]
    fn inputs_and_seeds_reach_the_same_probes() {
        let display = registry::by_name("display").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut played_seeds = Vec::new();
        for seed in 0..12u64 {
            let data = input_of_seed(seed);
            if input::decode(display, &data).is_ok() {
                std::fs::write(dir.path().join(format!("seed-{seed:02}")), data).unwrap();
                played_seeds.push(seed);
            }
        }
        std::fs::write(dir.path().join("zz-garbage"), [input::SCENARIO_MODE, 0xff]).unwrap();
        let inputs = of_inputs(display, &[dir.path().to_path_buf()]).unwrap();
        assert_eq!(inputs.plays, played_seeds.len() + 1);
        assert_eq!(inputs.rejected, 1);
        let mut seeds = Reach::default();
        for &seed in &played_seeds {
            let one = of_seeds(display, seed..seed + 1);
            seeds.coverage.add(&one.coverage);
            seeds.pairs.extend(one.pairs);
        }
        assert_eq!(inputs.coverage, seeds.coverage);
        assert_eq!(inputs.pairs, seeds.pairs);
        assert!(inputs.probes_fired(display.probes()) > 0 && !inputs.pairs.is_empty());
        assert!(of_inputs(display, &[dir.path().join("absent")]).is_err());
    }
}
