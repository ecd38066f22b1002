//! The subagent tasks of generated runs and the client's filtered reads of run events: a run
//! delegates one to three tasks at random points of its messages, and after a wait the client
//! may page the run's events through a filter (a task, some event types, or both) and ask the
//! thread's runs for their last visible AI message.
//!
//! A sub-stream of its own decides all of it, so seeds keep the runs, reads, faults and wider
//! calls they had before (only the rows a task adds move the seqs after them).
//!
//! The callers of AI messages ([`add_callers`]) come from another sub-stream
//! ([`CALLER_SUBSTREAM`]), drawn after every other part of a scenario: a seed whose runs get
//! none keeps its scenario exactly; one whose runs get some keeps its ops and faults, its
//! runs only growing by the middlewares' messages.

use super::weaving::Weaving;
use crate::rng::chance;
use crate::runs::options::RunsOptions;
use crate::runs::scenario::{MessageSpec, Op, RunSpec};
use crate::runs::tasks::{TaskSpec, TASK_STEPS_MAX};
use history::runs::{current, AI_MESSAGE, HUMAN_MESSAGE, RUN_START, TOOL_RESULT};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The workload sub-stream of the AI messages' callers (numbered after R18, whose caller rule
/// they reach; unused by any other kind of call).
pub const CALLER_SUBSTREAM: u64 = 18;

/// Middlewares whose own model calls a run journals (DeerFlow tags them `middleware:<name>`).
const MIDDLEWARES: [&str; 3] = ["title", "summarize", "guardrail"];

/// A caller of the lead agent's answer, none of them a middleware's by the contract's
/// case-sensitive `middleware:` prefix: the agent's own name, look-alikes (a capital `M`, no
/// colon, a leading space), and callers that are not strings (a number, an object naming a
/// middleware), which a store matching the JSON text or `str()` of the value might take for one.
fn agent_caller(rng: &mut ChaCha8Rng) -> Value {
    match rng.random_range(0..6) {
        0 => json!("lead_agent"),
        1 => json!("Middleware:title"),
        2 => json!("middleware"),
        3 => json!(" middleware:title"),
        4 => json!(7),
        _ => json!({ "name": "middleware:title" }),
    }
}

/// Gives some ordinary runs callers: a middleware's AI message or two journaled among their
/// messages (most often right after the run's last answer, where a title middleware runs and
/// where a store that ignores the caller takes it for the answer), and look-alike callers on
/// some of the lead agent's answers. The long thread's runs keep their exact message counts.
pub fn add_callers(runs: &mut [RunSpec], options: &RunsOptions, rng: &mut ChaCha8Rng) {
    for run in runs.iter_mut().filter(|r| !r.id.starts_with("long-")) {
        if !chance(rng, options.middleware_caller_probability) {
            continue;
        }
        for m in run.messages.iter_mut() {
            if let MessageSpec::Ai { caller, .. } = m {
                if rng.random_bool(0.5) {
                    *caller = Some(agent_caller(rng));
                }
            }
        }
        for k in 0..rng.random_range(1..=2) {
            let name = MIDDLEWARES.choose(rng).copied().unwrap_or("title");
            let last_answer = run
                .messages
                .iter()
                .rposition(|m| matches!(m, MessageSpec::Ai { .. }));
            let at = match last_answer {
                Some(i) if rng.random_bool(0.6) => i + 1,
                _ => rng.random_range(0..=run.messages.len()),
            };
            let message = MessageSpec::Ai {
                text: format!("{} {name} {k}", run.id),
                after_ms: u32::from(rng.random_bool(0.3)),
                caller: Some(json!(format!("middleware:{name}"))),
            };
            run.messages.insert(at, message);
        }
    }
}

/// The event types a filter draws from: the task events, the seed-era messages and lifecycle,
/// and current names no run of this workload writes (a filter that selects nothing).
const FILTER_TYPES: [&str; 8] = [
    current::SUBAGENT_START,
    current::SUBAGENT_STEP,
    current::SUBAGENT_END,
    AI_MESSAGE,
    TOOL_RESULT,
    HUMAN_MESSAGE,
    RUN_START,
    current::LLM_AI_RESPONSE,
];

/// Gives some runs subagent tasks.
pub fn add_tasks(runs: &mut [RunSpec], options: &RunsOptions, rng: &mut ChaCha8Rng) {
    for run in runs.iter_mut() {
        if !chance(rng, options.subagent_probability) {
            continue;
        }
        let messages = run.message_count() as u32;
        let digits = rng.random_bool(DIGIT_IDS_PROBABILITY);
        run.tasks = (0..rng.random_range(1..=3))
            .map(|t| TaskSpec {
                id: format!("task-{t}"),
                after: rng.random_range(0..=messages),
                steps: rng.random_range(1..=TASK_STEPS_MAX.min(4)),
                numeric_id: false,
            })
            .collect();
        if digits {
            give_digit_ids(&mut run.tasks, rng);
        }
    }
}

/// How often a run's tasks have ids of decimal digits, some of them JSON numbers.
const DIGIT_IDS_PROBABILITY: f64 = 0.3;

/// Ids `0` and `1`, each a string or a number: a run may hold the string `"1"` beside the number
/// `1`, and a filter by `"1"` must select the string's events only.
fn give_digit_ids(tasks: &mut Vec<TaskSpec>, rng: &mut ChaCha8Rng) {
    let mut taken = BTreeSet::new();
    for task in tasks.iter_mut() {
        task.id = rng.random_range(0..2u32).to_string();
        task.numeric_id = rng.random_bool(0.5);
    }
    tasks.retain(|t| taken.insert((t.id.clone(), t.numeric_id)));
}

/// A filter over one run's events: its task, some types, or both.
fn filter_op(run: &RunSpec, rng: &mut ChaCha8Rng) -> Op {
    let tasks: Vec<&str> = run.tasks.iter().map(|t| t.id.as_str()).collect();
    let task = |rng: &mut ChaCha8Rng| {
        if rng.random_bool(0.85) {
            tasks.choose(rng).map(|t| t.to_string())
        } else {
            // A task the run never had (another run's, or nobody's).
            Some(format!("task-{}", rng.random_range(0..4)))
        }
    };
    let types = |rng: &mut ChaCha8Rng| {
        let n = rng.random_range(0..=3);
        let mut picked: Vec<String> = FILTER_TYPES
            .choose_multiple(rng, n)
            .map(|t| t.to_string())
            .collect();
        picked.sort();
        Some(picked)
    };
    let (event_types, task) = match rng.random_range(0..3) {
        0 if !tasks.is_empty() => (None, task(rng)),
        1 => (types(rng), None),
        _ => (types(rng), task(rng)),
    };
    Op::FilteredEvents {
        run: run.id.clone(),
        event_types,
        task,
        limit: rng.random_range(1..=6),
    }
}

/// `ops` with the filtered reads woven in after waits.
pub fn weave(ops: Vec<Op>, w: Weaving, mut rng: ChaCha8Rng) -> Vec<Op> {
    let Weaving { runs, options } = w;
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let waited = match &op {
            Op::Wait { run } => runs.iter().find(|r| &r.id == run),
            _ => None,
        };
        out.push(op);
        let Some(run) = waited else { continue };
        if chance(&mut rng, options.filtered_events_probability) {
            out.push(filter_op(run, &mut rng));
        }
        if chance(&mut rng, options.last_answers_probability) {
            out.push(Op::LastAnswers {
                thread: run.thread.clone(),
            });
        }
    }
    out
}
