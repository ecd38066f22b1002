//! Tight keep windows on later requests (R29): a run answering a later request of its thread
//! with tool steps after its question gets a small budget and a keep window of one or two
//! messages, so counting the window back from the end alone would fold the question being
//! answered into the summary while an earlier request stays in the state.
//!
//! Drawn by [`add_tight_windows`] from a workload sub-stream of its own, after every other draw,
//! so a seed keeps everything it had before.

use crate::runs::scenario::{MessageSpec, RunSpec, Summarize};
use crate::runs::script::is_middleware_caller;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The workload sub-stream the tight windows are drawn from.
pub const SUBSTREAM: u64 = 0x27;

/// The share of eligible runs that get a tight window.
const TIGHT_PROBABILITY: f64 = 0.3;

/// Gives some runs that answer a later request of their thread, with at least two of their
/// own messages after their last question, a small budget and a keep window of 1 or 2.
pub fn add_tight_windows(runs: &mut [RunSpec], rng: &mut ChaCha8Rng) {
    for r in 0..runs.len() {
        let later = runs[..r].iter().any(|e| e.thread == runs[r].thread);
        if !later || answer_steps(&runs[r]) < 2 || !rng.random_bool(TIGHT_PROBABILITY) {
            continue;
        }
        runs[r].summarize = Some(Summarize {
            budget_tokens: rng.random_range(20..=120),
            keep_messages: rng.random_range(1..=2),
        });
    }
}

/// Messages of the run's agent after its last question (a tool step counts as one, before its
/// results); a middleware's own model calls never enter the state and do not count, so a seed
/// draws the same windows with or without them.
fn answer_steps(run: &RunSpec) -> usize {
    let Some(q) = run
        .messages
        .iter()
        .rposition(|m| matches!(m, MessageSpec::Human { .. }))
    else {
        return 0;
    };
    let by_middleware = |m: &MessageSpec| matches!(m, MessageSpec::Ai { caller: Some(c), .. } if is_middleware_caller(c));
    run.messages[q + 1..]
        .iter()
        .filter(|m| !by_middleware(m))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{SeedRng, Stream};

    #[test]
    fn only_later_requests_with_steps_get_a_tight_window() {
        let mut tight = 0;
        for seed in 0..40 {
            let mut s = crate::runs::generate::of_seed(seed);
            for r in 0..s.runs.len() {
                s.runs[r].summarize = None;
            }
            let mut rng = SeedRng::new(seed).substream(Stream::Workload, SUBSTREAM);
            add_tight_windows(&mut s.runs, &mut rng);
            for (r, run) in s.runs.iter().enumerate() {
                let Some(w) = run.summarize else { continue };
                tight += 1;
                assert!(s.runs[..r].iter().any(|e| e.thread == run.thread));
                assert!(answer_steps(run) >= 2);
                assert!((1..=2).contains(&w.keep_messages));
            }
        }
        assert!(tight > 0, "no seed of 40 drew a tight window");
    }
}
