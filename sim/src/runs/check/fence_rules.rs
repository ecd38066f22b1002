//! R28: a thread deletion fences its writers. Once `delete_by_thread` (or the API's deletion of
//! the thread) has returned, a write of the thread carrying a run the deletion removed must be
//! refused (`thread_deleted`) and nothing of it stored: a journal's batch admitted before the
//! deletion and committed after it (the client's late writes), a receipt retried with a run of
//! the deleted thread. Which runs a deletion fenced is [`model::runs::WriteFence`]'s, told
//! the runs that held rows of the thread when it was deleted (the rows written in its era and
//! not deleted with their run since: `thread_rules::held_rows`).

use super::context::Context;
use super::thread_rules::held_rows;
use super::wording::{alike, Call};
use crate::outcome::Findings;
use crate::runs::observations::WorldRecord;
use crate::runs::record::{Answer, WriteRecord, FENCE_REFUSED};
use history::runs::NewRunEvent;
use history::BugId;
use model::runs::WriteFence;

/// Whether an answer is the fence's refusal.
pub fn refused<T>(answer: &Answer<T>) -> bool {
    answer.as_ref().is_err_and(|e| e.starts_with(FENCE_REFUSED))
}

/// The fence the world's thread deletions before `op` set.
pub fn fence_before(record: &WorldRecord, op: u64) -> WriteFence {
    let mut fence = WriteFence::new();
    for d in record.log.thread_deletions().iter().filter(|d| d.op < op) {
        let runs: Vec<&str> = held_rows(record, d)
            .map(|w| w.event.run_id.as_str())
            .collect();
        fence.delete_thread(&d.thread_id, runs);
    }
    fence
}

/// Whether a write of `event` at `op` carries a run a thread deletion before it fenced.
pub fn fenced(record: &WorldRecord, op: u64, event: &NewRunEvent) -> bool {
    !fence_before(record, op).admits(&event.thread_id, &event.run_id)
}

/// R28: every late write and every receipt of a fenced run was refused; a late write of a run
/// no deletion fenced was stored.
pub fn deletions_fence_their_writers(cx: &Context<'_>, f: &mut Findings) {
    for w in cx.record.log.late_writes() {
        judge(cx, f, w, (Call::late_write(w), "put_batch"), true);
    }
    for r in cx.record.log.receipts() {
        judge(cx, f, r, (Call::receipt(r), "put_if_absent"), false);
    }
}

/// Judges one write (the `call` of `store_op` that made it): refused when its run is fenced;
/// when it is not, a late write (`late`) must be stored (a receipt's answer is R14's).
fn judge<T>(
    cx: &Context<'_>,
    f: &mut Findings,
    w: &WriteRecord<T>,
    (call, store_op): (Call, &str),
    late: bool,
) {
    let is_fenced = fenced(cx.record, w.op, &w.event);
    if !is_fenced && !late {
        return;
    }
    let (run, thread) = (&w.event.run_id, &w.event.thread_id);
    for (stores, answer) in alike(&w.answer, cx.record.first_slot) {
        let said = match answer {
            Ok(_) => "stored it".to_string(),
            Err(e) => format!("error {e}"),
        };
        let message = match (is_fenced, refused(answer)) {
            (true, true) | (false, false) => continue,
            (true, false) => format!(
                "op {}: {} of run {run} after a deletion of thread {thread} removed the run: {stores} {said}, expected a refusal (`thread_deleted`): the deletion took no fence",
                w.op, store_op
            ),
            (false, true) => format!(
                "op {}: {} of run {run} on thread {thread}: {stores} refused it as fenced ({said}), but no deletion of the thread removed the run",
                w.op, store_op
            ),
        };
        let expected = if is_fenced {
            "refused: thread deleted"
        } else {
            "stored"
        };
        let said = if answer.is_ok() {
            "stored".to_string()
        } else {
            said
        };
        let at = call.answered(store_op, &stores, said, expected);
        f.add_at(BugId::R28, at, message);
    }
}
