//! What a fuzz target does with one input: decode, play with the model and checkers, and panic
//! with the catalog ID on a violation (libFuzzer's crash), so the crash input reproduces it.

use super::{input, probes};
use crate::coverage::Coverage;
use crate::outcome::Violation;
use crate::registry;
use crate::workload::{DynWorkload, StoreKind, WorldConfig};
use history::{BugId, Planted};
use std::sync::OnceLock;

/// The environment variable that switches one planted bug on in a fuzz target (`P4`).
pub const PLANTED_ENV: &str = "HISTSIM_PLANTED";

/// What one input did.
#[derive(Debug)]
pub enum Played {
    /// The input decodes to nothing playable (why).
    Rejected(String),
    Passed,
    /// The first (most specific) violation.
    Violated(Violation),
    /// The world itself broke down (a hang, a host error).
    Broken(String),
}

impl Played {
    /// What a played world's violations (most specific first) and failure amount to.
    pub(crate) fn of(violations: Vec<Violation>, failure: Option<String>) -> Played {
        match (violations.into_iter().next(), failure) {
            (Some(v), _) => Played::Violated(v),
            (None, Some(why)) => Played::Broken(why),
            (None, None) => Played::Passed,
        }
    }
}

/// The planted bug `HISTSIM_PLANTED` names, if it is set; a value that is no catalog ID is an
/// error naming it.
pub fn planted_from_env() -> Result<Option<BugId>, String> {
    match std::env::var(PLANTED_ENV) {
        Err(_) => Ok(None),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => v
            .parse::<BugId>()
            .map(Some)
            .map_err(|e| format!("{PLANTED_ENV}: {e}")),
    }
}

/// Decodes and plays `data` as a scenario of `workload` with `planted`, on the memory store.
pub fn play(workload: &'static dyn DynWorkload, data: &[u8], planted: Option<BugId>) -> Played {
    play_covered(workload, data, planted).0
}

/// [`play`], and the probes the world fired (none for a rejected input).
pub(crate) fn play_covered(
    workload: &'static dyn DynWorkload,
    data: &[u8],
    planted: Option<BugId>,
) -> (Played, Coverage) {
    let scenario = match input::decode(workload, data) {
        Ok(s) => s,
        Err(why) => return (Played::Rejected(why), Coverage::default()),
    };
    let run = scenario.play(&WorldConfig::new(
        StoreKind::Memory,
        Planted::from_option(planted),
    ));
    (Played::of(run.violations, run.failure), run.coverage)
}

/// The body of the `sim_<workload>` fuzz targets: plays `data`, writes the probes it fired into
/// `counters` (the target's libFuzzer extra counters, [`probes::fill`]); a violation prints its
/// line and aborts, a broken world panics. The planted bug comes from `HISTSIM_PLANTED`, read
/// once; a bad value or an unknown workload ends the process with a message (exit 2), not a
/// crash libFuzzer would keep.
pub fn fuzz_one(workload: &str, data: &[u8], counters: &mut [u8]) {
    static SETUP: OnceLock<(&'static dyn DynWorkload, Option<BugId>)> = OnceLock::new();
    let &(w, planted) = SETUP.get_or_init(|| {
        let Some(w) = registry::by_name(workload) else {
            eprintln!("histsim fuzz: no workload `{workload}`");
            std::process::exit(2);
        };
        match planted_from_env() {
            Ok(p) => (w, p),
            Err(e) => {
                eprintln!("histsim fuzz: {e}");
                std::process::exit(2);
            }
        }
    });
    let (played, coverage) = play_covered(w, data, planted);
    probes::fill(w.probes(), &coverage, counters);
    match played {
        Played::Rejected(_) | Played::Passed => {}
        Played::Violated(v) => {
            // A violation is a finding of the world, not a fault of this code, so it ends the
            // process as a panic would (libFuzzer keeps the input on the abort) but without a
            // panic's backtrace: it would only point here, and printing it symbolized the
            // target's debug information, 0.1 to 0.3 s where RUST_BACKTRACE is set, against
            // 0.02 s for the whole run to a shallow bug without it.
            eprintln!("{}", violation_line(&v));
            std::process::abort();
        }
        Played::Broken(why) => panic!("histsim broken world: {why}"),
    }
}

/// What a target prints for a violation, on one line: `histsim violation ID: message`.
fn violation_line(v: &Violation) -> String {
    format!("{VIOLATION_PREFIX}{}: {v}", v.id)
}

/// How a target's violation line begins.
pub const VIOLATION_PREFIX: &str = "histsim violation ";

/// The violation ID a target's panic message names (`histsim violation P4: ...`), for the
/// campaign reading libFuzzer's output.
pub fn violation_id_in(line: &str) -> Option<BugId> {
    let rest = line.split(VIOLATION_PREFIX).nth(1)?;
    rest.split(':').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panic_message_names_the_id() {
        let line =
            "thread '<unnamed>' panicked at x.rs:1:1:\nhistsim violation P4: [P4] two copies";
        assert_eq!(violation_id_in(line), Some(BugId::P4));
        assert_eq!(violation_id_in("histsim violation Q9: x"), None);
        assert_eq!(violation_id_in("nothing here"), None);
    }
}
