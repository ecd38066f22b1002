//! The API's deletion of a thread (`DELETE /threads/{thread_id}`): everything kept of the thread
//! goes, not only its state. Its run events (messages, traces, lifecycle rows and run receipts,
//! every user's), its feedback and its checkpoints; afterwards no read answers anything of it,
//! and a thread created again under the same id starts empty (R27).
//!
//! The run events go first: when the store fails, nothing else is deleted yet and the call
//! can be retried whole.

use super::checkpoint::Checkpointer;
use super::error::RunStoreError;
use super::feedback::FeedbackStore;
use super::query::UserScope;
use super::store::RunEventStore;
use crate::planted::{BugId, Planted};

/// What kept a thread besides its run-event store: the stores a thread's deletion empties too.
#[derive(Clone, Copy)]
pub struct ThreadRecords<'a> {
    pub checkpointer: &'a Checkpointer,
    pub feedback: &'a FeedbackStore,
    /// Legacy switch: R27 (the deletion forgets the thread's state only).
    pub planted: Planted,
}

/// What one thread deletion removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ThreadDeleted {
    /// Run-event rows (the store's `delete_by_thread` answer).
    pub rows: u64,
    /// Feedback rows.
    pub feedback: u64,
    /// Whether the thread had checkpoints.
    pub checkpoint: bool,
}

impl ThreadRecords<'_> {
    /// Deletes the thread everywhere: its rows in `store`, its feedback, its checkpoints.
    pub fn delete_thread<S: RunEventStore + ?Sized>(
        &self,
        store: &S,
        thread_id: &str,
    ) -> Result<ThreadDeleted, RunStoreError> {
        if self.planted.is(BugId::R27) {
            // planted R27: the legacy route deleted the thread's state (checkpoints and
            // metadata) only; its run events, run records and feedback stayed.
            let checkpoint = self.checkpointer.delete(thread_id);
            return Ok(ThreadDeleted {
                checkpoint,
                ..ThreadDeleted::default()
            });
        }
        let rows = store.delete_by_thread(thread_id, &UserScope::All)?;
        let feedback = self.feedback.delete_by_thread(thread_id);
        let checkpoint = self.checkpointer.delete(thread_id);
        Ok(ThreadDeleted {
            rows,
            feedback,
            checkpoint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Checkpoint, FeedbackInput, MemoryRunEventStore, Rating};

    #[test]
    fn a_deleted_thread_keeps_no_feedback_and_no_checkpoint() {
        let store = MemoryRunEventStore::new(Planted::none());
        let checkpointer = Checkpointer::new();
        let feedback = FeedbackStore::new();
        checkpointer.put("t", Checkpoint::default());
        let rate = |thread: &str| FeedbackInput {
            thread_id: thread.into(),
            run_id: "r".into(),
            user_id: "u".into(),
            rating: Rating::Up,
            comment: None,
            message_id: None,
            created_at_ns: 1,
        };
        feedback.submit(rate("t")).unwrap();
        feedback.submit(rate("other")).unwrap();
        let records = ThreadRecords {
            checkpointer: &checkpointer,
            feedback: &feedback,
            planted: Planted::none(),
        };
        let deleted = records.delete_thread(&store, "t").unwrap();
        assert_eq!(
            deleted,
            ThreadDeleted {
                rows: 0,
                feedback: 1,
                checkpoint: true
            }
        );
        assert!(feedback.list_thread("t").is_empty());
        assert_eq!(feedback.list_thread("other").len(), 1);
        assert!(checkpointer.latest("t").is_none());
    }
}
