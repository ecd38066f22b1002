//! `histsim run`: a campaign over a range of seeds, its report, and the first failure shrunk.

use super::args::{default_jobs, parse_campaign_name, parse_jobs, parse_seeds, WorldArgs};
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
    #[arg(long, value_parser = parse_jobs)]
    jobs: Option<usize>,
    /// Keep going after the first failing seed.
    #[arg(long)]
    keep_going: bool,
    /// Stop starting seeds after this many seconds of wall time.
    #[arg(long)]
    budget_s: Option<u64>,
    /// Campaign name (a plain name, no path): reports go to <report-dir>/<name>/. Default:
    /// `run-<start>-<end>-<workload>-<store>[-<planted>][-sut-<digest of the --sut command>]
    /// [-shard-K-of-N]`, so campaigns of different systems never share a report.
    #[arg(long, value_parser = parse_campaign_name)]
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
    /// Fail (exit 5) when some fault or feature probe of the campaign's workloads never fired,
    /// or when the worlds left work out (an op the system under test does not serve, a crash
    /// of a store that declares no durability, a known difference it declares) that
    /// `--allow-left-out` does not name.
    #[arg(long)]
    require_coverage: bool,
    /// Left-out work `--require-coverage` accepts, by name: an op the system does not serve
    /// (`list_events_filtered`), `store_crash` (a store that declares no durability), a known
    /// difference's ID (`D1`). The summary names each left-out entry's name.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    allow_left_out: Vec<String>,
    /// Do not shrink the first failing seed into a regression scenario.
    #[arg(long)]
    no_shrink: bool,
    /// Time cap of the automatic shrink.
    #[arg(long, default_value_t = 30)]
    shrink_cap_s: u64,
    /// Where the automatic shrink writes its scenario file. Default: `./histsim-regressions/`
    /// in the current directory with `--sut` (a regression of your system), else
    /// `scenarios/regressions`.
    #[arg(
        long = "regressions-dir",
        visible_alias = "shrink-out",
        value_name = "DIR"
    )]
    pub(crate) shrink_out: Option<PathBuf>,
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
    // Before the campaign, not after it: a report that cannot be written would lose its verdict.
    if let Err(e) = check_writable(&args.report_dir, &name) {
        return Verdict::usage(&format!(
            "--report-dir {}: cannot write the report {name}/ there: {e}",
            args.report_dir.display()
        ));
    }
    let result = run_campaign(&CampaignConfig {
        seeds: args.seeds.clone(),
        shard: shard_pair,
        jobs,
        stop_at_first: !args.keep_going,
        progress: !args.quiet,
        budget: args.budget_s.map(Duration::from_secs),
        run: config.clone(),
    });
    if result.seeds_run() == 0 {
        return nothing_checked(&args, shard_pair);
    }
    for (i, f) in result.failures.iter().enumerate() {
        print_failure(f, &config, i < TRACED_FAILURES_MAX);
    }
    let mut summary = report::summary(&name, &config, args.seeds.clone(), shard_pair, &result);
    summary.judge_left_out(&args.allow_left_out);
    if let Some(percent) = args.check_determinism {
        summary.determinism = Some(check_determinism(&result, &config, percent));
    }
    print_coverage(&summary);
    print_left_out(&summary.left_out);
    print_not_covered(&summary);
    for line in report::answer_lines(&summary.answers, &summary.left_out) {
        println!("{line}");
    }
    let mut verdict = verdict_of(&result, &summary, args.require_coverage);
    if !write_report(&args.report_dir, &summary, &result.failures, &config) {
        verdict = verdict.worst(Verdict::Usage);
    }
    if let Some(first) = result.failures.first() {
        if !args.no_shrink {
            let out = super::shrink::regressions_dir(args.shrink_out.as_deref(), &config);
            super::shrink::shrink_failure(first, &config, args.shrink_cap_s, &out);
        }
    }
    verdict
}

/// A campaign that ran no seed: it checked nothing, so it never passes, and it writes no report
/// (an earlier report of the same name stays as it was).
fn nothing_checked(args: &RunArgs, shard: Option<(u64, u64)>) -> Verdict {
    let (start, end) = (args.seeds.start, args.seeds.end);
    let why = match (shard, args.budget_s) {
        (Some((k, n)), _) if end - start <= k => {
            format!("shard {k}/{n} of seeds {start}..{end} holds no seed")
        }
        (_, Some(budget)) => format!("--budget-s {budget} ended before the first seed"),
        _ => "no seed was started".to_string(),
    };
    println!("FAILED: no seed ran ({why}): nothing was checked; no report written");
    Verdict::NothingChecked
}

/// The default campaign name: everything that makes two campaigns' seeds differ, so that a
/// campaign never overwrites the report of another (another store, bug or system under test).
fn default_name(args: &RunArgs, config: &RunConfig, shard: Option<(u64, u64)>) -> String {
    let store = format!("{:?}", config.store).to_lowercase();
    let planted = config.planted.map(|p| format!("-{p}")).unwrap_or_default();
    let sut = config
        .sut
        .as_ref()
        .map(|s| format!("-sut-{}", command_digest(&s.command)))
        .unwrap_or_default();
    let shard = shard
        .map(|(k, n)| format!("-shard-{k}-of-{n}"))
        .unwrap_or_default();
    format!(
        "run-{}-{}-{}-{store}{planted}{sut}{shard}",
        args.seeds.start,
        args.seeds.end,
        config.workload_name()
    )
}

/// Eight hex digits of a `--sut` command's xxh3 (stable across runs and machines): a command
/// is no directory name, and two commands must not share one.
fn command_digest(command: &str) -> String {
    format!(
        "{:08x}",
        xxhash_rust::xxh3::xxh3_64(command.as_bytes()) >> 32
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

/// Prints the probes that never fired.
fn print_coverage(summary: &Summary) {
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
}

/// Prints the names of the left-out work: not covered, or allowed by `--allow-left-out`.
fn print_not_covered(summary: &Summary) {
    if !summary.left_out_not_covered.is_empty() {
        println!(
            "not covered (left out): {} (--require-coverage fails on these unless \
             --allow-left-out names them)",
            summary.left_out_not_covered.join(", ")
        );
    }
    if !summary.left_out_allowed.is_empty() {
        println!(
            "left out, allowed by --allow-left-out: {}",
            summary.left_out_allowed.join(", ")
        );
    }
}

/// What the checks did not ask of the system under test (an op it does not serve, a known
/// difference it declares), so no check weakens in silence.
pub(crate) fn print_left_out(left_out: &std::collections::BTreeMap<String, u64>) {
    for (what, n) in left_out {
        println!("left out ({n}x): {what}");
    }
}

/// Whether a report of `campaign` can be written under `dir`: creates `dir` and a file (removed
/// at once) where the report's files would go. A campaign checks this before it starts, so a
/// report directory it cannot write is a usage error, not a verdict lost after the work.
fn check_writable(dir: &std::path::Path, campaign: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let out = dir.join(campaign);
    // An existing report directory is probed in place and otherwise left untouched: a campaign
    // that runs no seed must not change it.
    let probe_in = if out.exists() { out } else { dir.to_path_buf() };
    tempfile::Builder::new()
        .prefix(".histsim-write-check-")
        .tempfile_in(&probe_in)
        .map(drop)
}

/// Writes the report; `false` (after an error naming the directory) when it could not be.
fn write_report(
    report_dir: &std::path::Path,
    summary: &Summary,
    failed: &[SeedReport],
    config: &RunConfig,
) -> bool {
    let written = report::write(report_dir, summary, failed)
        .and_then(|dir| report::pages::write(&dir, summary, config).map(|pages| (dir, pages)));
    match written {
        Ok((dir, pages)) => {
            println!(
                "report: {} (summary.md, summary.json, junit.xml, index.html, {} seed pages)",
                dir.display(),
                pages.len()
            );
            true
        }
        Err(e) => {
            eprintln!(
                "error: --report-dir {}: cannot write the report: {e}",
                report_dir.display()
            );
            false
        }
    }
}

/// The campaign's verdict, with its closing line; `require_coverage`: probes that never fired
/// and left-out work nobody allowed fail it.
fn verdict_of(result: &CampaignResult, summary: &Summary, require_coverage: bool) -> Verdict {
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
    let never_fired = summary.coverage_never_fired.len();
    let not_covered = &summary.left_out_not_covered;
    if require_coverage && (never_fired > 0 || !not_covered.is_empty()) {
        let mut why = Vec::new();
        if never_fired > 0 {
            why.push(format!("{never_fired} probes never fired"));
        }
        if !not_covered.is_empty() {
            why.push(format!(
                "left out and not covered: {} (allow with --allow-left-out {})",
                not_covered.join(", "),
                not_covered.join(",")
            ));
        }
        println!(
            "FAILED: {seeds} seeds, 0 violations, but not covered (--require-coverage): {}",
            why.join("; ")
        );
        return Verdict::Uncovered;
    }
    println!("ok: {seeds} seeds, 0 violations, {rate:.1} seeds/s, {steps_rate:.0} steps/s");
    Verdict::Clean
}

/// How many failing seeds a campaign plays again to show the trace lines their violation
/// concerns (each is one more play of the seed); later ones show their last events.
pub const TRACED_FAILURES_MAX: usize = 5;

/// A played seed's or scenario's `violations`, each with its first wrong answer, then its
/// world's `failure`: every line opened by `indent`, a violation's by `indent` and `word`.
pub(crate) fn print_findings(
    (violations, failure): (&[crate::outcome::Violation], Option<&str>),
    indent: &str,
    word: &str,
) {
    for v in violations {
        println!("{indent}{word}{v}");
        if let Some(d) = v.first_wrong_answer() {
            println!("{indent}  first wrong answer: {d}");
        }
    }
    if let Some(e) = failure {
        println!("{indent}world failure: {e}");
    }
}

/// A failing seed: its violations, options, the trace lines its first violation concerns
/// (played again when `replay`) or the end of its trace, and how to replay it.
pub(crate) fn print_failure(report: &SeedReport, config: &RunConfig, replay: bool) {
    println!(
        "\nFAILED seed {} ({} workload)",
        report.seed, report.workload
    );
    if let Some(v) = report.first_violation() {
        println!("invariant: {} ({})", v.id, v.kind_word());
    }
    print_findings((&report.violations, report.failure.as_deref()), "  ", "");
    println!("options derived from the seed:\n{}", report.options);
    let (what, lines) = report.shown_trace(config, replay);
    println!("{what}:");
    for line in &lines {
        println!("  {line}");
    }
    println!("trace-hash: {}", report.trace_hash);
    println!("replay: {}", config.replay_command(report.seed));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::SeedLine;
    use crate::coverage::Coverage;

    /// A campaign of one clean seed of no registered workload (so no probe is declared, and
    /// none can stay unfired) that left `left_out` out. Built from an empty campaign, so every
    /// other field is what a campaign gives.
    fn campaign_leaving_out(left_out: &str) -> CampaignResult {
        let mut result = run_campaign(&CampaignConfig {
            seeds: 0..0,
            shard: None,
            jobs: 1,
            stop_at_first: false,
            progress: false,
            budget: None,
            run: RunConfig::new(),
        });
        result.lines = vec![SeedLine {
            seed: 0,
            workload: "none".into(),
            trace_hash: "0".into(),
            passed: true,
            steps: 1,
            converged_after_ms: None,
        }];
        result.left_out = Coverage::default();
        result.left_out.hit(left_out);
        result
    }

    fn verdict(result: &CampaignResult, allowed: &[&str], require_coverage: bool) -> Verdict {
        let allowed: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
        let config = RunConfig::new();
        let mut summary = report::summary("t", &config, 0..1, None, result);
        summary.judge_left_out(&allowed);
        assert!(summary.coverage_never_fired.is_empty());
        verdict_of(result, &summary, require_coverage)
    }

    #[test]
    fn a_sut_commands_digest_is_eight_hex_digits_that_tell_commands_apart() {
        let d = command_digest("histsim serve runs");
        // Pinned: a report's name must not change between runs, machines or histsim builds.
        assert_eq!(d, "ff1bb4ac");
        assert_ne!(d, command_digest("histsim serve runs --store sqlite"));
    }

    #[test]
    fn left_out_work_fails_require_coverage_unless_allowed_by_name() {
        let result = campaign_leaving_out(
            "the client's `events` reads (the system does not serve list_events)",
        );
        assert_eq!(verdict(&result, &[], true), Verdict::Uncovered);
        assert_eq!(verdict(&result, &["list_event"], true), Verdict::Uncovered);
        assert_eq!(verdict(&result, &["list_events"], true), Verdict::Clean);
        assert_eq!(verdict(&result, &[], false), Verdict::Clean);
        let crash = campaign_leaving_out(
            "store crash: a restart that keeps the store's data (it declares no durability)",
        );
        assert_eq!(verdict(&crash, &["list_events"], true), Verdict::Uncovered);
        assert_eq!(verdict(&crash, &["store_crash"], true), Verdict::Clean);
    }
}
