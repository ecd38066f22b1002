//! `histsim shrink`, and the automatic shrink after a failing `histsim run`: a failing seed
//! minimised into a regression scenario file.

use super::args::WorldArgs;
use crate::run::{run_seed, scenario_of, RunConfig, SeedReport};
use crate::shrink::{regression_file, shrink, ShrinkOptions, Shrunk};
use crate::verdict::Verdict;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
pub(crate) struct ShrinkArgs {
    #[arg(long)]
    seed: u64,
    #[command(flatten)]
    world: WorldArgs,
    /// Give up simplifying after this many seconds (the best so far is written).
    #[arg(long, default_value_t = 30)]
    time_cap_s: u64,
    /// Where the scenario file goes.
    #[arg(long, default_value = "scenarios/regressions")]
    out: PathBuf,
}

pub(crate) fn cmd(args: ShrinkArgs) -> Verdict {
    match args.world.config() {
        Ok(config) => shrink_seed(args.seed, &config, args.time_cap_s, &args.out),
        Err(e) => Verdict::usage(&e),
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
    if config.planted.is_none() {
        // A failure of a system under test with nothing planted is a finding in that system:
        // the file names it, so `histsim scenarios --systems` replays it there.
        file.system = config.sut.as_ref().map(|sut| sut.command.clone());
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
    let systems = if file.system.is_some() {
        " --systems"
    } else {
        ""
    };
    println!(
        "replay it: cargo run --release -p sim -- scenarios {}{systems}",
        path.display()
    );
    Verdict::Clean
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
