//! `histsim shrink`, and the automatic shrink after a failing `histsim run`: a failing seed
//! minimised into a regression scenario file.
//!
//! Where the file goes depends on whose failure it is. A bug planted in histsim's own
//! components is histsim's regression (`scenarios/regressions/` in this repository). A failure of
//! the user's own system (`--sut`, nothing planted) is theirs: it goes to their
//! `--regressions-dir` (`./histsim-regressions/`), never into histsim's repository, and is
//! written to pass once their system is fixed.

use super::args::WorldArgs;
use crate::run::{histsim_command, run_seed, scenario_of, shell_word, RunConfig, SeedReport};
use crate::shrink::{catalog, regression_file, shrink, Budget, ShrinkOptions, Shrunk};
use crate::verdict::Verdict;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
pub(crate) struct ShrinkArgs {
    #[arg(long, required_unless_present = "every_planted")]
    seed: Option<u64>,
    #[command(flatten)]
    world: WorldArgs,
    /// Give up simplifying after this many seconds (the best so far is written).
    #[arg(long, default_value_t = 30)]
    time_cap_s: u64,
    /// Instead of one seed: for every planted bug (or those of `--only`), the first seed from 0
    /// that fails with it, shrunk; prints a table of the steps before and after, writes no
    /// file.
    #[arg(long, conflicts_with = "seed")]
    every_planted: bool,
    /// With `--every-planted`: only these catalog IDs (comma-separated).
    #[arg(long, value_delimiter = ',', requires = "every_planted")]
    only: Vec<history::BugId>,
    /// Where the scenario file goes. Default: `./histsim-regressions/` in the current
    /// directory with `--sut` (a regression of your system), else `scenarios/regressions`.
    #[arg(long = "regressions-dir", visible_alias = "out", value_name = "DIR")]
    out: Option<PathBuf>,
}

pub(crate) fn cmd(args: ShrinkArgs) -> Verdict {
    let config = match args.world.config() {
        Ok(config) => config,
        Err(e) => return Verdict::usage(&e),
    };
    match args.seed {
        Some(seed) => {
            let out = regressions_dir(args.out.as_deref(), &config);
            shrink_seed(seed, &config, args.time_cap_s, &out)
        }
        None => every_planted(&args.only, &config, args.time_cap_s),
    }
}

/// `--every-planted`: each planted bug's first failing seed shrunk, one line a bug, then how
/// many shrank to 8 steps or fewer.
fn every_planted(only: &[history::BugId], config: &RunConfig, time_cap_s: u64) -> Verdict {
    const SMALL_STEPS: usize = 8;
    let budget = Budget::time(Duration::from_secs(time_cap_s));
    println!("every planted bug's first failing seed, shrunk (at most {time_cap_s} s each)");
    println!("{}", catalog::header());
    let rows = catalog::shrink_every_planted(only, config, 10_000, 2, budget, |row| {
        println!("{}", row.line())
    });
    let shrunk: Vec<&Shrunk> = rows.iter().filter_map(|r| r.shrunk.as_ref()).collect();
    let small = shrunk.iter().filter(|s| s.steps <= SMALL_STEPS).count();
    println!(
        "{small} of {} planted bugs shrank to {SMALL_STEPS} steps or fewer ({} shrunk)",
        rows.len(),
        shrunk.len()
    );
    if shrunk.len() == rows.len() {
        Verdict::Clean
    } else {
        Verdict::Violation
    }
}

/// Where a shrunk failure of `config` goes: `explicit` (`--regressions-dir`), else the user's
/// `./histsim-regressions/` for a failure of their own system, else histsim's
/// `scenarios/regressions` (relative paths: under the current directory).
pub(crate) fn regressions_dir(explicit: Option<&Path>, config: &RunConfig) -> PathBuf {
    match (explicit, users_system(config)) {
        (Some(dir), _) => dir.to_path_buf(),
        (None, Some(_)) => PathBuf::from("histsim-regressions"),
        (None, None) => PathBuf::from("scenarios/regressions"),
    }
}

/// The user's own system whose failure `config` plays: a system under test with nothing of
/// histsim's planted (with a planted bug, the failure reproduces that bug, histsim's).
fn users_system(config: &RunConfig) -> Option<&str> {
    match (&config.sut, config.planted) {
        (Some(sut), None) => Some(&sut.command),
        _ => None,
    }
}

/// Shrinks `seed`'s failure into a regression scenario under `out`; prints its path. A seed
/// that passes is a usage error: there is nothing to shrink.
pub(crate) fn shrink_seed(seed: u64, config: &RunConfig, time_cap_s: u64, out: &Path) -> Verdict {
    let report = run_seed(seed, config);
    if report.passed() {
        println!("seed {seed} passes: nothing to shrink");
        return Verdict::Usage;
    }
    shrink_failure(&report, config, time_cap_s, out)
}

/// Shrinks the failure `report` shows (a seed played with `config`, not played again) into a
/// regression scenario under `out`. A broken world (a hang, a crash, a breach of the protocol)
/// is not shrunk: it violates no catalog ID a shrink could keep, and each candidate would wait
/// out a timeout again; the seed and its replay are what reproduces it (exit 3).
pub(crate) fn shrink_failure(
    report: &SeedReport,
    config: &RunConfig,
    time_cap_s: u64,
    out: &Path,
) -> Verdict {
    let seed = report.seed;
    if let Some(failure) = &report.failure {
        let first_line = failure.lines().next().unwrap_or_default();
        println!("seed {seed}: broken world, not shrunk: {first_line}");
        println!("  replay it: {}", config.replay_command(seed));
        return Verdict::WorldFailure;
    }
    let Some(target) = report.first_violation().map(|v| v.id) else {
        println!("seed {seed} passes: nothing to shrink");
        return Verdict::Usage;
    };
    println!("shrinking seed {seed} (violates {target}), at most {time_cap_s} s ...");
    let shrunk = shrink(
        &scenario_of(seed, config),
        &ShrinkOptions {
            target,
            world: config.world(),
            time_cap: Duration::from_secs(time_cap_s),
        },
    );
    print_shrunk(&shrunk);
    let mut file = regression_file(&shrunk, target, seed, config.planted);
    // A failure of the user's system is their regression: the file names the system, and
    // passes once it is fixed.
    file.found_in = users_system(config).map(str::to_string);
    if let Some(system) = &file.found_in {
        file.description.push_str(&format!(
            " A regression of `{system}`: it fails while that system has this bug and passes \
             once it is fixed."
        ));
    }
    let planted = config
        .planted
        .map(|p| format!("-planted-{p}"))
        .unwrap_or_default();
    let path = out.join(format!(
        "{}-seed-{seed}{planted}.toml",
        target.as_str().to_lowercase()
    ));
    let written = file.to_toml().and_then(|text| {
        std::fs::create_dir_all(out)
            .and_then(|_| std::fs::write(&path, text))
            .map_err(|e| e.to_string())
    });
    if let Err(e) = written {
        eprintln!("error: cannot write {}: {e}", path.display());
        return Verdict::Usage;
    }
    println!("regression scenario: {}", path.display());
    print_follow_up(&path, out, file.found_in.as_deref());
    Verdict::Clean
}

/// What to run next: for the user's system, the command that fails while it has the bug and
/// passes once it is fixed (their whole regressions directory); for a planted bug, the file's
/// replay.
fn print_follow_up(path: &Path, out: &Path, found_in: Option<&str>) {
    let histsim = histsim_command();
    let shown = |p: &Path| shell_word(&p.display().to_string());
    match found_in {
        Some(system) => {
            println!("it fails while `{system}` has this bug, and passes once it is fixed:");
            println!(
                "  {histsim} scenarios {} --sut {}",
                shown(out),
                shell_word(system)
            );
        }
        None => println!("replay it: {histsim} scenarios {}", shown(path)),
    }
}

fn print_shrunk(shrunk: &Shrunk) {
    println!(
        "shrunk: {} steps, {} faults -> {} steps, {} faults ({} attempts, {:.1} s{})",
        shrunk.steps_before,
        shrunk.faults_before,
        shrunk.steps,
        shrunk.faults,
        shrunk.attempts,
        shrunk.elapsed.as_secs_f64(),
        if shrunk.capped {
            ", time cap reached"
        } else {
            ""
        }
    );
}
