//! Late writes woven after thread deletions (R28): after some deletions of a thread, a run of
//! it that stopped before the deletion commits one more batch, as a journal whose last flush
//! was admitted before the deletion and reached the store after it. The deletion fenced the
//! run, so the store must refuse the write.
//!
//! A share of the scenarios that delete no thread end with a deletion of a thread whose runs have
//! all stopped, and a late write after it.
//!
//! A sub-stream of its own decides all of it, so every seed keeps the ops it had, where they
//! were: late writes come after them or between them.

use crate::rng::chance;
use crate::runs::scenario::{thread_of, Op, RunSpec};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

/// The sub-stream index of the late writes (the catalog number of their invariant, R28).
pub const SUBSTREAM: u64 = 0x28;

/// The share of thread deletions a late write follows.
const LATE_WRITE_SHARE: f64 = 0.6;

/// The share of scenarios without a thread deletion that end with one (of a thread whose runs
/// have all stopped), a late write after it: thread deletions are rare otherwise (they end the
/// long histories the other rules need), and at the end one cuts no history short.
const END_DELETION_SHARE: f64 = 0.35;

/// `ops` with late writes woven in after some thread deletions: right after the deletion, or
/// after the op that follows it.
pub fn weave(ops: Vec<Op>, runs: &[RunSpec], mut rng: ChaCha8Rng) -> Vec<Op> {
    if !ops.iter().any(|op| matches!(op, Op::DeleteThread { .. })) {
        return end_with_a_deletion(ops, runs, &mut rng);
    }
    let thread_of = |run: &str| thread_of(runs, run).unwrap_or_default().to_string();
    let mut waited: BTreeSet<String> = BTreeSet::new();
    let mut removed: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(ops.len() + 4);
    let mut pending: Option<Vec<Op>> = None;
    for op in ops {
        match &op {
            Op::Wait { run } => {
                waited.insert(run.clone());
            }
            Op::DeleteRun { run } => {
                removed.insert(run.clone());
            }
            _ => {}
        }
        let deleted = match &op {
            Op::DeleteThread { thread, .. } => Some(thread.clone()),
            _ => None,
        };
        out.push(op);
        out.extend(pending.take().into_iter().flatten());
        let Some(thread) = deleted else { continue };
        // The runs the deletion fenced: stopped on the thread, not deleted on their own.
        let fenced: Vec<&String> = (waited.iter())
            .filter(|r| thread_of(r) == thread && !removed.contains(*r))
            .collect();
        if fenced.is_empty() || !chance(&mut rng, LATE_WRITE_SHARE) {
            continue;
        }
        let run = (*fenced.choose(&mut rng).expect("not empty")).clone();
        if rng.random_bool(0.5) {
            out.extend(late_writes(run, &mut rng));
        } else {
            pending = Some(late_writes(run, &mut rng));
        }
    }
    out.extend(pending.into_iter().flatten());
    out
}

/// A late write of `run`, and in half the cases a retry of its receipt after it (another
/// writer carrying the run the deletion removed).
fn late_writes(run: String, rng: &mut ChaCha8Rng) -> Vec<Op> {
    let mut ops = vec![Op::LateWrite { run: run.clone() }];
    if rng.random_bool(0.5) {
        ops.push(Op::Receipt { run, attempt: 1 });
    }
    ops
}

/// `ops` (which delete no thread) perhaps followed by the store's deletion of a thread whose
/// started runs have all been waited for, and a late write of one of them.
fn end_with_a_deletion(mut ops: Vec<Op>, runs: &[RunSpec], rng: &mut ChaCha8Rng) -> Vec<Op> {
    if !chance(rng, END_DELETION_SHARE) {
        return ops;
    }
    let (mut started, mut waited, mut removed) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for op in &ops {
        match op {
            Op::Start { run } => started.insert(run.as_str()),
            Op::Wait { run } => waited.insert(run.as_str()),
            Op::DeleteRun { run } => removed.insert(run.as_str()),
            _ => false,
        };
    }
    let idle = |thread: &str| {
        let on = |r: &&&str| thread_of(runs, r) == Some(thread);
        started.iter().filter(on).all(|r| waited.contains(r))
    };
    let threads: BTreeSet<&str> = (waited.iter()).filter_map(|r| thread_of(runs, r)).collect();
    let idle_threads: Vec<&str> = threads.into_iter().filter(|t| idle(t)).collect();
    let Some(&thread) = idle_threads.choose(rng) else {
        return ops;
    };
    let stopped: Vec<&str> = (waited.iter().copied())
        .filter(|r| thread_of(runs, r) == Some(thread) && !removed.contains(r))
        .collect();
    let Some(run) = stopped.choose(rng).map(|r| r.to_string()) else {
        return ops;
    };
    ops.push(Op::DeleteThread {
        thread: thread.to_string(),
        everywhere: false,
    });
    ops.extend(late_writes(run, rng));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{SeedRng, Stream};
    use crate::runs::generate::generate_thread_ops::tests::run;

    #[test]
    fn late_writes_follow_deletions_of_their_thread_only() {
        let runs = [run("a", "t"), run("b", "t"), run("c", "u")];
        let ops = vec![
            Op::Start { run: "a".into() },
            Op::Wait { run: "a".into() },
            Op::Start { run: "c".into() },
            Op::Wait { run: "c".into() },
            Op::DeleteThread {
                thread: "t".into(),
                everywhere: false,
            },
            Op::Start { run: "b".into() },
            Op::Wait { run: "b".into() },
        ];
        let mut lates = 0;
        for seed in 0..20 {
            let rng = SeedRng::new(seed).substream(Stream::Workload, SUBSTREAM);
            let out = weave(ops.clone(), &runs, rng);
            let without: Vec<&Op> = (out.iter())
                .filter(|op| !matches!(op, Op::LateWrite { .. } | Op::Receipt { .. }))
                .collect();
            assert_eq!(without, ops.iter().collect::<Vec<_>>(), "seed {seed}");
            for (i, op) in out.iter().enumerate() {
                if let Op::LateWrite { run } = op {
                    assert_eq!(run, "a", "seed {seed}: only `a` stopped on `t` before");
                    assert!(i == 5 || i == 6, "seed {seed}: at {i}");
                    lates += 1;
                }
            }
        }
        assert!(lates > 0, "no late write in 20 seeds");
        // Without a deletion, some scenarios end with one of an idle thread and a late write.
        let no_deletion = ops[..4].to_vec();
        let mut ended = 0;
        for seed in 0..40 {
            let rng = SeedRng::new(seed).substream(Stream::Workload, SUBSTREAM);
            let out = weave(no_deletion.clone(), &runs, rng);
            assert_eq!(out[..4], no_deletion[..], "seed {seed}");
            match &out[4..] {
                [] => {}
                [Op::DeleteThread { thread, .. }, Op::LateWrite { run }, ..] => {
                    assert!(
                        matches!((thread.as_str(), run.as_str()), ("t", "a") | ("u", "c")),
                        "seed {seed}: {thread} {run}"
                    );
                    ended += 1;
                }
                other => panic!("seed {seed}: {other:?}"),
            }
        }
        assert!(
            0 < ended && ended < 40,
            "{ended} of 40 seeds end with a deletion"
        );
    }
}
