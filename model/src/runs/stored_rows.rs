//! What a store must hold once the world ended, as the table reads ask it: every row written
//! and not deleted, each named by its thread and run. Each store operation the simulation asks
//! through its table of reads (`sim::runs::table_reads`) has its answer here, one function an
//! operation, computed from these rows alone.
//!
//! The rows are the writes the simulation made and the stores acknowledged, less the rows its
//! deletions took: the same ground truth the whole-store comparison (R3) holds the final dump
//! to, never a store's answer to a read.

/// One row a store must hold at the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRow {
    pub thread_id: String,
    pub run_id: String,
}

/// Every row a store must hold at the end, in no particular order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredRows {
    rows: Vec<StoredRow>,
}

impl StoredRows {
    pub fn new(rows: Vec<StoredRow>) -> StoredRows {
        StoredRows { rows }
    }

    /// How many rows the store must hold, every thread.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// `count_events_by_run`: the rows of `run_id` on `thread_id`.
    pub fn count_events_by_run(&self, thread_id: &str, run_id: &str) -> u64 {
        let of_run = self.rows.iter();
        let of_run = of_run.filter(|r| r.thread_id == thread_id && r.run_id == run_id);
        of_run.count() as u64
    }
}
