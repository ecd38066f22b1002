//! R27: the API's deletion of a thread deletes it everywhere. Right after it, `/history`
//! answers nothing of the thread on either backend (no message: the run events are gone, and
//! with them the checkpoint the view falls back to), the feedback store holds no rating of it
//! and the checkpointer no state. That a thread created again under the same id starts empty
//! is what the later reads then check against the model (which saw the deletion: the messages
//! and ratings of the thread before it are gone there too).
//!
//! The store's part of the deletion (its `delete_by_thread` answer and the store reads right
//! after) is R23's ([`super::thread_rules`]); this rule reads what only the API's deletion
//! empties, so a store that deletes short is R23 and a deletion that never reached the store,
//! or left the feedback, is R27.

use super::context::Context;
use super::wording::Call;
use crate::outcome::Findings;
use crate::runs::record::EverywhereDeletionRecord;
use history::BugId;

impl Call {
    /// The API's thread deletion, its trace line `delete thread {thread} everywhere: ...`.
    pub(crate) fn everywhere_deletion(d: &EverywhereDeletionRecord) -> Self {
        Call {
            op: d.op,
            at_us: d.at_us,
            mark: format!("delete thread {} everywhere: ", d.thread),
        }
    }
}

/// R27: after the API's deletion of a thread, no read answers anything of it.
pub fn thread_deletions_delete_everywhere(cx: &Context<'_>, f: &mut Findings) {
    for d in cx.record.log.everywhere_deletions() {
        let call = Call::everywhere_deletion(d);
        let what = format!("op {}: after the deletion of thread {}", d.op, d.thread);
        for (stores, history) in d.history_after.named(cx.record.first_slot) {
            let Ok(Some(h)) = history else { continue };
            let Some(first) = h.messages.first() else {
                continue;
            };
            let text = history::runs::content_text(first.get("content").unwrap_or(first));
            f.add_at(
                BugId::R27,
                call.answered(
                    "/history after the thread's deletion",
                    stores,
                    format!("{} messages", h.messages.len()),
                    "no message",
                ),
                format!(
                    "{what}, /history on {stores} still shows {} of its messages, the first {text:?}",
                    h.messages.len()
                ),
            );
        }
        if let Some(left) = d.feedback_after.first() {
            f.add_at(
                BugId::R27,
                call.answered(
                    "list_thread after the thread's deletion",
                    "the feedback store",
                    format!("{} ratings", d.feedback_after.len()),
                    "no rating",
                ),
                format!(
                    "{what}, the feedback store still holds {} of its ratings, the first of {} by {}",
                    d.feedback_after.len(),
                    left.run_id,
                    left.user_id.as_deref().unwrap_or("an anonymous rater")
                ),
            );
        }
        if d.checkpoint_after {
            f.add_at(
                BugId::R27,
                call.answered(
                    "the checkpoint after the thread's deletion",
                    "the checkpointer",
                    "a checkpoint",
                    "none",
                ),
                format!("{what}, the checkpointer still holds its state"),
            );
        }
    }
}
