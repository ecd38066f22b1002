//! `histsim`: run campaigns, replay seeds, hunt planted bugs, replay scenario files.
//!
//! Exit codes: 0 clean; 1 a safety invariant was violated (or a planted bug went undetected);
//! 2 bad usage or input; 3 the simulated world itself broke down (a hang, a host error) or a
//! seed was nondeterministic; 4 only liveness failed (histories did not converge after healing).

use clap::{Parser, Subcommand};
use history::BugId;
use sim::bugs;
use sim::campaign::{run_campaign, CampaignConfig};
use sim::report;
use sim::run::{run_scenario_file, run_seed, RunConfig, SeedReport};
use sim::scenario_file::{discover, ScenarioFile};
use sim::workload::{self, DynWorkload, StoreKind};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const EXIT_VIOLATION: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_WORLD_FAILURE: u8 = 3;
const EXIT_LIVENESS: u8 = 4;

/// The default campaign's seeds: about a minute on 2 cores.
const DEFAULT_SEEDS: &str = "0..8000";

#[derive(Parser)]
#[command(
    name = "histsim",
    version,
    about = "Deterministic simulation of conversation-history systems"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct WorldArgs {
    /// Which workload to run (display, runs, journal, spool); `all` mixes them by seed.
    #[arg(long, default_value = "all", value_parser = parse_workload)]
    workload: WorkloadArg,
    /// The store behind the replicas.
    #[arg(long, value_enum, default_value = "memory")]
    store: StoreKind,
    /// Number of API replicas (1 to 5); default: derived from each seed.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=5))]
    replicas: Option<u8>,
    /// Switch on one planted (legacy) bug by its catalog ID, e.g. P4.
    #[arg(long)]
    planted: Option<BugId>,
}

impl WorldArgs {
    fn config(&self) -> RunConfig {
        RunConfig {
            workload: self.workload.0,
            store: self.store,
            planted: self.planted,
            replicas: self.replicas,
            keep_trace: false,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run a campaign over a range of seeds; on a violation print how to replay it.
    Run {
        /// Seeds as `A..B` (B excluded) or a single seed.
        #[arg(long, default_value = DEFAULT_SEEDS, value_parser = parse_seeds)]
        seeds: std::ops::Range<u64>,
        #[command(flatten)]
        world: WorldArgs,
        /// Worker threads (each runs whole seeds); default: the number of cores.
        #[arg(long)]
        jobs: Option<usize>,
        /// Keep going after the first failing seed.
        #[arg(long)]
        keep_going: bool,
        /// Stop starting seeds after this many seconds of wall time.
        #[arg(long)]
        budget_s: Option<u64>,
        /// Campaign name: reports go to <report-dir>/<name>/.
        #[arg(long)]
        name: Option<String>,
        #[arg(long, default_value = "reports")]
        report_dir: PathBuf,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Run only shard K of N (`K/N`, K from 0): a disjoint share of the seeds, for fleets.
        #[arg(long, value_parser = parse_shard)]
        shard: Option<(u64, u64)>,
        /// Replay this percentage of the seeds in fresh processes and compare trace hashes.
        #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
        check_determinism: Option<u8>,
        /// Fail when some fault or feature probe of the campaign's workloads never fired.
        #[arg(long)]
        require_coverage: bool,
        /// Do not shrink the first failing seed into a regression scenario.
        #[arg(long)]
        no_shrink: bool,
        /// Time cap of the automatic shrink.
        #[arg(long, default_value_t = 30)]
        shrink_cap_s: u64,
    },
    /// Run one seed and print its options, trace hash and violations.
    Replay {
        #[arg(long)]
        seed: u64,
        #[command(flatten)]
        world: WorldArgs,
        /// Print every event of the trace.
        #[arg(long)]
        trace: bool,
    },
    /// For every planted bug, run seeds until an invariant fires; it must be the bug's own ID.
    Bugs {
        /// Give up on a bug after this many seeds.
        #[arg(long, default_value_t = 10_000)]
        max_seeds: u64,
        /// Seeds of the clean campaign that must find nothing.
        #[arg(long, default_value_t = 300)]
        clean_seeds: u64,
        /// Only these IDs (default: every planted bug).
        #[arg(long, value_delimiter = ',')]
        only: Vec<BugId>,
        #[arg(long, value_enum, default_value = "memory")]
        store: StoreKind,
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Minimise a failing seed into a scenario file under scenarios/regressions/.
    Shrink {
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
    },
    /// Work with campaign reports.
    Report {
        #[command(subcommand)]
        action: ReportAction,
    },
    /// Crash-point exploration of the history journal: run a workload of mutations once, then
    /// reopen, resume and write after every crash state of it (every append cut at every byte,
    /// every point with unsynced writes lost) and check each against the model.
    Crash {
        /// Mutations in the workload (6 or more covers every kind).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
        ops: u64,
        /// Switch on one planted (legacy) journal bug, e.g. J2.
        #[arg(long)]
        planted: Option<BugId>,
        /// Cut appends every this many bytes (1: every byte).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        cut_step_bytes: u64,
        /// Then run the workload on a faulty disk (EIO, ENOSPC, short writes, silent
        /// corruption, failed syncs and reads) for these seeds; `none` skips it.
        #[arg(long, default_value = "0..200", value_parser = parse_fault_seeds)]
        fault_seeds: std::ops::Range<u64>,
        /// Mutations per faulty-disk seed.
        #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u64).range(1..=1000))]
        fault_ops: u64,
    },
    /// Work with history journal files.
    Journal {
        #[command(subcommand)]
        action: JournalAction,
    },
    /// Replay scenario files: each must fail for its ID with its bug planted, and pass without.
    Scenarios {
        /// Files or directories searched recursively for .toml files.
        #[arg(default_value = "scenarios", num_args = 1..)]
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "memory")]
        store: StoreKind,
    },
}

#[derive(Subcommand)]
enum JournalAction {
    /// Print a journal file's records as JSON lines (a torn tail as its own line; corruption
    /// ends the dump with an error naming its byte offset, exit 2).
    Dump {
        /// The journal file.
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum ReportAction {
    /// Merge shard reports (directories holding summary.json) into one report.
    Merge {
        /// Shard report directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Name of the merged campaign.
        #[arg(long, default_value = "merged")]
        name: String,
        #[arg(long, default_value = "reports")]
        report_dir: PathBuf,
    },
}

/// `--workload`: `None` mixes every workload by seed.
#[derive(Clone, Copy)]
struct WorkloadArg(Option<&'static dyn DynWorkload>);

/// `all` or one registered workload's name.
fn parse_workload(s: &str) -> Result<WorkloadArg, String> {
    if s == "all" {
        return Ok(WorkloadArg(None));
    }
    workload::by_name(s)
        .map(|w| WorkloadArg(Some(w)))
        .ok_or_else(|| {
            format!(
                "no workload `{s}`; expected all or one of {}",
                workload::names().join(", ")
            )
        })
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not a shard: expected K/N, e.g. 0/4"))?;
    let k: u64 = k
        .trim()
        .parse()
        .map_err(|_| format!("`{k}` is not a shard index"))?;
    let n: u64 = n
        .trim()
        .parse()
        .map_err(|_| format!("`{n}` is not a shard count"))?;
    if n == 0 || k >= n {
        return Err(format!("shard {k}/{n}: expected 0 <= K < N"));
    }
    Ok((k, n))
}

fn parse_fault_seeds(s: &str) -> Result<std::ops::Range<u64>, String> {
    if s == "none" {
        Ok(0..0)
    } else {
        parse_seeds(s)
    }
}

fn parse_seeds(s: &str) -> Result<std::ops::Range<u64>, String> {
    let parse = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{x}` is not a seed (expected an unsigned integer)"))
    };
    match s.split_once("..") {
        Some((a, b)) => {
            let (a, b) = (parse(a)?, parse(b)?);
            if a >= b {
                return Err(format!("empty range {a}..{b}: expected A..B with A < B"));
            }
            Ok(a..b)
        }
        None => {
            let a = parse(s)?;
            Ok(a..a.saturating_add(1))
        }
    }
}

fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            seeds,
            world,
            jobs,
            keep_going,
            budget_s,
            name,
            report_dir,
            quiet,
            shard,
            check_determinism,
            require_coverage,
            no_shrink,
            shrink_cap_s,
        } => {
            let verdict = cmd_run(RunArgs {
                seeds,
                world: world.clone(),
                jobs,
                keep_going,
                budget_s,
                name,
                report_dir,
                quiet,
                shard,
                check_determinism,
                require_coverage,
            });
            match verdict {
                RunVerdict::Failed { seed, code } => {
                    if !no_shrink {
                        let out = PathBuf::from("scenarios/regressions");
                        let _ = shrink_seed(seed, &world, shrink_cap_s, &out);
                    }
                    ExitCode::from(code)
                }
                RunVerdict::Broken(code) => ExitCode::from(code),
                RunVerdict::Clean => ExitCode::SUCCESS,
            }
        }
        Command::Shrink {
            seed,
            world,
            time_cap_s,
            out,
        } => shrink_seed(seed, &world, time_cap_s, &out),
        Command::Replay { seed, world, trace } => cmd_replay(seed, world, trace),
        Command::Bugs {
            max_seeds,
            clean_seeds,
            only,
            store,
            jobs,
        } => cmd_bugs(max_seeds, clean_seeds, only, store, jobs),
        Command::Scenarios { paths, store } => cmd_scenarios(paths, store),
        Command::Crash {
            ops,
            planted,
            cut_step_bytes,
            fault_seeds,
            fault_ops,
        } => {
            let explored = cmd_crash(ops as usize, planted, cut_step_bytes);
            let faulted = cmd_crash_faulted(fault_seeds, fault_ops as usize, planted);
            if explored == ExitCode::SUCCESS {
                faulted
            } else {
                explored
            }
        }
        Command::Journal {
            action: JournalAction::Dump { file },
        } => cmd_journal_dump(&file),
        Command::Report {
            action:
                ReportAction::Merge {
                    dirs,
                    name,
                    report_dir,
                },
        } => cmd_report_merge(dirs, name, report_dir),
    }
}

fn print_failure(report: &SeedReport, config: &RunConfig) {
    println!(
        "\nFAILED seed {} ({} workload)",
        report.seed, report.workload
    );
    if let Some(v) = report.first_violation() {
        println!("invariant: {} ({:?})", v.id, v.kind);
    }
    for v in &report.violations {
        println!("  {v}");
    }
    if let Some(e) = &report.failure {
        println!("  world failure: {e}");
    }
    println!("options derived from the seed:\n{}", report.options);
    println!("last events of the trace:");
    for line in &report.trace_tail {
        println!("  {line}");
    }
    println!("trace-hash: {}", report.trace_hash);
    println!("replay: {}", config.replay_command(report.seed));
}

enum RunVerdict {
    Clean,
    Failed {
        seed: u64,
        code: u8,
    },
    /// No failing seed, but the campaign is not clean (nondeterminism, missing coverage).
    Broken(u8),
}

/// Shrinks `seed`'s failure into a regression scenario; prints the path.
fn shrink_seed(seed: u64, world: &WorldArgs, time_cap_s: u64, out: &std::path::Path) -> ExitCode {
    let config = world.config();
    let report = run_seed(seed, &config);
    let Some(target) = report.first_violation().map(|v| v.id) else {
        println!("seed {seed} passes: nothing to shrink");
        return ExitCode::from(EXIT_USAGE);
    };
    let scenario = sim::run::scenario_of(seed, &config);
    println!("shrinking seed {seed} (violates {target}), at most {time_cap_s} s ...");
    let shrunk = sim::shrink::shrink(
        &scenario,
        &sim::shrink::ShrinkOptions {
            target,
            planted: config.planted,
            store: config.store,
            time_cap: Duration::from_secs(time_cap_s),
        },
    );
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
    let file = sim::shrink::regression_file(&shrunk, target, seed, config.planted);
    let planted = config
        .planted
        .map(|p| format!("-planted-{p}"))
        .unwrap_or_default();
    let path = out.join(format!(
        "{}-seed-{seed}{planted}.toml",
        target.as_str().to_lowercase()
    ));
    let text = match file.to_toml() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot write the scenario: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Err(e) = std::fs::create_dir_all(out).and_then(|_| std::fs::write(&path, text)) {
        eprintln!("error: cannot write {}: {e}", path.display());
        return ExitCode::from(EXIT_USAGE);
    }
    println!("regression scenario: {}", path.display());
    println!(
        "replay it: cargo run --release -p sim -- scenarios {}",
        path.display()
    );
    ExitCode::SUCCESS
}

struct RunArgs {
    seeds: std::ops::Range<u64>,
    world: WorldArgs,
    jobs: Option<usize>,
    keep_going: bool,
    budget_s: Option<u64>,
    name: Option<String>,
    report_dir: PathBuf,
    quiet: bool,
    shard: Option<(u64, u64)>,
    check_determinism: Option<u8>,
    require_coverage: bool,
}

fn cmd_run(args: RunArgs) -> RunVerdict {
    let RunArgs {
        seeds,
        world,
        jobs,
        keep_going,
        budget_s,
        name,
        report_dir,
        quiet,
        shard,
        check_determinism,
        require_coverage,
    } = args;
    let config = world.config();
    let jobs = jobs.unwrap_or_else(default_jobs);
    let name = name.unwrap_or_else(|| {
        let planted = config.planted.map(|p| format!("-{p}")).unwrap_or_default();
        let shard = shard
            .map(|(k, n)| format!("-shard-{k}-of-{n}"))
            .unwrap_or_default();
        format!(
            "run-{}-{}-{}{planted}{shard}",
            seeds.start,
            seeds.end,
            config.workload_name()
        )
    });
    println!(
        "histsim run: seeds {}..{}, workload {}, store {:?}, planted {}, jobs {jobs}, turmoil {}",
        seeds.start,
        seeds.end,
        config.workload_name(),
        config.store,
        config
            .planted
            .map(|p| p.to_string())
            .unwrap_or_else(|| "none".into()),
        report::TURMOIL_VERSION
    );
    if let Some((k, n)) = shard {
        println!(
            "shard {k}/{n}: every seed whose offset from {} is {k} modulo {n}",
            seeds.start
        );
    }
    let result = run_campaign(&CampaignConfig {
        seeds: seeds.clone(),
        shard,
        jobs,
        stop_at_first: !keep_going,
        progress: !quiet,
        budget: budget_s.map(Duration::from_secs),
        run: config.clone(),
    });
    for f in &result.failures {
        print_failure(f, &config);
    }
    let mut summary = report::summary(&name, &config, seeds, shard, &result);
    let mut nondeterministic = false;
    if let Some(percent) = check_determinism {
        let ran: Vec<u64> = result.lines.iter().map(|l| l.seed).collect();
        let chosen = sim::determinism::chosen(&ran, percent);
        println!(
            "determinism: replaying {} seeds ({percent}%) in fresh processes",
            chosen.len()
        );
        let mut d = report::DeterminismSummary {
            percent,
            checked: chosen.clone(),
            mismatches: Vec::new(),
        };
        for seed in chosen {
            let Some(line) = result.lines.iter().find(|l| l.seed == seed) else {
                continue;
            };
            if let Some(m) = sim::determinism::check_seed(seed, &config, &line.trace_hash) {
                println!(
                    "NONDETERMINISTIC seed {seed}: trace-hash {} here, {} in a fresh process; {}",
                    m.hash_here, m.hash_fresh_process, m.first_difference
                );
                d.mismatches.push(m);
            }
        }
        nondeterministic = !d.mismatches.is_empty();
        if !nondeterministic {
            println!(
                "determinism: {} seeds, every trace hash matched",
                d.checked.len()
            );
        }
        summary.determinism = Some(d);
    }
    let uncovered = !summary.coverage_never_fired.is_empty();
    if uncovered {
        println!(
            "coverage: {} probes never fired: {}",
            summary.coverage_never_fired.len(),
            summary.coverage_never_fired.join(", ")
        );
    } else {
        println!("coverage: all {} probes fired", summary.coverage.len());
    }
    match report::write(&report_dir, &summary) {
        Ok(dir) => println!(
            "report: {} (summary.md, summary.json, junit.xml)",
            dir.display()
        ),
        Err(e) => eprintln!(
            "warning: cannot write the report under {}: {e}",
            report_dir.display()
        ),
    }
    let violations: usize = result.failures.iter().map(|f| f.violations.len()).sum();
    let world_failures = result
        .failures
        .iter()
        .filter(|f| f.failure.is_some())
        .count();
    if result.failures.is_empty() {
        if nondeterministic {
            println!(
                "FAILED: {} seeds, 0 violations, but nondeterministic",
                result.seeds_run()
            );
            return RunVerdict::Broken(EXIT_WORLD_FAILURE);
        }
        if require_coverage && uncovered {
            println!(
                "FAILED: {} seeds, 0 violations, but some probes never fired (--require-coverage)",
                result.seeds_run()
            );
            return RunVerdict::Broken(EXIT_VIOLATION);
        }
        println!(
            "ok: {} seeds, 0 violations, {:.1} seeds/s",
            result.seeds_run(),
            result.seeds_per_second()
        );
        RunVerdict::Clean
    } else {
        println!(
            "FAILED: {} seeds, {} failing, {violations} violations, {world_failures} world failures, {:.1} seeds/s",
            result.seeds_run(),
            result.failures.len(),
            result.seeds_per_second()
        );
        let safety = result
            .failures
            .iter()
            .flat_map(|f| &f.violations)
            .any(|v| v.kind == sim::outcome::ViolationKind::Safety);
        let code = if violations == 0 && world_failures > 0 {
            EXIT_WORLD_FAILURE
        } else if !safety {
            EXIT_LIVENESS
        } else {
            EXIT_VIOLATION
        };
        RunVerdict::Failed {
            seed: result.failures[0].seed,
            code,
        }
    }
}

fn cmd_replay(seed: u64, world: WorldArgs, trace: bool) -> ExitCode {
    let mut config = world.config();
    config.keep_trace = trace;
    let report = run_seed(seed, &config);
    println!("seed {seed}: {} workload", report.workload);
    println!("options derived from the seed:\n{}", report.options);
    if let Some(full) = &report.trace_full {
        println!("trace:");
        for line in full {
            println!("  {line}");
        }
    }
    if let Some(details) = &report.details {
        println!("answers:\n{details}");
    }
    println!(
        "steps: {}, trace events: {}, simulated {} ms",
        report.steps, report.trace_events, report.sim_elapsed_ms
    );
    for v in &report.violations {
        println!("violation {v}");
    }
    if let Some(e) = &report.failure {
        println!("world failure: {e}");
    }
    println!("trace-hash: {}", report.trace_hash);
    if report.failure.is_some() && report.violations.is_empty() {
        ExitCode::from(EXIT_WORLD_FAILURE)
    } else if !report.violations.is_empty() {
        ExitCode::from(EXIT_VIOLATION)
    } else {
        ExitCode::SUCCESS
    }
}

fn cmd_bugs(
    max_seeds: u64,
    clean_seeds: u64,
    only: Vec<BugId>,
    store: StoreKind,
    jobs: Option<usize>,
) -> ExitCode {
    let jobs = jobs.unwrap_or_else(default_jobs);
    let ids: Vec<BugId> = if only.is_empty() {
        bugs::planted_ids()
    } else {
        only
    };
    let mut base = RunConfig::new();
    base.store = store;
    println!(
        "histsim bugs: {} planted bugs, up to {max_seeds} seeds each, store {store:?}, jobs {jobs}",
        ids.len()
    );
    println!(
        "{:<5} {:<9} {:>8} {:>9}  {:<6} message",
        "ID", "workload", "seeds", "seconds", "fired"
    );
    let mut detected = 0;
    for id in &ids {
        if workload::covering(*id).is_none() {
            println!("{:<5} no workload of this build covers it", id.as_str());
            continue;
        }
        let d = bugs::hunt(*id, &base, max_seeds, jobs);
        if d.detected() {
            detected += 1;
        }
        println!(
            "{:<5} {:<9} {:>8} {:>9.2}  {:<6} {}",
            id.as_str(),
            d.workload.to_string(),
            d.seeds_to_detection
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
            d.seconds,
            d.fired
                .map(|f| f.to_string())
                .unwrap_or_else(|| "none".into()),
            truncate(d.message.as_deref().unwrap_or(""), 100)
        );
    }
    let clean = run_campaign(&CampaignConfig {
        seeds: 0..clean_seeds,
        shard: None,
        jobs,
        stop_at_first: true,
        progress: false,
        budget: None,
        run: base.clone(),
    });
    let clean_ok = clean.failures.is_empty();
    match clean.failures.first() {
        None => println!("clean: {} seeds, 0 violations", clean.seeds_run()),
        Some(f) => {
            println!("clean campaign FAILED:");
            print_failure(f, &base);
        }
    }
    println!("detected {detected}/{} planted bugs", ids.len());
    if detected == ids.len() && clean_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_VIOLATION)
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

fn cmd_scenarios(paths: Vec<PathBuf>, store: StoreKind) -> ExitCode {
    let mut files = Vec::new();
    for path in &paths {
        match discover(path) {
            Ok(f) => files.extend(f),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let scenario = match ScenarioFile::load(file) {
            Ok(s) => s,
            Err(e) => {
                println!("FAIL {}: {e}", file.display());
                failed += 1;
                continue;
            }
        };
        let with_bug = run_scenario_file(&scenario, store, Some(scenario.id));
        let without = run_scenario_file(&scenario, store, None);
        let reproduced = with_bug.violations.iter().any(|v| v.id == scenario.id);
        let first = with_bug.violations.first().map(|v| v.id);
        let fixed = without.violations.is_empty() && without.failure.is_none();
        if reproduced && fixed {
            passed += 1;
            println!(
                "ok   {} [{}] reproduces with the bug planted (first: {}), passes without",
                file.display(),
                scenario.id,
                first.map(|f| f.to_string()).unwrap_or_default()
            );
        } else {
            failed += 1;
            println!(
                "FAIL {} [{}] {}",
                file.display(),
                scenario.id,
                scenario.title
            );
            if !reproduced {
                println!(
                    "     with --planted {}: no {} violation (got: {})",
                    scenario.id,
                    scenario.id,
                    with_bug
                        .violations
                        .iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                );
            }
            if !fixed {
                for v in &without.violations {
                    println!("     without the bug: {v}");
                }
                if let Some(e) = &without.failure {
                    println!("     without the bug, the world failed: {e}");
                }
            }
        }
    }
    println!("scenarios: {passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_VIOLATION)
    }
}

fn cmd_crash(ops: usize, planted: Option<BugId>, cut_step_bytes: u64) -> ExitCode {
    let opts = sim::crash::CrashOptions {
        ops,
        planted: history::Planted::from_option(planted),
        cut_step_bytes,
        ..sim::crash::CrashOptions::default()
    };
    println!(
        "histsim crash: {ops} mutations, cuts every {cut_step_bytes} bytes, planted {}",
        planted
            .map(|p| p.to_string())
            .unwrap_or_else(|| "none".into())
    );
    let report = sim::crash::explore(&opts);
    println!("{}", report.summary());
    println!(
        "crash: {} states checked, {} failed",
        report.states_checked, report.states_failed
    );
    for (id, n) in &report.failed_by_id {
        println!("  {id}: {n} failed states");
    }
    for f in &report.failures {
        let cut = f
            .cut_at
            .map(|c| format!(", cut after {c} bytes"))
            .unwrap_or_default();
        let lost = if f.lose_unsynced {
            ", unsynced writes lost"
        } else {
            ""
        };
        println!(
            "  [{}] disk event {}{cut}{lost} (op {:?}): {}",
            f.bug_id,
            f.write_index,
            f.op_index,
            truncate(&f.description, 200)
        );
    }
    if report.states_failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_VIOLATION)
    }
}

fn cmd_crash_faulted(seeds: std::ops::Range<u64>, ops: usize, planted: Option<BugId>) -> ExitCode {
    if seeds.is_empty() {
        return ExitCode::SUCCESS;
    }
    println!(
        "histsim crash, faulty disk: seeds {}..{}, {ops} mutations each",
        seeds.start, seeds.end
    );
    let report = sim::crash::run_faulted(&sim::crash::FaultedOptions {
        seeds,
        ops,
        planted: history::Planted::from_option(planted),
    });
    println!("{}", report.summary());
    for f in report.failures.iter().take(20) {
        println!(
            "  [{}] seed {} op {}: {}",
            f.bug_id,
            f.seed,
            f.op_index,
            truncate(&f.description, 300)
        );
    }
    println!(
        "faulty disk: {} seeds, {} failed",
        report.seeds_run,
        report.failures.len()
    );
    if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_VIOLATION)
    }
}

fn cmd_journal_dump(file: &std::path::Path) -> ExitCode {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return ExitCode::from(EXIT_USAGE);
        }
    };
    for line in history::journal::dump_records(&bytes) {
        match line {
            Ok(record) => println!("{record}"),
            Err(e) => {
                eprintln!(
                    "error: {}: corrupt {e} (byte offset {})",
                    file.display(),
                    e.offset
                );
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    ExitCode::SUCCESS
}

fn cmd_report_merge(dirs: Vec<PathBuf>, name: String, report_dir: PathBuf) -> ExitCode {
    let mut parts = Vec::new();
    for dir in &dirs {
        match report::Summary::read(dir) {
            Ok(s) => parts.push(s),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    let merged = match report::Summary::merge(&parts, &name) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match report::write(&report_dir, &merged) {
        Ok(dir) => println!(
            "merged {} reports: {} seeds, {} failing -> {}",
            parts.len(),
            merged.seeds_run,
            merged.seeds_failed,
            dir.display()
        ),
        Err(e) => {
            eprintln!("error: cannot write the merged report: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    if merged.seeds_failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_VIOLATION)
    }
}
