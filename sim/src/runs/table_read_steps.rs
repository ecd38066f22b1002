//! The scenario's table reads: steps that ask a read of [`super::table_reads::TABLE_READS`]
//! once the world ended, with arguments drawn from the scenario's threads and runs. Drawn from a
//! workload sub-stream of their own, after every other draw, so a seed keeps every run, op and
//! fault it had before; a scenario without them (every scenario file written before them) plays
//! and traces as it did.

use super::scenario::{RunSpec, RunsScenario};
use super::table_reads::{table_read, ReadArgs, TableReadStep, TABLE_READS};
use crate::rng::{SeedRng, Stream};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// The workload sub-stream the table reads are drawn from.
pub const SUBSTREAM: u64 = 0x2e;

/// How often a seed asks a given table read at all.
const ASKED_PROBABILITY: f64 = 0.5;

/// At most this many asks of one table read in a seed.
const ASKS_MAX: usize = 3;

/// How often a read that takes a run asks it on the run's own thread (otherwise on any
/// thread: a run the thread never held).
const OWN_THREAD_PROBABILITY: f64 = 0.8;

/// The table reads of `seed`'s scenario of `threads` and `runs`, from their own sub-stream.
pub fn draw(
    threads: &BTreeMap<String, String>,
    runs: &[RunSpec],
    seed: SeedRng,
) -> Vec<TableReadStep> {
    let mut rng: ChaCha8Rng = seed.substream(Stream::Workload, SUBSTREAM);
    let keys: Vec<&String> = threads.keys().collect();
    let mut steps = Vec::new();
    if keys.is_empty() {
        return steps;
    }
    for read in TABLE_READS {
        if !rng.random_bool(ASKED_PROBABILITY) {
            continue;
        }
        for _ in 0..rng.random_range(1..=ASKS_MAX) {
            let any_thread = keys[rng.random_range(0..keys.len())].clone();
            let (thread, run) = match read.args {
                ReadArgs::Thread => (any_thread, None),
                ReadArgs::ThreadAndRun if runs.is_empty() => continue,
                ReadArgs::ThreadAndRun => {
                    let run = &runs[rng.random_range(0..runs.len())];
                    let own = rng.random_bool(OWN_THREAD_PROBABILITY);
                    let thread = if own { run.thread.clone() } else { any_thread };
                    (thread, Some(run.id.clone()))
                }
            };
            steps.push(TableReadStep {
                op: read.op.to_string(),
                thread,
                run,
            });
        }
    }
    steps
}

/// Each step names a table read, a thread of the scenario and, exactly when the read takes
/// one, a run of the scenario.
pub fn validate(s: &RunsScenario) -> Result<(), String> {
    for (i, step) in s.table_reads.iter().enumerate() {
        let at = format!("table_reads[{i}]");
        let Some(read) = table_read(&step.op) else {
            let known: Vec<&str> = TABLE_READS.iter().map(|r| r.op).collect();
            return Err(format!(
                "{at}.op: no table read `{}` (expected one of: {})",
                step.op,
                known.join(", ")
            ));
        };
        if !s.threads.contains_key(&step.thread) {
            return Err(format!("{at}.thread: no thread with key `{}`", step.thread));
        }
        match (read.args, &step.run) {
            (ReadArgs::Thread, Some(_)) => {
                return Err(format!("{at}.run: `{}` takes no run", step.op));
            }
            (ReadArgs::ThreadAndRun, None) => {
                return Err(format!("{at}.run: `{}` takes a run", step.op));
            }
            (ReadArgs::ThreadAndRun, Some(run)) if s.run_index(run).is_none() => {
                return Err(format!("{at}.run: no run `{run}`"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Drops the steps whose thread or run a shrink removed.
pub fn prune(s: &mut RunsScenario) {
    let runs: Vec<String> = s.runs.iter().map(|r| r.id.clone()).collect();
    let threads = &s.threads;
    s.table_reads.retain(|step| {
        threads.contains_key(&step.thread) && step.run.as_ref().is_none_or(|r| runs.contains(r))
    });
}
