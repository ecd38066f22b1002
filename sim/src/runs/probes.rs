//! The runs workload's coverage probes: faults that fired and situations the threads reached.

use super::scenario::{MessageSpec, Op, RunsScenario, Target};
use super::world::{TruthEvent, WorldRecord};
use crate::coverage::Coverage;
use model::runs::RunOutcome;
use std::collections::{BTreeMap, BTreeSet};

/// Every probe this workload can fire.
pub const PROBES: &[&str] = &[
    "runs.fault.batch_write_failed",
    "runs.fault.worker_crashed",
    "runs.fault.store_restarted",
    "runs.fault.run_killed",
    "runs.fault.run_errored",
    "runs.fault.run_cancelled",
    "runs.feature.summarized",
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
    "runs.feature.last_answers",
    "runs.feature.user_reads",
    "runs.feature.rating_anonymous",
    "runs.feature.feedback_withdrawn",
    "runs.feature.feedback_withdrawn_by_run",
    "runs.feature.feedback_reads",
    "runs.feature.rating_after_deletion",
    "runs.feature.thread_deleted",
    "runs.feature.thread_renumbered",
    "runs.feature.default_scope_reads",
    "runs.feature.default_scope_without_user",
];

pub fn probes(s: &RunsScenario, record: &WorldRecord, cov: &mut Coverage) {
    cov.hit_n(
        "runs.fault.batch_write_failed",
        s.failing_write_calls.len() as u64,
    );
    cov.hit_n("runs.fault.worker_crashed", s.crashes.len() as u64);
    cov.hit_n(
        "runs.fault.store_restarted",
        record.store_restarts.len() as u64,
    );
    cov.hit_n("runs.feature.summarized", record.summaries.len() as u64);
    truth_probes(s, record, cov);
    script_probes(s, cov);
    op_probes(s, cov);
    cov.hit_n(
        "runs.feature.subagent_tasks",
        s.runs.iter().map(|r| r.tasks.len() as u64).sum(),
    );
    // A thread emptied and written again: the new era numbered from 1.
    let renumbered = record.thread_deletions.iter().filter(|d| {
        record
            .written
            .iter()
            .any(|w| w.op > d.op && w.event.thread_id == d.thread_id)
    });
    cov.hit_n("runs.feature.thread_renumbered", renumbered.count() as u64);
}

/// How runs stopped, and how long the threads grew, by the ground truth.
fn truth_probes(s: &RunsScenario, record: &WorldRecord, cov: &mut Coverage) {
    let mut messages_per_thread: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, run, event) in &record.truth {
        match event {
            TruthEvent::Stop(RunOutcome::Killed) => cov.hit("runs.fault.run_killed"),
            TruthEvent::Stop(RunOutcome::Errored) => cov.hit("runs.fault.run_errored"),
            TruthEvent::Stop(RunOutcome::Cancelled) => cov.hit("runs.fault.run_cancelled"),
            TruthEvent::Message { .. } => {
                if let Some(spec) = s.runs.get(*run) {
                    *messages_per_thread.entry(spec.thread.as_str()).or_default() += 1;
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

/// What the client's ops do.
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
            Op::Paginate { backward: true, .. } => cov.hit("runs.feature.paginate_backward"),
            Op::Page {
                before: Some(_),
                after: Some(_),
                ..
            } => cov.hit("runs.feature.page_both_cursors"),
            Op::DeleteRun { .. } => cov.hit("runs.feature.run_deleted"),
            Op::Receipt { attempt, .. } if *attempt > 0 => cov.hit("runs.feature.receipt_retried"),
            Op::RunMessages { .. } => cov.hit("runs.feature.run_paged"),
            Op::FilteredEvents { .. } => cov.hit("runs.feature.events_filtered"),
            Op::LastAnswers { .. } => cov.hit("runs.feature.last_answers"),
            Op::UserMessages { .. } => cov.hit("runs.feature.user_reads"),
            Op::RateAnonymously { .. } => cov.hit("runs.feature.rating_anonymous"),
            Op::Withdraw { .. } => cov.hit("runs.feature.feedback_withdrawn"),
            Op::WithdrawRun { .. } => cov.hit("runs.feature.feedback_withdrawn_by_run"),
            Op::FeedbackReads { .. } => cov.hit("runs.feature.feedback_reads"),
            Op::DeleteThread { .. } => cov.hit("runs.feature.thread_deleted"),
            Op::DefaultScopeMessages { run, .. } => {
                cov.hit("runs.feature.default_scope_reads");
                if s.runs.iter().any(|r| &r.id == run && r.user.is_none()) {
                    cov.hit("runs.feature.default_scope_without_user");
                }
            }
            _ => {}
        }
    }
    rating_after_deletion(s, cov);
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
