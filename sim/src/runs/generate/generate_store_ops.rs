//! The client's calls of the store's wider API, woven into a generated scenario's ops: a run
//! deleted after its wait (only where no rating follows on its thread: the ratings model knows
//! no deletion), its receipt written while it runs or after, and retried after a later wait (a
//! worker and its recovery path), and its messages paged with small limits (several pages, the
//! cursor often inside other runs' messages).
//!
//! A sub-stream of its own decides all of it, so seeds keep the runs, reads and faults they had
//! before these calls existed.

use super::weaving::Weaving;
use crate::rng::chance;
use crate::runs::scenario::{thread_of, Op};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// `ops` with the wider calls woven in.
pub fn weave(ops: Vec<Op>, w: Weaving, mut rng: ChaCha8Rng) -> Vec<Op> {
    let Weaving { runs, options } = w;
    let thread_of = |run: &str| thread_of(runs, run).unwrap_or_default().to_string();
    // The last rating per thread: a deletion may only come after it.
    let mut last_rating: BTreeMap<String, usize> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        if let Op::Rate { thread, .. } = op {
            last_rating.insert(thread.clone(), i);
        }
    }
    let mut out = Vec::with_capacity(ops.len());
    let mut retries: Vec<String> = Vec::new();
    for (i, op) in ops.into_iter().enumerate() {
        let run = match &op {
            Op::Start { run } | Op::Wait { run } => Some(run.clone()),
            _ => None,
        };
        let waited = matches!(op, Op::Wait { .. });
        out.push(op);
        let Some(run) = run else { continue };
        if waited {
            // A receipt retried by the recovery path lands after some later wait.
            out.extend(retries.drain(..).map(|run| Op::Receipt { run, attempt: 1 }));
        }
        if chance(&mut rng, options.receipt_probability) {
            out.push(Op::Receipt {
                run: run.clone(),
                attempt: 0,
            });
            if rng.random_bool(0.5) {
                retries.push(run.clone());
            }
        }
        if !waited {
            continue;
        }
        if chance(&mut rng, options.run_pages_probability) {
            out.push(Op::RunMessages {
                run: run.clone(),
                limit: rng.random_range(1..=6),
                backward: rng.random_bool(0.4),
            });
        }
        let rated_later = last_rating
            .get(&thread_of(&run))
            .is_some_and(|&last| last > i);
        if !rated_later && chance(&mut rng, options.delete_probability) {
            out.push(Op::DeleteRun { run: run.clone() });
            if rng.random_bool(0.5) {
                out.push(Op::Views {
                    thread: thread_of(&run),
                });
            }
        }
    }
    out
}
