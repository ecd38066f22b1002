//! Candidate simplifications of a runs scenario, for the shrinker.
//!
//! Each candidate is the scenario with one thing removed or made plainer: a run, a block of
//! client ops, a block of a run's messages, half a filler block, a failing write, a crash (of a
//! worker or of the store's host), a worker; a stop that becomes a normal end, a run that stops
//! summarizing, a pause that goes.
//! Candidates are listed from the largest cut to the smallest, so the greedy shrinker takes big
//! steps first.

use super::scenario::{MessageSpec, Op, RunSpec, RunsScenario, Stop, Target};
use crate::workload::{halving_blocks, Integer, Move};
use crate::workload_items::shrink_helpers;
use std::collections::{BTreeMap, BTreeSet};

shrink_helpers!(RunsScenario, cut then prune);

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

/// The integers the shrinker bisects, sizes first: message counts of filler blocks and task
/// steps, then page sizes and limits, cursors, then stops, budgets, pauses and fault times.
pub fn integers(s: &RunsScenario) -> Vec<Integer<RunsScenario>> {
    let mut out = Vec::new();
    for (r, run) in s.runs.iter().enumerate() {
        for (m, message) in run.messages.iter().enumerate() {
            if let MessageSpec::Bulk { messages } = *message {
                let path = format!("runs[{r}].messages[{m}].messages");
                let count = int(path, messages.into(), 1, move |c, v| {
                    c.runs[r].messages[m] = MessageSpec::Bulk { messages: v as u32 };
                    // A task written after a message that is gone is written after the last.
                    let emitted = c.runs[r].message_count() as u32;
                    for task in &mut c.runs[r].tasks {
                        task.after = task.after.min(emitted);
                    }
                });
                out.extend(count.map(Integer::scaling));
            }
        }
        for (t, task) in run.tasks.iter().enumerate() {
            let path = format!("runs[{r}].tasks[{t}].steps");
            let steps = int(path, task.steps.into(), 1, move |c, v| {
                c.runs[r].tasks[t].steps = v as u32
            });
            out.extend(steps.map(Integer::scaling));
            // Where the task is written: toward the run's first message, so that the messages
            // after it can go.
            let path = format!("runs[{r}].tasks[{t}].after");
            out.extend(int(path, task.after.into(), 0, move |c, v| {
                c.runs[r].tasks[t].after = v as u32
            }));
        }
    }
    let page_size = int(
        "page_size_events".into(),
        s.page_size_events as u64,
        1,
        |c, v| c.page_size_events = v as usize,
    );
    out.extend(page_size.map(Integer::scaling));
    out.extend(int(
        "flush_threshold_events".into(),
        s.flush_threshold_events as u64,
        1,
        |c, v| c.flush_threshold_events = v as usize,
    ));
    for (o, op) in s.ops.iter().enumerate() {
        op_integers(o, op, &mut out);
    }
    run_integers(s, &mut out);
    fault_integers(s, &mut out);
    out
}

/// The integers of op `o`: limits, cursors, a sleep, a receipt's attempt, which rating.
fn op_integers(o: usize, op: &Op, out: &mut Vec<Integer<RunsScenario>>) {
    let at = |field: &str| format!("ops[{o}].{field}");
    match op {
        Op::Page {
            limit,
            before,
            after,
            ..
        } => page_integers(o, *limit, *before, *after, out),
        Op::Paginate { limit, .. }
        | Op::RunMessages { limit, .. }
        | Op::FilteredEvents { limit, .. } => {
            let pages = int(at("limit"), (*limit).into(), 1, move |c, v| {
                if let Op::Paginate { limit, .. }
                | Op::RunMessages { limit, .. }
                | Op::FilteredEvents { limit, .. } = &mut c.ops[o]
                {
                    *limit = v as u32;
                }
            });
            out.extend(pages.map(Integer::scaling));
        }
        Op::Sleep { ms } => {
            out.extend(int(at("ms"), (*ms).into(), 0, move |c, v| {
                c.ops[o] = Op::Sleep { ms: v as u32 }
            }));
        }
        Op::Receipt { attempt, .. } | Op::Withdraw { nth: attempt, .. } => {
            let field = if matches!(op, Op::Receipt { .. }) {
                "attempt"
            } else {
                "nth"
            };
            out.extend(int(at(field), (*attempt).into(), 0, move |c, v| {
                if let Op::Receipt { attempt, .. } | Op::Withdraw { nth: attempt, .. } =
                    &mut c.ops[o]
                {
                    *attempt = v as u32;
                }
            }));
        }
        Op::Rate {
            target: Target::Old(n),
            ..
        }
        | Op::RateAnonymously {
            target: Target::Old(n),
            ..
        } => {
            out.extend(int(at("target.old"), (*n).into(), 0, move |c, v| {
                if let Op::Rate { target, .. } | Op::RateAnonymously { target, .. } = &mut c.ops[o]
                {
                    *target = Target::Old(v as u32);
                }
            }));
        }
        _ => {}
    }
}

/// The integers of page op `o`: its limit and cursors.
fn page_integers(
    o: usize,
    limit: u32,
    before: Option<u64>,
    after: Option<u64>,
    out: &mut Vec<Integer<RunsScenario>>,
) {
    let at = |field: &str| format!("ops[{o}].{field}");
    let page = int(at("limit"), limit.into(), 1, move |c, v| {
        if let Op::Page { limit, .. } = &mut c.ops[o] {
            *limit = v as u32;
        }
    });
    out.extend(page.map(Integer::scaling));
    if let Some(b) = before {
        out.extend(int(at("before"), b, 0, move |c, v| {
            if let Op::Page { before, .. } = &mut c.ops[o] {
                *before = Some(v);
            }
        }));
    }
    if let Some(a) = after {
        out.extend(int(at("after"), a, 0, move |c, v| {
            if let Op::Page { after, .. } = &mut c.ops[o] {
                *after = Some(v);
            }
        }));
    }
}

/// The integers of each run: where it stops, its summarization budget, its pauses.
fn run_integers(s: &RunsScenario, out: &mut Vec<Integer<RunsScenario>>) {
    for (r, run) in s.runs.iter().enumerate() {
        if let Some(after) = run.stop.after() {
            let path = format!("runs[{r}].stop.after");
            out.extend(int(path, after.into(), 0, move |c, v| {
                let v = v as u32;
                c.runs[r].stop = match c.runs[r].stop {
                    Stop::Error { .. } => Stop::Error { after: v },
                    Stop::Cancel { .. } => Stop::Cancel { after: v },
                    Stop::Kill { .. } => Stop::Kill { after: v },
                    Stop::End => Stop::End,
                }
            }));
        }
        if let Some(summarize) = run.summarize {
            let path = format!("runs[{r}].summarize.budget_tokens");
            // The budget scales the work: a run emits past it before it summarizes.
            let budget = int(path, summarize.budget_tokens as u64, 1, move |c, v| {
                if let Some(s) = &mut c.runs[r].summarize {
                    s.budget_tokens = v as usize;
                }
            });
            out.extend(budget.map(Integer::scaling));
            let path = format!("runs[{r}].summarize.keep_messages");
            out.extend(int(path, summarize.keep_messages as u64, 1, move |c, v| {
                if let Some(s) = &mut c.runs[r].summarize {
                    s.keep_messages = v as usize;
                }
            }));
        }
        for (m, message) in run.messages.iter().enumerate() {
            let path = format!("runs[{r}].messages[{m}].after_ms");
            out.extend(int(path, message.pause_ms().into(), 0, move |c, v| {
                set_own_pause(&mut c.runs[r].messages[m], v as u32)
            }));
        }
    }
}

/// The times of faults: when a worker or the store's host crashes, how long a worker stays
/// down, which write call fails.
fn fault_integers(s: &RunsScenario, out: &mut Vec<Integer<RunsScenario>>) {
    for (i, call) in s.failing_write_calls.iter().enumerate() {
        let path = format!("failing_write_calls[{i}]");
        out.extend(int(path, *call, 0, move |c, v| {
            c.failing_write_calls[i] = v
        }));
    }
    for (i, crash) in s.crashes.iter().enumerate() {
        let path = format!("crashes[{i}].at_ms");
        out.extend(int(path, crash.at_ms.into(), 0, move |c, v| {
            c.crashes[i].at_ms = v as u32
        }));
        let path = format!("crashes[{i}].down_ms");
        out.extend(int(path, crash.down_ms.into(), 0, move |c, v| {
            c.crashes[i].down_ms = v as u32
        }));
    }
    for (i, crash) in s.store_crashes.iter().enumerate() {
        let path = format!("store_crashes[{i}].at_ms");
        out.extend(int(path, crash.at_ms.into(), 1, move |c, v| {
            c.store_crashes[i].at_ms = v as u32
        }));
    }
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
                    | Op::LateWrite { run } | Op::EditWritten { run }
                    | Op::FilteredEvents { run, .. } | Op::DefaultScopeMessages { run, .. } if *run == id)
                });
            }));
        }
    }
}

/// Blocks of client ops.
fn without_op_blocks(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    for range in halving_blocks(s.ops.len()) {
        out.push(cut(move |c| {
            c.ops.drain(range.clone());
        }));
    }
}

/// Blocks of a run's messages; smaller filler blocks; tool steps with one call; fewer
/// subagent tasks, of one step.
fn shorter_scripts(s: &RunsScenario, out: &mut Vec<Move<RunsScenario>>) {
    for (r, run) in s.runs.iter().enumerate() {
        for range in halving_blocks(run.messages.len()) {
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
    let calls = s.failing_write_calls.len();
    out.extend(removals(calls, |c| &mut c.failing_write_calls));
    out.extend(removals(s.crashes.len(), |c| &mut c.crashes));
    out.extend(removals(s.store_crashes.len(), |c| &mut c.store_crashes));
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
        if !run.nested.is_empty() {
            out.push(edit(move |c| c.runs[r].nested.clear()));
        }
        if !run.model_input.is_plain() {
            out.push(edit(move |c| c.runs[r].model_input = Default::default()));
        }
        if run.messages.iter().any(|m| m.pause_ms() > 0) {
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

/// The pause before message `m` itself (not its tool results').
fn set_own_pause(m: &mut MessageSpec, ms: u32) {
    match m {
        MessageSpec::Human { after_ms, .. }
        | MessageSpec::Ai { after_ms, .. }
        | MessageSpec::ToolStep { after_ms, .. } => *after_ms = ms,
        MessageSpec::Bulk { .. } => {}
    }
}

/// The pause before message `m` and before each of its tool results.
fn set_pause(m: &mut MessageSpec, ms: u32) {
    set_own_pause(m, ms);
    if let MessageSpec::ToolStep { calls, .. } = m {
        for c in calls {
            c.after_ms = ms;
        }
    }
}

/// Drops what a removal left dangling: waits and event reads of runs no op starts any more,
/// runs nobody starts, threads nothing names; workers that no longer exist become worker 0.
fn prune(mut s: RunsScenario) -> RunsScenario {
    let started = prune_ops(&mut s);
    s.runs.retain(|r| started.contains(&r.id));
    let mut named: BTreeSet<String> = s.runs.iter().map(|r| r.thread.clone()).collect();
    named.extend(
        s.ops
            .iter()
            .filter_map(|op| op.names().0)
            .map(str::to_string),
    );
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
    for r in &mut s.runs {
        cut_nested(r);
    }
    super::table_read_steps::prune(&mut s);
    s
}

/// Drops the ops whose run no op starts (or waits for) before them any more; answers the runs
/// still started.
fn prune_ops(s: &mut RunsScenario) -> BTreeSet<String> {
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
    // Runs stopped before a kept deletion of their thread: a late write needs one (R28).
    let mut fenced: BTreeSet<String> = BTreeSet::new();
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
        Op::DeleteRun { run } | Op::FilteredEvents { run, .. } | Op::EditWritten { run } => {
            waited.contains(run)
        }
        // A thread's deletion needs every run of it started so far stopped.
        Op::DeleteThread { thread, .. } => {
            let on_thread = |run: &String| thread_of.get(run.as_str()) == Some(&thread.as_str());
            let keep = started
                .iter()
                .all(|run| waited.contains(run) || !on_thread(run));
            if keep {
                fenced.extend(waited.iter().filter(|run| on_thread(run)).cloned());
            }
            keep
        }
        Op::LateWrite { run } => fenced.contains(run),
        _ => true,
    });
    started
}

/// Invocations nested around messages a move removed end where the run now ends.
fn cut_nested(run: &mut RunSpec) {
    let total = run.message_count() as u32;
    run.nested.retain(|n| n.at < total);
    for n in &mut run.nested {
        n.messages = n.messages.min(total - n.at);
    }
}

#[cfg(test)]
mod tests {
    use crate::runs::RunsWorkload;
    use crate::workload_items::assert_shrink_candidates_no_larger;

    #[test]
    fn candidates_are_valid_and_smaller_or_plainer() {
        assert_shrink_candidates_no_larger::<RunsWorkload>();
    }
}
