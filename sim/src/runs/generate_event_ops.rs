//! The subagent tasks of generated runs and the client's filtered reads of run events: a run
//! delegates one to three tasks at random points of its messages, and after a wait the client
//! may page the run's events through a filter (a task, some event types, or both) and ask the
//! thread's runs for their last visible AI message.
//!
//! A sub-stream of its own decides all of it, so seeds keep the runs, reads, faults and wider
//! calls they had before (only the rows a task adds move the seqs after them).

use super::options::RunsOptions;
use super::scenario::{Op, RunSpec};
use super::tasks::{TaskSpec, TASK_STEPS_MAX};
use crate::rng::chance;
use history::runs::{current, AI_MESSAGE, HUMAN_MESSAGE, RUN_START, TOOL_RESULT};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

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
        run.tasks = (0..rng.random_range(1..=3))
            .map(|t| TaskSpec {
                id: format!("task-{t}"),
                after: rng.random_range(0..=messages),
                steps: rng.random_range(1..=TASK_STEPS_MAX.min(4)),
            })
            .collect();
    }
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
pub fn weave(
    ops: Vec<Op>,
    runs: &[RunSpec],
    options: &RunsOptions,
    mut rng: ChaCha8Rng,
) -> Vec<Op> {
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
