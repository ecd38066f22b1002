//! Seed -> merge scenario: a client session that interleaves the agent's live frames with
//! page loads (of the thread and of single runs, older pages through `before_seq` cursors),
//! summarization resets, reconnects whose replay starts mid-run, optimistic and injected
//! copies of the user's messages, thread switches and frames of other threads in flight.

use super::options::MergeSimOptions;
use super::scenario::{AgentRole, MergeScenario, Step, FRAMES_MAX};
use crate::hostile_text::{HostileMix, HostileText};
use crate::rng::{chance, SeedRng, Stream};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The workload sub-stream texts are drawn from, apart from the session's shape.
const TEXT_SUBSTREAM: u64 = 0x7e57;
/// The workload sub-stream of the reloads and mid-stream pages, apart from the session's
/// shape: a seed's other steps are the same with them or without.
const WIDENED_SUBSTREAM: u64 = 0x7e0b;

/// What the generator remembers of the session so far.
struct Session {
    open: u8,
    /// Runs started on each thread.
    runs: [u8; 4],
    texts: HostileText,
}

/// Builds the scenario of `seed` under `options`.
pub fn generate(seed: SeedRng, o: &MergeSimOptions) -> MergeScenario {
    let mut rng = seed.stream(Stream::Workload);
    let mix = HostileMix {
        hostile_probability: o.hostile_probability,
        long_probability: 0.05,
    };
    let mut s = Session {
        open: 0,
        runs: [0; 4],
        texts: HostileText::new(seed.substream(Stream::Workload, TEXT_SUBSTREAM), mix),
    };
    let mut widened = seed.substream(Stream::Workload, WIDENED_SUBSTREAM);
    let mut steps = Vec::with_capacity(o.steps.into());
    for i in 0..o.steps {
        let mut step = next_step(&mut rng, o, &mut s, i);
        widen(&mut widened, o, &mut step, &mut steps);
    }
    MergeScenario {
        threads: o.threads,
        steps,
    }
}

/// The kinds of step a draw picks from, with their chances; the agent writes otherwise.
fn kinds(o: &MergeSimOptions) -> [(&'static str, f64); 8] {
    [
        ("send", o.send_probability),
        ("load", o.load_probability),
        ("reset", o.reset_probability),
        ("reconnect", o.reconnect_probability),
        ("inject", o.inject_probability),
        ("open", o.switch_probability),
        ("stray", o.stray_probability),
        ("echo", 0.03),
    ]
}

fn next_step(rng: &mut ChaCha8Rng, o: &MergeSimOptions, s: &mut Session, i: u16) -> Step {
    let mut kind = "send";
    if s.runs[s.open as usize] > 0 {
        let mut draw: f64 = rng.random();
        kind = "emit";
        for (name, p) in kinds(o) {
            if draw < p {
                kind = name;
                break;
            }
            draw -= p;
        }
    }
    let marker = format!("m{i}");
    match kind {
        "send" => {
            s.runs[s.open as usize] += 1;
            Step::Send {
                text: s.texts.around("please summarize the report", &marker),
                optimistic: chance(rng, o.optimistic_probability),
                echo: chance(rng, 0.6),
            }
        }
        "load" => load(rng, o, s),
        "reset" => Step::Reset {
            keep: rng.random_range(0..=12),
        },
        "reconnect" => Step::Reconnect {
            from_step: if chance(rng, 0.5) {
                0
            } else {
                rng.random_range(1..=6)
            },
            human_last: chance(rng, 0.5),
        },
        "inject" => Step::Inject,
        "echo" => Step::Echo,
        "open" | "stray" if o.threads > 1 => {
            let other = (s.open + rng.random_range(1..o.threads)) % o.threads;
            if kind == "stray" {
                return Step::Stray {
                    thread: other,
                    text: s.texts.around("a step of another thread", &marker),
                };
            }
            s.open = other;
            Step::Open { thread: other }
        }
        _ => emit(rng, s, &marker),
    }
}

/// Adds what the widened sub-stream draws to `step` (a page between a streamed message's
/// frames), pushes it, then maybe a reload of the open thread.
fn widen(widened: &mut ChaCha8Rng, o: &MergeSimOptions, step: &mut Step, steps: &mut Vec<Step>) {
    let mid_stream = chance(widened, o.page_mid_stream_probability);
    let mid_limit = widened.random_range(1..=o.page_limit_max);
    if let Step::Emit {
        frames,
        page_mid_stream,
        ..
    } = step
    {
        if *frames > 1 && mid_stream {
            *page_mid_stream = Some(mid_limit);
        }
    }
    steps.push(step.clone());
    let reopen = chance(widened, o.reopen_probability);
    let keep = widened.random_range(0..=12);
    let limit = widened.random_range(1..=o.page_limit_max);
    if reopen {
        steps.push(Step::Reopen { keep, limit });
    }
}

fn load(rng: &mut ChaCha8Rng, o: &MergeSimOptions, s: &Session) -> Step {
    let runs = s.runs[s.open as usize];
    Step::Load {
        run: chance(rng, 0.4).then(|| rng.random_range(0..runs)),
        limit: rng.random_range(1..=o.page_limit_max),
        older: chance(rng, 0.5),
    }
}

fn emit(rng: &mut ChaCha8Rng, s: &mut Session, marker: &str) -> Step {
    let role = if chance(rng, 0.7) {
        AgentRole::Ai
    } else {
        AgentRole::Tool
    };
    Step::Emit {
        role,
        text: s.texts.whole("the answer goes on", marker, true),
        frames: if chance(rng, 0.5) {
            1
        } else {
            rng.random_range(2..=FRAMES_MAX)
        },
        page_mid_stream: None,
    }
}
