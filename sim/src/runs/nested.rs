//! Nested invocations inside a run (R26): tool nodes, middleware and subgraphs the run's root
//! graph invokes around some of its messages. Each starts before one message and ends after a
//! span of them, before the root ends; one still open when the run errors or is cancelled
//! fails with it. The journal hears every start, end and failure and must write the run's
//! lifecycle from the root's alone.
//!
//! Drawn by [`add_nested`] from a workload sub-stream of its own, after every other draw, so a
//! seed keeps everything it had before.

use super::scenario::{NestedKind, NestedSpec, RunSpec, Stop};
use super::script::expand;
use history::runs::Invocation;
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The workload sub-stream the nested invocations are drawn from.
pub const SUBSTREAM: u64 = 0x26;

/// The root invocation of `run`.
pub fn root(run: &RunSpec) -> Invocation {
    Invocation::root(run.id.clone())
}

/// The `k`-th nested invocation of `run`.
pub fn invocation(run: &RunSpec, k: usize) -> Invocation {
    let kind = match run.nested[k].kind {
        NestedKind::Tools => "tools",
        NestedKind::Middleware => "middleware",
        NestedKind::Subgraph => "subgraph",
    };
    Invocation {
        id: format!("{}:{kind}:{k}", run.id),
        parent: Some(run.id.clone()),
    }
}

/// Nested invocations (by index) that end just before message `at`, then those that start
/// there (`started`); one spanning no message is in both.
pub fn due(run: &RunSpec, at: u32) -> (Vec<usize>, Vec<usize>) {
    let ending = (0..run.nested.len())
        .filter(|&k| {
            let n = &run.nested[k];
            n.messages > 0 && n.at + n.messages == at
        })
        .collect();
    let starting = (0..run.nested.len())
        .filter(|&k| run.nested[k].at == at)
        .collect();
    (ending, starting)
}

/// Nested invocations still open when the run stops after `count` messages.
pub fn open_at(run: &RunSpec, count: u32) -> Vec<usize> {
    (0..run.nested.len())
        .filter(|&k| {
            let n = &run.nested[k];
            n.at < count && n.at + n.messages > count
        })
        .collect()
}

/// Gives some runs nested invocations; an erroring or cancelled run often stops inside one.
pub fn add_nested(runs: &mut [RunSpec], rng: &mut ChaCha8Rng) {
    let kinds = [
        NestedKind::Tools,
        NestedKind::Middleware,
        NestedKind::Subgraph,
    ];
    for run in runs.iter_mut() {
        if !rng.random_bool(0.3) {
            continue;
        }
        let total = expand(run).len() as u32;
        if total == 0 {
            continue;
        }
        for _ in 0..rng.random_range(1..=3) {
            let at = rng.random_range(0..total);
            // Often the nested invocation ends last, just before the root.
            let messages = if rng.random_bool(0.4) {
                total - at
            } else {
                rng.random_range(0..=total - at)
            };
            let kind = *kinds.choose(rng).unwrap_or(&NestedKind::Tools);
            run.nested.push(NestedSpec { kind, at, messages });
        }
        let after = match run.stop {
            Stop::Error { after } | Stop::Cancel { after } => after.min(total),
            _ => continue,
        };
        if after > 0 && after < total && rng.random_bool(0.5) {
            let at = rng.random_range(0..after);
            let messages = rng.random_range(after - at + 1..=total - at);
            let kind = *kinds.choose(rng).unwrap_or(&NestedKind::Subgraph);
            run.nested.push(NestedSpec { kind, at, messages });
        }
    }
}
