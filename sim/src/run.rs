//! One seed, end to end: pick the workload, derive its options, generate, play, check.

use crate::outcome::Violation;
use crate::registry;
use crate::rng::{SeedRng, Stream};
use crate::scenario_file::ScenarioFile;
use crate::sut::SutOptions;
use crate::workload::{
    AnyScenario, DynWorkload, OptionOverrides, StoreKind, WorkloadRun, WorldConfig,
};
use history::{BugId, Planted};
use serde::{Serialize, Serializer};

/// How a campaign runs its seeds.
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    /// The workload every seed runs; `None` mixes every registered workload by seed.
    #[serde(serialize_with = "workload_name")]
    pub workload: Option<&'static dyn DynWorkload>,
    /// The weight table a mixed seed draws its workload from (`--mix`); unused with a workload.
    #[serde(serialize_with = "mix_name")]
    pub mix: &'static registry::Mix,
    pub store: StoreKind,
    pub planted: Option<BugId>,
    pub replicas: Option<u8>,
    #[serde(skip)]
    pub keep_trace: bool,
    /// The system under test in a child process (`--sut`); `None`: histsim's own components.
    #[serde(serialize_with = "sut_command")]
    pub sut: Option<SutOptions>,
}

fn sut_command<S: Serializer>(sut: &Option<SutOptions>, s: S) -> Result<S::Ok, S::Error> {
    match sut {
        Some(o) => s.serialize_some(&o.command),
        None => s.serialize_none(),
    }
}

fn mix_name<S: Serializer>(mix: &&'static registry::Mix, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(mix.name)
}

fn workload_name<S: Serializer>(
    w: &Option<&'static dyn DynWorkload>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(w.map_or("all", |w| w.name()))
}

impl RunConfig {
    pub fn new() -> Self {
        RunConfig {
            workload: None,
            mix: registry::Mix::newest(),
            store: StoreKind::Memory,
            planted: None,
            replicas: None,
            keep_trace: false,
            sut: None,
        }
    }

    /// A config whose seeds all run the workload named `name` (`display`, `runs`, ...).
    ///
    /// # Panics
    /// When no registered workload has that name (a typo in a test).
    pub fn only(name: &str) -> Self {
        RunConfig {
            workload: Some(
                registry::by_name(name).unwrap_or_else(|| panic!("no workload named {name}")),
            ),
            ..RunConfig::new()
        }
    }

    /// The name of the workload choice: `all` or one workload's name.
    pub fn workload_name(&self) -> &'static str {
        self.workload.map_or("all", |w| w.name())
    }

    pub fn world(&self) -> WorldConfig {
        WorldConfig {
            store: self.store,
            planted: Planted::from_option(self.planted),
            keep_trace: self.keep_trace,
            sut: self.sut.clone().map(std::sync::Arc::new),
            alike_up_to: Default::default(),
        }
    }

    pub fn overrides(&self) -> OptionOverrides {
        OptionOverrides {
            replicas: self.replicas,
        }
    }

    /// The workload seed `seed` runs under this config. A planted bug pins the workload that can
    /// see it.
    pub fn workload_of(&self, seed: u64) -> &'static dyn DynWorkload {
        if let Some(w) = self.planted.and_then(registry::covering) {
            return w;
        }
        match self.workload {
            Some(w) => w,
            None => {
                let mut rng = SeedRng::new(seed).stream(Stream::Mix);
                self.mix.pick(&mut rng)
            }
        }
    }

    /// The arguments after `--seed N` that make `histsim replay` reproduce a seed of this
    /// config, one a string.
    pub fn replay_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        match self.workload {
            Some(w) => args.extend(["--workload".to_string(), w.name().to_string()]),
            // A planted bug pins the workload that can see it: no draw, no mix to name.
            None if self.planted.and_then(registry::covering).is_some() => {}
            // A mixed seed means what its mix makes it: named, the line keeps working once a
            // newer mix becomes the default.
            None => args.extend(["--mix".to_string(), self.mix.name.to_string()]),
        }
        if self.store != StoreKind::Memory {
            args.extend(["--store".to_string(), self.store.as_str().to_string()]);
        }
        if let Some(r) = self.replicas {
            args.extend(["--replicas".to_string(), r.to_string()]);
        }
        if let Some(id) = self.planted {
            args.extend(["--planted".to_string(), id.to_string()]);
        }
        if let Some(sut) = &self.sut {
            args.extend(["--sut".to_string(), sut.command.clone()]);
            let default = SutOptions::new("");
            if sut.timeout_ms != default.timeout_ms {
                args.extend(["--sut-timeout-ms".to_string(), sut.timeout_ms.to_string()]);
            }
            if sut.start_timeout_ms != default.start_timeout_ms {
                let ms = sut.start_timeout_ms.to_string();
                args.extend(["--sut-start-timeout-ms".to_string(), ms]);
            }
        }
        args
    }

    /// [`RunConfig::replay_args`] as shell words, each starting with a space.
    pub fn replay_flags(&self) -> String {
        self.replay_args()
            .iter()
            .map(|a| format!(" {}", shell_word(a)))
            .collect()
    }

    pub fn replay_command(&self, seed: u64) -> String {
        format!(
            "{} replay --seed {seed}{}",
            histsim_command(),
            self.replay_flags()
        )
    }
}

/// The cargo form of the command, for a histsim run by `cargo run` in this repository.
pub(crate) const CARGO_COMMAND: &str = "cargo run --release -p sim --";

/// How the user runs histsim, for every command line histsim prints for them to run: the cargo
/// form when this process was started by `cargo run` in this repository, else the name it was
/// invoked by (an installed `histsim`), so a printed line works where it was printed.
pub fn histsim_command() -> String {
    let var = |name: &str| std::env::var_os(name);
    command_for(
        var("CARGO").is_some(),
        var("CARGO_PKG_NAME").as_deref(),
        std::env::args_os().next().as_deref(),
    )
}

/// [`histsim_command`] from what it reads: whether `CARGO` is set, `CARGO_PKG_NAME` and
/// argv[0]. `cargo run` sets both variables for the program it starts; the package must be
/// `sim`, as another package's `cargo run` that starts histsim (a test harness) is no cargo
/// form histsim could print.
fn command_for(
    cargo: bool,
    package: Option<&std::ffi::OsStr>,
    argv0: Option<&std::ffi::OsStr>,
) -> String {
    if cargo && package.is_some_and(|p| p == "sim") {
        return CARGO_COMMAND.to_string();
    }
    // A path in argv[0] (`./target/release/histsim`) would be wrong in another directory: the
    // file name is what an installed binary is found by on PATH.
    argv0
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .map_or_else(|| "histsim".to_string(), shell_word)
}

/// The program a `--sut` command line names to run histsim's own reference system
/// (`PROGRAM serve display`): `histsim` when installed; through cargo, the binary cargo built,
/// as `cargo run` in a `--sut` command would rebuild-check and start cargo for every seed.
pub(crate) fn histsim_program() -> String {
    if histsim_command() != CARGO_COMMAND {
        return histsim_command();
    }
    let exe = std::env::current_exe().ok();
    let cwd = std::env::current_dir().ok();
    let shown = match (&exe, &cwd) {
        (Some(exe), Some(cwd)) => exe.strip_prefix(cwd).unwrap_or(exe).to_path_buf(),
        (Some(exe), None) => exe.clone(),
        _ => return "histsim".to_string(),
    };
    shell_word(&shown.to_string_lossy())
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig::new()
    }
}

/// `word` quoted for a POSIX shell when it needs to be.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+@%".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// What one seed did.
#[derive(Clone, Debug, Serialize)]
pub struct SeedReport {
    pub seed: u64,
    /// The workload's name (`display`, `runs`, ...).
    pub workload: &'static str,
    /// The options the seed derived, one `name = value` a line.
    pub options: String,
    pub violations: Vec<Violation>,
    /// The world broke down (a host error, a hang): distinct from a violation.
    pub failure: Option<String>,
    pub trace_hash: String,
    pub trace_events: u64,
    /// Events the agents emitted (or operations the workload issued).
    pub steps: usize,
    pub sim_elapsed_ms: u64,
    #[serde(skip)]
    pub trace_tail: Vec<String>,
    #[serde(skip)]
    pub trace_full: Option<Vec<String>>,
    /// Probes that fired in this seed.
    pub coverage: crate::coverage::Coverage,
    /// Simulated ms from healing every fault until the answers converged on the model.
    pub converged_after_ms: Option<u64>,
    /// With `keep_trace`: the answers and the model's expectation, as text.
    #[serde(skip)]
    pub details: Option<String>,
    /// With `keep_trace`: what the seed's page shows beside its trace.
    #[serde(skip)]
    pub picture: Option<crate::picture::Facts>,
    /// What a system under test in a child process wrote to its stderr.
    #[serde(skip)]
    pub sut_log: Option<String>,
    /// What the checks did not ask of the system under test, counted.
    pub left_out: crate::coverage::Coverage,
    /// What a system under test in a child process answered, op by op
    /// ([`crate::sut::tally`]).
    pub answers: crate::coverage::Coverage,
}

impl SeedReport {
    pub fn passed(&self) -> bool {
        self.violations.is_empty() && self.failure.is_none()
    }

    /// The invariant that fired first (the most specific one).
    pub fn first_violation(&self) -> Option<&Violation> {
        self.violations.first()
    }

    /// The trace lines the first violation concerns (the requests and deliveries it names), at
    /// most [`SHOWN_TRACE_LINES`]; `None` when the trace was not kept or it marks no line.
    pub fn concerned_lines(&self) -> Option<Vec<String>> {
        let marks = &self.first_violation()?.trace_marks;
        let full = self.trace_full.as_deref()?;
        let lines = crate::divergence::marked_lines(full, marks, SHOWN_TRACE_LINES);
        (!lines.is_empty()).then_some(lines)
    }

    /// What a failure shows of its trace: the lines its first violation concerns (the seed
    /// played again with its trace kept, when this report kept none and `replay` allows it),
    /// else the last events.
    pub fn shown_trace(&self, config: &RunConfig, replay: bool) -> (&'static str, Vec<String>) {
        let marked = self
            .first_violation()
            .is_some_and(|v| !v.trace_marks.is_empty());
        let concerned = match (marked, &self.trace_full) {
            (false, _) => None,
            (true, Some(_)) => self.concerned_lines(),
            (true, None) if !replay => None,
            (true, None) => run_seed(
                self.seed,
                &RunConfig {
                    keep_trace: true,
                    ..config.clone()
                },
            )
            .concerned_lines(),
        };
        match concerned {
            Some(lines) => ("the trace lines the first violation concerns", lines),
            None => ("last events of the trace", self.trace_tail.clone()),
        }
    }
}

/// How many trace lines a failure shows.
pub(crate) const SHOWN_TRACE_LINES: usize = 40;

/// Runs `seed` under `config`.
pub fn run_seed(seed: u64, config: &RunConfig) -> SeedReport {
    let workload = config.workload_of(seed);
    let rng = SeedRng::new(seed);
    let overrides = config.overrides();
    let (scenario, options) = workload.derive(rng, &overrides);
    let run = scenario.play(&config.world());
    report_of(seed, workload.name(), options, run)
}

/// A played world's report, as seed `seed`'s (a scenario file's plays as seed 0).
pub(crate) fn report_of(
    seed: u64,
    workload: &'static str,
    options: String,
    run: WorkloadRun,
) -> SeedReport {
    SeedReport {
        seed,
        workload,
        options,
        violations: run.violations,
        failure: run.failure,
        trace_hash: run.trace.hash_hex(),
        trace_events: run.trace.events(),
        steps: run.steps,
        sim_elapsed_ms: run.sim_elapsed_ms,
        trace_tail: run.trace.tail(),
        trace_full: run.trace.full().map(<[String]>::to_vec),
        details: run.details,
        picture: run.picture,
        sut_log: run.sut_log,
        answers: run.answers,
        left_out: run.left_out,
        coverage: run.coverage,
        converged_after_ms: run.converged_after_ms,
    }
}

/// The scenario seed `seed` plays under `config`, whatever its workload.
pub fn scenario_of(seed: u64, config: &RunConfig) -> AnyScenario {
    config
        .workload_of(seed)
        .scenario_of(SeedRng::new(seed), &config.overrides())
}

/// Plays a scenario file's script in `world` with `planted` (or none).
pub fn run_scenario_file(
    file: &ScenarioFile,
    world: &WorldConfig,
    planted: Option<BugId>,
) -> WorkloadRun {
    file.scenario.play(&WorldConfig {
        planted: Planted::from_option(planted),
        ..world.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn cargo_run_in_this_repository_prints_the_cargo_form() {
        let argv0 = Some(OsStr::new("target/release/histsim"));
        assert_eq!(
            command_for(true, Some(OsStr::new("sim")), argv0),
            CARGO_COMMAND
        );
    }

    #[test]
    fn an_installed_binary_prints_the_name_it_was_invoked_by() {
        let installed = Some(OsStr::new("/home/u/.cargo/bin/histsim"));
        assert_eq!(command_for(false, None, installed), "histsim");
        let renamed = Some(OsStr::new("./histsim-0.3"));
        assert_eq!(command_for(false, None, renamed), "histsim-0.3");
        // Started from another package's cargo process (a test harness): not `cargo run -p sim`.
        assert_eq!(
            command_for(true, Some(OsStr::new("other")), installed),
            "histsim"
        );
        assert_eq!(command_for(false, None, None), "histsim");
    }
}
