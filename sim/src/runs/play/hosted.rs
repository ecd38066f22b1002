//! A store behind a host the world can crash: the store object held while the host is up,
//! every store call forwarded to it ([`ForwardRunStore`]), and a restart that drops it without a clean close and
//! opens it again on what survived ([`Reopen`]). The SQLite file ([`super::host`]) and the
//! JSONL store on a simulated disk ([`super::jsonl_host`]) differ only in how they reopen.

use crate::sut::protocol::Durability;
use history::runs::{ForwardRunStore, OpKind, RunEventStore, RunStoreError};
use std::cell::RefCell;

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
    pub(in crate::runs) host: H,
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

impl<H: Reopen> ForwardRunStore for Hosted<H> {
    type Inner = H::Store;
    fn forward<T>(
        &self,
        _: OpKind,
        call: impl FnOnce(&H::Store) -> Result<T, RunStoreError>,
    ) -> Result<T, RunStoreError> {
        self.with(call)
    }
}
