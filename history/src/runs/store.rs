//! The run-event store contract, which the in-memory and the SQLite backends both implement with
//! identical answers (R9).
//!
//! The store is append-only: nothing but a write changes it, and every read returns owned copies
//! (R3). `seq` is assigned per thread at write time, inside one atomic batch (R5).

use std::sync::Arc;

use super::error::RunStoreError;
use super::event::{MessageCursor, NewRunEvent, RunEvent};

/// A run-event store. Synchronous, `&self` everywhere (backends use interior mutability), so that
/// several journals and readers can share one store.
pub trait RunEventStore {
    /// Writes a batch atomically and returns the `seq` assigned to each event, in batch order.
    /// Events of one thread get consecutive numbers above the thread's maximum, in batch order.
    /// On error nothing is written.
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError>;

    /// Writes events the caller has numbered itself (imports, and the legacy journal of R5).
    /// Atomic; every `seq` must be above its thread's stored maximum (and above the batch's
    /// earlier events of that thread), otherwise [`RunStoreError::SeqConflict`]: the unique guard.
    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError>;

    /// The largest stored `seq` of a thread, 0 for an empty thread.
    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError>;

    /// Message rows (`category == Message`) of a thread, ascending by `seq`, at most `limit` of
    /// them, starting where `cursor` says (see [`MessageCursor`] for the exact semantics).
    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError>;

    /// The number of message rows of a thread.
    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError>;

    /// Every event of one run, all categories, ascending by `seq`.
    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError>;

    /// Every stored row, ordered by (thread_id, seq, write order): what before/after comparisons
    /// of the whole store use (R3, R5, R9).
    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError>;

    /// The legacy read of planted R3: hands each selected message row ITSELF to `edit` (the
    /// in-memory store of the seed returned live dicts). Returns `Ok(false)` when the backend can
    /// only hand out copies (nothing is edited then). Production code never calls it.
    #[cfg(feature = "planted")]
    fn legacy_edit_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        edit: &mut dyn FnMut(&mut RunEvent),
    ) -> Result<bool, RunStoreError> {
        let _ = (thread_id, limit, cursor, edit);
        Ok(false)
    }
}

macro_rules! forward_store {
    () => {
        fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
            (**self).put_batch(events)
        }
        fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
            (**self).insert_numbered(events)
        }
        fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
            (**self).max_seq(thread_id)
        }
        fn list_messages(
            &self,
            thread_id: &str,
            limit: usize,
            cursor: MessageCursor,
        ) -> Result<Vec<RunEvent>, RunStoreError> {
            (**self).list_messages(thread_id, limit, cursor)
        }
        fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
            (**self).count_messages(thread_id)
        }
        fn list_events(
            &self,
            thread_id: &str,
            run_id: &str,
        ) -> Result<Vec<RunEvent>, RunStoreError> {
            (**self).list_events(thread_id, run_id)
        }
        fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
            (**self).dump()
        }
        #[cfg(feature = "planted")]
        fn legacy_edit_messages(
            &self,
            thread_id: &str,
            limit: usize,
            cursor: MessageCursor,
            edit: &mut dyn FnMut(&mut RunEvent),
        ) -> Result<bool, RunStoreError> {
            (**self).legacy_edit_messages(thread_id, limit, cursor, edit)
        }
    };
}

impl<S: RunEventStore + ?Sized> RunEventStore for &S {
    forward_store!();
}

impl<S: RunEventStore + ?Sized> RunEventStore for Arc<S> {
    forward_store!();
}

impl<S: RunEventStore + ?Sized> RunEventStore for Box<S> {
    forward_store!();
}
