//! Campaigns: many seeds, in parallel threads (each seed is a self-contained single-threaded
//! world, so threads never touch simulated code), with progress and a deterministic verdict.
//!
//! With `stop_at_first`, once seed `s` fails no seed above `s` is started, but every seed below it
//! still finishes: the first failing seed reported is the same on every machine, whatever the
//! number of threads.

use crate::run::{run_seed, RunConfig, SeedReport};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct CampaignConfig {
    pub seeds: std::ops::Range<u64>,
    pub jobs: usize,
    pub stop_at_first: bool,
    pub progress: bool,
    /// Stop starting new seeds once this much wall time has passed (a budget, not a limit on a seed).
    pub budget: Option<Duration>,
    pub run: RunConfig,
}

/// One line per seed in the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct SeedLine {
    pub seed: u64,
    pub workload: crate::run::Workload,
    pub trace_hash: String,
    pub passed: bool,
    pub steps: usize,
}

pub struct CampaignResult {
    /// Every seed run, by seed.
    pub lines: Vec<SeedLine>,
    /// Full reports of the failing seeds, by seed.
    pub failures: Vec<SeedReport>,
    pub elapsed: Duration,
    pub steps_total: u64,
}

impl CampaignResult {
    pub fn seeds_run(&self) -> usize {
        self.lines.len()
    }

    pub fn seeds_per_second(&self) -> f64 {
        self.lines.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

pub fn run_campaign(config: &CampaignConfig) -> CampaignResult {
    let start = Instant::now();
    let total = config.seeds.end.saturating_sub(config.seeds.start);
    let bar = if config.progress {
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
    let next = AtomicU64::new(config.seeds.start);
    let first_failure = AtomicU64::new(u64::MAX);
    let lines = Mutex::new(Vec::<SeedLine>::new());
    let failures = Mutex::new(Vec::<SeedReport>::new());
    let jobs = config.jobs.max(1);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::SeqCst);
                if seed >= config.seeds.end || seed > first_failure.load(Ordering::SeqCst) {
                    break;
                }
                if config.budget.is_some_and(|b| start.elapsed() >= b) {
                    break;
                }
                let report = run_seed(seed, &config.run);
                let line = SeedLine {
                    seed,
                    workload: report.workload,
                    trace_hash: report.trace_hash.clone(),
                    passed: report.passed(),
                    steps: report.steps,
                };
                if !report.passed() {
                    if config.stop_at_first {
                        first_failure.fetch_min(seed, Ordering::SeqCst);
                    }
                    bar.set_message(format!("failing seed {seed}"));
                    failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(report);
                }
                lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let mut lines = lines.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    if config.stop_at_first {
        // Seeds above the first failure that were already running are dropped from the verdict,
        // so the result does not depend on thread timing.
        let cut = failures.iter().map(|f| f.seed).min().unwrap_or(u64::MAX);
        lines.retain(|l| l.seed <= cut);
        failures.retain(|f| f.seed <= cut);
    }
    lines.sort_by_key(|l| l.seed);
    failures.sort_by_key(|f| f.seed);
    let steps_total = lines.iter().map(|l| l.steps as u64).sum();
    CampaignResult {
        lines,
        failures,
        elapsed: start.elapsed(),
        steps_total,
    }
}
