//! The rules about a run's filtered event reads, R17 and R18, against what the run emitted
//! ([`model::runs::check_filtered_pages`], [`model::runs::last_visible_answer`]): paging one
//! run's events through a filter returns exactly the emitted events the filter selects (R17);
//! the last visible AI message of a run is its last final AI answer, a tool-calling turn never,
//! nor an AI message a middleware journaled (its `metadata.caller` as the script gave it, R18).
//! Where the two backends answered one of these reads differently, R9.
//!
//! The model never sees a seq: a returned seq of R18 is told apart by the thread's message rows
//! read in the same instant, which the other rules check against the model.

use super::context::{of_row, Context};
use super::truth::Snapshots;
use super::wording::{listed, or_none, when, Asked};
use crate::outcome::Findings;
use crate::runs::record::{Answer, Read, ReadKind};
use crate::runs::scenario::MessageSpec;
use history::runs::{EventFilter, RunEvent};
use history::BugId;
use model::runs::{
    brief, check_filtered_pages, hidden_by_caller, last_visible_answer, EmittedMessage, EventQuery,
    MessageKind, RunEventKey, RunTruth,
};
use std::collections::{BTreeMap, BTreeSet};

/// A stored or emitted event as the model tells events apart.
fn key(event_type: &str, metadata: &serde_json::Value, content: &serde_json::Value) -> RunEventKey {
    RunEventKey::of(event_type, metadata, content)
}

/// R17: paging one run's events through a filter with `after_seq` cursors returns, at most
/// `limit` a page and in ascending seq order, exactly the events the run emitted that the
/// filter selects (a prefix of them for a killed run; none for a deleted or unstarted run).
pub fn filtered_events_match_the_model(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    for read in cx.record.log.reads() {
        let ReadKind::FilteredEvents { run, filter, pages } = &read.kind else {
            continue;
        };
        let truth = snapshots.before(read.op);
        let spec = &cx.scenario.runs[*run];
        let Ok(pages) = pages.primary(cx.primary) else {
            continue;
        };
        let how = format!(
            "{}: paging {}'s events by {} (types {}, task {})",
            when(read),
            spec.id,
            filter.limit,
            types(filter.event_types.as_deref()),
            or_none(filter.task_id.as_ref())
        );
        let at = Asked::of(cx, read);
        let rows: Vec<&RunEvent> = pages.iter().flatten().collect();
        if let Some((pointer, fault)) = filtered_rows_fault(&at, &spec.id, &rows) {
            f.add_at(BugId::R17, pointer, format!("{how}: {fault}"));
            continue;
        }
        let (emitted, whole) = match truth.outcome(cx.thread_id(&spec.thread), &spec.id) {
            Some(outcome) => {
                let emitted = cx.record.log.emitted_by(*run);
                let keys: Vec<RunEventKey> = emitted
                    .iter()
                    .map(|e| key(&e.event_type, &e.metadata, &e.content))
                    .collect();
                (keys, outcome.is_complete())
            }
            // Never started, or deleted: no event.
            None => (Vec::new(), true),
        };
        let observed: Vec<Vec<RunEventKey>> = pages
            .iter()
            .map(|p| {
                p.iter()
                    .map(|r| key(&r.event_type, &r.metadata, &r.content))
                    .collect()
            })
            .collect();
        if let Err(m) =
            check_filtered_pages(&emitted, whole, &query(filter), filter.limit, &observed)
        {
            let (answered, expected) = m.sides();
            f.add_at(
                BugId::R17,
                at.answers(answered, expected),
                format!(
                    "{how}: {} events in {} pages, not what the run emitted that the filter selects: {m}",
                    rows.len(),
                    pages.len()
                ),
            );
        }
    }
}

/// What is wrong with a run's filtered rows before their events are compared: a row of another
/// run, or seqs out of order.
fn filtered_rows_fault(
    at: &Asked,
    run_id: &str,
    rows: &[&RunEvent],
) -> Option<(crate::outcome::Pointer, String)> {
    if let Some(r) = rows.iter().find(|r| r.run_id != run_id) {
        let pointer = at.answers(
            format!("seq {} of run {}", r.seq, r.run_id),
            format!("only rows of run {run_id}"),
        );
        return Some((pointer, format!("row seq {} of run {}", r.seq, r.run_id)));
    }
    let w = rows.windows(2).find(|w| w[0].seq >= w[1].seq)?;
    let pointer = at.answers(
        format!("seq {} then seq {}", w[0].seq, w[1].seq),
        "ascending seqs",
    );
    Some((
        pointer,
        "the rows are not in ascending seq order".to_string(),
    ))
}

/// A filter's event types as a user reads them: `any` (no filter), `none` (the empty list) or
/// the types.
fn types(event_types: Option<&[String]>) -> String {
    event_types.map_or_else(
        || "any".to_string(),
        |types| listed(types.iter().map(|t| format!("`{t}`"))),
    )
}

/// A last-answer read's seqs: `run-1 seq 4, run-2 seq 9`, `none`, or the error.
fn seqs_by_run(answer: &Answer<BTreeMap<String, u64>>) -> String {
    match answer {
        Ok(seqs) => listed(seqs.iter().map(|(run, seq)| format!("{run} seq {seq}"))),
        Err(e) => format!("error {e}"),
    }
}

fn query(filter: &EventFilter) -> EventQuery {
    EventQuery {
        event_types: filter.event_types.clone(),
        task_id: filter.task_id.clone(),
    }
}

/// The messages `run_id` emitted, in order, as the truth knows them, each with the caller its
/// run's script gave it (texts are unique on a thread, so a text names its script entry).
fn emitted_messages(
    cx: &Context<'_>,
    truth: &RunTruth,
    tid: &str,
    run_id: &str,
) -> Vec<EmittedMessage> {
    let callers: BTreeMap<&str, &serde_json::Value> = cx
        .scenario
        .run_index(run_id)
        .map(|r| cx.scenario.runs[r].messages.as_slice())
        .unwrap_or_default()
        .iter()
        .filter_map(|m| match m {
            MessageSpec::Ai {
                text,
                caller: Some(c),
                ..
            } => Some((text.as_str(), c)),
            _ => None,
        })
        .collect();
    truth
        .expected_history(tid)
        .into_iter()
        .filter(|m| m.run_id == run_id)
        .map(|m| EmittedMessage {
            caller: callers.get(m.text.as_str()).map(|c| (*c).clone()),
            kind: m.kind,
            text: m.text,
        })
        .collect()
}

/// R18: for every run asked, the last visible AI seq names the run's last final AI answer (of
/// what was stored, for a killed run), and there is none for a run without one, a deleted run,
/// a run not started and a run id nobody has.
pub fn last_answers_match_the_model(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    for read in cx.record.log.reads() {
        let ReadKind::LastAnswers {
            run_ids,
            answer,
            messages,
        } = &read.kind
        else {
            continue;
        };
        let truth = snapshots.before(read.op);
        let (Ok(answer), Ok(messages)) = (answer.primary(cx.primary), messages.primary(cx.primary))
        else {
            continue;
        };
        check_last_answers(cx, truth, read, run_ids, answer, messages, f);
    }
}

fn check_last_answers(
    cx: &Context<'_>,
    truth: &RunTruth,
    read: &Read,
    run_ids: &BTreeSet<String>,
    answer: &BTreeMap<String, u64>,
    messages: &[RunEvent],
    f: &mut Findings,
) {
    let tid = cx.thread_id(&read.thread);
    let at = Asked::of(cx, read);
    if let Some(stranger) = answer.keys().find(|r| !run_ids.contains(*r)) {
        f.add_at(
            BugId::R18,
            at.answers(
                format!("an answer for run {stranger}"),
                "answers for the runs asked only",
            ),
            format!(
                "{}: last visible AI seqs of {tid}: an answer for run {stranger}, not asked",
                when(read)
            ),
        );
    }
    for run_id in run_ids {
        let emitted = emitted_messages(cx, truth, tid, run_id);
        let expected = match truth.outcome(tid, run_id) {
            Some(o) if o.is_complete() => last_visible_answer(&emitted, emitted.len()),
            Some(_) => {
                let stored = messages.iter().filter(|m| &m.run_id == run_id).count();
                last_visible_answer(&emitted, stored)
            }
            None => None,
        };
        let observed = answer
            .get(run_id)
            .map(|&seq| answered_row(messages, run_id, seq));
        let matches = match (expected, answer.get(run_id)) {
            (None, None) => true,
            (Some(text), Some(&seq)) => messages.iter().any(|m| {
                m.seq == seq && &m.run_id == run_id && {
                    let m = of_row(m);
                    m.kind == MessageKind::Ai && m.text == text
                }
            }),
            _ => false,
        };
        if !matches {
            let observed = observed.unwrap_or_else(|| "none".into());
            let expected = expected.map_or("none".into(), |t| format!("`{}`", brief(t)));
            f.add_at(
                BugId::R18,
                at.answers(
                    format!("run {run_id}: {observed}"),
                    format!("run {run_id}: {expected}"),
                ),
                format!(
                    "{at}: last visible AI message of run {run_id} on {tid}: {observed}, the model says {expected}",
                ),
            );
        }
    }
}

/// The message a last-visible-AI answer of `run_id` names (`seq`), in words.
fn answered_row(messages: &[RunEvent], run_id: &str, seq: u64) -> String {
    messages
        .iter()
        .find(|m| m.seq == seq && m.run_id == run_id)
        .map_or(format!("seq {seq}, no message of the run"), |row| {
            let m = of_row(row);
            // Say when the row answered is a middleware's: the caller rule's finding.
            let by = match row.metadata.get("caller") {
                Some(c) if hidden_by_caller(Some(c)) => format!(" (a middleware's: caller {c})"),
                _ => String::new(),
            };
            format!("seq {seq}, {} `{}`{by}", m.kind, brief(&m.text))
        })
}

/// R9 for the filtered reads: both backends answer every filtered page and last-answer read
/// alike.
pub fn filtered_answers_agree(cx: &Context<'_>, f: &mut Findings) {
    for read in cx.record.log.reads() {
        match &read.kind {
            ReadKind::FilteredEvents { run, pages, .. } if !pages.agree() => f.add_at(
                BugId::R9,
                Asked::of(cx, read).answers(
                    "sqlite's pages",
                    format!("{}'s pages", cx.record.first_slot),
                ),
                format!(
                    "{}: paging {}'s filtered events: the {} and sqlite pages differ",
                    when(read),
                    cx.scenario.runs[*run].id,
                    cx.record.first_slot
                ),
            ),
            ReadKind::LastAnswers { answer, .. } if !answer.agree() => f.add_at(
                BugId::R9,
                Asked::of(cx, read).answers(
                    format!("sqlite: {}", seqs_by_run(&answer.sqlite)),
                    format!(
                        "as {}: {}",
                        cx.record.first_slot,
                        seqs_by_run(&answer.memory)
                    ),
                ),
                format!(
                    "{}: last visible AI seqs of {}: {} answered {}, sqlite {}",
                    when(read),
                    read.thread,
                    cx.record.first_slot,
                    seqs_by_run(&answer.memory),
                    seqs_by_run(&answer.sqlite)
                ),
            ),
            _ => {}
        }
    }
}
