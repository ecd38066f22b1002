//! Long model outputs in traces: some AI messages' `llm_response` trace carries the model's
//! whole output, from a few dozen bytes to about two kilobytes of mixed one- to four-byte
//! characters, and the world's run journals may keep only so many bytes of a trace
//! ([`RunsScenario::max_trace_content_bytes`], as DeerFlow's `max_trace_content` does).
//!
//! Drawn by [`draw`] from a workload sub-stream of its own, after every other draw, so a seed keeps
//! every op, fault and text it had before.
//!
//! [`RunsScenario::max_trace_content_bytes`]: super::scenario::RunsScenario::max_trace_content_bytes

use super::scenario::{LongTrace, MessageSpec, RunSpec};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

/// The workload sub-stream long traces are drawn from.
pub const SUBSTREAM: u64 = 0x2b;

/// The share of seeds whose journals bound trace contents.
const BOUNDED_PROBABILITY: f64 = 0.5;
/// The share of runs with an AI message that get one long trace.
const LONG_PROBABILITY: f64 = 0.3;

/// The journals' bound (none: traces kept whole) and the long traces of `runs`.
pub fn draw(runs: &[RunSpec], rng: &mut ChaCha8Rng) -> (Option<usize>, Vec<LongTrace>) {
    let bound = rng
        .random_bool(BOUNDED_PROBABILITY)
        .then(|| rng.random_range(64..=512));
    let mut long = Vec::new();
    for run in runs {
        let ais = ai_messages(run);
        if ais == 0 || !rng.random_bool(LONG_PROBABILITY) {
            continue;
        }
        long.push(LongTrace {
            run: run.id.clone(),
            ai: rng.random_range(0..ais),
            bytes: rng.random_range(32..=2000),
        });
    }
    (bound, long)
}

/// The run's scripted `ai_message`s (a long thread's filler is not counted).
fn ai_messages(run: &RunSpec) -> u32 {
    run.messages
        .iter()
        .filter(|m| matches!(m, MessageSpec::Ai { .. }))
        .count() as u32
}

/// The pieces a long output is made of: one-, two-, three- and four-byte characters, so that a
/// bound may fall inside any of them.
const PIECES: [&str; 5] = ["model output ", "é", "字", "😀", " \n"];

/// The `llm_response` content of AI message `message_id` when it is a long trace of `bytes`
/// bytes: the output text as a string for an odd `ai`, inside a JSON object beside the message
/// id for an even one (a journal measures an object as its JSON text).
pub fn content(message_id: Option<&str>, ai: u32, bytes: u32) -> Value {
    let mut text = String::new();
    for piece in PIECES.iter().cycle().skip(ai as usize) {
        if text.len() + piece.len() > bytes as usize {
            break;
        }
        text.push_str(piece);
    }
    debug_assert!(text.len() <= bytes as usize);
    if ai % 2 == 1 {
        Value::String(text)
    } else {
        json!({ "message": message_id, "output": text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{SeedRng, Stream};

    #[test]
    fn some_seeds_bound_their_traces_and_long_ones_name_an_ai_message() {
        let (mut bounded, mut long) = (0, 0);
        for seed in 0..40 {
            let s = crate::runs::generate::of_seed(seed);
            bounded += usize::from(s.max_trace_content_bytes.is_some());
            for l in &s.long_traces {
                long += 1;
                let run = s
                    .runs
                    .iter()
                    .find(|r| r.id == l.run)
                    .expect("a run of the scenario");
                assert!(l.ai < ai_messages(run));
            }
            let mut again = SeedRng::new(seed).substream(Stream::Workload, SUBSTREAM);
            assert_eq!(
                draw(&s.runs, &mut again),
                (s.max_trace_content_bytes, s.long_traces)
            );
        }
        assert!(
            bounded > 0 && bounded < 40 && long > 0,
            "{bounded} bounded, {long} long"
        );
    }

    #[test]
    fn a_long_output_fits_its_size() {
        for ai in 0..5 {
            let c = content(Some("m"), ai, 100);
            let text = c.as_str().or(c["output"].as_str()).unwrap();
            assert!(text.len() <= 100 && text.len() > 90, "{}", text.len());
        }
    }
}
