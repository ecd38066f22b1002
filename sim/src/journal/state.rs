//! What the harness keeps of each session across its host's crashes (a [`Slot`]), the [`World`]
//! every host, process and operation shares, and the harness's own reads of journal bytes.

use super::record::{Happened, Outcome, SessionRecord};
use super::scenario::JournalScenario;
use crate::coverage::Coverage;
use crate::disk::corrupt::Injected;
use crate::disk::{SimDisk, SimDiskOptions};
use crate::trace::Trace;
use history::journal::{
    Journal, JournalError, JournalOptions, MemStorage, Origin, Row, WriteReceipt,
};
use history::Planted;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// A point of a script a crash can hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Point {
    pub(super) op: u32,
    pub(super) during: Option<u32>,
}

/// What the harness keeps of one session across its host's crashes.
pub(super) struct Slot {
    pub(super) disk: RefCell<Arc<SimDisk>>,
    /// The point the script is paused at, while it is paused.
    pub(super) at: Cell<Option<Point>>,
    pub(super) next_op: Cell<usize>,
    pub(super) incarnation: Cell<u32>,
    /// The crash (index) the host is coming back from.
    pub(super) restart: Cell<Option<usize>>,
    /// The silent corruption that crash left on the recording, for the restart to meet.
    pub(super) corrupted: RefCell<Option<Injected>>,
    pub(super) done: Cell<bool>,
    /// The recording's file.
    pub(super) current: RefCell<String>,
    /// Per journal file: its last sequence number after each change of its history.
    pub(super) events: RefCell<BTreeMap<String, Vec<u64>>>,
    /// Mirrors attached to the shared history, in attach order.
    pub(super) attached: RefCell<Vec<Origin>>,
    pub(super) record: RefCell<SessionRecord>,
}

pub(super) struct World {
    pub(super) scenario: JournalScenario,
    pub(super) opts: JournalOptions,
    pub(super) planted: Planted,
    pub(super) slots: Vec<Slot>,
    pub(super) trace: RefCell<Trace>,
    pub(super) coverage: RefCell<Coverage>,
    pub(super) ops_run: Cell<usize>,
}

impl Slot {
    pub(super) fn new() -> Slot {
        Slot {
            disk: RefCell::new(Arc::new(SimDisk::new(SimDiskOptions::default()))),
            at: Cell::new(None),
            next_op: Cell::new(0),
            incarnation: Cell::new(0),
            restart: Cell::new(None),
            corrupted: RefCell::new(None),
            done: Cell::new(false),
            current: RefCell::new(String::new()),
            events: RefCell::new(BTreeMap::new()),
            attached: RefCell::new(Vec::new()),
            record: RefCell::new(SessionRecord::default()),
        }
    }
}

impl World {
    pub(super) fn record(&self, event: std::fmt::Arguments<'_>) {
        self.trace.borrow_mut().record(now_us(), event);
    }

    pub(super) fn happened(&self, s: usize, h: Happened) {
        let events = self.trace.borrow().events();
        let mut record = self.slots[s].record.borrow_mut();
        record.happened.push(h);
        record.happened_at.push((now_us(), events));
    }

    pub(super) fn push_event(&self, s: usize, journal: &str, seq: u64) {
        self.slots[s]
            .events
            .borrow_mut()
            .entry(journal.to_string())
            .or_default()
            .push(seq);
    }
}

pub(super) fn now_us() -> u64 {
    turmoil::sim_elapsed()
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

pub(super) async fn sleep_ms(ms: u32) {
    tokio::time::sleep(Duration::from_millis(u64::from(ms.max(1)))).await;
}

/// A journal's rows as the harness reads them from `bytes`: the production reader with no
/// planted bug, on a private copy.
pub(super) fn read_rows(bytes: &[u8]) -> Result<Vec<Row>, String> {
    let storage = Arc::new(MemStorage::with_file("copy", bytes));
    Journal::open(storage, "copy", JournalOptions::default())
        .map(|j| j.rows())
        .map_err(|e| e.to_string())
}

pub(super) fn written(r: Result<WriteReceipt, JournalError>) -> Outcome {
    match r {
        Ok(receipt) => Outcome::Written {
            records: receipt.records,
        },
        Err(e) => Outcome::Failed(e.to_string()),
    }
}
