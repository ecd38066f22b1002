//! The run-event store contract, which the in-memory and the SQLite backends both implement with
//! identical answers (R9).
//!
//! Rows are only added, except by the two deletions, and every read returns owned copies (R3).
//! `seq` is assigned per thread at write time, inside one atomic batch (R5).
//!
//! What deletion means for `seq` (R13): a thread's numbers are never handed out twice while the
//! thread lives. `delete_by_run` removes rows but not the thread's high-water mark, so
//! [`RunEventStore::max_seq`] does not go down and the next write is numbered above every row
//! the thread ever had (as DeerFlow's memory store keeps its counter; its DB store, which takes
//! `MAX(seq)` of the remaining rows, would hand a deleted run's numbers, and so its message ids
//! and cursors, to new rows). `delete_by_thread` ends the thread's life when it leaves no row:
//! the mark goes and the next write is numbered 1 again (both upstream backends agree). Counts
//! and every read see only the remaining rows.
//!
//! The operations past the seed's (`put_if_absent`, the deletions, the user-scoped and per-run
//! reads, the filtered event list, the last visible AI message) have a default body that
//! answers [`RunStoreError::Unsupported`]: a wrapper or a system under test that does not
//! offer one says so instead of deriving an answer that would test the derivation. Both of
//! this crate's backends implement all of them, with identical answers (R9).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::error::RunStoreError;
use super::event::{MessageCursor, NewRunEvent, RunEvent};
use super::query::{EventFilter, UserScope};

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

    /// The thread's high-water mark: the largest `seq` it has held since it was last emptied by
    /// `delete_by_thread` (0 for a new thread). `delete_by_run` never lowers it (R13).
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

    /// [`RunEventStore::put_batch`] returning the stored records (upstream's `put_batch`), in
    /// batch order. The default numbers the events with the seqs `put_batch` answered.
    fn put_batch_records(&self, events: Vec<NewRunEvent>) -> Result<Vec<RunEvent>, RunStoreError> {
        let seqs = self.put_batch(events.clone())?;
        if seqs.len() != events.len() {
            return Err(RunStoreError::InvalidEvent {
                field: "seq",
                reason: format!("{} seqs answered for {} events", seqs.len(), events.len()),
            });
        }
        Ok(events
            .into_iter()
            .zip(seqs)
            .map(|(e, s)| e.with_seq(s))
            .collect())
    }

    /// Writes one event and returns its stored record (upstream's `put`).
    fn put(&self, event: NewRunEvent) -> Result<RunEvent, RunStoreError> {
        let mut records = self.put_batch_records(vec![event])?;
        records.pop().ok_or(RunStoreError::InvalidEvent {
            field: "seq",
            reason: "no record answered for one event".to_string(),
        })
    }

    /// Writes `event` unless its run already has an event of the same type: the key is
    /// (`thread_id`, `run_id`, `event_type`), whatever the user, category or content. Returns
    /// the stored record and whether it was written now; when it was not, the record is the
    /// run's FIRST event of that type (lowest seq), unchanged (R14). Atomic with every other
    /// write of the thread, so two callers never both write.
    fn put_if_absent(&self, event: NewRunEvent) -> Result<(RunEvent, bool), RunStoreError> {
        let _ = event;
        Err(RunStoreError::Unsupported {
            op: "put_if_absent",
        })
    }

    /// Deletes the thread's rows in `user`'s scope; returns how many. See the module doc for
    /// what it does to `seq`.
    fn delete_by_thread(&self, thread_id: &str, user: &UserScope) -> Result<u64, RunStoreError> {
        let _ = (thread_id, user);
        Err(RunStoreError::Unsupported {
            op: "delete_by_thread",
        })
    }

    /// Deletes one run's rows in `user`'s scope; returns how many. `max_seq` does not go down.
    fn delete_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        user: &UserScope,
    ) -> Result<u64, RunStoreError> {
        let _ = (thread_id, run_id, user);
        Err(RunStoreError::Unsupported {
            op: "delete_by_run",
        })
    }

    /// [`RunEventStore::list_messages`] over the rows in `user`'s scope only.
    fn list_messages_as(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        match user {
            UserScope::All => self.list_messages(thread_id, limit, cursor),
            _ => Err(RunStoreError::Unsupported {
                op: "list_messages_as",
            }),
        }
    }

    /// [`RunEventStore::count_messages`] over the rows in `user`'s scope only.
    fn count_messages_as(&self, thread_id: &str, user: &UserScope) -> Result<u64, RunStoreError> {
        match user {
            UserScope::All => self.count_messages(thread_id),
            _ => Err(RunStoreError::Unsupported {
                op: "count_messages_as",
            }),
        }
    }

    /// Message rows of one run, with exactly the window semantics of
    /// [`RunEventStore::list_messages`] applied to that run's messages.
    fn list_messages_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let _ = (thread_id, run_id, limit, cursor, user);
        Err(RunStoreError::Unsupported {
            op: "list_messages_by_run",
        })
    }

    /// The events of one run that pass `filter` (see [`EventFilter`]: conditions first, then the
    /// limit), ascending by `seq`.
    fn list_events_filtered(
        &self,
        thread_id: &str,
        run_id: &str,
        filter: &EventFilter,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let _ = (thread_id, run_id, filter, user);
        Err(RunStoreError::Unsupported {
            op: "list_events_filtered",
        })
    }

    /// For each of `run_ids` that has one, the `seq` of its last message row that
    /// [`super::current::is_visible_ai`] admits; runs without one are absent.
    fn get_last_visible_ai_seq_by_run(
        &self,
        thread_id: &str,
        run_ids: &BTreeSet<String>,
        user: &UserScope,
    ) -> Result<BTreeMap<String, u64>, RunStoreError> {
        let _ = (thread_id, run_ids, user);
        Err(RunStoreError::Unsupported {
            op: "get_last_visible_ai_seq_by_run",
        })
    }

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
        fn put_batch_records(
            &self,
            events: Vec<NewRunEvent>,
        ) -> Result<Vec<RunEvent>, RunStoreError> {
            (**self).put_batch_records(events)
        }
        fn put(&self, event: NewRunEvent) -> Result<RunEvent, RunStoreError> {
            (**self).put(event)
        }
        fn put_if_absent(&self, event: NewRunEvent) -> Result<(RunEvent, bool), RunStoreError> {
            (**self).put_if_absent(event)
        }
        fn delete_by_thread(
            &self,
            thread_id: &str,
            user: &UserScope,
        ) -> Result<u64, RunStoreError> {
            (**self).delete_by_thread(thread_id, user)
        }
        fn delete_by_run(
            &self,
            thread_id: &str,
            run_id: &str,
            user: &UserScope,
        ) -> Result<u64, RunStoreError> {
            (**self).delete_by_run(thread_id, run_id, user)
        }
        fn list_messages_as(
            &self,
            thread_id: &str,
            limit: usize,
            cursor: MessageCursor,
            user: &UserScope,
        ) -> Result<Vec<RunEvent>, RunStoreError> {
            (**self).list_messages_as(thread_id, limit, cursor, user)
        }
        fn count_messages_as(
            &self,
            thread_id: &str,
            user: &UserScope,
        ) -> Result<u64, RunStoreError> {
            (**self).count_messages_as(thread_id, user)
        }
        fn list_messages_by_run(
            &self,
            thread_id: &str,
            run_id: &str,
            limit: usize,
            cursor: MessageCursor,
            user: &UserScope,
        ) -> Result<Vec<RunEvent>, RunStoreError> {
            (**self).list_messages_by_run(thread_id, run_id, limit, cursor, user)
        }
        fn list_events_filtered(
            &self,
            thread_id: &str,
            run_id: &str,
            filter: &EventFilter,
            user: &UserScope,
        ) -> Result<Vec<RunEvent>, RunStoreError> {
            (**self).list_events_filtered(thread_id, run_id, filter, user)
        }
        fn get_last_visible_ai_seq_by_run(
            &self,
            thread_id: &str,
            run_ids: &BTreeSet<String>,
            user: &UserScope,
        ) -> Result<BTreeMap<String, u64>, RunStoreError> {
            (**self).get_last_visible_ai_seq_by_run(thread_id, run_ids, user)
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
