//! What a fuzz target does with one input: decode, play with the model and checkers, and panic
//! with the catalog ID on a violation (libFuzzer's crash), so the crash input reproduces it.

use super::{input, probes};
use crate::coverage::Coverage;
use crate::outcome::Violation;
use crate::registry;
use crate::workload::{DynWorkload, StoreKind, WorldConfig};
use history::{BugId, Planted};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable that switches one planted bug on in a fuzz target (`P4`).
pub(crate) const PLANTED_ENV: &str = "HISTSIM_PLANTED";

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
pub(crate) fn planted_from_env() -> Result<Option<BugId>, String> {
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

/// Whether libFuzzer may keep an input in its corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusFate {
    Keep,
    /// Rejected before play: the code edges it reached (the scenario file parser's error paths,
    /// the generator up to the size bound) are no state of the simulated world, so it must not
    /// become a corpus input. Kept, such inputs were half of a two-hour display corpus, and their
    /// mutations were rejected in turn (78 % of a 60 s run's inputs).
    Reject,
}

/// The body of the `sim_<workload>` fuzz targets: plays `data`, writes the probes it fired into
/// `counters` (the target's libFuzzer extra counters, [`probes::fill`]) and says whether the
/// input may join the corpus (the target returns `Corpus::Reject` for [`CorpusFate::Reject`]);
/// a violation prints its line and aborts, a broken world panics. The planted bug comes from
/// `HISTSIM_PLANTED`, read once; a bad value or an unknown workload ends the process with a
/// message (exit 2), not a crash libFuzzer would keep.
pub fn fuzz_one(workload: &str, data: &[u8], counters: &mut [u8]) -> CorpusFate {
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
    count_input(matches!(played, Played::Rejected(_)));
    match played {
        Played::Rejected(_) => CorpusFate::Reject,
        Played::Passed => CorpusFate::Keep,
        Played::Violated(v) => {
            // A violation is a finding of the world, not a fault of this code, so it ends the
            // process as a panic would (libFuzzer keeps the input on the abort) but without a
            // panic's backtrace: it would only point here, and printing it symbolized the
            // target's debug information, 0.1 to 0.3 s where RUST_BACKTRACE is set, against
            // 0.02 s for the whole run to a shallow bug without it.
            eprintln!("{}", counts_line());
            eprintln!("{}", violation_line(&v));
            std::process::abort();
        }
        Played::Broken(why) => panic!("histsim broken world: {why}"),
    }
}

/// Starts loading `workload`'s shared tables ([`DynWorkload::load_shared_tables`]: the o200k
/// vocabulary of the journal, spool and runs systems) on a thread of their own, for a target's
/// `init`, and returns it (`None` for a workload without such tables or no workload of that
/// name: [`fuzz_one`] says so at the first input).
///
/// Loading the vocabulary takes about 40 ms, and libFuzzer spends 15 to 20 ms after `init`
/// setting up its corpus tables before the first input, which then waited for the vocabulary:
/// a bug found in the first few inputs was found that much later than need be. The thread runs
/// before and beside the first inputs, outside every simulated world: the tables are read-only
/// and behind a `LazyLock`, so an input that needs them before they are loaded waits for them,
/// and no play sees anything else of the thread. The few code edges of our own that the load
/// passes (the vocabulary itself is a registry crate's, not instrumented) are credited to
/// whichever input runs beside it, as they were to the first input that counted tokens.
pub fn load_tables_beside_start(workload: &str) -> Option<std::thread::JoinHandle<()>> {
    let load = registry::by_name(workload)?.load_shared_tables()?;
    std::thread::Builder::new()
        .name("histsim-tables".into())
        .spawn(load)
        .ok()
}

/// A `sim_*` fuzz target of workload `$workload`, the whole of its file in `fuzz/fuzz_targets/`
/// but for its doc comment and `#![no_main]`. Expanded in the fuzz crate, so `libfuzzer_sys`
/// and `mimalloc` are that crate's. It declares:
/// - mimalloc as the allocator, as in the `histsim` binary (glibc's malloc and free were a fifth
///   of an execution);
/// - the workload's coverage probes (counts and pairs) as libFuzzer extra counters, read after
///   every input beside its code edges (libFuzzer collects every array in that section, Linux);
/// - an init that loads the workload's shared tables (the o200k vocabulary) beside libFuzzer's
///   own start-up ([`load_tables_beside_start`]), nothing for a workload without;
/// - the target: [`fuzz_one`], its fate told to libFuzzer.
#[macro_export]
macro_rules! sim_fuzz_target {
    ($workload:literal) => {
        #[global_allocator]
        static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

        #[link_section = "__libfuzzer_extra_counters"]
        static mut PROBES: [u8; $crate::fuzz::probes::COUNTERS] = [0; $crate::fuzz::probes::COUNTERS];

        libfuzzer_sys::fuzz_target!(
            init: {
                let _ = $crate::fuzz::target::load_tables_beside_start($workload);
            },
            |data: &[u8]| -> libfuzzer_sys::Corpus {
                // SAFETY: libFuzzer runs one input at a time on this thread, and reads the
                // section only between inputs.
                let counters = unsafe { &mut *std::ptr::addr_of_mut!(PROBES) };
                match $crate::fuzz::target::fuzz_one($workload, data, counters) {
                    $crate::fuzz::target::CorpusFate::Keep => libfuzzer_sys::Corpus::Keep,
                    $crate::fuzz::target::CorpusFate::Reject => libfuzzer_sys::Corpus::Reject,
                }
            }
        );
    };
}

/// Inputs this target process was given, and of them those rejected before play (not a
/// scenario of the workload, or over its size bound). One thread runs a target, so relaxed
/// counts are exact.
static INPUTS: AtomicU64 = AtomicU64::new(0);
static REJECTED: AtomicU64 = AtomicU64::new(0);

/// Counts one input; prints the counts at 1,024 inputs and each doubling up to 65,536, then
/// every 65,536 inputs. libFuzzer's executions include rejected inputs, which cost next to
/// nothing, so its exec/s alone would overstate how many scenarios a second are played; the
/// campaign reads the last line printed (a target ends at libFuzzer's `exit`, where no Rust
/// code runs, so the last line lags the end by less than 65,536 inputs).
fn count_input(rejected: bool) {
    let inputs = INPUTS.fetch_add(1, Ordering::Relaxed) + 1;
    if rejected {
        REJECTED.fetch_add(1, Ordering::Relaxed);
    }
    let due = if inputs <= INPUTS_PRINTED_EVERY {
        inputs >= 1024 && inputs.is_power_of_two()
    } else {
        inputs.is_multiple_of(INPUTS_PRINTED_EVERY)
    };
    if due {
        eprintln!("{}", counts_line());
    }
}

const INPUTS_PRINTED_EVERY: u64 = 65_536;

/// `histsim inputs: N, rejected R`: what [`count_input`] prints.
fn counts_line() -> String {
    format!(
        "{COUNTS_PREFIX}{}, rejected {}",
        INPUTS.load(Ordering::Relaxed),
        REJECTED.load(Ordering::Relaxed)
    )
}

/// How a target's counts line begins.
pub const COUNTS_PREFIX: &str = "histsim inputs: ";

/// The inputs and rejected inputs of a counts line (`histsim inputs: 2048, rejected 31`).
pub fn counts_in(line: &str) -> Option<(u64, u64)> {
    let rest = line.trim().strip_prefix(COUNTS_PREFIX)?;
    let (inputs, rejected) = rest.split_once(", rejected ")?;
    Some((inputs.parse().ok()?, rejected.parse().ok()?))
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
    fn the_workloads_that_count_tokens_load_their_vocabulary_on_a_thread_and_display_on_none() {
        for workload in ["journal", "spool", "runs"] {
            let loading = load_tables_beside_start(workload)
                .unwrap_or_else(|| panic!("{workload} counts tokens and has a table to load"));
            assert_eq!(loading.thread().name(), Some("histsim-tables"));
            loading.join().expect("the vocabulary loads");
        }
        assert!(load_tables_beside_start("display").is_none());
        assert!(load_tables_beside_start("no-such-workload").is_none());
        // Loaded beside, counted here: the thread's tables are the ones a count reads.
        assert_eq!(history::journal::Tokenizer::o200k().count("hello world"), 2);
    }

    #[test]
    fn a_rejected_input_may_not_join_the_corpus_and_a_played_one_may() {
        // The only test here that calls `fuzz_one`: its workload is fixed once a process.
        let mut counters = vec![0u8; probes::COUNTERS];
        assert_eq!(fuzz_one("display", &[], &mut counters), CorpusFate::Reject);
        let bad_text = input::scenario_input("[display]\nnot a scenario");
        assert_eq!(
            fuzz_one("display", &bad_text, &mut counters),
            CorpusFate::Reject
        );
        let p4 = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenarios/display/p04_every_replica_persists_a_copy.toml"
        ))
        .expect("the P4 scenario file");
        counters.fill(0);
        let fate = fuzz_one("display", &input::scenario_input(&p4), &mut counters);
        assert_eq!(fate, CorpusFate::Keep);
        assert!(
            counters.iter().any(|&c| c > 0),
            "a played input fires probes"
        );
    }

    #[test]
    fn the_panic_message_names_the_id() {
        let line =
            "thread '<unnamed>' panicked at x.rs:1:1:\nhistsim violation P4: [P4] two copies";
        assert_eq!(violation_id_in(line), Some(BugId::P4));
        assert_eq!(violation_id_in("histsim violation Q9: x"), None);
        assert_eq!(violation_id_in("nothing here"), None);
    }

    #[test]
    fn a_counts_line_reads_back() {
        assert_eq!(
            counts_in("histsim inputs: 2048, rejected 31\n"),
            Some((2048, 31))
        );
        assert!(counts_in(&counts_line()).is_some());
        assert_eq!(counts_in("histsim inputs: 2048"), None);
        assert_eq!(counts_in("#2048 pulse cov: 1"), None);
    }
}
