//! The JSONL store as the first store of the runs world's pair: histsim's
//! [`JsonlRunEventStore`] on the world's simulated disk ([`SimDisk`], the disk the journal
//! workload crashes). A crash of the store's host is a power cut of that disk: what was not
//! synced is lost (`SimDisk::durable_image`) and the store is opened again from its files.
//!
//! What it promises across that crash (R12, for this store as for `sqlite`): every write it
//! acknowledged survives, since a write (a batch of rows, or a deletion's line) is synced
//! before it is acknowledged, and a removal is durable at once on this disk. The world crashes
//! it between two store calls, so no write of it is then under way and a reopened store answers
//! exactly as before the crash; its cutting of torn tails is exercised by `history`'s own tests.

use super::host::StoreHost;
use crate::disk::{SimDisk, SimDiskOptions};
use crate::sut::protocol::Durability;
use history::runs::{
    EventFilter, JsonlRunEventStore, MessageCursor, NewRunEvent, RunEvent, RunEventStore,
    RunStoreError, UserScope,
};
use history::Planted;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The JSONL store on a simulated disk of its own.
pub struct SimDiskJsonlStore {
    planted: Planted,
    disk: RefCell<Arc<SimDisk>>,
    /// `None` only after a restart that could not reopen the store (the world is then broken).
    store: RefCell<Option<JsonlRunEventStore>>,
}

impl SimDiskJsonlStore {
    /// An empty store on an empty disk.
    pub fn open(planted: Planted) -> Result<SimDiskJsonlStore, String> {
        let disk = Arc::new(SimDisk::new(SimDiskOptions::default()));
        let store = JsonlRunEventStore::open(disk.clone(), planted)
            .map_err(|e| format!("cannot open the JSONL store: {e}"))?;
        Ok(SimDiskJsonlStore {
            planted,
            disk: RefCell::new(disk),
            store: RefCell::new(Some(store)),
        })
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&JsonlRunEventStore) -> Result<T, RunStoreError>,
    ) -> Result<T, RunStoreError> {
        match &*self.store.borrow() {
            Some(store) => f(store),
            None => Err(RunStoreError::Answered {
                message: "the store's host is down".into(),
            }),
        }
    }
}

impl StoreHost for SimDiskJsonlStore {
    fn durability(&self) -> Durability {
        Durability::Restart
    }

    fn restart(&self, _at_us: u64) -> Result<(), String> {
        drop(self.store.borrow_mut().take());
        let image = self.disk.borrow().durable_image();
        let disk = Arc::new(SimDisk::from_image(image, SimDiskOptions::default()));
        let store = JsonlRunEventStore::open(disk.clone(), self.planted)
            .map_err(|e| format!("the JSONL store did not reopen after a crash: {e}"))?;
        *self.disk.borrow_mut() = disk;
        *self.store.borrow_mut() = Some(store);
        Ok(())
    }
}

impl RunEventStore for SimDiskJsonlStore {
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

#[cfg(test)]
mod tests {
    use super::*;
    use history::runs::Category;

    fn event(run: &str, text: &str) -> NewRunEvent {
        NewRunEvent {
            thread_id: "t".into(),
            run_id: run.into(),
            user_id: None,
            event_type: "human_message".into(),
            category: Category::Message,
            content: serde_json::json!({"type": "human", "content": text}),
            metadata: serde_json::json!({}),
            created_at_ns: 1,
        }
    }

    #[test]
    fn a_power_cut_keeps_every_acknowledged_write_and_deletion() {
        let store = SimDiskJsonlStore::open(Planted::none()).expect("opens");
        assert_eq!(
            store.put_batch(vec![event("r1", "a"), event("r2", "b"), event("r3", "c")]),
            Ok(vec![1, 2, 3])
        );
        assert_eq!(store.delete_by_run("t", "r3", &UserScope::All), Ok(1));
        store.restart(0).expect("reopens");
        assert_eq!(store.count_messages("t"), Ok(2));
        assert_eq!(
            store.max_seq("t"),
            Ok(3),
            "the deleted run's mark stays (R13)"
        );
        let files = store.disk.borrow().durable_image();
        assert!(!files.contains_key("threads/t/runs/r3.jsonl"));
        assert_eq!(store.delete_by_thread("t", &UserScope::All), Ok(2));
        store.restart(0).expect("reopens");
        assert_eq!(store.dump(), Ok(vec![]));
        assert_eq!(store.put_batch(vec![event("r4", "d")]), Ok(vec![1]));
    }

    #[test]
    fn a_power_cut_mid_deletion_leaves_it_whole_or_not_at_all() {
        use history::journal::FaultOp;
        let store = SimDiskJsonlStore::open(Planted::none()).expect("opens");
        store
            .put_batch(vec![event("r1", "a"), event("r2", "b")])
            .expect("writes");
        // The process dies after the line is synced, before the second removal.
        store
            .disk
            .borrow()
            .fail("threads/t/runs/r2.jsonl", FaultOp::Remove);
        assert_eq!(store.delete_by_thread("t", &UserScope::All), Ok(2));
        store.restart(0).expect("reopens");
        assert_eq!(store.dump(), Ok(vec![]));
        assert!(store
            .disk
            .borrow()
            .durable_image()
            .keys()
            .all(|f| !f.contains("/runs/")));
        // The line's sync fails: the deletion is not made, and a power cut keeps the rows.
        store.put_batch(vec![event("r1", "c")]).expect("writes");
        store
            .disk
            .borrow()
            .fail("threads/t/deletions.jsonl", FaultOp::Sync);
        assert!(store.delete_by_run("t", "r1", &UserScope::All).is_err());
        store.restart(0).expect("reopens");
        assert_eq!(store.count_messages("t"), Ok(1));
    }
}
