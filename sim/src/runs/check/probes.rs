//! The runs workload's coverage probes: faults that fired and situations the threads reached.

use super::answer_rules::read_errors;
use super::map;
use crate::coverage::{join_probes, Coverage};
use crate::hostile_text::hit_classes;
use crate::runs::observations::WorldRecord;
use crate::runs::record::TruthEvent;
use crate::runs::scenario::{MessageSpec, Op, RunSpec, RunsScenario, Target};
use crate::runs::script::is_middleware_caller;
use crate::runs::table_reads::{self, TABLE_READS};
use model::runs::RunOutcome;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Every probe this workload can fire: its own, then the generator map's cells.
pub const PROBES: &[&str] = &join_probes::<{ OWN.len() + map::CELL_COUNT + TABLE_READS.len() }>(
    &join_probes::<{ OWN.len() + map::CELL_COUNT }>(OWN, &map::PROBES),
    &table_reads::PROBES,
);

/// The probes of faults and features.
const OWN: &[&str] = &[
    "runs.fault.batch_write_failed",
    "runs.fault.worker_crashed",
    "runs.fault.store_restarted",
    "runs.fault.run_killed",
    "runs.fault.run_errored",
    "runs.fault.run_cancelled",
    "runs.feature.summarized",
    "runs.feature.summary_kept_current_request",
    "runs.feature.tool_calls",
    "runs.feature.concurrent_writers",
    "runs.feature.thread_past_200",
    "runs.feature.thread_past_1000",
    "runs.feature.thread_at_page_multiple",
    "runs.feature.null_user_rows",
    "runs.feature.rating_live",
    "runs.feature.rating_old",
    "runs.feature.paginate_backward",
    "runs.feature.page_both_cursors",
    "runs.feature.run_deleted",
    "runs.feature.receipt_retried",
    "runs.feature.run_paged",
    "runs.feature.subagent_tasks",
    "runs.feature.events_filtered",
    "runs.feature.task_filter_on_a_numeric_id",
    "runs.feature.last_answers",
    "runs.feature.user_reads",
    "runs.feature.rating_anonymous",
    "runs.feature.feedback_withdrawn",
    "runs.feature.feedback_withdrawn_by_run",
    "runs.feature.feedback_reads",
    "runs.feature.rating_after_deletion",
    "runs.feature.thread_deleted",
    "runs.feature.thread_renumbered",
    "runs.feature.thread_deleted_everywhere",
    "runs.feature.thread_deleted_with_feedback",
    "runs.feature.thread_recreated",
    "runs.feature.late_write",
    "runs.feature.fenced_receipt",
    "runs.feature.default_scope_reads",
    "runs.feature.default_scope_without_user",
    "runs.feature.middleware_caller",
    "runs.feature.lookalike_caller",
    "runs.feature.middleware_caller_in_views",
    "runs.feature.events_read",
    "runs.feature.reader_edits",
    "runs.feature.writer_edits",
    "runs.feature.hidden_reminder",
    "runs.feature.reminder_after_the_turn",
    "runs.feature.middleware_prompt",
    "runs.feature.input_rewritten",
    "runs.feature.nested_invocation",
    "runs.feature.nested_ends_before_the_root",
    "runs.feature.stopped_inside_a_nested_step",
    "runs.feature.final_dump",
    "runs.feature.trace_truncated",
    "runs.feature.long_trace_kept_whole",
    "runs.feature.trace_bound_splits_a_character",
    "runs.feature.thread_id_with_a_dot",
    "runs.feature.thread_id_parent_directory",
    "runs.feature.thread_id_over_64_characters",
    "runs.feature.views_of_several_runs",
    "runs.text.line_separator",
    "runs.text.paragraph_separator",
    "runs.text.nel",
    "runs.text.nul",
    "runs.text.c0_control",
    "runs.text.crlf",
    "runs.text.escapes",
    "runs.text.astral",
    "runs.text.bidi",
    "runs.text.zero_width",
    "runs.text.combining",
    "runs.text.long",
];

pub fn probes(s: &RunsScenario, record: &WorldRecord, cov: &mut Coverage) {
    let log = &record.log;
    cov.hit_n(
        "runs.fault.batch_write_failed",
        s.failing_write_calls.len() as u64,
    );
    cov.hit_n("runs.fault.worker_crashed", s.crashes.len() as u64);
    cov.hit_n(
        "runs.fault.store_restarted",
        log.store_restarts().len() as u64,
    );
    cov.hit_n("runs.feature.summarized", log.summaries().len() as u64);
    cov.hit_n(
        "runs.feature.summary_kept_current_request",
        rescued_requests(s, record),
    );
    truth_probes(s, record, cov);
    map::map_probes(record, cov);
    text_probes(record, cov);
    trace_probes(record, cov);
    split_probes(s, record, cov);
    thread_id_probes(record, cov);
    script_probes(s, cov);
    table_read_probes(record, cov);
    super::run_label_rules::probes(record, cov);
    // The whole-store comparison at the end, where both stores answered it.
    if record.dumps.memory.is_ok() && record.dumps.sqlite.is_ok() {
        cov.hit("runs.feature.final_dump");
    }
    let mut answered = Answered::of(s, record);
    op_probes(s, cov);
    store_op_probes(s, &mut answered.clone(), cov);
    caller_probes(s, &mut answered, cov);
    cov.hit_n(
        "runs.feature.subagent_tasks",
        s.runs.iter().map(|r| r.tasks.len() as u64).sum(),
    );
    // A thread emptied and written again: the new era numbered from 1.
    let renumbered = log.thread_deletions().iter().filter(|d| {
        log.written()
            .iter()
            .any(|w| w.op > d.op && w.event.thread_id == d.thread_id)
    });
    cov.hit_n("runs.feature.thread_renumbered", renumbered.count() as u64);
    // Writes a thread deletion fenced (R28): late commits, and receipts of a run it removed.
    cov.hit_n("runs.feature.late_write", log.late_writes().len() as u64);
    let fenced_receipts =
        (log.receipts().iter()).filter(|r| super::fence_rules::fenced(record, r.op, &r.event));
    cov.hit_n(
        "runs.feature.fenced_receipt",
        fenced_receipts.count() as u64,
    );
    // The API's deletions: of a rated thread, and of one a run then created again.
    for d in log.everywhere_deletions() {
        if matches!(&d.deleted.memory, Ok(x) if x.feedback > 0)
            || matches!(&d.deleted.sqlite, Ok(x) if x.feedback > 0)
        {
            cov.hit("runs.feature.thread_deleted_with_feedback");
        }
        let recreated = log
            .written()
            .iter()
            .any(|w| w.op > d.op && w.event.thread_id == d.thread_id);
        if recreated {
            cov.hit("runs.feature.thread_recreated");
        }
    }
}

/// Each table read, where both stores answered it.
fn table_read_probes(record: &WorldRecord, cov: &mut Coverage) {
    for read in record.log.table_reads() {
        if let Some(row) = table_reads::table_read(read.op) {
            if read.answers.memory.is_ok() && read.answers.sqlite.is_ok() {
                cov.hit(row.probe);
            }
        }
    }
}

/// Summaries whose plain count back from the end would have folded the latest human message of
/// their state (R29's situation: the middleware had to keep the current request).
fn rescued_requests(s: &RunsScenario, record: &WorldRecord) -> u64 {
    let rescued = record.log.summaries().iter().filter(|sum| {
        let Some(settings) = s.runs[sum.run].summarize else {
            return false;
        };
        let plain = sum.before.len().saturating_sub(settings.keep_messages);
        sum.before
            .iter()
            .rposition(|m| m.kind == history::runs::MessageKind::Human)
            .is_some_and(|current| current < plain)
    });
    rescued.count() as u64
}

/// How runs stopped, and how long the threads grew, by the ground truth.
fn truth_probes(s: &RunsScenario, record: &WorldRecord, cov: &mut Coverage) {
    let mut messages_per_thread: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, run, event) in record.log.truth() {
        match event {
            TruthEvent::Stop(outcome) if !s.runs[*run].nested.is_empty() => {
                nested_probes(&s.runs[*run], *outcome, cov);
                stop_probe(*outcome, cov);
            }
            TruthEvent::Stop(outcome) => stop_probe(*outcome, cov),
            TruthEvent::Message { kind, .. } => {
                if let Some(spec) = s.runs.get(*run) {
                    *messages_per_thread.entry(spec.thread.as_str()).or_default() += 1;
                    if *kind == model::runs::MessageKind::Human {
                        turn_probes(spec, cov);
                    }
                }
            }
            _ => {}
        }
    }
    for n in messages_per_thread.values() {
        if *n > 200 {
            cov.hit("runs.feature.thread_past_200");
        }
        if *n > 1000 {
            cov.hit("runs.feature.thread_past_1000");
        }
        if *n > 0 && s.page_size_events > 0 && n % s.page_size_events as u64 <= 1 {
            cov.hit("runs.feature.thread_at_page_multiple");
        }
    }
}

/// How a run stopped.
fn stop_probe(outcome: RunOutcome, cov: &mut Coverage) {
    match outcome {
        RunOutcome::Killed => cov.hit("runs.fault.run_killed"),
        RunOutcome::Errored => cov.hit("runs.fault.run_errored"),
        RunOutcome::Cancelled => cov.hit("runs.fault.run_cancelled"),
        RunOutcome::Ended | RunOutcome::Running => {}
    }
}

/// The invocations nested in a run that stopped with `outcome` (R26).
fn nested_probes(spec: &RunSpec, outcome: RunOutcome, cov: &mut Coverage) {
    let total = crate::runs::script::expand(spec).len() as u32;
    let count = crate::runs::script::emitted_count(spec, total as usize) as u32;
    if spec.nested.iter().any(|n| n.at < count) {
        cov.hit("runs.feature.nested_invocation");
    }
    let last = spec.nested.iter().any(|n| n.at + n.messages == total);
    if outcome == RunOutcome::Ended && last {
        cov.hit("runs.feature.nested_ends_before_the_root");
    }
    let stopped = matches!(outcome, RunOutcome::Errored | RunOutcome::Cancelled);
    if stopped && !crate::runs::nested::open_at(spec, count).is_empty() {
        cov.hit("runs.feature.stopped_inside_a_nested_step");
    }
}

/// What the model calls answering a user's turn carried besides it (R25).
fn turn_probes(spec: &RunSpec, cov: &mut Coverage) {
    let input = spec.model_input;
    if input.reminders > 0 {
        cov.hit("runs.feature.hidden_reminder");
    }
    if input.reminders_after > 0 {
        cov.hit("runs.feature.reminder_after_the_turn");
    }
    if input.middleware_prompt {
        cov.hit("runs.feature.middleware_prompt");
    }
    if input.wrapped {
        cov.hit("runs.feature.input_rewritten");
    }
}

/// What the runs' scripts contain.
fn script_probes(s: &RunsScenario, cov: &mut Coverage) {
    for run in &s.runs {
        if run.user.is_none() {
            cov.hit("runs.feature.null_user_rows");
        }
        if run
            .messages
            .iter()
            .any(|m| matches!(m, MessageSpec::ToolStep { .. } | MessageSpec::Bulk { .. }))
        {
            cov.hit("runs.feature.tool_calls");
        }
    }
}

/// Whether each store call of the client's ops was answered (every store of the pair answered
/// what the contract asks, or refused where it must), queued by kind and thread (or run) in the
/// order the world made them. A probe of work that crosses to the store fires only for a call
/// the store answered: never for work left out (an op the system does not serve is never
/// sent) or answered with an error (R24).
#[derive(Clone)]
struct Answered<'a> {
    queues: BTreeMap<(&'static str, &'a str), VecDeque<bool>>,
}

impl<'a> Answered<'a> {
    fn of(s: &'a RunsScenario, record: &'a WorldRecord) -> Answered<'a> {
        let slot = record.first_slot;
        let mut queues: BTreeMap<(&'static str, &'a str), VecDeque<bool>> = BTreeMap::new();
        let mut push = |kind, key, ok| queues.entry((kind, key)).or_default().push_back(ok);
        for read in record.log.reads() {
            let ok = read_errors(&read.kind, slot)
                .iter()
                .all(|(_, e)| e.is_empty());
            push((&read.kind).into(), read.thread.as_str(), ok);
        }
        let run_id = |r: usize| s.runs.get(r).map_or("", |spec| spec.id.as_str());
        for d in record.log.deletions() {
            let ok = d.answers.deleted.memory.is_ok() && d.answers.deleted.sqlite.is_ok();
            push("delete_run", run_id(d.run), ok);
        }
        for r in record.log.receipts() {
            let ok = r.answer.memory.is_ok() && r.answer.sqlite.is_ok();
            push("receipt", run_id(r.run), ok);
        }
        for d in record.log.thread_deletions() {
            let ok = d.answers.deleted.memory.is_ok() && d.answers.deleted.sqlite.is_ok();
            push("delete_thread", d.thread.as_str(), ok);
        }
        Answered { queues }
    }

    /// Whether the next call of `kind` on `key` was answered (`false` when none was made).
    fn next(&mut self, kind: &'static str, key: &'a str) -> bool {
        let queue = self.queues.get_mut(&(kind, key));
        queue.and_then(VecDeque::pop_front).unwrap_or(false)
    }
}

/// The thread (key) of run `run` of the scenario.
fn thread_of<'a>(s: &'a RunsScenario, run: &str) -> &'a str {
    (s.runs.iter())
        .find(|r| r.id == run)
        .map_or("", |r| r.thread.as_str())
}

/// What the client's ops do on histsim's side: concurrent writers, ratings, feedback.
fn op_probes(s: &RunsScenario, cov: &mut Coverage) {
    // Two runs of one thread started with no wait for the first in between.
    let mut running: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for op in &s.ops {
        match op {
            Op::Start { run } => {
                if let Some(spec) = s.runs.iter().find(|r| &r.id == run) {
                    let set = running.entry(spec.thread.as_str()).or_default();
                    if !set.is_empty() {
                        cov.hit("runs.feature.concurrent_writers");
                    }
                    set.insert(run.as_str());
                }
            }
            Op::Wait { run } => {
                for set in running.values_mut() {
                    set.remove(run.as_str());
                }
            }
            Op::Rate { target, .. } => match target {
                Target::Live => cov.hit("runs.feature.rating_live"),
                Target::Old(_) => cov.hit("runs.feature.rating_old"),
            },
            Op::RateAnonymously { .. } => cov.hit("runs.feature.rating_anonymous"),
            Op::Withdraw { .. } => cov.hit("runs.feature.feedback_withdrawn"),
            Op::WithdrawRun { .. } => cov.hit("runs.feature.feedback_withdrawn_by_run"),
            Op::FeedbackReads { .. } => cov.hit("runs.feature.feedback_reads"),
            _ => {}
        }
    }
    rating_after_deletion(s, cov);
}

/// What the client's ops that cross to the store do, each only where the store answered it.
fn store_op_probes<'a>(s: &'a RunsScenario, answered: &mut Answered<'a>, cov: &mut Coverage) {
    for op in &s.ops {
        match op {
            // `next` comes first in each guard: a call is taken off its queue whatever the op's
            // other fields say.
            Op::Paginate {
                thread, backward, ..
            } if answered.next("paginate", thread) && *backward => {
                cov.hit("runs.feature.paginate_backward")
            }
            Op::Page {
                thread,
                before,
                after,
                ..
            } if answered.next("page", thread) && before.is_some() && after.is_some() => {
                cov.hit("runs.feature.page_both_cursors")
            }
            Op::DeleteRun { run } if answered.next("delete_run", run) => {
                cov.hit("runs.feature.run_deleted")
            }
            Op::Receipt { run, attempt } if answered.next("receipt", run) && *attempt > 0 => {
                cov.hit("runs.feature.receipt_retried")
            }
            Op::RunMessages { run, .. } if answered.next("run_messages", thread_of(s, run)) => {
                cov.hit("runs.feature.run_paged")
            }
            Op::Events { run } if answered.next("events", thread_of(s, run)) => {
                cov.hit("runs.feature.events_read")
            }
            Op::FilteredEvents { run, task, .. }
                if answered.next("filtered_events", thread_of(s, run)) =>
            {
                cov.hit("runs.feature.events_filtered");
                // A filter by `"1"` over a run whose task 1 carries the number 1.
                let numeric = |r: &&RunSpec| {
                    r.tasks
                        .iter()
                        .any(|t| t.numeric_id && Some(&t.id) == task.as_ref())
                };
                if s.runs.iter().filter(|r| &r.id == run).any(|r| numeric(&r)) {
                    cov.hit("runs.feature.task_filter_on_a_numeric_id")
                }
            }
            Op::LastAnswers { thread } if answered.next("last_answers", thread) => {
                cov.hit("runs.feature.last_answers")
            }
            Op::UserMessages { thread, .. } if answered.next("user_messages", thread) => {
                cov.hit("runs.feature.user_reads")
            }
            Op::DeleteThread { thread, everywhere } if answered.next("delete_thread", thread) => {
                cov.hit("runs.feature.thread_deleted");
                if *everywhere {
                    cov.hit("runs.feature.thread_deleted_everywhere");
                }
            }
            Op::DefaultScopeMessages { thread, run }
                if answered.next("default_scope_messages", thread) =>
            {
                cov.hit("runs.feature.default_scope_reads");
                if s.runs.iter().any(|r| &r.id == run && r.user.is_none()) {
                    cov.hit("runs.feature.default_scope_without_user");
                }
            }
            Op::EditRead { .. } => cov.hit("runs.feature.reader_edits"),
            Op::EditWritten { .. } => cov.hit("runs.feature.writer_edits"),
            _ => {}
        }
    }
}

/// Reads of a thread with a run started before them whose script journals an AI message with
/// a middleware's caller or with a caller that only looks like one: last-answer reads (R18:
/// `middleware_caller`, the contract hides it; `lookalike_caller`, it stays a candidate
/// answer) and the views (`middleware_caller_in_views`: shown as any message row).
fn caller_probes<'a>(s: &'a RunsScenario, answered: &mut Answered<'a>, cov: &mut Coverage) {
    let mut started: BTreeSet<&str> = BTreeSet::new();
    // Per thread: whether a started run has a middleware's caller, and a look-alike one.
    let callers_on = |thread: &str, started: &BTreeSet<&str>| {
        let mut found = (false, false);
        let runs =
            (s.runs.iter()).filter(|r| r.thread == thread && started.contains(r.id.as_str()));
        for m in runs.flat_map(|r| &r.messages) {
            if let MessageSpec::Ai {
                caller: Some(c), ..
            } = m
            {
                if is_middleware_caller(c) {
                    found.0 = true;
                } else {
                    found.1 = true;
                }
            }
        }
        found
    };
    for op in &s.ops {
        match op {
            Op::Start { run } => {
                started.insert(run.as_str());
            }
            Op::LastAnswers { thread } if answered.next("last_answers", thread) => {
                let (hidden, lookalike) = callers_on(thread, &started);
                if hidden {
                    cov.hit("runs.feature.middleware_caller");
                }
                if lookalike {
                    cov.hit("runs.feature.lookalike_caller");
                }
            }
            Op::Views { thread }
                if answered.next("views", thread) && callers_on(thread, &started).0 =>
            {
                cov.hit("runs.feature.middleware_caller_in_views")
            }
            _ => {}
        }
    }
}

/// A rating on a thread after a run of it was deleted.
fn rating_after_deletion(s: &RunsScenario, cov: &mut Coverage) {
    let mut deleted_on: BTreeSet<&str> = BTreeSet::new();
    for op in &s.ops {
        match op {
            Op::DeleteRun { run } => {
                if let Some(spec) = s.runs.iter().find(|r| &r.id == run) {
                    deleted_on.insert(spec.thread.as_str());
                }
            }
            Op::Rate { thread, .. } | Op::RateAnonymously { thread, .. }
                if deleted_on.contains(thread.as_str()) =>
            {
                cov.hit("runs.feature.rating_after_deletion")
            }
            _ => {}
        }
    }
}

/// The hostile-text classes of the message texts the store kept to the end (its final dump).
/// Long traces the stores acknowledged: cut by the journal's bound (marked `content_truncated`),
/// or kept whole (no bound, or within it).
fn trace_probes(record: &WorldRecord, cov: &mut Coverage) {
    /// A trace this long is a model's output, never an id.
    const LONG_BYTES: usize = 200;
    for w in record.log.written() {
        let e = &w.event;
        if e.category != history::runs::Category::Trace {
            continue;
        }
        if e.metadata.get(history::runs::CONTENT_TRUNCATED) == Some(&Value::Bool(true)) {
            cov.hit("runs.feature.trace_truncated");
        } else if e.content.to_string().len() > LONG_BYTES {
            cov.hit("runs.feature.long_trace_kept_whole");
        }
    }
}

/// Traces the runs emitted whose text the journals' bound falls inside a character of (R30's
/// situation: a cut at the bound's byte would split it).
fn split_probes(s: &RunsScenario, record: &WorldRecord, cov: &mut Coverage) {
    let Some(max) = s.max_trace_content_bytes else {
        return;
    };
    for e in record.log.emitted().iter().flatten() {
        if e.category != history::runs::Category::Trace {
            continue;
        }
        let text = e
            .content
            .as_str()
            .map_or_else(|| e.content.to_string(), str::to_owned);
        if text.len() > max && !text.is_char_boundary(max) {
            cov.hit("runs.feature.trace_bound_splits_a_character");
        }
    }
}

/// Rows the store accepted on a thread whose id has a shape some systems refuse (S4 to S6):
/// histsim's stores keep one id space and are judged there.
fn thread_id_probes(record: &WorldRecord, cov: &mut Coverage) {
    for w in record.log.written() {
        let probe = match crate::runs::store_differences::shape_of(&w.event.thread_id).map(|d| d.id)
        {
            Some("S4") => "runs.feature.thread_id_with_a_dot",
            Some("S5") => "runs.feature.thread_id_parent_directory",
            Some(_) => "runs.feature.thread_id_over_64_characters",
            None => continue,
        };
        cov.hit(probe);
    }
}

fn text_probes(record: &WorldRecord, cov: &mut Coverage) {
    let Ok(events) = &record.dumps.memory else {
        return;
    };
    for e in events {
        if let Some(text) = e.content.get("content").and_then(|c| c.as_str()) {
            hit_classes(text, "runs", PROBES, cov);
        }
    }
}
