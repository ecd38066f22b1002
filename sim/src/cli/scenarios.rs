//! `histsim scenarios`: every scenario file fails for its ID with that bug planted, and passes
//! without it.

use super::args::SutArgs;
use crate::run::run_scenario_file;
use crate::scenario_file::{discover, ScenarioFile};
use crate::verdict::Verdict;
use crate::workload::{StoreKind, WorkloadRun, WorldConfig};
use history::Planted;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub(crate) struct ScenariosArgs {
    /// Files or directories searched recursively for .toml files.
    #[arg(default_value = "scenarios", num_args = 1..)]
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "memory")]
    store: StoreKind,
    #[command(flatten)]
    sut: SutArgs,
}

pub(crate) fn cmd(args: ScenariosArgs) -> Verdict {
    let mut files = Vec::new();
    for path in &args.paths {
        match discover(path) {
            Ok(f) => files.extend(f),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                return Verdict::Usage;
            }
        }
    }
    let world = WorldConfig {
        sut: args.sut.options().map(std::sync::Arc::new),
        ..WorldConfig::new(args.store, Planted::none())
    };
    let passed = files.iter().filter(|f| check_file(f, &world)).count();
    let failed = files.len() - passed;
    println!("scenarios: {passed} passed, {failed} failed");
    Verdict::clean_or(failed == 0, Verdict::Violation)
}

/// Plays one file with and without its bug; prints the outcome; returns whether it passed.
fn check_file(path: &Path, world: &WorldConfig) -> bool {
    let scenario = match ScenarioFile::load(path) {
        Ok(s) => s,
        Err(e) => {
            println!("FAIL {}: {e}", path.display());
            return false;
        }
    };
    if world.sut.is_some() && !scenario.scenario.workload().has_sut_boundary() {
        println!(
            "skip {} [{}]: the {} workload has no process boundary for --sut",
            path.display(),
            scenario.id,
            scenario.scenario.workload().name()
        );
        return true;
    }
    let with_bug = run_scenario_file(&scenario, world, Some(scenario.id));
    let without = run_scenario_file(&scenario, world, None);
    let reproduced = with_bug.violations.iter().any(|v| v.id == scenario.id);
    let fixed = without.violations.is_empty() && without.failure.is_none();
    if reproduced && fixed {
        let first = with_bug.violations.first().map(|v| v.id.to_string());
        println!(
            "ok   {} [{}] reproduces with the bug planted (first: {}), passes without",
            path.display(),
            scenario.id,
            first.unwrap_or_default()
        );
        return true;
    }
    println!(
        "FAIL {} [{}] {}",
        path.display(),
        scenario.id,
        scenario.title
    );
    if !reproduced {
        let got: Vec<String> = with_bug.violations.iter().map(|v| v.to_string()).collect();
        println!(
            "     with --planted {}: no {} violation (got: {})",
            scenario.id,
            scenario.id,
            got.join("; ")
        );
    }
    if !fixed {
        print_unfixed(&without);
    }
    false
}

fn print_unfixed(without: &WorkloadRun) {
    for v in &without.violations {
        println!("     without the bug: {v}");
    }
    if let Some(e) = &without.failure {
        println!("     without the bug, the world failed: {e}");
    }
}
