//! A store wrapper that fails chosen write calls: the fault injector for journal tests and the
//! simulation (it only injects; checking is someone else's job). Compiled with the `testing`
//! feature only: production code has no use for a store that fails on purpose.
//!
//! Write calls (the operations of kind [`OpKind::Write`]: `put_batch`, `insert_numbered`,
//! `put_if_absent` and the two deletions; and `put_batch_records`, `put`) are numbered from 0 in
//! the order they arrive.
//! A failing call writes nothing and returns [`RunStoreError::Injected`]; reads always pass.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::RunStoreError;
use super::ops::OpKind;
use super::store::{ForwardRunStore, RunEventStore};

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

impl<S: RunEventStore> ForwardRunStore for FaultyRunStore<S> {
    type Inner = S;
    fn forward<T>(
        &self,
        kind: OpKind,
        call: impl FnOnce(&S) -> Result<T, RunStoreError>,
    ) -> Result<T, RunStoreError> {
        if kind == OpKind::Write {
            self.next_write()?;
        }
        call(&self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Category, MemoryRunEventStore, NewRunEvent};
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
