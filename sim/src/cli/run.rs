//! `histsim run`: a campaign over a range of seeds, its report, and the first failure shrunk.

use super::args::{default_jobs, parse_seeds, WorldArgs};
use super::shard::{parse_shard_spec, Shard, ShardSpec};
use crate::campaign::{run_campaign, CampaignConfig, CampaignResult};
use crate::report::{self, DeterminismSummary, Summary};
use crate::run::{RunConfig, SeedReport};
use crate::verdict::Verdict;
use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

/// The default campaign's seeds: about a minute on 2 cores.
const DEFAULT_SEEDS: &str = "0..8000";

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Seeds as `A..B` (B excluded) or a single seed.
    #[arg(long, default_value = DEFAULT_SEEDS, value_parser = parse_seeds)]
    pub(crate) seeds: Range<u64>,
    #[command(flatten)]
    pub(crate) world: WorldArgs,
    /// Worker threads (each runs whole seeds); default: the number of cores, twice that with
    /// `--sut`.
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
    /// `auto` reads K (and N) from the job engine's environment: `HISTSIM_SHARD_INDEX`/`_COUNT`,
    /// a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` (with `--shard-count`), GitLab's
    /// `CI_NODE_INDEX`/`CI_NODE_TOTAL`, CircleCI's and Buildkite's.
    #[arg(long, value_parser = parse_shard_spec)]
    pub(crate) shard: Option<ShardSpec>,
    /// N for `--shard auto` where the engine gives only the index (a Kubernetes Indexed Job:
    /// its `completions`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    shard_count: Option<u64>,
    /// Replay this percentage of the seeds in fresh processes and compare trace hashes.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    check_determinism: Option<u8>,
    /// Fail (exit 5) when some fault or feature probe of the campaign's workloads never fired.
    #[arg(long)]
    require_coverage: bool,
    /// Do not shrink the first failing seed into a regression scenario.
    #[arg(long)]
    no_shrink: bool,
    /// Time cap of the automatic shrink.
    #[arg(long, default_value_t = 30)]
    shrink_cap_s: u64,
    /// Where the automatic shrink writes its scenario file.
    #[arg(long, default_value = "scenarios/regressions")]
    pub(crate) shrink_out: PathBuf,
}

pub(crate) fn cmd(args: RunArgs) -> Verdict {
    let config = match args.world.config() {
        Ok(c) => c,
        Err(e) => return Verdict::usage(&e),
    };
    let shard = match super::shard::resolve(args.shard, args.shard_count, &|name| {
        std::env::var(name).ok()
    }) {
        Ok(s) => s,
        Err(e) => return Verdict::usage(&e),
    };
    let shard_pair = shard.as_ref().map(|s| (s.index, s.count));
    let jobs = args
        .jobs
        .unwrap_or_else(|| default_jobs(config.sut.is_some()));
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| default_name(&args, &config, shard_pair));
    print_header(&args, &config, jobs, shard.as_ref());
    let result = run_campaign(&CampaignConfig {
        seeds: args.seeds.clone(),
        shard: shard_pair,
        jobs,
        stop_at_first: !args.keep_going,
        progress: !args.quiet,
        budget: args.budget_s.map(Duration::from_secs),
        run: config.clone(),
    });
    for f in &result.failures {
        print_failure(f, &config);
    }
    let mut summary = report::summary(&name, &config, args.seeds.clone(), shard_pair, &result);
    if let Some(percent) = args.check_determinism {
        summary.determinism = Some(check_determinism(&result, &config, percent));
    }
    let uncovered = print_coverage(&summary);
    print_left_out(&summary.left_out);
    write_report(&args.report_dir, &summary, &result.failures);
    let verdict = verdict_of(&result, &summary, args.require_coverage && uncovered);
    if let Some(first) = result.failures.first() {
        if !args.no_shrink {
            super::shrink::shrink_seed(first.seed, &config, args.shrink_cap_s, &args.shrink_out);
        }
    }
    verdict
}

fn default_name(args: &RunArgs, config: &RunConfig, shard: Option<(u64, u64)>) -> String {
    let planted = config.planted.map(|p| format!("-{p}")).unwrap_or_default();
    let shard = shard
        .map(|(k, n)| format!("-shard-{k}-of-{n}"))
        .unwrap_or_default();
    format!(
        "run-{}-{}-{}{planted}{shard}",
        args.seeds.start,
        args.seeds.end,
        config.workload_name()
    )
}

fn print_header(args: &RunArgs, config: &RunConfig, jobs: usize, shard: Option<&Shard>) {
    println!(
        "histsim run: seeds {}..{}, workload {}, store {:?}, planted {}, jobs {jobs}, turmoil {}",
        args.seeds.start,
        args.seeds.end,
        config.workload_name(),
        config.store,
        config
            .planted
            .map(|p| p.to_string())
            .unwrap_or_else(|| "none".into()),
        report::TURMOIL_VERSION
    );
    if let Some(sut) = &config.sut {
        println!(
            "system under test: `{}` (answer timeout {} ms)",
            sut.command, sut.timeout_ms
        );
    }
    if let Some(Shard {
        index: k,
        count: n,
        source,
    }) = shard
    {
        println!(
            "shard {k}/{n} (from {source}): every seed whose offset from {} is {k} modulo {n}",
            args.seeds.start
        );
    }
}

/// Replays `percent` of the seeds run in fresh processes; every mismatch is printed.
fn check_determinism(
    result: &CampaignResult,
    config: &RunConfig,
    percent: u8,
) -> DeterminismSummary {
    let ran: Vec<u64> = result.lines.iter().map(|l| l.seed).collect();
    let chosen = crate::determinism::chosen(&ran, percent);
    println!(
        "determinism: replaying {} seeds ({percent}%) in fresh processes",
        chosen.len()
    );
    let mut d = DeterminismSummary {
        percent,
        checked: chosen.clone(),
        mismatches: Vec::new(),
    };
    for seed in chosen {
        let Some(line) = result.lines.iter().find(|l| l.seed == seed) else {
            continue;
        };
        if let Some(m) = crate::determinism::check_seed(seed, config, &line.trace_hash) {
            println!(
                "NONDETERMINISTIC seed {seed}: trace-hash {} here, {} in a fresh process; {}",
                m.hash_here, m.hash_fresh_process, m.first_difference
            );
            d.mismatches.push(m);
        }
    }
    if d.mismatches.is_empty() {
        println!(
            "determinism: {} seeds, every trace hash matched",
            d.checked.len()
        );
    }
    d
}

/// Prints the probes that never fired; returns whether there were any.
fn print_coverage(summary: &Summary) -> bool {
    let never = &summary.coverage_never_fired;
    if never.is_empty() {
        println!("coverage: all {} probes fired", summary.coverage.len());
    } else {
        println!(
            "coverage: {} probes never fired: {}",
            never.len(),
            never.join(", ")
        );
    }
    !never.is_empty()
}

/// What the checks did not ask of the system under test (an op it does not serve, a known
/// difference it declares), so no check weakens in silence.
pub(crate) fn print_left_out(left_out: &std::collections::BTreeMap<String, u64>) {
    for (what, n) in left_out {
        println!("left out ({n}x): {what}");
    }
}

fn write_report(report_dir: &std::path::Path, summary: &Summary, failed: &[SeedReport]) {
    match report::write(report_dir, summary, failed) {
        Ok(dir) => println!(
            "report: {} (summary.md, summary.json, junit.xml)",
            dir.display()
        ),
        Err(e) => eprintln!(
            "warning: cannot write the report under {}: {e}",
            report_dir.display()
        ),
    }
}

/// The campaign's verdict, with its closing line.
fn verdict_of(result: &CampaignResult, summary: &Summary, uncovered: bool) -> Verdict {
    let seeds = result.seeds_run();
    let rate = result.seeds_per_second();
    let steps_rate = result.steps_per_second();
    if !result.failures.is_empty() {
        let violations: usize = result.failures.iter().map(|f| f.violations.len()).sum();
        let world_failures = result
            .failures
            .iter()
            .filter(|f| f.failure.is_some())
            .count();
        println!(
            "FAILED: {seeds} seeds, {} failing, {violations} violations, {world_failures} world failures, {rate:.1} seeds/s, {steps_rate:.0} steps/s",
            result.failures.len(),
        );
        return result.failures.iter().map(Verdict::of_seed).collect();
    }
    let nondeterministic = summary
        .determinism
        .as_ref()
        .is_some_and(|d| !d.mismatches.is_empty());
    if nondeterministic {
        println!("FAILED: {seeds} seeds, 0 violations, but nondeterministic");
        return Verdict::Nondeterministic;
    }
    if uncovered {
        println!(
            "FAILED: {seeds} seeds, 0 violations, but some probes never fired (--require-coverage)"
        );
        return Verdict::Uncovered;
    }
    println!("ok: {seeds} seeds, 0 violations, {rate:.1} seeds/s, {steps_rate:.0} steps/s");
    Verdict::Clean
}

/// A failing seed: its violations, options, the end of its trace and how to replay it.
pub(crate) fn print_failure(report: &SeedReport, config: &RunConfig) {
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
