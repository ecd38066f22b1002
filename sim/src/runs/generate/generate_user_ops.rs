//! The client's user-scoped reads, woven into a generated scenario's ops: after a wait, the
//! thread's messages read in one user's scope (`list_messages` and `count_messages` with a
//! `user_id`): one of the workload's users (a run's, another's, or nobody's on this thread), or
//! every user's (legacy rows without a user included).
//!
//! A sub-stream of its own decides all of it, so seeds keep the runs, reads, faults and wider
//! calls they had before these reads existed; another decides the reads in the default scope
//! (`user_id` AUTO) of a request acting for the run just waited for.

use super::weaving::Weaving;
use crate::rng::chance;
use crate::runs::scenario::Op;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

/// The scopes a read draws from: the generator's two users, a user no run acts for, and every
/// user's rows (`None`).
const SCOPES: [Option<&str>; 4] = [Some("user-1"), Some("user-2"), Some("user-3"), None];

/// `ops` with the user-scoped reads woven in.
pub fn weave(ops: Vec<Op>, w: Weaving, mut rng: ChaCha8Rng) -> Vec<Op> {
    let Weaving { runs, options } = w;
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let waited = match &op {
            Op::Wait { run } => crate::runs::scenario::thread_of(runs, run).map(str::to_string),
            _ => None,
        };
        out.push(op);
        let Some(thread) = waited else { continue };
        if chance(&mut rng, options.user_reads_probability) {
            let user = SCOPES.choose(&mut rng).copied().flatten();
            out.push(Op::UserMessages {
                thread,
                user: user.map(str::to_string),
            });
        }
    }
    out
}

/// The sub-stream index of the default-scope reads (they extend R19's rule).
pub const DEFAULT_SCOPE_SUBSTREAM: u64 = 19;

/// `ops` with the default-scope reads woven in: after a wait, the waited run's thread read in
/// the default scope of a request acting for that run (its user the current one; a legacy
/// run's request has none). From a sub-stream of its own, so seeds keep every call they had
/// before these reads existed.
pub fn weave_default_scope(ops: Vec<Op>, w: Weaving, mut rng: ChaCha8Rng) -> Vec<Op> {
    let Weaving { runs, options } = w;
    let p = options.default_scope_reads_probability;
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let waited = match &op {
            Op::Wait { run } => runs.iter().find(|r| &r.id == run).cloned(),
            _ => None,
        };
        out.push(op);
        if let Some(spec) = waited {
            if chance(&mut rng, p) {
                out.push(Op::DefaultScopeMessages {
                    thread: spec.thread,
                    run: spec.id,
                });
            }
        }
    }
    out
}
