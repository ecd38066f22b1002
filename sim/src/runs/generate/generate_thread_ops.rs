//! The client's thread deletions, woven into a generated scenario's ops: rarely, right before a
//! run starts on a thread whose runs have all stopped (so the next run writes the emptied
//! thread's new era, numbered from 1), and perhaps once at the end; only where no feedback call
//! (a rating, a withdrawal, a feedback read) follows on the thread (the ratings model knows no
//! thread deletion). The feedback calls beyond a rating are woven after these, and none after
//! a thread's deletion on it.
//!
//! A sub-stream of its own decides all of it, so seeds keep the runs, reads, faults and other
//! calls they had before thread deletions existed.

use super::weaving::Weaving;
use crate::rng::chance;
use crate::runs::options::RunsOptions;
use crate::runs::scenario::{thread_of, Op};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// The sub-stream index of the thread deletions (the catalog number of their invariant, R23).
pub const SUBSTREAM: u64 = 23;

/// `ops` with the thread deletions woven in.
pub fn weave(ops: Vec<Op>, w: Weaving, mut rng: ChaCha8Rng) -> Vec<Op> {
    let Weaving { runs, options } = w;
    let p = options.thread_delete_probability;
    if p <= 0.0 {
        return ops;
    }
    let thread_of = |run: &str| thread_of(runs, run).unwrap_or_default().to_string();
    let mut last_rating: BTreeMap<String, usize> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        let thread = match op {
            Op::Rate { thread, .. }
            | Op::RateAnonymously { thread, .. }
            | Op::Withdraw { thread, .. }
            | Op::FeedbackReads { thread, .. } => thread.clone(),
            Op::WithdrawRun { run, .. } => thread_of(run),
            _ => continue,
        };
        last_rating.insert(thread, i);
    }
    let rated_after = |thread: &str, i: usize| last_rating.get(thread).is_some_and(|&l| l >= i);
    // Per thread, the runs started and not yet waited for; the threads some run started on.
    let mut running: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut written: BTreeSet<String> = BTreeSet::new();
    let idle = |running: &BTreeMap<String, BTreeSet<String>>, t: &str| {
        running.get(t).is_none_or(BTreeSet::is_empty)
    };
    let mut out = Vec::with_capacity(ops.len() + 2);
    let count = ops.len();
    for (i, op) in ops.into_iter().enumerate() {
        match &op {
            Op::Start { run } => {
                let t = thread_of(run);
                if written.contains(&t)
                    && idle(&running, &t)
                    && !rated_after(&t, i)
                    && chance(&mut rng, p)
                {
                    out.push(store_deletion(t.clone()));
                }
                written.insert(t.clone());
                running.entry(t).or_default().insert(run.clone());
            }
            Op::Wait { run } => {
                if let Some(set) = running.get_mut(&thread_of(run)) {
                    set.remove(run);
                }
            }
            _ => {}
        }
        out.push(op);
    }
    // At the end, one idle thread perhaps: the final dump without it.
    let last = runs.last().map(|r| r.thread.clone()).unwrap_or_default();
    if written.contains(&last)
        && idle(&running, &last)
        && !rated_after(&last, count)
        && chance(&mut rng, p / 2.0)
    {
        out.push(store_deletion(last));
    }
    out
}

/// The store's deletion of `thread` (`delete_by_thread`), as [`weave`] places it.
fn store_deletion(thread: String) -> Op {
    Op::DeleteThread {
        thread,
        everywhere: false,
    }
}

/// The sub-stream index of the choice of which thread deletions go through the API (the catalog
/// number of their invariant, R27).
pub const EVERYWHERE_SUBSTREAM: u64 = 27;

/// `ops` with some thread deletions made the API's (`everywhere`): drawn from a sub-stream of
/// its own, so the deletions stay where [`weave`] put them.
pub fn through_the_api(mut ops: Vec<Op>, options: &RunsOptions, mut rng: ChaCha8Rng) -> Vec<Op> {
    let p = options.thread_delete_everywhere_probability;
    for op in &mut ops {
        if let Op::DeleteThread { everywhere, .. } = op {
            *everywhere = chance(&mut rng, p);
        }
    }
    ops
}

#[cfg(test)]
pub(in crate::runs) mod tests {
    use super::*;
    use crate::rng::{SeedRng, Stream};
    use crate::runs::scenario::RunSpec;

    /// A run of `thread` with no messages: what the thread generators look at.
    pub(in crate::runs) fn run(id: &str, thread: &str) -> RunSpec {
        RunSpec::plain(id, thread, Vec::new())
    }

    fn start(r: &str) -> Op {
        Op::Start { run: r.into() }
    }

    fn wait(r: &str) -> Op {
        Op::Wait { run: r.into() }
    }

    #[test]
    fn a_thread_is_deleted_only_when_idle_and_never_before_a_rating() {
        let runs = [run("a", "t"), run("b", "t"), run("c", "t"), run("d", "u")];
        let rate = Op::Rate {
            thread: "u".into(),
            user: "x".into(),
            up: true,
            target: crate::runs::scenario::Target::Live,
        };
        let ops = vec![
            start("a"),
            start("b"),
            wait("a"),
            wait("b"),
            start("d"),
            wait("d"),
            start("c"),
            wait("c"),
            rate,
        ];
        let mut options = RunsOptions::quiet(4);
        options.thread_delete_probability = 1.0;
        let rng = SeedRng::new(1).substream(Stream::Workload, SUBSTREAM);
        let out = weave(
            ops.clone(),
            Weaving {
                runs: &runs,
                options: &options,
            },
            rng,
        );
        let deleted: Vec<(usize, &str)> = out
            .iter()
            .enumerate()
            .filter_map(|(i, op)| match op {
                Op::DeleteThread { thread, .. } => Some((i, thread.as_str())),
                _ => None,
            })
            .collect();
        // `b` starts while `a` runs: no deletion; before `c`, `t` is idle; `u` is rated later.
        assert_eq!(deleted, vec![(6, "t")]);
        options.thread_delete_probability = 0.0;
        let rng = SeedRng::new(1).substream(Stream::Workload, SUBSTREAM);
        assert_eq!(
            weave(
                ops.clone(),
                Weaving {
                    runs: &runs,
                    options: &options
                },
                rng
            ),
            ops
        );
    }

    #[test]
    fn the_api_takes_over_deletions_where_they_are_and_changes_nothing_else() {
        let ops = vec![
            start("a"),
            wait("a"),
            Op::DeleteThread {
                thread: "t".into(),
                everywhere: false,
            },
            start("b"),
        ];
        let mut options = RunsOptions::quiet(2);
        options.thread_delete_everywhere_probability = 1.0;
        let rng = SeedRng::new(1).substream(Stream::Workload, EVERYWHERE_SUBSTREAM);
        let out = through_the_api(ops.clone(), &options, rng);
        let mut want = ops.clone();
        want[2] = Op::DeleteThread {
            thread: "t".into(),
            everywhere: true,
        };
        assert_eq!(out, want);
        options.thread_delete_everywhere_probability = 0.0;
        let rng = SeedRng::new(1).substream(Stream::Workload, EVERYWHERE_SUBSTREAM);
        assert_eq!(through_the_api(ops.clone(), &options, rng), ops);
    }
}
