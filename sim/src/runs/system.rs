//! The run-event store under test behind `history::runs::RunEventStore`: histsim's own
//! backends in this process, or a store in a child process over the SUT protocol
//! (`docs/sut-protocol.md`). The runs world keeps its workers, journals, views, feedback and
//! client on histsim's side; only the store's calls cross the boundary.
//!
//! Over the protocol, every request and answer goes into the world's trace (so the trace hash
//! covers the system's answers), a refusal comes back as the store's own error, and a breach is
//! kept for the driving loop, which ends the world broken.

use super::host::StoreHost;
use crate::sut::protocol::{Count, Durability, Events, Kept, MaxSeq, Request, Seqs};
use crate::sut::{OpenedSut, SutError, SutOptions};
use crate::trace::Trace;
use crate::workload::StoreKind;
use history::runs::{
    MessageCursor, NewRunEvent, RunEvent, RunEventStore, RunStoreError, UserScope,
};
use history::Planted;
use serde::de::DeserializeOwned;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// The ops every seed of the runs workload needs of a system under test: the journals' writes,
/// the views' reads, the whole-store comparisons.
pub const RUNS_OPS: [&str; 4] = ["put_batch", "list_messages", "count_messages", "dump"];
/// What the client's `events` reads need; without it they are left out (and counted).
pub const LIST_EVENTS: &str = "list_events";
/// What the legacy writer of planted R5 needs (it numbers its batches itself).
pub const LEGACY_WRITER_OPS: [&str; 2] = ["max_seq", "insert_numbered"];

/// The first breach of any store of a world: the driving loop ends the world with it.
pub type BreachSlot = Rc<RefCell<Option<SutError>>>;

/// A run-event store in a child process.
pub struct OverProtocolStore {
    sut: RefCell<OpenedSut>,
    /// Which store of the pair this is, in trace lines.
    slot: &'static str,
    trace: Rc<RefCell<Trace>>,
    breach: BreachSlot,
    /// Simulated time of the last call: calls after the simulation ended (the final dump) are
    /// traced at it.
    last_us: Cell<u64>,
}

impl OverProtocolStore {
    /// Starts the system and opens it as the `store` backend of the pair.
    pub fn start(
        options: SutOptions,
        store: StoreKind,
        planted: Planted,
        trace: Rc<RefCell<Trace>>,
        breach: BreachSlot,
    ) -> Result<OverProtocolStore, SutError> {
        let mut needs = RUNS_OPS.to_vec();
        if planted.is(history::BugId::R5) {
            needs.extend(LEGACY_WRITER_OPS);
        }
        let sut = OpenedSut::start(options, store, planted, &needs)?;
        let slot = store.as_str();
        let opened = OverProtocolStore {
            sut: RefCell::new(sut),
            slot,
            trace,
            breach,
            last_us: Cell::new(0),
        };
        opened.trace_exchange();
        Ok(opened)
    }

    /// Whether the system declared `op` in `hello`.
    pub fn serves(&self, op: &str) -> bool {
        self.sut.borrow().serves(op)
    }

    /// What the system wrote to its stderr (its last `bytes_max` bytes), labelled.
    pub fn stderr_log(&self, bytes_max: usize) -> String {
        format!(
            "==> the {} store's stderr <==\n{}",
            self.slot,
            self.sut.borrow().stderr_log(bytes_max)
        )
    }

    fn trace_exchange(&self) {
        let at_us = turmoil::sim_elapsed().map_or(self.last_us.get(), |d| d.as_micros() as u64);
        self.last_us.set(at_us);
        let lines = self.sut.borrow_mut().take_transcript();
        let mut trace = self.trace.borrow_mut();
        let label = format!("sut[{}] ", self.slot);
        for line in lines {
            trace.record_text(at_us, &label, &line);
        }
    }

    fn call<T: DeserializeOwned>(&self, request: Request) -> Result<T, RunStoreError> {
        let answer = self.sut.borrow_mut().call_for::<T>(&request);
        self.trace_exchange();
        match answer {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(refusal)) => Err(RunStoreError::Answered {
                message: refusal.message,
            }),
            Err(breach) => {
                let message = format!("the system under test broke the protocol: {breach}");
                self.breach.borrow_mut().get_or_insert(breach);
                Err(RunStoreError::Answered { message })
            }
        }
    }
}

impl StoreHost for OverProtocolStore {
    fn durability(&self) -> Durability {
        self.sut.borrow().durability()
    }

    /// Kills the child (SIGKILL), starts the command again and opens it on the same data
    /// directory; the new `hello` and `open` lines go into the trace.
    fn restart(&self, at_us: u64) -> Result<(), String> {
        let restarted = self.sut.borrow_mut().restart();
        // The driving loop crashes the host between two steps, outside turmoil's clock.
        self.last_us.set(at_us);
        self.trace_exchange();
        restarted.map_err(|breach| {
            let message = breach.to_string();
            self.breach.borrow_mut().get_or_insert(breach);
            message
        })
    }
}

impl RunEventStore for OverProtocolStore {
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
        let n = events.len();
        let seqs: Seqs = self.call(Request::PutBatch { events })?;
        if seqs.seqs.len() != n {
            let message = format!("put_batch answered {} seqs for {n} events", seqs.seqs.len());
            return Err(RunStoreError::Answered { message });
        }
        Ok(seqs.seqs)
    }

    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
        self.call::<serde_json::Value>(Request::InsertNumbered { events })
            .map(|_| ())
    }

    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        let thread_id = thread_id.to_string();
        Ok(self.call::<MaxSeq>(Request::MaxSeq { thread_id })?.max_seq)
    }

    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let (before, after) = before_after(cursor);
        let request = Request::ListMessages {
            thread_id: thread_id.to_string(),
            limit: limit as u64,
            before,
            after,
        };
        Ok(self.call::<Events>(request)?.events)
    }

    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        let thread_id = thread_id.to_string();
        Ok(self
            .call::<Count>(Request::CountMessages { thread_id })?
            .count)
    }

    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError> {
        let request = Request::ListEvents {
            thread_id: thread_id.to_string(),
            run_id: run_id.to_string(),
        };
        Ok(self.call::<Events>(request)?.events)
    }

    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
        Ok(self.call::<Events>(Request::Dump {})?.events)
    }

    fn delete_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        user: &UserScope,
    ) -> Result<u64, RunStoreError> {
        every_user(user, "delete_by_run")?;
        let request = Request::DeleteByRun {
            thread_id: thread_id.to_string(),
            run_id: run_id.to_string(),
        };
        Ok(self.call::<Count>(request)?.count)
    }

    fn put_if_absent(&self, event: NewRunEvent) -> Result<(RunEvent, bool), RunStoreError> {
        let kept = self.call::<Kept>(Request::PutIfAbsent { event })?;
        Ok((kept.event, kept.created))
    }

    fn list_messages_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        every_user(user, "list_messages_by_run")?;
        let (before, after) = before_after(cursor);
        let request = Request::ListMessagesByRun {
            thread_id: thread_id.to_string(),
            run_id: run_id.to_string(),
            limit: limit as u64,
            before,
            after,
        };
        Ok(self.call::<Events>(request)?.events)
    }
}

/// The protocol's reads and deletions take every user's rows: another scope does not cross it.
fn every_user(user: &UserScope, op: &'static str) -> Result<(), RunStoreError> {
    match user {
        UserScope::All => Ok(()),
        _ => Err(RunStoreError::Unsupported { op }),
    }
}

/// `list_messages`' cursor as the protocol's `before` and `after`.
fn before_after(cursor: MessageCursor) -> (Option<u64>, Option<u64>) {
    match cursor {
        MessageCursor::None => (None, None),
        MessageCursor::Before(b) => (Some(b), None),
        MessageCursor::After(a) => (None, Some(a)),
        MessageCursor::Both { before, after } => (Some(before), Some(after)),
    }
}
