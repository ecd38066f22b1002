//! The store the journals write to: both backends, with a record of every accepted write.
//! Over the protocol the two stores are asked each write at once ([`ProtocolPair`]).

use super::record::*;
use super::state::*;
use super::system::ProtocolPair;
use crate::workload::StoreKind;
use history::runs::{
    FaultyRunStore, MessageCursor, NewRunEvent, RunEvent, RunEventStore, RunStoreError,
};
use std::rc::Rc;

/// The store the journals write to: both backends, with a record of every accepted write.
pub(super) struct Tap {
    pub(super) world: Rc<World>,
}

impl Tap {
    pub(super) fn accepted(&self, rows: Vec<RunEvent>, how: &str) {
        let op = self.world.next_op();
        if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
            self.world.record(format_args!(
                "{how} {} {} n={} seqs={}..{}",
                first.thread_id,
                first.run_id,
                rows.len(),
                first.seq,
                last.seq
            ));
        }
        let mut log = self.world.log.borrow_mut();
        log.written
            .extend(rows.into_iter().map(|event| Written { op, event }));
    }

    /// Rows the `sqlite` store acknowledged, with its own seqs: what must survive a crash of
    /// its host (kept only when the world crashes it).
    fn durable_acked(&self, rows: impl Iterator<Item = RunEvent>) {
        if self.world.scenario.store_crashes.is_empty() {
            return;
        }
        let op = self.world.next_op();
        let mut log = self.world.log.borrow_mut();
        log.durable_acked
            .extend(rows.map(|event| Written { op, event }));
    }

    pub(super) fn disagree(&self, what: String) {
        self.world.record(format_args!("backends disagree: {what}"));
        self.world.log.borrow_mut().write_disagreements.push(what);
    }
}

impl RunEventStore for Tap {
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
        let w = &self.world;
        let (m, s) = match ProtocolPair::of(&w.suts) {
            Some(pair) => pair.put_batch(events.clone()),
            None => (
                w.memory.put_batch(events.clone()),
                w.sqlite.put_batch(events.clone()),
            ),
        };
        if m != s {
            self.disagree(format!("put_batch: {} {m:?}, sqlite {s:?}", w.first_slot));
        }
        if let Ok(seqs) = &s {
            let rows = events
                .iter()
                .zip(seqs)
                .map(|(e, seq)| e.clone().with_seq(*seq));
            self.durable_acked(rows);
        }
        let result = match w.primary {
            StoreKind::Memory | StoreKind::Jsonl => m,
            StoreKind::Sqlite => s,
        };
        if let Ok(seqs) = &result {
            let rows = events
                .into_iter()
                .zip(seqs)
                .map(|(e, seq)| e.with_seq(*seq))
                .collect();
            self.accepted(rows, "write");
        }
        result
    }

    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
        let w = &self.world;
        let (m, s) = match ProtocolPair::of(&w.suts) {
            Some(pair) => pair.insert_numbered(events.clone()),
            None => (
                w.memory.insert_numbered(events.clone()),
                w.sqlite.insert_numbered(events.clone()),
            ),
        };
        if m != s {
            self.disagree(format!(
                "insert_numbered: {} {m:?}, sqlite {s:?}",
                w.first_slot
            ));
        }
        if s.is_ok() {
            self.durable_acked(events.iter().cloned());
        }
        let result = match w.primary {
            StoreKind::Memory | StoreKind::Jsonl => m,
            StoreKind::Sqlite => s,
        };
        if result.is_ok() {
            self.accepted(events, "write-numbered");
        }
        result
    }

    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        let w = &self.world;
        let (m, s) = match ProtocolPair::of(&w.suts) {
            Some(pair) => pair.max_seq(thread_id),
            None => (w.memory.max_seq(thread_id), w.sqlite.max_seq(thread_id)),
        };
        if m != s {
            self.disagree(format!(
                "max_seq({thread_id}): {} {m:?}, sqlite {s:?}",
                w.first_slot
            ));
        }
        // The primary's answer, already asked (asking again is one more store call, one more
        // round trip over the protocol).
        match w.primary {
            StoreKind::Memory | StoreKind::Jsonl => m,
            StoreKind::Sqlite => s,
        }
    }

    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.world
            .store(self.world.primary)
            .list_messages(thread_id, limit, cursor)
    }

    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        self.world
            .store(self.world.primary)
            .count_messages(thread_id)
    }

    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError> {
        self.world
            .store(self.world.primary)
            .list_events(thread_id, run_id)
    }

    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
        self.world.store(self.world.primary).dump()
    }
}

pub(super) type JournalStore = FaultyRunStore<Tap>;
