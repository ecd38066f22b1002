//! What every live run shares, whatever its workload: its run directory, made, then kept or
//! removed; once it is over, the violations with their first wrong answers and the run written
//! as a scenario file and played in the simulation; and what a run that ended before its
//! verdict prints.

use crate::live::run::Ended;
use crate::outcome::Violation;
use crate::verdict::Verdict;
use std::path::{Path, PathBuf};

/// The verdict of a run that ended before it could be judged: every child was stopped.
pub(super) fn ended_early(ended: Ended) -> Verdict {
    match ended {
        Ended::Interrupted => eprintln!("interrupted: every child process was stopped"),
        Ended::Broken(why) => eprintln!("error: the live run broke: {why}"),
    }
    Verdict::WorldFailure
}

/// The verdict of a child process of a live run (`who`: `replica-1`, `worker-0`) once it served
/// until told to stop: clean, or a broken world saying why on stderr.
pub(super) fn child_served(who: &str, served: Result<(), String>) -> Verdict {
    match served {
        Ok(()) => Verdict::Clean,
        Err(e) => {
            eprintln!("{who}: {e}");
            Verdict::WorldFailure
        }
    }
}

/// Prints each violation with its first wrong answer; when there is one, writes the run as a
/// scenario file (`written_as` names what the file holds) and prints what the simulation
/// playing it finds.
pub(super) fn print_violations(
    violations: &[Violation],
    written_as: &str,
    write: impl FnOnce() -> Result<PathBuf, String>,
    replay: impl FnOnce(&Path) -> Result<Vec<String>, String>,
) {
    for v in violations {
        println!("violation {v}");
        if let Some(d) = v.first_wrong_answer() {
            println!("  first wrong answer: {d}");
        }
    }
    if violations.is_empty() {
        return;
    }
    match write() {
        Ok(path) => {
            println!("{written_as}: {}", path.display());
            match replay(&path) {
                Ok(ids) => println!("the simulation playing it finds: {ids:?}"),
                Err(e) => println!("the simulation could not play it: {e}"),
            }
        }
        Err(e) => eprintln!("error: cannot write the scenario file: {e}"),
    }
}

/// A new run directory, named from `prefix` in the system's temporary directory; it outlives
/// this process until [`keep_directory_unless_clean`] decides.
pub(super) fn new_run_directory(prefix: &str) -> Result<PathBuf, String> {
    Ok(tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| format!("cannot make the run directory: {e}"))?
        .keep())
}

/// A clean run's directory is not needed; any other's is kept and named.
pub(super) fn keep_directory_unless_clean(verdict: Verdict, dir: &Path) -> Verdict {
    if verdict.is_clean() {
        let _ = std::fs::remove_dir_all(dir);
    } else {
        println!("run directory kept: {}", dir.display());
    }
    verdict
}
