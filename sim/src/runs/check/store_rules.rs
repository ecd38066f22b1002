//! The rules about the store's wider API, R13 to R16, against the simulation's record of the
//! writes the store accepted and [`model::runs`]: a deletion never lowers a thread's numbering
//! (R13); a run's receipt is written once, the first one kept (R14); a deletion removes exactly
//! the run's rows (R15); paging one run's messages returns exactly what the run emitted (R16).
//! Where the two backends answered one of these calls differently, R9.

use super::context::{of_row, Context};
use super::deletion_calls::DeletionCalls;
use super::thread_rules::{deleted_with_thread, era_start, thread_deleted_before};
use super::truth::Snapshots;
use super::wording::{alike, client_store, when, Asked, Call};
use crate::outcome::Findings;
use crate::runs::observations::WorldRecord;
use crate::runs::record::{DeletionRecord, ReadKind, ReceiptRecord, Written};
use history::runs::{Category, RunEvent};
use history::BugId;
use model::runs::{brief_json, ReceiptTruth};

/// Whether deletion `d` removed the written row `w` (a row of its run written before it).
fn deleted_by(d: &DeletionRecord, w: &Written) -> bool {
    w.op < d.op && w.event.thread_id == d.thread_id && w.event.run_id == d.run_id
}

/// Whether any deletion of the world (of its run or of its whole thread) removed the written
/// row `w`.
pub fn is_deleted(record: &WorldRecord, w: &Written) -> bool {
    record.log.deletions().iter().any(|d| deleted_by(d, w)) || deleted_with_thread(record, w)
}

/// R13: a deletion leaves the thread's numbering where the writes took it: `max_seq` after a
/// `delete_by_run` is at least the largest seq ever written to the thread since it was last
/// emptied (its era), so no later row can reuse a deleted run's seqs (its message ids, a
/// reader's cursor).
pub fn deletions_keep_the_numbering(cx: &Context<'_>, f: &mut Findings) {
    for d in cx.record.log.deletions() {
        let since = era_start(cx.record, &d.thread_id, d.op);
        let mark = cx
            .record
            .log
            .written()
            .iter()
            .filter(|w| since <= w.op && w.op < d.op && w.event.thread_id == d.thread_id)
            .map(|w| w.event.seq)
            .max()
            .unwrap_or(0);
        for (stores, after) in alike(&d.answers.max_seq_after, cx.record.first_slot) {
            if let Ok(after) = after {
                if *after < mark {
                    f.add_at(
                        BugId::R13,
                        Call::deletion(d).answered(
                            "max_seq after delete_by_run",
                            &stores,
                            format!("max_seq {after}"),
                            format!("max_seq {mark} or more"),
                        ),
                        format!(
                            "op {}: deleting {} lowered thread {}'s numbering on {stores} to {after}, below seq {mark} already written: later rows reuse the deleted run's seqs",
                            d.op, d.run_id, d.thread_id
                        ),
                    );
                }
            }
        }
    }
}

/// R15: a deletion removes exactly the run's rows: it counts every row of the run the store
/// accepted and had not deleted yet, and afterwards neither `list_events` nor
/// `list_messages_by_run` shows any row of the run.
pub fn deletions_remove_exactly_the_run(cx: &Context<'_>, f: &mut Findings) {
    for (i, d) in cx.record.log.deletions().iter().enumerate() {
        let earlier = &cx.record.log.deletions()[..i];
        let expected = cx
            .record
            .log
            .written()
            .iter()
            .filter(|w| {
                deleted_by(d, w)
                    && !earlier.iter().any(|e| deleted_by(e, w))
                    && !thread_deleted_before(cx.record, w, d.op)
            })
            .count() as u64;
        let what = format!("delete_by_run({}) on thread {}", d.run_id, d.thread_id);
        let op = format!("op {}", d.op);
        let call = Call::deletion(d);
        for (stores, n) in alike(&d.answers.deleted, cx.record.first_slot) {
            let rows = format!("{expected} rows deleted");
            match n {
                Ok(n) if *n != expected => f.add_at(
                    BugId::R15,
                    call.answered("delete_by_run", &stores, format!("{n} rows deleted"), rows),
                    format!("{op}: {what}: {stores} deleted {n} rows, the run had {expected}"),
                ),
                Err(e) => f.add_at(
                    BugId::R15,
                    call.answered("delete_by_run", &stores, format!("error {e}"), rows),
                    format!("{op}: {what} failed on {stores}: {e}"),
                ),
                Ok(_) => {}
            }
        }
        for (read, both) in [
            ("list_events", &d.answers.events_after),
            ("list_messages_by_run", &d.answers.messages_after),
        ] {
            for (stores, rows) in alike(both, cx.record.first_slot) {
                if let Ok(rows) = rows {
                    if let Some(left) = rows.first() {
                        f.add_at(
                            BugId::R15,
                            call.answered(
                                &format!("{read} after delete_by_run"),
                                &stores,
                                format!("{} rows, first seq {}", rows.len(), left.seq),
                                "no row of the run",
                            ),
                            format!(
                                "{op}: after {what}, {read} on {stores} still shows {} rows of it, first seq {} ({})",
                                rows.len(),
                                left.seq,
                                left.event_type
                            ),
                        );
                    }
                }
            }
        }
    }
}

/// R14: `put_if_absent` writes a run's receipt once: the first call of a (thread, run, event
/// type) writes and answers its record, every later one answers that first record unchanged,
/// until the run is deleted.
pub fn receipts_are_written_once(cx: &Context<'_>, f: &mut Findings) {
    let mut truth = ReceiptTruth::new();
    let mut deletions = cx.record.log.deletions().iter().peekable();
    let mut thread_deletions = cx.record.log.thread_deletions().iter().peekable();
    // A receipt of a run its thread's deletion fenced is refused: R28's.
    let unfenced = |r: &&ReceiptRecord| !super::fence_rules::fenced(cx.record, r.op, &r.event);
    for rec in cx.record.log.receipts().iter().filter(unfenced) {
        while let Some(d) = deletions.next_if(|d| d.op < rec.op) {
            truth.delete_run(&d.thread_id, &d.run_id);
        }
        while let Some(d) = thread_deletions.next_if(|d| d.op < rec.op) {
            truth.delete_thread(&d.thread_id);
        }
        let e = &rec.event;
        let want = truth.put_if_absent(&e.thread_id, &e.run_id, &e.event_type, &e.content);
        let call = Call::receipt(rec);
        let by = client_store(cx);
        let written = |created: bool| if created { "written" } else { "already there" };
        let Ok((row, created)) = rec.answer.primary(cx.primary) else {
            if let Err(err) = rec.answer.primary(cx.primary) {
                f.add_at(
                    BugId::R14,
                    call.answered(
                        "put_if_absent",
                        &by,
                        format!("error {err}"),
                        written(want.created),
                    ),
                    format!("put_if_absent of {}'s receipt failed: {err}", e.run_id),
                );
            }
            continue;
        };
        let same_key = row.thread_id == e.thread_id
            && row.run_id == e.run_id
            && row.event_type == e.event_type;
        if *created != want.created || *row.content != want.content || !same_key {
            f.add_at(
                BugId::R14,
                call.answered(
                    "put_if_absent",
                    &by,
                    format!(
                        "{} with a row of run {} holding {}",
                        written(*created),
                        row.run_id,
                        brief_json(&row.content)
                    ),
                    format!(
                        "{} with {}",
                        written(want.created),
                        brief_json(&want.content)
                    ),
                ),
                format!(
                    "op {}: put_if_absent of {}'s {} (content {}): answered {} with a row of run {} holding {}, expected {} with {}",
                    rec.op,
                    e.run_id,
                    e.event_type,
                    brief_json(&e.content),
                    written(*created),
                    row.run_id,
                    brief_json(&row.content),
                    written(want.created),
                    brief_json(&want.content)
                ),
            );
        }
    }
}

/// R16: paging one run's messages with `list_messages_by_run` returns, within the limit per
/// page and in ascending seq order, exactly the messages the run emitted (as of the read).
pub fn run_pages_match_the_model(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    for read in cx.record.log.reads() {
        let ReadKind::RunMessages {
            run,
            limit,
            backward,
            pages,
        } = &read.kind
        else {
            continue;
        };
        let truth = snapshots.before(read.op);
        let spec = &cx.scenario.runs[*run];
        let tid = cx.thread_id(&spec.thread);
        let Ok(pages) = pages.primary(cx.primary) else {
            continue;
        };
        let how = format!(
            "{}: paging {}'s messages by {limit} ({})",
            when(read),
            spec.id,
            if *backward { "backward" } else { "forward" }
        );
        let mut ordered: Vec<&Vec<RunEvent>> = pages.iter().collect();
        if *backward {
            ordered.reverse();
        }
        let rows: Vec<&RunEvent> = ordered.into_iter().flatten().collect();
        let at = Asked::of(cx, read);
        if let Some(fault) = page_shape_fault(&spec.id, *limit, pages, &rows) {
            f.add_at(
                BugId::R16,
                at.answers(
                    fault.clone(),
                    "pages within the limit, of the run's messages in seq order",
                ),
                format!("{how}: {fault}"),
            );
            continue;
        }
        let observed: Vec<_> = rows
            .iter()
            .map(|r| {
                let m = of_row(r);
                (m.kind, m.text)
            })
            .collect();
        if let Err(m) = truth.check_run_messages(tid, &spec.id, &observed) {
            let (answered, expected) = m.sides();
            f.add_at(
                BugId::R16,
                at.answers(answered, expected),
                format!(
                    "{how}: {} messages in {} pages, not what the run emitted: {m}",
                    rows.len(),
                    pages.len()
                ),
            );
        }
    }
}

/// What is wrong with the shape of one run's pages, before their messages are compared: a page
/// over the limit, rows out of seq order, a row of another run or not a message.
fn page_shape_fault(
    run_id: &str,
    limit: usize,
    pages: &[Vec<RunEvent>],
    rows: &[&RunEvent],
) -> Option<String> {
    if let Some(p) = pages.iter().find(|p| p.len() > limit) {
        return Some(format!("a page of {} rows", p.len()));
    }
    if rows.windows(2).any(|w| w[0].seq >= w[1].seq) {
        return Some("the rows are not in ascending seq order".to_string());
    }
    rows.iter()
        .find(|r| r.run_id != run_id || r.category != Category::Message)
        .map(|r| {
            format!(
                "row seq {} of run {} (category {})",
                r.seq,
                r.run_id,
                r.category.as_str()
            )
        })
}

/// R9 for the wider API: both backends answer every deletion, receipt and per-run page alike.
pub fn wider_answers_agree(cx: &Context<'_>, f: &mut Findings) {
    let slot = cx.record.first_slot;
    for d in cx.record.log.deletions() {
        DeletionCalls::of_run(d).answered_apart(slot, f);
    }
    for read in cx.record.log.reads() {
        if let ReadKind::RunMessages { run, pages, .. } = &read.kind {
            if !pages.agree() {
                let slot = cx.record.first_slot;
                f.add_at(
                    BugId::R9,
                    Asked::of(cx, read).answers("sqlite's pages", format!("{slot}'s pages")),
                    format!(
                        "{}: paging {}'s messages: the {} and sqlite pages differ",
                        when(read),
                        cx.scenario.runs[*run].id,
                        cx.record.first_slot
                    ),
                );
            }
        }
    }
}
