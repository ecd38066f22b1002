//! A store wrapper that fails chosen write calls: the fault injector for journal tests and the
//! simulation (it only injects; checking is someone else's job). Compiled with the `testing`
//! feature only: production code has no use for a store that fails on purpose.
//!
//! Write calls (`put_batch`, `insert_numbered`, `put_if_absent` and the two deletions) are
//! numbered from 0 in the order they arrive.
//! A failing call writes nothing and returns [`RunStoreError::Injected`]; reads always pass.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::RunStoreError;
use super::event::{MessageCursor, NewRunEvent, RunEvent};
use super::query::{EventFilter, UserScope};
use super::store::RunEventStore;

/// Which write calls fail.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultSchedule {
    /// Numbers of the write calls that fail (0-based, counted over this wrapper's lifetime).
    pub failing_write_calls: BTreeSet<u64>,
}

impl FaultSchedule {
    /// A schedule failing exactly the given calls.
    pub fn failing(calls: impl IntoIterator<Item = u64>) -> FaultSchedule {
        FaultSchedule {
            failing_write_calls: calls.into_iter().collect(),
        }
    }
}

/// Wraps a store and fails the write calls its schedule names.
#[derive(Debug)]
pub struct FaultyRunStore<S> {
    inner: S,
    schedule: FaultSchedule,
    write_calls: AtomicU64,
}

impl<S: RunEventStore> FaultyRunStore<S> {
    pub fn new(inner: S, schedule: FaultSchedule) -> FaultyRunStore<S> {
        FaultyRunStore {
            inner,
            schedule,
            write_calls: AtomicU64::new(0),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// How many write calls arrived so far (failed ones included).
    pub fn write_calls(&self) -> u64 {
        self.write_calls.load(Ordering::Relaxed)
    }

    fn next_write(&self) -> Result<(), RunStoreError> {
        let call = self.write_calls.fetch_add(1, Ordering::Relaxed);
        if self.schedule.failing_write_calls.contains(&call) {
            return Err(RunStoreError::Injected { call });
        }
        Ok(())
    }
}

impl<S: RunEventStore> RunEventStore for FaultyRunStore<S> {
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
        self.next_write()?;
        self.inner.put_batch(events)
    }
    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
        self.next_write()?;
        self.inner.insert_numbered(events)
    }
    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        self.inner.max_seq(thread_id)
    }
    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.inner.list_messages(thread_id, limit, cursor)
    }
    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        self.inner.count_messages(thread_id)
    }
    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError> {
        self.inner.list_events(thread_id, run_id)
    }
    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
        self.inner.dump()
    }
    fn put_batch_records(&self, events: Vec<NewRunEvent>) -> Result<Vec<RunEvent>, RunStoreError> {
        self.next_write()?;
        self.inner.put_batch_records(events)
    }
    fn put_if_absent(&self, event: NewRunEvent) -> Result<(RunEvent, bool), RunStoreError> {
        self.next_write()?;
        self.inner.put_if_absent(event)
    }
    fn delete_by_thread(&self, thread_id: &str, user: &UserScope) -> Result<u64, RunStoreError> {
        self.next_write()?;
        self.inner.delete_by_thread(thread_id, user)
    }
    fn delete_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        user: &UserScope,
    ) -> Result<u64, RunStoreError> {
        self.next_write()?;
        self.inner.delete_by_run(thread_id, run_id, user)
    }
    fn list_messages_as(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.inner.list_messages_as(thread_id, limit, cursor, user)
    }
    fn count_messages_as(&self, thread_id: &str, user: &UserScope) -> Result<u64, RunStoreError> {
        self.inner.count_messages_as(thread_id, user)
    }
    fn list_messages_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.inner
            .list_messages_by_run(thread_id, run_id, limit, cursor, user)
    }
    fn list_events_filtered(
        &self,
        thread_id: &str,
        run_id: &str,
        filter: &EventFilter,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.inner
            .list_events_filtered(thread_id, run_id, filter, user)
    }
    fn get_last_visible_ai_seq_by_run(
        &self,
        thread_id: &str,
        run_ids: &BTreeSet<String>,
        user: &UserScope,
    ) -> Result<BTreeMap<String, u64>, RunStoreError> {
        self.inner
            .get_last_visible_ai_seq_by_run(thread_id, run_ids, user)
    }
    #[cfg(feature = "planted")]
    fn legacy_edit_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        edit: &mut dyn FnMut(&mut RunEvent),
    ) -> Result<bool, RunStoreError> {
        self.inner
            .legacy_edit_messages(thread_id, limit, cursor, edit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Category, MemoryRunEventStore};
    use crate::Planted;
    use serde_json::json;

    fn ev() -> NewRunEvent {
        NewRunEvent {
            thread_id: "t".into(),
            run_id: "r".into(),
            user_id: None,
            event_type: "trace".into(),
            category: Category::Trace,
            content: json!(null).into(),
            metadata: json!(null),
            created_at_ns: 0,
        }
    }

    #[test]
    fn scheduled_calls_fail_and_write_nothing() {
        let s = FaultyRunStore::new(
            MemoryRunEventStore::new(Planted::none()),
            FaultSchedule::failing([1]),
        );
        assert_eq!(s.put_batch(vec![ev()]).unwrap(), vec![1]);
        assert_eq!(
            s.put_batch(vec![ev()]),
            Err(RunStoreError::Injected { call: 1 })
        );
        assert_eq!(s.put_batch(vec![ev()]).unwrap(), vec![2]);
        assert_eq!(s.write_calls(), 3);
        assert_eq!(s.dump().unwrap().len(), 2);
    }
}
