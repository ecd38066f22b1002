//! The in-memory run-event store: the reference backend, and the one the seed's legacy code
//! handed live references out of (R3).
//!
//! Per thread, message rows and other rows live in two vectors sorted by (seq, write order), so a
//! message page is a contiguous window found by binary search: a full paged read of n messages
//! costs O(n log n) at worst, never O(n²).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use super::error::RunStoreError;
use super::event::{check_room, Category, MessageCursor, NewRunEvent, RunEvent};
use super::store::RunEventStore;
use crate::planted::{BugId, Planted};

/// A stored row with its global write number (the tie-break between equal seqs, which only a
/// missing unique guard can produce: R5).
#[derive(Clone, Debug)]
struct Stored {
    write_no: u64,
    event: RunEvent,
}

#[derive(Default, Debug)]
struct ThreadRows {
    messages: Vec<Stored>,
    others: Vec<Stored>,
    max_seq: u64,
}

impl ThreadRows {
    fn insert(&mut self, write_no: u64, event: RunEvent) {
        self.max_seq = self.max_seq.max(event.seq);
        let rows = if event.category == Category::Message {
            &mut self.messages
        } else {
            &mut self.others
        };
        // Appending is the common case; the search only matters for equal seqs (no guard, R5).
        let at = rows.partition_point(|s| s.event.seq <= event.seq);
        rows.insert(at, Stored { write_no, event });
    }

    /// All rows merged back into (seq, write order).
    fn merged(&self) -> Vec<&Stored> {
        let mut all: Vec<&Stored> = self.messages.iter().chain(self.others.iter()).collect();
        all.sort_by_key(|s| (s.event.seq, s.write_no));
        all
    }
}

#[derive(Default, Debug)]
struct State {
    threads: BTreeMap<String, ThreadRows>,
    writes: u64,
}

/// The in-memory backend.
#[derive(Debug)]
pub struct MemoryRunEventStore {
    state: Mutex<State>,
    planted: Planted,
}

impl MemoryRunEventStore {
    /// An empty store. `planted` may switch on R5 (no unique guard on numbered writes).
    pub fn new(planted: Planted) -> MemoryRunEventStore {
        MemoryRunEventStore {
            state: Mutex::new(State::default()),
            planted,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-written batch (batches are checked
        // before they are applied), so a poisoned lock still guards consistent data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The index window of a message page, per the semantics documented on [`MessageCursor`].
/// `rows` are one thread's message rows, sorted by seq; a page is always contiguous in them.
fn window(rows: &[Stored], limit: usize, cursor: MessageCursor) -> Range<usize> {
    let len = rows.len();
    let first_above = |a: u64| rows.partition_point(|s| s.event.seq <= a);
    let first_at_or_above = |b: u64| rows.partition_point(|s| s.event.seq < b);
    let range = match cursor {
        MessageCursor::None => len - limit.min(len)..len,
        MessageCursor::Before(b) => {
            let end = first_at_or_above(b);
            end - limit.min(end)..end
        }
        MessageCursor::After(a) => {
            let start = first_above(a);
            start..start + limit.min(len - start)
        }
        MessageCursor::Both { before, after } => {
            let start = first_above(after);
            let end = first_at_or_above(before).max(start);
            start..start + limit.min(end - start)
        }
    };
    debug_assert!(range.start <= range.end && range.end <= len && range.len() <= limit);
    range
}

impl RunEventStore for MemoryRunEventStore {
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
        for e in &events {
            e.validate()?;
        }
        let mut state = self.lock();
        check_room(&events, |t| {
            Ok(state.threads.get(t).map_or(0, |r| r.max_seq))
        })?;
        let mut seqs = Vec::with_capacity(events.len());
        for e in events {
            state.writes += 1;
            let write_no = state.writes;
            let rows = state.threads.entry(e.thread_id.clone()).or_default();
            let seq = rows.max_seq + 1;
            rows.insert(write_no, e.with_seq(seq));
            seqs.push(seq);
        }
        Ok(seqs)
    }

    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
        let mut state = self.lock();
        // Check the whole batch first, so a conflict writes nothing.
        let mut max_by_thread: BTreeMap<&str, u64> = BTreeMap::new();
        for e in &events {
            NewRunEvent::validate_numbered(e)?;
            let max = max_by_thread
                .entry(&e.thread_id)
                .or_insert_with(|| state.threads.get(&e.thread_id).map_or(0, |t| t.max_seq));
            // planted R5: the legacy store had no unique guard, so duplicate seqs went in.
            if e.seq <= *max && !self.planted.is(BugId::R5) {
                return Err(RunStoreError::SeqConflict {
                    thread_id: e.thread_id.clone(),
                    seq: e.seq,
                    max_seq: *max,
                });
            }
            *max = (*max).max(e.seq);
        }
        for e in events {
            state.writes += 1;
            let write_no = state.writes;
            state
                .threads
                .entry(e.thread_id.clone())
                .or_default()
                .insert(write_no, e);
        }
        Ok(())
    }

    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        Ok(self.lock().threads.get(thread_id).map_or(0, |t| t.max_seq))
    }

    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let state = self.lock();
        let Some(rows) = state.threads.get(thread_id) else {
            return Ok(Vec::new());
        };
        let range = window(&rows.messages, limit, cursor);
        Ok(rows.messages[range]
            .iter()
            .map(|s| s.event.clone())
            .collect())
    }

    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        let state = self.lock();
        Ok(state
            .threads
            .get(thread_id)
            .map_or(0, |t| t.messages.len() as u64))
    }

    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError> {
        let state = self.lock();
        let Some(rows) = state.threads.get(thread_id) else {
            return Ok(Vec::new());
        };
        Ok(rows
            .merged()
            .into_iter()
            .filter(|s| s.event.run_id == run_id)
            .map(|s| s.event.clone())
            .collect())
    }

    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
        let state = self.lock();
        Ok(state
            .threads
            .values()
            .flat_map(|t| t.merged().into_iter().map(|s| s.event.clone()))
            .collect())
    }

    #[cfg(feature = "planted")]
    fn legacy_edit_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        edit: &mut dyn FnMut(&mut RunEvent),
    ) -> Result<bool, RunStoreError> {
        let mut state = self.lock();
        if let Some(rows) = state.threads.get_mut(thread_id) {
            let range = window(&rows.messages, limit, cursor);
            for s in &mut rows.messages[range] {
                edit(&mut s.event);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(thread: &str, category: Category) -> NewRunEvent {
        NewRunEvent {
            thread_id: thread.into(),
            run_id: "r1".into(),
            user_id: None,
            event_type: "x".into(),
            category,
            content: json!({"type": "human", "content": "m"}),
            metadata: json!({}),
            created_at_ns: 0,
        }
    }

    fn seqs(rows: &[RunEvent]) -> Vec<u64> {
        rows.iter().map(|r| r.seq).collect()
    }

    #[test]
    fn seq_is_per_thread_and_counts_every_category() {
        let s = MemoryRunEventStore::new(Planted::none());
        let got = s
            .put_batch(vec![
                ev("a", Category::Message),
                ev("b", Category::Message),
                ev("a", Category::Trace),
                ev("a", Category::Message),
            ])
            .unwrap();
        assert_eq!(got, vec![1, 1, 2, 3]);
        assert_eq!(s.count_messages("a").unwrap(), 2);
        assert_eq!(s.max_seq("a").unwrap(), 3);
    }

    #[test]
    fn cursors_follow_the_documented_semantics() {
        let s = MemoryRunEventStore::new(Planted::none());
        s.put_batch((0..10).map(|_| ev("t", Category::Message)).collect())
            .unwrap();
        let list = |limit, c| seqs(&s.list_messages("t", limit, c).unwrap());
        assert_eq!(list(3, MessageCursor::None), vec![8, 9, 10]);
        assert_eq!(list(3, MessageCursor::After(2)), vec![3, 4, 5]);
        assert_eq!(list(3, MessageCursor::Before(5)), vec![2, 3, 4]);
        assert_eq!(
            list(
                3,
                MessageCursor::Both {
                    before: 9,
                    after: 2
                }
            ),
            vec![3, 4, 5]
        );
        assert_eq!(
            list(
                30,
                MessageCursor::Both {
                    before: 5,
                    after: 2
                }
            ),
            vec![3, 4]
        );
        assert_eq!(
            list(
                3,
                MessageCursor::Both {
                    before: 2,
                    after: 5
                }
            ),
            Vec::<u64>::new()
        );
        assert_eq!(list(0, MessageCursor::None), Vec::<u64>::new());
        assert_eq!(list(3, MessageCursor::After(10)), Vec::<u64>::new());
    }

    #[test]
    fn numbered_writes_at_or_below_the_maximum_conflict_and_write_nothing() {
        let s = MemoryRunEventStore::new(Planted::none());
        s.put_batch(vec![ev("t", Category::Message)]).unwrap();
        let before = s.dump().unwrap();
        let batch = vec![
            ev("t", Category::Message).with_seq(2),
            ev("t", Category::Message).with_seq(2),
        ];
        assert!(matches!(
            s.insert_numbered(batch),
            Err(RunStoreError::SeqConflict { seq: 2, .. })
        ));
        assert_eq!(s.dump().unwrap(), before);
    }

    #[test]
    fn reads_hand_out_copies() {
        let s = MemoryRunEventStore::new(Planted::none());
        s.put_batch(vec![ev("t", Category::Message)]).unwrap();
        let mut rows = s.list_messages("t", 10, MessageCursor::None).unwrap();
        rows[0].content["id"] = json!("changed");
        assert_eq!(s.dump().unwrap()[0].content["id"], json!(null));
    }
}
