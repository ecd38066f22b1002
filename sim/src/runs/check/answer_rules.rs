//! R24: every store call is answered, and an error only where the contract calls for one.
//!
//! The other rules judge what an answer shows and pass over an answer that is an error (they
//! have nothing to compare). Without this rule a store that answers `internal` to every read
//! of one op would pass: the op's checks would all be skipped. The runs world injects no fault
//! into a store's answers (its failing batch writes fail in front of the store, in
//! `FaultyRunStore`, and never reach it), so the contract allows an error in two places only:
//! - a read in the default user scope of a request acting for a legacy run, which has no
//!   current user: the store (or, over the protocol, the caller) must refuse it (R19);
//! - `insert_numbered` of a seq a racing writer took: the unique guard's `conflict` (R5);
//! - a write of a run a deletion of its thread fenced: `thread_deleted` (R28, which judges
//!   those writes, the client's late writes and receipts, whatever they answered).

use super::context::Context;
use super::deletion_calls::{Answers, DeletionCalls};
use super::wording::{alike, client_store, when, Asked, Call};
use crate::divergence::TraceMark;
use crate::outcome::Findings;
use crate::runs::feedback_record::FeedbackEntry;
use crate::runs::record::{Answer, Both, ReadKind, WriteError};
use history::BugId;

/// R24: no store call the contract requires to answer was answered with an error.
pub fn errors_only_where_the_contract_allows(cx: &Context<'_>, f: &mut Findings) {
    let slot = cx.record.first_slot;
    for read in cx.record.log.reads() {
        let at = Asked::of(cx, read);
        let what = format!("{}: a read of thread {}", when(read), read.thread);
        for (call, errors) in read_errors(&read.kind, slot) {
            for (stores, message) in errors {
                f.add_at(
                    BugId::R24,
                    at.answers(format!("{call}: error {message}"), format!("{call}: an answer")),
                    format!("{what}: {stores} answered {call} with an error where the contract asks for an answer: {message}"),
                );
            }
        }
    }
    let mut judge = |what: &str, at: &Call, call: &str, errors: Vec<(String, &String)>| {
        for (stores, message) in errors {
            f.add_at(
                BugId::R24,
                at.answered(call, &stores, format!("error {message}"), "an answer"),
                format!("{what}: {stores} answered {call} with an error where the contract asks for an answer: {message}"),
            );
        }
    };
    for d in cx.record.log.deletions().iter().map(DeletionCalls::of_run) {
        for (call, errors) in deletion_errors(&d, slot) {
            judge(&d.what(), &d.at, call, errors);
        }
    }
    for r in cx.record.log.receipts() {
        if super::fence_rules::fenced(cx.record, r.op, &r.event) {
            // The contract refuses it (`thread_deleted`): R28 judges what was answered.
            continue;
        }
        let what = format!("op {}: the receipt of run {}", r.op, r.event.run_id);
        judge(
            &what,
            &Call::receipt(r),
            "put_if_absent",
            errors(&r.answer, slot),
        );
    }
    for d in cx
        .record
        .log
        .thread_deletions()
        .iter()
        .map(DeletionCalls::of_thread)
    {
        for (call, errors) in deletion_errors(&d, slot) {
            judge(&d.what(), &d.at, call, errors);
        }
    }
    feedback_read_errors(cx, f);
    journal_errors(cx, f);
    whole_state_errors(cx, f);
}

/// R24 of a feedback read's `/messages` (the thread's messages from the store the client reads,
/// each with its feedback): an error there names the feedback read, its time and the store.
fn feedback_read_errors(cx: &Context<'_>, f: &mut Findings) {
    let by = client_store(cx);
    for entry in cx.record.log.feedback_log() {
        let FeedbackEntry::Read(read) = entry else {
            continue;
        };
        let Err(message) = &read.messages else {
            continue;
        };
        let at = Call {
            op: read.op,
            at_us: read.at_us,
            mark: "feedback reads ".to_string(),
        };
        let call = "/messages with feedback";
        f.add_at(
            BugId::R24,
            at.answered(call, &by, format!("error {message}"), "an answer"),
            format!(
                "op {} at {}us: the feedback reads of thread {}: {by} answered {call} with an error where the contract asks for an answer: {message}",
                read.op, read.at_us, read.thread_id
            ),
        );
    }
}

/// R24 of a journal's calls (a worker writing a run's batch, the legacy writer's `max_seq`):
/// each error names the call, the last operation begun and its time, where the trace shows
/// the worker's `flush failed` line (and, through the protocol, the request's own lines).
fn journal_errors(cx: &Context<'_>, f: &mut Findings) {
    let errors: Vec<&WriteError> = (cx.record.log.write_errors().iter())
        .filter(|e| !e.conflict)
        .collect();
    // A journal retries a failed flush at once: the calls alike at one instant are one finding.
    for alike in errors.chunk_by(|a, b| {
        (a.op, a.at_us, a.call, &a.run_id, &a.stores, &a.message)
            == (b.op, b.at_us, b.call, &b.run_id, &b.stores, &b.message)
    }) {
        let e = alike[0];
        let whose = e
            .run_id
            .as_ref()
            .map_or_else(|| "a journal".to_string(), |r| format!("{r}'s journal"));
        let doing = match e.call {
            "put_batch" => "writing a batch",
            "insert_numbered" => "writing numbered rows",
            _ => "calling",
        };
        let times = match alike.len() {
            1 => String::new(),
            n => format!(", {n} calls alike"),
        };
        let at = Call {
            op: e.op,
            at_us: e.at_us,
            mark: "flush failed: ".to_string(),
        };
        let pointer = at
            .answered(
                e.call,
                &e.stores,
                format!("error {}", e.message),
                "an answer",
            )
            .and(TraceMark::at(e.at_us, format!("\"op\":\"{}\"", e.call)));
        f.add_at(
            BugId::R24,
            pointer,
            format!(
                "op {} at {}us: {whose} {doing} ({}{times}): {} answered with an error where the contract asks for an answer: {}",
                e.op, e.at_us, e.call, e.stores, e.message
            ),
        );
    }
}

/// R24 of the calls that are no request of the client's: the final dump and event counts read
/// the whole store once the world ended. Their findings point at no request.
fn whole_state_errors(cx: &Context<'_>, f: &mut Findings) {
    let slot = cx.record.first_slot;
    let mut judge = |what: &str, call: &str, errors: Vec<(String, &String)>| {
        for (stores, message) in errors {
            f.add_whole_state(
                BugId::R24,
                format!("{what}, no request of the client's"),
                format!("{what}: {stores} answered {call} with an error where the contract asks for an answer: {message}"),
            );
        }
    };
    judge("the final dump", "dump", errors(&cx.record.dumps, slot));
    if let Some(counts) = &cx.record.event_counts {
        judge(
            "the final event counts",
            "count_events",
            errors(counts, slot),
        );
    }
}

/// The errors of a deletion's calls, by the store op each answer came from.
fn deletion_errors<'a>(
    d: &DeletionCalls<'a>,
    slot: &'static str,
) -> Vec<(&'static str, Vec<(String, &'a String)>)> {
    (d.calls.iter())
        .map(|(call, _, answers)| {
            let errors = match answers {
                Answers::Deleted(both) | Answers::MaxSeq(both) | Answers::Count(both) => {
                    errors(both, slot)
                }
                Answers::Rows(both) => errors(both, slot),
            };
            (*call, errors)
        })
        .collect()
}

/// The errors of one answer of the pair, each with the stores that answered it.
fn errors<'a, T>(both: &'a Both<Answer<T>>, first_slot: &'static str) -> Vec<(String, &'a String)> {
    if both.memory.is_ok() && both.sqlite.is_ok() {
        return Vec::new();
    }
    (alike(both, first_slot).into_iter())
        .filter_map(|(stores, answer)| answer.as_ref().err().map(|e| (stores, e)))
        .collect()
}

/// The errors of one read, by the store op each answer came from. A default-scope read for a
/// run without a user must be refused: its errors are the contract's (R19 judges an answer).
pub(in crate::runs) fn read_errors<'a>(
    kind: &'a ReadKind,
    slot: &'static str,
) -> Vec<(&'static str, Vec<(String, &'a String)>)> {
    match kind {
        ReadKind::Views {
            count,
            history,
            messages,
        } => vec![
            ("count_messages", errors(count, slot)),
            ("list_messages (/history)", errors(history, slot)),
            ("list_messages (/messages)", errors(messages, slot)),
        ],
        ReadKind::Page { rows, .. } => vec![("list_messages", errors(rows, slot))],
        ReadKind::Paginate { count, rows, .. } => vec![
            ("count_messages", errors(count, slot)),
            ("list_messages", errors(rows, slot)),
        ],
        ReadKind::Events { rows, .. } => vec![("list_events", errors(rows, slot))],
        ReadKind::RunMessages { pages, .. } => {
            vec![("list_messages_by_run", errors(pages, slot))]
        }
        ReadKind::FilteredEvents { pages, .. } => {
            vec![("list_events_filtered", errors(pages, slot))]
        }
        ReadKind::UserMessages { rows, count, .. } => vec![
            ("list_messages_as", errors(rows, slot)),
            ("count_messages_as", errors(count, slot)),
        ],
        ReadKind::LastAnswers {
            answer, messages, ..
        } => vec![
            ("get_last_visible_ai_seq_by_run", errors(answer, slot)),
            ("list_messages", errors(messages, slot)),
        ],
        ReadKind::DefaultScopeMessages { user: None, .. } => Vec::new(),
        ReadKind::DefaultScopeMessages {
            rows,
            count,
            user: Some(_),
            ..
        } => vec![
            ("list_messages_as", errors(rows, slot)),
            ("count_messages_as", errors(count, slot)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use history::runs::{ContractErrors, RUN_STORE_OPS};

    /// The operation table says where an error answer is the contract's; these rules let
    /// exactly those through (a conflict of `insert_numbered`, the refused default scope of the
    /// user-scoped reads, a fenced write's refusal, which R28 judges) and judge every other.
    #[test]
    fn the_operation_table_allows_errors_where_these_rules_do() {
        let allowed: Vec<(&str, ContractErrors)> = RUN_STORE_OPS
            .iter()
            .filter(|op| op.errors != ContractErrors::Never)
            .map(|op| (op.name, op.errors))
            .collect();
        assert_eq!(
            allowed,
            [
                ("put_batch", ContractErrors::Fenced),
                ("insert_numbered", ContractErrors::ConflictOrFenced),
                ("put_if_absent", ContractErrors::Fenced),
                ("list_messages_as", ContractErrors::NoUser),
                ("count_messages_as", ContractErrors::NoUser),
            ]
        );
    }
}
