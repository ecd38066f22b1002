//! Callers that edit what they handled (R3), woven after waits: a reader that reads the
//! thread's newest messages and edits nested content of the rows handed to it, and the
//! waited-for run's writer that edits a message it wrote. Either may reach the stored rows
//! only through a store that shares its objects with its callers (deer-flow#5405,
//! adk-python#7213).
//!
//! A sub-stream of its own decides all of it, so every seed keeps the ops it had, where they
//! were: the edits come right after a wait.

use crate::runs::scenario::{thread_of, Op, RunSpec};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The sub-stream index of the caller edits (R3; 3 is the events' sub-stream).
pub const SUBSTREAM: u64 = 0x103;

/// The share of waits a reader's edit follows.
const READER_SHARE: f64 = 0.15;
/// The share of waits the waited-for run's writer edits after.
const WRITER_SHARE: f64 = 0.15;
/// The most rows a reader's page holds.
const READ_LIMIT_MAX: u32 = 8;

/// `ops` with caller edits woven in after some waits.
pub fn weave(ops: Vec<Op>, runs: &[RunSpec], mut rng: ChaCha8Rng) -> Vec<Op> {
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let waited = match &op {
            Op::Wait { run } => Some(run.clone()),
            _ => None,
        };
        out.push(op);
        let Some(run) = waited else { continue };
        if rng.random_bool(WRITER_SHARE) {
            out.push(Op::EditWritten { run: run.clone() });
        }
        if rng.random_bool(READER_SHARE) {
            if let Some(thread) = thread_of(runs, &run) {
                out.push(Op::EditRead {
                    thread: thread.to_string(),
                    limit: rng.random_range(1..=READ_LIMIT_MAX),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn edits_follow_waits_only() {
        let run: RunSpec = toml::from_str("id = 'r'\nthread = 't'\nmessages = []").unwrap();
        let mut ops = Vec::new();
        for _ in 0..60 {
            ops.push(Op::Start { run: "r".into() });
            ops.push(Op::Wait { run: "r".into() });
        }
        let woven = weave(ops, &[run], ChaCha8Rng::seed_from_u64(3));
        let mut edits = (0, 0);
        for pair in woven.windows(2) {
            match &pair[1] {
                Op::EditWritten { run } => {
                    edits.0 += 1;
                    assert_eq!(pair[0], Op::Wait { run: run.clone() });
                }
                Op::EditRead { thread, limit } => {
                    edits.1 += 1;
                    assert_eq!(thread, "t");
                    assert!((1..=READ_LIMIT_MAX).contains(limit));
                    assert!(matches!(pair[0], Op::Wait { .. } | Op::EditWritten { .. }));
                }
                _ => {}
            }
        }
        assert!(edits.0 > 0 && edits.1 > 0, "{edits:?}");
    }
}
