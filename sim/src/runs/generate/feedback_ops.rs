//! The client's feedback calls beyond a rating, woven into a generated scenario's ops: after a
//! wait, one to three of an anonymous rating, another user's rating, a withdrawal by id (a
//! user's or an anonymous rating), `delete_by_run`, and every feedback read in one scope; after
//! a run's deletion, sometimes a rating on its thread (its feedback outlives its rows); at the
//! end, every read of each thread that saw such calls. None on a thread after its deletion
//! (`delete_by_thread`): the ratings model knows no thread deletion, and thread deletions are
//! woven first.
//!
//! A sub-stream of its own decides all of it, so seeds keep the runs, reads, faults and wider
//! calls they had before these calls existed.

use super::weaving::Weaving;
use crate::rng::chance;
use crate::runs::scenario::{thread_of, Op, Target};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// The generator's users.
const USERS: [&str; 2] = ["user-1", "user-2"];
/// The scopes a read draws from: each user's feedback, and every user's (`None`).
const SCOPES: [Option<&str>; 3] = [Some("user-1"), Some("user-2"), None];

/// `ops` with the feedback calls woven in.
pub fn weave(ops: Vec<Op>, w: Weaving, mut rng: ChaCha8Rng) -> Vec<Op> {
    let Weaving { runs, options } = w;
    let p = options.feedback_probability;
    let thread_of = |run: &str| thread_of(runs, run).map(str::to_string);
    let mut out = Vec::with_capacity(ops.len());
    // Per thread key: the runs waited for so far.
    let mut waited: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Thread keys deleted whole so far.
    let mut gone: BTreeSet<String> = BTreeSet::new();
    for op in ops {
        let after = match &op {
            Op::Wait { run } => thread_of(run).map(|t| (t, run.clone(), false)),
            Op::DeleteRun { run } => thread_of(run).map(|t| (t, run.clone(), true)),
            Op::DeleteThread { thread, .. } => {
                gone.insert(thread.clone());
                None
            }
            _ => None,
        };
        out.push(op);
        let Some((thread, run, deleted)) = after.filter(|(t, _, _)| !gone.contains(t)) else {
            continue;
        };
        if deleted {
            if chance(&mut rng, p) {
                out.push(rating(&mut rng, &thread));
            }
            continue;
        }
        let on_thread = waited.entry(thread.clone()).or_default();
        on_thread.push(run);
        if !chance(&mut rng, p) {
            continue;
        }
        for _ in 0..rng.random_range(1..=3) {
            out.push(call(&mut rng, &thread, on_thread));
        }
    }
    if p > 0.0 {
        for thread in waited.keys().filter(|t| !gone.contains(*t)) {
            out.push(reads(&mut rng, thread));
        }
    }
    out
}

fn user(rng: &mut ChaCha8Rng) -> String {
    USERS.choose(rng).copied().unwrap_or("user-1").to_string()
}

fn target(rng: &mut ChaCha8Rng) -> Target {
    if rng.random_bool(0.3) {
        Target::Live
    } else {
        Target::Old(rng.random_range(0..8))
    }
}

/// A known user's rating of an old answer.
fn rating(rng: &mut ChaCha8Rng, thread: &str) -> Op {
    Op::Rate {
        thread: thread.to_string(),
        user: user(rng),
        up: rng.random_bool(0.5),
        target: Target::Old(rng.random_range(0..8)),
    }
}

fn reads(rng: &mut ChaCha8Rng, thread: &str) -> Op {
    Op::FeedbackReads {
        thread: thread.to_string(),
        user: SCOPES.choose(rng).copied().flatten().map(str::to_string),
    }
}

/// One feedback call on `thread`, whose waited runs are `runs` (never empty).
fn call(rng: &mut ChaCha8Rng, thread: &str, runs: &[String]) -> Op {
    let thread_key = thread.to_string();
    match rng.random_range(0..5) {
        0 => Op::RateAnonymously {
            thread: thread_key,
            up: rng.random_bool(0.5),
            target: target(rng),
        },
        1 => rating(rng, thread),
        2 => Op::Withdraw {
            thread: thread_key,
            user: rng.random_bool(0.6).then(|| user(rng)),
            nth: rng.random_range(0..4),
        },
        3 => Op::WithdrawRun {
            run: runs.choose(rng).cloned().unwrap_or_default(),
            user: user(rng),
        },
        _ => reads(rng, thread),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeedRng;
    use crate::runs::generate::generate;
    use crate::runs::RunsOptions;

    /// Which feedback call an op is (`None`: not one of them).
    fn kind(op: &Op) -> Option<&'static str> {
        Some(match op {
            Op::RateAnonymously { .. } => "anonymous",
            Op::Withdraw { user: None, .. } => "withdraw anonymous",
            Op::Withdraw { .. } => "withdraw",
            Op::WithdrawRun { .. } => "withdraw by run",
            Op::FeedbackReads { user: None, .. } => "reads as every user",
            Op::FeedbackReads { .. } => "reads as a user",
            _ => return None,
        })
    }

    #[test]
    fn seeds_weave_every_feedback_call_and_only_with_the_probability_on() {
        let mut seen = std::collections::BTreeSet::new();
        for s in 0..100 {
            let seed = SeedRng::new(s);
            let options = RunsOptions::from_seed(seed);
            let scenario = generate(seed, &options);
            let kinds: Vec<&str> = scenario.ops.iter().filter_map(kind).collect();
            if options.feedback_probability == 0.0 {
                assert!(
                    kinds.is_empty(),
                    "seed {s}: {kinds:?} with the probability off"
                );
            }
            seen.extend(kinds);
        }
        assert_eq!(seen.len(), 6, "{seen:?}");
    }

    #[test]
    fn a_deletion_may_be_followed_by_a_rating_on_its_thread() {
        let found = (0..200).any(|s| {
            let scenario = crate::runs::generate::of_seed(s);
            scenario
                .ops
                .windows(2)
                .any(|w| matches!((&w[0], &w[1]), (Op::DeleteRun { .. }, Op::Rate { .. })))
        });
        assert!(found);
    }
}
