//! A store behind a host the world can crash: the store object held while the host is up,
//! every store call forwarded to it, and a restart that drops it without a clean close and
//! opens it again on what survived ([`Reopen`]). The SQLite file ([`super::host`]) and the
//! JSONL store on a simulated disk ([`super::jsonl_host`]) differ only in how they reopen.

use crate::sut::protocol::Durability;
use history::runs::{
    EventFilter, MessageCursor, NewRunEvent, RunEvent, RunEventStore, RunStoreError, UserScope,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// A store whose host the world can crash.
pub trait StoreHost {
    /// What the store keeps across a restart of its host, as it declared.
    fn durability(&self) -> Durability;
    /// Kills the store's host without a clean close and opens the store again on the same
    /// data, at simulated time `at_us`. `Err`: it could not be brought back (the world is
    /// broken).
    fn restart(&self, at_us: u64) -> Result<(), String>;
}

/// How a host opens its store again after a crash.
pub trait Reopen {
    type Store: RunEventStore;
    /// The store opened again on what the crash left (the old store is already dropped).
    fn reopen(&self) -> Result<Self::Store, String>;
}

/// A store on a host that a crash restarts. Both hosted stores lose nothing they acknowledged
/// (R12), so both declare [`Durability::Restart`].
pub struct Hosted<H: Reopen> {
    pub(super) host: H,
    /// `None` only while down (between the drop and the reopen of a restart that failed).
    store: RefCell<Option<H::Store>>,
}

impl<H: Reopen> Hosted<H> {
    pub fn new(host: H, store: H::Store) -> Self {
        Hosted {
            host,
            store: RefCell::new(Some(store)),
        }
    }

    /// The host and its store (`None` if a restart failed to reopen it).
    pub fn into_parts(self) -> (H, Option<H::Store>) {
        (self.host, self.store.into_inner())
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&H::Store) -> Result<T, RunStoreError>,
    ) -> Result<T, RunStoreError> {
        match &*self.store.borrow() {
            Some(store) => f(store),
            None => Err(RunStoreError::Answered {
                kind: "internal".to_string(),
                message: "the store's host is down".into(),
            }),
        }
    }
}

impl<H: Reopen> StoreHost for Hosted<H> {
    fn durability(&self) -> Durability {
        Durability::Restart
    }

    fn restart(&self, _at_us: u64) -> Result<(), String> {
        // Dropped first: a new SQLite connection must not wait on a lock the dead one held.
        drop(self.store.borrow_mut().take());
        let store = self.host.reopen()?;
        *self.store.borrow_mut() = Some(store);
        Ok(())
    }
}

impl<H: Reopen> RunEventStore for Hosted<H> {
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
        self.with(|s| s.put_batch(events))
    }
    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
        self.with(|s| s.insert_numbered(events))
    }
    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        self.with(|s| s.max_seq(thread_id))
    }
    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.with(|s| s.list_messages(thread_id, limit, cursor))
    }
    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        self.with(|s| s.count_messages(thread_id))
    }
    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError> {
        self.with(|s| s.list_events(thread_id, run_id))
    }
    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
        self.with(|s| s.dump())
    }
    fn put_if_absent(&self, event: NewRunEvent) -> Result<(RunEvent, bool), RunStoreError> {
        self.with(|s| s.put_if_absent(event))
    }
    fn delete_by_thread(&self, thread_id: &str, user: &UserScope) -> Result<u64, RunStoreError> {
        self.with(|s| s.delete_by_thread(thread_id, user))
    }
    fn delete_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        user: &UserScope,
    ) -> Result<u64, RunStoreError> {
        self.with(|s| s.delete_by_run(thread_id, run_id, user))
    }
    fn list_messages_as(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.with(|s| s.list_messages_as(thread_id, limit, cursor, user))
    }
    fn count_messages_as(&self, thread_id: &str, user: &UserScope) -> Result<u64, RunStoreError> {
        self.with(|s| s.count_messages_as(thread_id, user))
    }
    fn list_messages_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.with(|s| s.list_messages_by_run(thread_id, run_id, limit, cursor, user))
    }
    fn list_events_filtered(
        &self,
        thread_id: &str,
        run_id: &str,
        filter: &EventFilter,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.with(|s| s.list_events_filtered(thread_id, run_id, filter, user))
    }
    fn get_last_visible_ai_seq_by_run(
        &self,
        thread_id: &str,
        run_ids: &BTreeSet<String>,
        user: &UserScope,
    ) -> Result<BTreeMap<String, u64>, RunStoreError> {
        self.with(|s| s.get_last_visible_ai_seq_by_run(thread_id, run_ids, user))
    }
    fn legacy_edit_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        edit: &mut dyn FnMut(&mut RunEvent),
    ) -> Result<bool, RunStoreError> {
        self.with(|s| s.legacy_edit_messages(thread_id, limit, cursor, edit))
    }
}
