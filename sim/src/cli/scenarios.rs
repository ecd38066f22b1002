//! `histsim scenarios`: every scenario file fails for its ID with that bug planted, and passes
//! without it. An upstream finding (a file naming the published `system` it fails against) has
//! no planted bug: histsim's own components must pass it, and with `--systems` the system it
//! names must still fail it. A regression of the user's own system (a file naming the system it
//! was `found_in`, as `histsim run --sut` writes it) has no planted bug either: it is played
//! against `--sut` (or, without it, the system it names) and must pass there once that system is
//! fixed.

use super::args::SutArgs;
use crate::run::run_scenario_file;
use crate::scenario_file::{discover, ScenarioFile};
use crate::sut::SutOptions;
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
    /// Also play every upstream finding (a file with `system = "CMD"`) against the system it
    /// names, run from the current directory like `--sut`: it must still fail with its ID.
    /// Without this flag such files are played only against histsim's own components (or
    /// `--sut`), which must pass them.
    #[arg(long)]
    systems: bool,
}

pub(crate) fn cmd(args: ScenariosArgs) -> Verdict {
    let files = match load_all(&args.paths) {
        Ok(files) => files,
        Err(verdict) => return verdict,
    };
    let world = WorldConfig {
        sut: args.sut.options().map(std::sync::Arc::new),
        ..WorldConfig::new(args.store, Planted::none())
    };
    let timeouts = (args.sut.timeout_ms(), args.sut.start_timeout_ms());
    let systems = args.systems.then_some(timeouts);
    let passed = files
        .iter()
        .filter(|(path, file)| match &file.found_in {
            Some(found_in) => check_regression(path, file, found_in, &world, timeouts),
            None => check_file(path, file, &world, systems),
        })
        .count();
    let failed = files.len() - passed;
    println!("scenarios: {passed} passed, {failed} failed");
    Verdict::clean_or(failed == 0, Verdict::Violation)
}

/// Every scenario file under `paths`, read. A file that cannot be used is bad input, not a
/// failing scenario: each is named (file, line, field), none is played, and the verdict is a
/// usage error. So are paths that hold no scenario file at all: zero files never pass.
fn load_all(paths: &[PathBuf]) -> Result<Vec<(PathBuf, ScenarioFile)>, Verdict> {
    let mut found = Vec::new();
    for path in paths {
        match discover(path) {
            Ok(f) => found.extend(f),
            Err(e) => {
                return Err(Verdict::usage(&format!(
                    "cannot read {}: {e}",
                    path.display()
                )))
            }
        }
    }
    if found.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Verdict::usage(&format!(
            "no scenario file (*.toml) under {}: nothing to check",
            shown.join(", ")
        )));
    }
    let mut files = Vec::new();
    let mut bad = 0;
    for path in &found {
        match ScenarioFile::load(path) {
            Ok(file) => files.push((path.clone(), file)),
            Err(e) => {
                eprintln!("error: {e}");
                bad += 1;
            }
        }
    }
    if bad > 0 {
        return Err(Verdict::usage(&format!(
            "{bad} of {} scenario files cannot be used; none was played",
            found.len()
        )));
    }
    Ok(files)
}

/// Plays one file with and without its bug; prints the outcome; returns whether it passed.
/// `systems`: replay upstream findings against their systems too, with these request and start
/// timeouts.
fn check_file(
    path: &Path,
    scenario: &ScenarioFile,
    world: &WorldConfig,
    systems: Option<(u64, u64)>,
) -> bool {
    if world.sut.is_some() && !scenario.scenario.workload().has_sut_boundary() {
        println!(
            "skip {}: the {} workload has no process boundary for --sut",
            named(path, scenario),
            scenario.scenario.workload().name()
        );
        return true;
    }
    if let Some(system) = &scenario.system {
        let passes_here = check_finding_here(path, scenario, system, world);
        let still_fails = systems
            .is_none_or(|timeouts| check_finding_there(path, scenario, system, world, timeouts));
        return passes_here && still_fails;
    }
    let with_bug = run_scenario_file(scenario, world, Some(scenario.id));
    let without = run_scenario_file(scenario, world, None);
    let reproduced = with_bug.violations.iter().any(|v| v.id == scenario.id);
    let fixed = without.violations.is_empty() && without.failure.is_none();
    if reproduced && fixed {
        let first = with_bug.violations.first().map(|v| v.id.to_string());
        println!(
            "ok   {} reproduces with the bug planted (first: {}), passes without",
            named(path, scenario),
            first.unwrap_or_default()
        );
        return true;
    }
    println!("FAIL {} {}", named(path, scenario), scenario.title);
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

/// An upstream finding played on histsim's own components (or `--sut`): they must pass it.
fn check_finding_here(path: &Path, file: &ScenarioFile, system: &str, world: &WorldConfig) -> bool {
    let run = run_scenario_file(file, world, None);
    let here = match &world.sut {
        Some(sut) => format!("`{}`", sut.command),
        None => "histsim's components".to_string(),
    };
    if run.violations.is_empty() && run.failure.is_none() {
        println!(
            "ok   {} upstream finding in `{system}`; {here} pass it",
            named(path, file),
        );
        return true;
    }
    println!(
        "FAIL {} {}: {here} fail it too",
        named(path, file),
        file.title
    );
    print_unfixed(&run);
    false
}

/// A regression of the user's system played against `--sut` (the fixed system), else against the
/// system it was found in: it passes once the bug is fixed, and fails naming the violation while
/// it is not.
fn check_regression(
    path: &Path,
    file: &ScenarioFile,
    found_in: &str,
    world: &WorldConfig,
    timeouts: (u64, u64),
) -> bool {
    let there = match &world.sut {
        Some(_) => world.clone(),
        None => with_system(world, found_in, timeouts),
    };
    let system = there.sut.as_ref().map_or(found_in, |s| s.command.as_str());
    if !file.scenario.workload().has_sut_boundary() {
        println!(
            "FAIL {} a regression of `{found_in}`, but the {} workload has no process boundary",
            named(path, file),
            file.scenario.workload().name()
        );
        return false;
    }
    let run = run_scenario_file(file, &there, None);
    if run.violations.is_empty() && run.failure.is_none() {
        println!(
            "ok   {} your regression passes against `{system}`: fixed",
            named(path, file),
        );
        return true;
    }
    println!(
        "FAIL {} your regression still fails against `{system}` (passes once fixed): {}",
        named(path, file),
        file.title
    );
    super::run::print_findings((&run.violations, run.failure.as_deref()), "     ", "");
    false
}

/// `world` with the system under test `command`, waited for as long as `--sut` would be.
fn with_system(
    world: &WorldConfig,
    command: &str,
    (timeout_ms, start_timeout_ms): (u64, u64),
) -> WorldConfig {
    WorldConfig {
        sut: Some(std::sync::Arc::new(SutOptions {
            timeout_ms,
            start_timeout_ms,
            ..SutOptions::new(command)
        })),
        ..world.clone()
    }
}

/// An upstream finding played against the system it names: it must still fail with its ID.
fn check_finding_there(
    path: &Path,
    file: &ScenarioFile,
    system: &str,
    world: &WorldConfig,
    timeouts: (u64, u64),
) -> bool {
    let there = with_system(world, system, timeouts);
    let run = run_scenario_file(file, &there, None);
    if run.violations.iter().any(|v| v.id == file.id) {
        let first = run.violations.first().map(|v| v.id.to_string());
        println!(
            "ok   {} upstream finding: still fails against `{system}`, as it must until fixed there (first: {})",
            named(path, file),
            first.unwrap_or_default()
        );
        return true;
    }
    println!(
        "FAIL {} no {} violation against `{system}` (fixed upstream? then the file goes)",
        named(path, file),
        file.id
    );
    print_unfixed(&run);
    false
}

/// How a scenario file is named in every line of the replay's output: its path and its ID.
fn named(path: &Path, file: &ScenarioFile) -> String {
    format!("{} [{}]", path.display(), file.id)
}
