//! The run journal: buffers one run's events and writes them to the store in batches.
//!
//! It flushes when the buffer reaches the threshold, and when the run ends, fails or is
//! cancelled. A batch the store rejects goes back to the front of the buffer, in order, and is
//! retried by the next flush. So a run that ends, errors or is cancelled has every event stored
//! once the store accepts writes again; only a hard kill (dropping the journal) loses what is
//! still buffered, and then the stored events of the run are a prefix of what it emitted (R4).
//!
//! The methods are `async` so that a simulation can interleave several writers on one thread;
//! the journal itself needs no runtime (see [`YieldNow`]).

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;

use super::error::RunStoreError;
use super::event::{Category, NewRunEvent};
use super::message::ChatMessage;
use super::store::RunEventStore;
use super::yield_now::YieldNow;
use crate::planted::{BugId, Planted};

/// Options of a [`RunJournal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunJournalOptions {
    /// Flush as soon as this many events are buffered (the seed's default is 20). At least 1.
    pub flush_threshold_events: usize,
    /// A trace event's content is kept to at most this many bytes, cut and marked
    /// (the `trace_truncation` module); `None`: every trace is kept whole.
    pub max_trace_content_bytes: Option<usize>,
    /// Legacy switches: R4 (no flush on error or cancel), R5 (racy max+1 numbering), R25 (the
    /// first human message of any model call taken for the run's input), R26 (every chain end
    /// taken for the run's).
    pub planted: Planted,
}

impl Default for RunJournalOptions {
    fn default() -> RunJournalOptions {
        RunJournalOptions {
            flush_threshold_events: 20,
            max_trace_content_bytes: None,
            planted: Planted::none(),
        }
    }
}

/// One event as a run emits it; the journal adds thread, run and user.
#[derive(Clone, Debug, PartialEq)]
pub struct JournalEntry {
    pub event_type: String,
    pub category: Category,
    /// Shared, not copied, by whoever keeps the entry beside the journal (the simulation's
    /// ground truth), as [`NewRunEvent::content`] is by the stores.
    pub content: Arc<Value>,
    pub metadata: Value,
    /// Creation time in nanoseconds (from the caller's clock).
    pub created_at_ns: i64,
}

impl JournalEntry {
    /// A message event: its type follows the message's shape (human_message, ai_tool_call,
    /// ai_message, tool_result).
    pub fn message(message: &ChatMessage, created_at_ns: i64) -> JournalEntry {
        JournalEntry {
            event_type: message.event_type().to_string(),
            category: Category::Message,
            content: Arc::new(message.to_content()),
            metadata: Value::Object(Default::default()),
            created_at_ns,
        }
    }

    /// A non-message event (trace, lifecycle, middleware) with the given type and content.
    pub fn other(
        category: Category,
        event_type: impl Into<String>,
        content: Value,
        created_at_ns: i64,
    ) -> JournalEntry {
        JournalEntry {
            event_type: event_type.into(),
            category,
            content: Arc::new(content),
            metadata: Value::Object(Default::default()),
            created_at_ns,
        }
    }
}

/// Where a run's journal is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JournalState {
    Open,
    Ended,
    Errored,
    Cancelled,
}

/// Why a journal call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JournalError {
    /// `record` after the run was over; the entry was not kept.
    #[error("the journal of run `{run_id}` is closed ({state:?}); event dropped")]
    Closed { run_id: String, state: JournalState },
    /// A flush failed; the batch is back in the buffer, nothing is lost.
    #[error("flush failed, batch re-queued: {0}")]
    Store(#[from] RunStoreError),
}

/// The journal of one run on one thread.
#[derive(Debug)]
pub struct RunJournal<S> {
    store: S,
    thread_id: String,
    run_id: String,
    user_id: Option<String>,
    pub(super) options: RunJournalOptions,
    buffer: VecDeque<NewRunEvent>,
    state: JournalState,
    written_events: u64,
    /// The content of the last human input recorded from a model call
    /// ([`super::journal_callbacks`]), so that the agent's later calls of the same turn do not
    /// record it again.
    pub(super) last_input: Option<Arc<Value>>,
}

impl<S: RunEventStore> RunJournal<S> {
    pub fn new(
        store: S,
        thread_id: impl Into<String>,
        run_id: impl Into<String>,
        user_id: Option<String>,
        options: RunJournalOptions,
    ) -> RunJournal<S> {
        assert!(
            options.flush_threshold_events >= 1,
            "flush_threshold_events must be at least 1"
        );
        RunJournal {
            store,
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            user_id,
            options,
            buffer: VecDeque::new(),
            state: JournalState::Open,
            written_events: 0,
            last_input: None,
        }
    }

    /// Buffers an event, and flushes when the buffer reaches the threshold.
    pub async fn record(&mut self, entry: JournalEntry) -> Result<(), JournalError> {
        if self.state != JournalState::Open {
            return Err(JournalError::Closed {
                run_id: self.run_id.clone(),
                state: self.state,
            });
        }
        let (content, metadata) = self.bounded(entry.category, entry.content, entry.metadata);
        self.buffer.push_back(NewRunEvent {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            user_id: self.user_id.clone(),
            event_type: entry.event_type,
            category: entry.category,
            content,
            metadata,
            created_at_ns: entry.created_at_ns,
        });
        if self.buffer.len() >= self.options.flush_threshold_events {
            self.flush().await?;
        }
        // Post-condition: a kept entry never leaves a full buffer behind.
        debug_assert!(self.buffer.len() < self.options.flush_threshold_events);
        Ok(())
    }

    /// What the journal keeps of an entry's content and metadata: a trace cut to
    /// `max_trace_content_bytes` ([`super::trace_truncation`]), anything else as it is (the
    /// content still shared with the caller).
    fn bounded(
        &self,
        category: Category,
        content: Arc<Value>,
        metadata: Value,
    ) -> (Arc<Value>, Value) {
        let Some(max) = self.options.max_trace_content_bytes else {
            return (content, metadata);
        };
        match super::trace_truncation::truncate_trace(
            category,
            &content,
            &metadata,
            max,
            self.options.planted,
        ) {
            Some((cut, marked)) => (Arc::new(cut), marked),
            None => (content, metadata),
        }
    }

    /// Writes everything buffered as one batch. On failure the batch goes back to the front of
    /// the buffer in its order. Returns how many events were written. Allowed after the run is
    /// over (to retry a failed final flush).
    pub async fn flush(&mut self) -> Result<usize, RunStoreError> {
        if self.buffer.is_empty() {
            return Ok(0);
        }
        let batch: Vec<NewRunEvent> = self.buffer.drain(..).collect();
        let n = batch.len();
        let result = if self.options.planted.is(BugId::R5) {
            self.write_numbered_legacy(batch.clone()).await
        } else {
            self.store.put_batch(batch.clone()).map(|seqs| {
                debug_assert_eq!(seqs.len(), n);
            })
        };
        match result {
            Ok(()) => {
                self.written_events += n as u64;
                // Post-condition: everything buffered was written.
                debug_assert!(self.buffer.is_empty());
                Ok(n)
            }
            Err(e) => {
                // Re-queue at the front, in order, ahead of anything recorded since.
                for event in batch.into_iter().rev() {
                    self.buffer.push_front(event);
                }
                // Post-condition: nothing of the failed batch is lost.
                debug_assert!(self.buffer.len() >= n);
                Err(e)
            }
        }
    }

    /// planted R5: the legacy writer read max(seq), awaited, then wrote max+1.. as if no other
    /// writer could have written in between.
    async fn write_numbered_legacy(&self, batch: Vec<NewRunEvent>) -> Result<(), RunStoreError> {
        let max = self.store.max_seq(&self.thread_id)?;
        YieldNow::new().await;
        let numbered = batch
            .into_iter()
            .zip(max + 1..)
            .map(|(e, seq)| e.with_seq(seq))
            .collect();
        self.store.insert_numbered(numbered)
    }

    /// The run ended normally: flush. (Record the `run_end` lifecycle entry first.)
    pub async fn end(&mut self) -> Result<(), RunStoreError> {
        self.finish(JournalState::Ended).await
    }

    /// The run failed: flush. (Record the `run_error` lifecycle entry first.)
    pub async fn error(&mut self) -> Result<(), RunStoreError> {
        self.finish(JournalState::Errored).await
    }

    /// The run was cancelled: flush (the seed's worker does it in `finally`).
    pub async fn cancel(&mut self) -> Result<(), RunStoreError> {
        self.finish(JournalState::Cancelled).await
    }

    /// Enters the run's final `state` and flushes what is still buffered.
    async fn finish(&mut self, state: JournalState) -> Result<(), RunStoreError> {
        self.state = state;
        if state != JournalState::Ended && self.options.planted.is(BugId::R4) {
            // planted R4: the legacy error and cancel paths did not flush the buffer.
            return Ok(());
        }
        self.flush().await?;
        // Post-condition: a run that ended, failed or was cancelled holds nothing back (R4).
        debug_assert_eq!(self.buffered(), 0);
        Ok(())
    }

    /// Events recorded but not yet stored.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Events stored by this journal so far.
    pub fn written_events(&self) -> u64 {
        self.written_events
    }

    pub fn state(&self) -> JournalState {
        self.state
    }

    pub fn thread_id(&self) -> &str {
        &self.thread_id
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The store this journal writes to.
    pub fn store(&self) -> &S {
        &self.store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{FaultSchedule, FaultyRunStore, MemoryRunEventStore};

    use crate::runs::poll_to_end as block_on;

    fn entry(i: i64) -> JournalEntry {
        JournalEntry::message(&ChatMessage::human(format!("m{i}")), i)
    }

    #[test]
    fn flushes_at_the_threshold_and_at_end() {
        let store = MemoryRunEventStore::new(Planted::none());
        let mut j = RunJournal::new(&store, "t", "r", None, RunJournalOptions::default());
        for i in 0..45 {
            block_on(j.record(entry(i))).unwrap();
        }
        assert_eq!((j.buffered(), store.count_messages("t").unwrap()), (5, 40));
        block_on(j.end()).unwrap();
        assert_eq!((j.buffered(), store.count_messages("t").unwrap()), (0, 45));
        assert!(matches!(
            block_on(j.record(entry(99))),
            Err(JournalError::Closed { .. })
        ));
    }

    #[test]
    fn long_traces_are_stored_cut_and_marked_and_messages_whole() {
        let store = MemoryRunEventStore::new(Planted::none());
        let options = RunJournalOptions {
            max_trace_content_bytes: Some(100),
            ..RunJournalOptions::default()
        };
        let mut j = RunJournal::new(&store, "t", "r", None, options);
        let long = "x".repeat(200);
        let trace = JournalEntry::other(Category::Trace, "llm_end", Value::from(long.clone()), 0);
        block_on(j.record(trace)).unwrap();
        let message = JournalEntry::message(&ChatMessage::ai(long.clone(), None), 1);
        block_on(j.record(message)).unwrap();
        block_on(j.end()).unwrap();
        let rows = store.dump().unwrap();
        assert_eq!(rows[0].content.as_str().map(str::len), Some(100));
        assert_eq!(rows[0].metadata["content_truncated"], Value::Bool(true));
        assert_eq!(rows[0].metadata["original_byte_length"], Value::from(200));
        assert_eq!(rows[1].content["content"].as_str().map(str::len), Some(200));
        assert_eq!(rows[1].metadata, Value::Object(Default::default()));
    }

    #[test]
    fn a_failed_batch_is_requeued_in_order_and_retried() {
        let store = FaultyRunStore::new(
            MemoryRunEventStore::new(Planted::none()),
            FaultSchedule::failing([0]),
        );
        let options = RunJournalOptions {
            flush_threshold_events: 2,
            ..RunJournalOptions::default()
        };
        let mut j = RunJournal::new(&store, "t", "r", None, options);
        assert_eq!((j.thread_id(), j.run_id()), ("t", "r"));
        block_on(j.record(entry(0))).unwrap();
        assert!(block_on(j.record(entry(1))).is_err());
        assert_eq!(
            (j.buffered(), j.written_events()),
            (2, 0),
            "a failed batch counts nothing"
        );
        block_on(j.record(entry(2))).unwrap(); // flushes all three
        assert_eq!(j.written_events(), 3);
        block_on(j.record(entry(3))).unwrap();
        block_on(j.cancel()).unwrap();
        assert_eq!((j.buffered(), j.written_events()), (0, 4));
        let times = crate::runs::store::dumped(&store, |e| e.created_at_ns);
        assert_eq!(times, vec![0, 1, 2, 3]);
    }
}
