//! Thread deletions and the eras they begin. `delete_by_thread` of a thread whose runs have all
//! stopped leaves it empty, and an empty thread starts over: its next row is numbered 1, as
//! both of DeerFlow's stores do (the memory store forgets its counter, the DB store numbers
//! from `MAX(seq)` of no row). A thread's rows since it was last emptied are its current era;
//! the rules about one continuous numbering (R5, R13) and about what the store holds (R3, R12,
//! R14, R15) compare within an era. R23 is the deletion itself: it removes every row of the
//! thread and counts them, the thread then reads empty everywhere, and its next row is
//! numbered 1. Where the two backends answered a thread deletion differently, R9.

use super::context::Context;
use super::deletion_calls::DeletionCalls;
use super::wording::{alike, at_write, client_store, Call};
use crate::divergence::TraceMark;
use crate::outcome::Findings;
use crate::runs::observations::WorldRecord;
use crate::runs::record::{Answer, Both, ThreadDeletionRecord, Written};
use history::runs::RunEvent;
use history::BugId;

/// The op of the last thread deletion of `thread_id` before `op` (0 when none): the rows of the
/// thread written at or after it are the era `op` falls in.
pub fn era_start(record: &WorldRecord, thread_id: &str, op: u64) -> u64 {
    record
        .log
        .thread_deletions()
        .iter()
        .filter(|d| d.thread_id == thread_id && d.op < op)
        .map(|d| d.op)
        .max()
        .unwrap_or(0)
}

/// Whether a thread deletion before `op` removed the written row `w`.
pub fn thread_deleted_before(record: &WorldRecord, w: &Written, op: u64) -> bool {
    w.op < era_start(record, &w.event.thread_id, op)
}

/// Whether any thread deletion of the world removed the written row `w`.
pub fn deleted_with_thread(record: &WorldRecord, w: &Written) -> bool {
    thread_deleted_before(record, w, u64::MAX)
}

/// The rows the thread held when `d` deleted it: every row written to it in its era and not
/// deleted with its run since.
pub fn held_rows<'a>(
    record: &'a WorldRecord,
    d: &'a ThreadDeletionRecord,
) -> impl Iterator<Item = &'a Written> + 'a {
    let since = era_start(record, &d.thread_id, d.op);
    (record.log.written().iter())
        .filter(move |w| w.event.thread_id == d.thread_id && since <= w.op && w.op < d.op)
        .filter(move |w| {
            !record.log.deletions().iter().any(|r| {
                w.op < r.op
                    && r.op < d.op
                    && r.run_id == w.event.run_id
                    && r.thread_id == d.thread_id
            })
        })
}

/// How many rows the thread held when `d` deleted it.
fn rows_held(record: &WorldRecord, d: &ThreadDeletionRecord) -> u64 {
    held_rows(record, d).count() as u64
}

/// R23: `delete_by_thread` removes every row of the thread and answers how many; right after,
/// the thread reads empty everywhere (`max_seq` 0, no message, a count of 0, no event of any
/// of its runs), and the next row written to it is numbered 1.
pub fn thread_deletions_empty_the_thread(cx: &Context<'_>, f: &mut Findings) {
    for d in cx.record.log.thread_deletions() {
        let what = format!("delete_by_thread({})", d.thread);
        let held = rows_held(cx.record, d);
        let slot = cx.record.first_slot;
        let call = Call::thread_deletion(d);
        let rows = format!("{held} rows deleted");
        for (stores, n) in alike(&d.answers.deleted, slot) {
            match n {
                Ok(n) if *n != held => f.add_at(
                    BugId::R23,
                    call.answered(
                        "delete_by_thread",
                        &stores,
                        format!("{n} rows deleted"),
                        &rows,
                    ),
                    format!(
                        "op {}: {what}: {stores} deleted {n} rows, the thread had {held}",
                        d.op
                    ),
                ),
                Err(e) => f.add_at(
                    BugId::R23,
                    call.answered("delete_by_thread", &stores, format!("error {e}"), &rows),
                    format!("op {}: {what} failed on {stores}: {e}", d.op),
                ),
                Ok(_) => {}
            }
        }
        reads_after_show_it_empty(cx, d, &what, f);
        next_write_is_numbered_one(cx, d, &what, f);
    }
}

/// A number a read after a deletion must answer 0: the read, both stores' answers, a number in
/// words, what a finding adds after it.
type MustReadZero<'a> = (&'a str, &'a Both<Answer<u64>>, fn(u64) -> String, &'a str);

/// R23's reads right after the deletion: `max_seq` 0, a count of 0, no message and no event of
/// any of the thread's runs.
fn reads_after_show_it_empty(
    cx: &Context<'_>,
    d: &ThreadDeletionRecord,
    what: &str,
    f: &mut Findings,
) {
    let slot = cx.record.first_slot;
    let call = Call::thread_deletion(d);
    let zeros: [MustReadZero<'_>; 2] = [
        (
            "max_seq",
            &d.answers.max_seq_after,
            |n| format!("max_seq {n}"),
            ", not 0: the thread was not emptied",
        ),
        (
            "count_messages",
            &d.count_after,
            |n| format!("{n} messages"),
            "",
        ),
    ];
    for (read, both, words, why) in zeros {
        for (stores, n) in alike(both, slot) {
            if let Ok(n @ 1..) = n {
                f.add_at(
                    BugId::R23,
                    call.answered(
                        &format!("{read} after delete_by_thread"),
                        &stores,
                        words(*n),
                        words(0),
                    ),
                    format!("op {}: after {what}, {read} on {stores} is {n}{why}", d.op),
                );
            }
        }
    }
    for (read, both) in [
        ("list_messages", &d.answers.messages_after),
        ("list_events of its runs", &d.answers.events_after),
    ] {
        for (stores, rows) in alike(both, slot) {
            if let Some(left) = rows.as_ref().ok().and_then(|r| r.first()) {
                let n = rows.as_ref().map_or(0, Vec::len);
                f.add_at(
                    BugId::R23,
                    call.answered(
                        &format!("{read} after delete_by_thread"),
                        &stores,
                        format!("{n} rows, first seq {} of {}", left.seq, left.run_id),
                        "no row",
                    ),
                    format!(
                        "op {}: {}",
                        d.op,
                        left_behind(what, read, &stores, left, rows)
                    ),
                );
            }
        }
    }
}

/// What a read after a thread deletion still showed, in words.
fn left_behind(
    what: &str,
    read: &str,
    stores: &str,
    first: &RunEvent,
    rows: &Answer<Vec<RunEvent>>,
) -> String {
    let n = rows.as_ref().map_or(0, Vec::len);
    format!(
        "after {what}, {read} on {stores} still shows {n} rows, first seq {} of {} ({})",
        first.seq, first.run_id, first.event_type
    )
}

/// R23's last clause: the first row the store accepted on the thread after the deletion is
/// numbered 1 (the deleted rows' numbers are the old era's).
fn next_write_is_numbered_one(
    cx: &Context<'_>,
    d: &ThreadDeletionRecord,
    what: &str,
    f: &mut Findings,
) {
    let next = cx
        .record
        .log
        .written()
        .iter()
        .find(|w| w.op > d.op && w.event.thread_id == d.thread_id);
    if let Some(w) = next {
        if w.event.seq != 1 {
            let by = client_store(cx);
            let seq = format!("seq {}", w.event.seq);
            f.add_at(
                BugId::R23,
                at_write(w, by, seq, "seq 1").and(TraceMark::at(d.at_us, Call::thread_deletion(d).mark)),
                format!(
                    "op {}: after {what}, the thread's next row ({} of {}) is numbered {}, not 1: the thread was not emptied",
                    d.op,
                    w.event.event_type, w.event.run_id, w.event.seq
                ),
            );
        }
    }
}

/// R9 for thread deletions: both backends answer the deletion and the reads after it alike.
pub fn thread_answers_agree(cx: &Context<'_>, f: &mut Findings) {
    let slot = cx.record.first_slot;
    for d in cx.record.log.thread_deletions() {
        DeletionCalls::of_thread(d).answered_apart(slot, f);
    }
}
