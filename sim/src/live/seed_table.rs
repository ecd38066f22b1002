//! `--compare-sim` of every live workload: the seeds run live and in the simulation, one table
//! row a seed. The loop (a row, the first violation on stderr, the run directory kept only
//! when something was found, a broken run counted and the next seed tried) is the same
//! whatever the workload compares; each workload gives its header and its rows.

use super::run::Ended;
use crate::verdict::Verdict;
use std::ops::Range;
use std::path::PathBuf;

/// What one seed's live run gave the table.
pub struct SeedRow {
    pub row: String,
    /// The first violation, as printed after `seed N: `, and the verdict it earns.
    pub violation: Option<(String, Verdict)>,
}

/// Prints `header`, then for each seed its set-up (`setup`), the row `compare` makes of it
/// (the live run beside the simulated one) and the worst verdict.
pub fn compare_seeds<S>(
    header: &[&str],
    seeds: Range<u64>,
    setup: impl Fn(u64) -> Result<S, String>,
    dir: impl Fn(&S) -> PathBuf,
    compare: impl Fn(u64, S) -> Result<SeedRow, Ended>,
) -> Verdict {
    for line in header {
        println!("{line}");
    }
    let mut verdict = Verdict::Clean;
    for seed in seeds {
        let setup = match setup(seed) {
            Ok(s) => s,
            Err(e) => return Verdict::usage(&e),
        };
        let dir = dir(&setup);
        match compare(seed, setup) {
            Ok(SeedRow { row, violation }) => {
                println!("{row}");
                if let Some((why, found)) = violation {
                    eprintln!("seed {seed}: {why}");
                    verdict = verdict.worst(found);
                } else {
                    // Nothing found: the run's files show nothing worth keeping.
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
            Err(Ended::Interrupted) => return Verdict::WorldFailure,
            Err(Ended::Broken(why)) => {
                eprintln!("seed {seed}: the live run broke: {why}");
                verdict = verdict.worst(Verdict::WorldFailure);
            }
        }
    }
    verdict
}
