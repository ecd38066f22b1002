//! Candidate simplifications of a runs scenario, for the shrinker.
//!
//! Each candidate is the scenario with one thing removed or made plainer: a run, a block of
//! client ops, a block of a run's messages, half a filler block, a failing write, a crash (of a
//! worker or of the store's host), a worker; a stop that becomes a normal end, a run that stops
//! summarizing, a pause that goes.
//! Candidates are listed from the largest cut to the smallest, so the greedy shrinker takes big
//! steps first.

use super::scenario::{MessageSpec, Op, RunsScenario, Stop, Target};
use crate::workload::{move_by, Move};
use std::collections::{BTreeMap, BTreeSet};

/// Messages a run's script expands to.
fn messages_of(s: &RunsScenario) -> usize {
    s.runs
        .iter()
        .flat_map(|r| r.messages.iter())
        .map(|m| match m {
            MessageSpec::Human { .. } | MessageSpec::Ai { .. } => 1,
            MessageSpec::ToolStep { calls, .. } => 1 + calls.len(),
            MessageSpec::Bulk { messages } => *messages as usize,
        })
        .sum()
}

/// About the work of playing `s`, in steps: a bulk message costs a fiftieth of a step (bulk
/// messages go to the store in batches, and a thread of 1,001 plays in about 50 ms where 30 plain
/// steps take about 5), so a fuzz input may hold the thread R2 and R7 need.
pub fn play_cost(s: &RunsScenario) -> usize {
    let bulk: usize = s
        .runs
        .iter()
        .flat_map(|r| r.messages.iter())
        .map(|m| match m {
            MessageSpec::Bulk { messages } => *messages as usize,
            _ => 0,
        })
        .sum();
    s.ops.len() + messages_of(s) - bulk + bulk.div_ceil(50)
}

/// The size the shrinker minimises: ops and messages first, then faults.
pub fn size(s: &RunsScenario) -> (usize, usize) {
    (
        s.ops.len() + messages_of(s),
        s.failing_write_calls.len() + s.crashes.len() + s.store_crashes.len(),
    )
}

/// Halving blocks of `0..n`, largest first, never the whole range.
fn blocks(n: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut width = n / 2;
    while width >= 1 {
        let mut start = 0;
        while start < n {
            let end = (start + width).min(n);
            if end - start < n {
                out.push(start..end);
            }
            start = end;
        }
        width /= 2;
    }
    out
}

/// Every one-move simplification of `s`, largest first, not yet made or validated: each move
/// makes its scenario from `s` when applied (a fuzz input's edit makes only the one it picks),
/// and the workload's `shrink_candidates` keeps the valid ones that differ from `s`.
pub fn moves(s: &RunsScenario) -> Vec<Move<RunsScenario>> {
    let mut out = Vec::new();
    without_runs(s, &mut out);
    without_op_blocks(s, &mut out);
    shorter_scripts(s, &mut out);
    without_faults(s, &mut out);
    fewer_workers(s, &mut out);
    plainer_runs(s, &mut out);
    plainer_ops(s, &mut out);
    out
}

/// A move that changes a copy of the scenario in place.
fn edit(change: impl Fn(&mut RunsScenario) + 'static) -> Move<RunsScenario> {
    move_by(change, std::convert::identity)
}

/// A move that removes something, then what the removal left dangling.
fn cut(change: impl Fn(&mut RunsScenario) + 'static) -> Move<RunsScenario> {
    move_by(change, prune)
}

/// Whole runs, with the ops that name them.
fn without_runs(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    if s.runs.len() > 1 {
        for r in 0..s.runs.len() {
            out.push(cut(move |c| {
                let id = c.runs.remove(r).id;
                c.ops.retain(|op| {
                    !matches!(op, Op::Start { run } | Op::Wait { run } | Op::Events { run }
                    | Op::DeleteRun { run } | Op::Receipt { run, .. } | Op::RunMessages { run, .. }
                    | Op::FilteredEvents { run, .. } | Op::DefaultScopeMessages { run, .. } if *run == id)
                });
            }));
        }
    }
}

/// Blocks of client ops.
fn without_op_blocks(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    for range in blocks(s.ops.len()) {
        out.push(cut(move |c| {
            c.ops.drain(range.clone());
        }));
    }
}

/// Blocks of a run's messages; smaller filler blocks; tool steps with one call; fewer
/// subagent tasks, of one step.
fn shorter_scripts(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    for (r, run) in s.runs.iter().enumerate() {
        for range in blocks(run.messages.len()) {
            out.push(edit(move |c| {
                c.runs[r].messages.drain(range.clone());
            }));
        }
        for (m, message) in run.messages.iter().enumerate() {
            smaller_message(r, m, message, out);
        }
        for (t, task) in run.tasks.iter().enumerate() {
            out.push(edit(move |c| {
                c.runs[r].tasks.remove(t);
            }));
            if task.steps > 1 {
                out.push(edit(move |c| c.runs[r].tasks[t].steps = 1));
            }
        }
    }
}

/// Message `m` of run `r` made smaller, if it can be.
fn smaller_message(r: usize, m: usize, message: &MessageSpec, out: &mut Vec<Move<RunsScenario>>) {
    if let MessageSpec::Bulk { messages } = *message {
        // Halve first; then smaller cuts, so a filler that must stay past a page cap
        // (200, 500, 1000) shrinks to just past it.
        for cut in [messages / 2, messages / 10, 10, 1] {
            if cut >= 1 && cut < messages {
                out.push(edit(move |c| {
                    c.runs[r].messages[m] = MessageSpec::Bulk {
                        messages: messages - cut,
                    };
                }));
            }
        }
    }
    if let MessageSpec::ToolStep { calls, .. } = message {
        if calls.len() > 1 {
            out.push(edit(move |c| {
                if let MessageSpec::ToolStep { calls, .. } = &mut c.runs[r].messages[m] {
                    calls.truncate(1);
                }
            }));
        }
    }
}

/// Faults, one at a time.
fn without_faults(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    for i in 0..s.failing_write_calls.len() {
        out.push(edit(move |c| {
            c.failing_write_calls.remove(i);
        }));
    }
    for i in 0..s.crashes.len() {
        out.push(edit(move |c| {
            c.crashes.remove(i);
        }));
    }
    for i in 0..s.store_crashes.len() {
        out.push(edit(move |c| {
            c.store_crashes.remove(i);
        }));
    }
}

/// One worker fewer.
fn fewer_workers(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    if s.workers > 1 {
        out.push(cut(|c| c.workers -= 1));
    }
}

/// Plainer runs: a normal end, no summarizing, worker 0, no pauses.
fn plainer_runs(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    for (r, run) in s.runs.iter().enumerate() {
        if run.stop != Stop::End {
            out.push(edit(move |c| c.runs[r].stop = Stop::End));
        }
        if run.summarize.is_some() {
            out.push(edit(move |c| c.runs[r].summarize = None));
        }
        if run.worker != 0 {
            out.push(edit(move |c| c.runs[r].worker = 0));
        }
        if run.messages.iter().any(|m| pause(m) > 0) {
            out.push(edit(move |c| {
                for m in &mut c.runs[r].messages {
                    set_pause(m, 0);
                }
            }));
        }
    }
}

/// Plainer ops: ratings of the first old answer.
fn plainer_ops(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    for (o, op) in s.ops.iter().enumerate() {
        if let Op::Rate {
            target: Target::Old(n),
            ..
        } = op
        {
            if *n > 0 {
                out.push(edit(move |c| {
                    if let Op::Rate { target, .. } = &mut c.ops[o] {
                        *target = Target::Old(0);
                    }
                }));
            }
        }
    }
}

fn pause(m: &MessageSpec) -> u32 {
    match m {
        MessageSpec::Human { after_ms, .. }
        | MessageSpec::Ai { after_ms, .. }
        | MessageSpec::ToolStep { after_ms, .. } => *after_ms,
        MessageSpec::Bulk { .. } => 0,
    }
}

fn set_pause(m: &mut MessageSpec, ms: u32) {
    match m {
        MessageSpec::Human { after_ms, .. }
        | MessageSpec::Ai { after_ms, .. }
        | MessageSpec::ToolStep { after_ms, .. } => *after_ms = ms,
        MessageSpec::Bulk { .. } => {}
    }
    if let MessageSpec::ToolStep { calls, .. } = m {
        for c in calls {
            c.after_ms = ms;
        }
    }
}

/// Drops what a removal left dangling: waits and event reads of runs no op starts any more,
/// runs nobody starts, threads nothing names; workers that no longer exist become worker 0.
fn prune(mut s: RunsScenario) -> RunsScenario {
    let threads: Vec<(String, String)> = s
        .runs
        .iter()
        .map(|r| (r.id.clone(), r.thread.clone()))
        .collect();
    let thread_of: BTreeMap<&str, &str> = threads
        .iter()
        .map(|(r, t)| (r.as_str(), t.as_str()))
        .collect();
    let mut started = BTreeSet::new();
    let mut waited = BTreeSet::new();
    s.ops.retain(|op| match op {
        Op::Start { run } => started.insert(run.clone()),
        Op::Wait { run } => {
            let keep = started.contains(run);
            if keep {
                waited.insert(run.clone());
            }
            keep
        }
        Op::Events { run }
        | Op::Receipt { run, .. }
        | Op::RunMessages { run, .. }
        | Op::WithdrawRun { run, .. }
        | Op::DefaultScopeMessages { run, .. } => started.contains(run),
        // A deletion and a filtered read need their run stopped: a wait for it before.
        Op::DeleteRun { run } | Op::FilteredEvents { run, .. } => waited.contains(run),
        // A thread's deletion needs every run of it started so far stopped.
        Op::DeleteThread { thread } => started.iter().all(|run| {
            waited.contains(run) || thread_of.get(run.as_str()) != Some(&thread.as_str())
        }),
        _ => true,
    });
    s.runs.retain(|r| started.contains(&r.id));
    let mut named: BTreeSet<String> = s.runs.iter().map(|r| r.thread.clone()).collect();
    for op in &s.ops {
        if let Op::Views { thread }
        | Op::Page { thread, .. }
        | Op::Paginate { thread, .. }
        | Op::Rate { thread, .. }
        | Op::LastAnswers { thread }
        | Op::UserMessages { thread, .. }
        | Op::RateAnonymously { thread, .. }
        | Op::Withdraw { thread, .. }
        | Op::FeedbackReads { thread, .. }
        | Op::DeleteThread { thread } = op
        {
            named.insert(thread.clone());
        }
    }
    if !named.is_empty() {
        s.threads.retain(|k, _| named.contains(k));
    }
    let workers = s.workers;
    for r in &mut s.runs {
        if r.worker >= workers {
            r.worker = 0;
        }
    }
    s.crashes.retain(|c| c.worker < workers);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeedRng;
    use crate::runs::RunsWorkload;
    use crate::runs::{generate::generate, RunsOptions};
    use crate::workload::Workload;

    #[test]
    fn candidates_are_valid_and_smaller_or_plainer() {
        for seed in 0..20 {
            let rng = SeedRng::new(seed);
            let s = generate(rng, &RunsOptions::from_seed(rng));
            let cands = RunsWorkload::shrink_candidates(&s);
            assert!(!cands.is_empty(), "seed {seed}");
            for c in &cands {
                c.validate().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                assert!(size(c) <= size(&s), "seed {seed}");
            }
        }
    }

    #[test]
    fn halving_blocks_never_cover_everything() {
        assert_eq!(blocks(1), Vec::<std::ops::Range<usize>>::new());
        assert_eq!(blocks(4), vec![0..2, 2..4, 0..1, 1..2, 2..3, 3..4]);
    }
}
