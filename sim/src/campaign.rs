//! Campaigns: many seeds, in parallel threads (each seed is a self-contained single-threaded
//! world, so threads never touch simulated code), with progress and a deterministic verdict.
//!
//! With `stop_at_first`, once seed `s` fails no seed above `s` is started, but every seed below it
//! still finishes: the first failing seed reported is the same on every machine, whatever the
//! number of threads.

use crate::coverage::Coverage;
use crate::pace::SeedsOverTime;
use crate::run::{run_seed, RunConfig, SeedReport};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Seconds between progress lines when stderr is not a terminal.
const PROGRESS_LINE_S: u64 = 10;

pub struct CampaignConfig {
    pub seeds: std::ops::Range<u64>,
    /// Run only the seeds of this shard: `(k, n)` takes every seed whose offset from the start is
    /// `k` modulo `n`, so shards are disjoint and together cover the range.
    pub shard: Option<(u64, u64)>,
    pub jobs: usize,
    pub stop_at_first: bool,
    pub progress: bool,
    /// Stop starting new seeds once this much wall time has passed (a budget, not a limit on a seed).
    pub budget: Option<Duration>,
    pub run: RunConfig,
}

/// One line per seed in the JSON report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SeedLine {
    pub seed: u64,
    /// The workload's name.
    pub workload: String,
    pub trace_hash: String,
    pub passed: bool,
    pub steps: usize,
    /// Simulated ms from healing until convergence (liveness phase).
    pub converged_after_ms: Option<u64>,
}

pub struct CampaignResult {
    /// Every seed run, by seed.
    pub lines: Vec<SeedLine>,
    /// Full reports of the failing seeds, by seed.
    pub failures: Vec<SeedReport>,
    pub elapsed: Duration,
    pub steps_total: u64,
    /// Probes fired, summed over every seed run.
    pub coverage: crate::coverage::Coverage,
    /// The workloads that ran, for the probes they declare.
    pub workloads: std::collections::BTreeSet<String>,
    /// What the checks did not ask of the system under test (an op it does not serve, a crash it
    /// declares no durability for, a known difference it declares), summed.
    pub left_out: Coverage,
    /// What a system under test answered, op by op, summed ([`crate::sut::tally`]).
    pub answers: Coverage,
    /// Seeds finished per second of wall time, over the campaign: a figure to look at, never a
    /// verdict (it varies with the machine's load).
    pub seeds_over_time: SeedsOverTime,
}

impl CampaignResult {
    pub fn seeds_run(&self) -> usize {
        self.lines.len()
    }

    pub fn seeds_per_second(&self) -> f64 {
        self.lines.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Steps (the events the agents emitted, or the operations the workload issued) a second:
    /// the throughput that does not depend on how many seeds drew a long thread.
    pub fn steps_per_second(&self) -> f64 {
        self.steps_total as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

pub fn run_campaign(config: &CampaignConfig) -> CampaignResult {
    let start = Instant::now();
    let (shard_k, shard_n) = config.shard.unwrap_or((0, 1));
    assert!(
        shard_n >= 1 && shard_k < shard_n,
        "shard {shard_k}/{shard_n}"
    );
    let total = (config.seeds.end.saturating_sub(config.seeds.start))
        .saturating_sub(shard_k)
        .div_ceil(shard_n);
    let progress = Progress::new(total, config.progress, start);
    let shared = Shared::default();
    std::thread::scope(|scope| {
        for k in 0..config.jobs.max(1) {
            let (shared, progress) = (&shared, &progress);
            scope.spawn(move || {
                if config.run.sut.as_ref().is_some_and(|sut| sut.share_cpu) {
                    crate::sut::affinity::share_one_cpu(k);
                }
                worker(config, total, shared, progress)
            });
        }
    });
    progress.bar.finish_and_clear();
    collect(config, shared, start)
}

/// What the worker threads share.
#[derive(Default)]
struct Shared {
    /// The next seed to hand out, by index within the shard.
    next: AtomicU64,
    /// The lowest failing seed so far (`u64::MAX`: none), with `stop_at_first`.
    first_failure: AtomicU64Max,
    lines: Mutex<Vec<SeedLine>>,
    /// Per seed: the probes that fired, and what was left out for the system under test.
    /// Per seed: its probes, what it left out and what the system under test answered.
    coverages: Mutex<Vec<(u64, Coverage, Coverage, Coverage)>>,
    failures: Mutex<Vec<SeedReport>>,
    /// Per seed: the wall ms from the campaign's start until it finished.
    finished_ms: Mutex<Vec<(u64, u64)>>,
}

/// An `AtomicU64` that starts at `u64::MAX`.
struct AtomicU64Max(AtomicU64);

impl Default for AtomicU64Max {
    fn default() -> Self {
        AtomicU64Max(AtomicU64::new(u64::MAX))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One thread: takes seeds until the range, the budget or a lower failure ends it.
fn worker(config: &CampaignConfig, total: u64, shared: &Shared, progress: &Progress) {
    let (shard_k, shard_n) = config.shard.unwrap_or((0, 1));
    loop {
        let index = shared.next.fetch_add(1, Ordering::SeqCst);
        let seed = config
            .seeds
            .start
            .saturating_add(shard_k)
            .saturating_add(index.saturating_mul(shard_n));
        if index >= total
            || seed >= config.seeds.end
            || seed > shared.first_failure.0.load(Ordering::SeqCst)
            || config.budget.is_some_and(|b| progress.start.elapsed() >= b)
        {
            return;
        }
        let report = run_seed(seed, &config.run);
        let finished_ms = progress.start.elapsed().as_millis() as u64;
        lock(&shared.finished_ms).push((seed, finished_ms));
        lock(&shared.coverages).push((
            seed,
            report.coverage.clone(),
            report.left_out.clone(),
            report.answers.clone(),
        ));
        let line = SeedLine {
            seed,
            workload: report.workload.to_string(),
            trace_hash: report.trace_hash.clone(),
            passed: report.passed(),
            steps: report.steps,
            converged_after_ms: report.converged_after_ms,
        };
        if !report.passed() {
            if config.stop_at_first {
                shared.first_failure.0.fetch_min(seed, Ordering::SeqCst);
            }
            progress.bar.set_message(format!("failing seed {seed}"));
            lock(&shared.failures).push(report);
        }
        let done = {
            let mut lines = lock(&shared.lines);
            lines.push(line);
            lines.len()
        };
        progress.seed_done(done as u64);
    }
}

/// The campaign's result, independent of thread timing but for its wall-time figures.
fn collect(config: &CampaignConfig, shared: Shared, start: Instant) -> CampaignResult {
    let mut lines = shared.lines.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut failures = shared
        .failures
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    if config.stop_at_first {
        // Seeds above the first failure that were already running are dropped from the verdict,
        // so the result does not depend on thread timing.
        let cut = failures.iter().map(|f| f.seed).min().unwrap_or(u64::MAX);
        lines.retain(|l| l.seed <= cut);
        failures.retain(|f| f.seed <= cut);
    }
    lines.sort_by_key(|l| l.seed);
    failures.sort_by_key(|f| f.seed);
    let last_seed = lines.last().map(|l| l.seed).unwrap_or(0);
    let (mut coverage, mut left_out, mut answers) = Default::default();
    let coverages = shared
        .coverages
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    for (seed, c, l, a) in coverages {
        if seed <= last_seed {
            Coverage::add(&mut coverage, &c);
            Coverage::add(&mut left_out, &l);
            Coverage::add(&mut answers, &a);
        }
    }
    let finished_ms: Vec<u64> = (shared.finished_ms.into_inner())
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .filter(|(seed, _)| lines.binary_search_by_key(seed, |l| l.seed).is_ok())
        .map(|(_, ms)| ms)
        .collect();
    CampaignResult {
        seeds_over_time: SeedsOverTime::of(&finished_ms),
        steps_total: lines.iter().map(|l| l.steps as u64).sum(),
        workloads: lines.iter().map(|l| l.workload.clone()).collect(),
        lines,
        failures,
        elapsed: start.elapsed(),
        coverage,
        left_out,
        answers,
    }
}

/// Progress of a campaign: a bar on a terminal, a line every [`PROGRESS_LINE_S`] seconds in a CI
/// log, nothing when switched off.
struct Progress {
    bar: ProgressBar,
    /// Lines instead of a bar (stderr is not a terminal).
    lines: bool,
    total: u64,
    start: Instant,
    last_line: Mutex<Instant>,
}

impl Progress {
    fn new(total: u64, enabled: bool, start: Instant) -> Progress {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let bar = if enabled && terminal {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} seeds {per_sec} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        } else {
            ProgressBar::hidden()
        };
        Progress {
            bar,
            lines: enabled && !terminal,
            total,
            start,
            last_line: Mutex::new(start),
        }
    }

    fn seed_done(&self, done: u64) {
        self.bar.inc(1);
        if !self.lines {
            return;
        }
        let mut last = lock(&self.last_line);
        if last.elapsed().as_secs() >= PROGRESS_LINE_S {
            *last = Instant::now();
            let secs = self.start.elapsed().as_secs_f64();
            eprintln!(
                "progress: {done}/{} seeds, {:.1} seeds/s, {:.0} s",
                self.total,
                done as f64 / secs.max(1e-9),
                secs
            );
        }
    }
}
