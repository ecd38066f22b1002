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

use super::hosted::{Hosted, Reopen};
use crate::disk::{SimDisk, SimDiskOptions};
use history::runs::JsonlRunEventStore;
use history::Planted;
use std::cell::RefCell;
use std::sync::Arc;

/// The JSONL store on a simulated disk of its own.
pub type SimDiskJsonlStore = Hosted<JsonlDisk>;

/// The simulated disk of a [`SimDiskJsonlStore`]: a crash is a power cut of it.
pub struct JsonlDisk {
    planted: Planted,
    pub(in crate::runs) disk: RefCell<Arc<SimDisk>>,
}

impl Reopen for JsonlDisk {
    type Store = JsonlRunEventStore;

    fn reopen(&self) -> Result<JsonlRunEventStore, String> {
        let image = self.disk.borrow().durable_image();
        let disk = Arc::new(SimDisk::from_image(image, SimDiskOptions::default()));
        let store = JsonlRunEventStore::open(disk.clone(), self.planted)
            .map_err(|e| format!("the JSONL store did not reopen after a crash: {e}"))?;
        *self.disk.borrow_mut() = disk;
        Ok(store)
    }
}

impl Hosted<JsonlDisk> {
    /// An empty store on an empty disk.
    pub fn open(planted: Planted) -> Result<SimDiskJsonlStore, String> {
        let disk = Arc::new(SimDisk::new(SimDiskOptions::default()));
        let store = JsonlRunEventStore::open(disk.clone(), planted)
            .map_err(|e| format!("cannot open the JSONL store: {e}"))?;
        let host = JsonlDisk {
            planted,
            disk: RefCell::new(disk),
        };
        Ok(Hosted::new(host, store))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::play::host::tests::event_of_run as event;
    use crate::runs::play::host::StoreHost;
    use history::runs::{RunEventStore, UserScope};

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
        let files = store.host.disk.borrow().durable_image();
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
            .host
            .disk
            .borrow()
            .fail("threads/t/runs/r2.jsonl", FaultOp::Remove);
        assert_eq!(store.delete_by_thread("t", &UserScope::All), Ok(2));
        store.restart(0).expect("reopens");
        assert_eq!(store.dump(), Ok(vec![]));
        assert!(store
            .host
            .disk
            .borrow()
            .durable_image()
            .keys()
            .all(|f| !f.contains("/runs/")));
        // The line's sync fails: the deletion is not made, and a power cut keeps the rows.
        // A new run: r1 was fenced by the thread's deletion above (R28).
        store.put_batch(vec![event("r3", "c")]).expect("writes");
        store
            .host
            .disk
            .borrow()
            .fail("threads/t/deletions.jsonl", FaultOp::Sync);
        assert!(store.delete_by_run("t", "r3", &UserScope::All).is_err());
        store.restart(0).expect("reopens");
        assert_eq!(store.count_messages("t"), Ok(1));
    }
}
