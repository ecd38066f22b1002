//! The in-memory run-event store: the reference backend, and the one the seed's legacy code
//! handed live references out of (R3).
//!
//! Per thread, message rows and other rows live in two vectors sorted by (seq, write order), so a
//! message page is a contiguous window found by binary search: a full paged read of n messages
//! costs O(n log n) at worst, never O(n²).

mod index;
mod pages;
mod rows;

pub(crate) use index::MemoryIndex;

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};

use super::error::RunStoreError;
use super::invariants::{is_message_page, is_page};
use super::query::{EventFilter, UserScope};
use super::store::RunEventStore;
use crate::planted::{BugId, Planted};
use pages::page;

/// The in-memory backend: a `MemoryIndex` behind a mutex.
#[derive(Debug)]
pub struct MemoryRunEventStore {
    state: Mutex<MemoryIndex>,
    planted: Planted,
}

impl MemoryRunEventStore {
    /// An empty store. `planted` may switch on R5 (no unique guard on numbered writes), R13
    /// (`delete_by_run` lowers the numbering), R14 (`put_if_absent` keyed on the thread), R15
    /// (`delete_by_run` deletes messages only) or R16 (per-run pages cut from the thread's).
    pub fn new(planted: Planted) -> MemoryRunEventStore {
        MemoryRunEventStore {
            state: Mutex::new(MemoryIndex::default()),
            planted,
        }
    }

    /// `delete_by_thread` answering the runs it fenced too (R28), for the JSONL store's
    /// deletion line.
    pub(crate) fn delete_thread_fencing(
        &self,
        thread_id: &str,
        user: &UserScope,
    ) -> Result<(u64, BTreeSet<String>), RunStoreError> {
        let user = user.resolve("delete_by_thread")?;
        let (removed, runs) = delete_thread_in(&mut self.lock(), thread_id, user, self.planted);
        // Post-condition: each fenced run held a removed row, so there are no more of them than
        // rows removed (R23 fences every run's rows but removes the messages only).
        debug_assert!(self.planted.is(BugId::R23) || runs.len() as u64 <= removed);
        Ok((removed, runs))
    }

    /// See [`MemoryIndex::fence`]: a reopened JSONL store restoring a deletion's fence, whose
    /// rows may be gone from its files.
    pub(crate) fn fence(&self, thread_id: &str, runs: &BTreeSet<String>) {
        self.lock().fence(thread_id, runs);
    }

    /// See [`MemoryIndex::raise_max_seq`].
    pub(crate) fn raise_max_seq(&self, thread_id: &str, seq: u64) {
        let mut index = self.lock();
        let before = index.max_seq(thread_id);
        index.raise_max_seq(thread_id, seq);
        // Post-condition: the mark only rises, to `seq` or to where it stood.
        debug_assert_eq!(index.max_seq(thread_id), before.max(seq));
    }

    fn lock(&self) -> MutexGuard<'_, MemoryIndex> {
        // A panic while holding the lock cannot leave a half-written batch (batches are checked
        // before they are applied), so a poisoned lock still guards consistent data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}
/// A thread deletion on `index`: the rows it removed and the runs it fenced (R28).
fn delete_thread_in(
    index: &mut MemoryIndex,
    thread_id: &str,
    user: Option<&str>,
    planted: Planted,
) -> (u64, BTreeSet<String>) {
    let held = index
        .threads
        .get(thread_id)
        .map_or(0, |t| t.messages.len() + t.others.len());
    if planted.is(BugId::R23) {
        // planted R23: the legacy thread deletion dropped the thread's message rows only
        // (the projection the views read), leaving its traces, lifecycle marks and receipts:
        // the thread was never emptied, so its numbering went on. It fenced the thread's runs
        // as the deletion does.
        let runs = index.fence_scope(thread_id, user, planted);
        let removed = index.delete_thread_messages(thread_id, user);
        debug_assert!(removed <= held as u64);
        return (removed, runs);
    }
    let (removed, runs) = index.delete_by_thread(thread_id, user, planted);
    // Post-condition: the deletion removed rows it held, and an unscoped one all of them.
    debug_assert!(removed <= held as u64 && (user.is_some() || removed == held as u64));
    debug_assert!(user.is_some() || index.max_seq(thread_id) == 0);
    (removed, runs)
}

impl RunEventStore for MemoryRunEventStore {
    run_store_methods! {
        fn put_batch(&self, events) {
            let n = events.len();
            let seqs = self.lock().put_batch(events)?;
            // Post-condition: one seq an event, each a real number (seqs start at 1).
            debug_assert!(seqs.len() == n && seqs.iter().all(|&s| s > 0));
            Ok(seqs)
        }

        fn put_batch_records(&self, events) {
            // Only debug builds keep the batch's threads, for the post-condition.
            #[cfg(debug_assertions)]
            let threads: Vec<String> = events.iter().map(|e| e.thread_id.clone()).collect();
            let records = self.lock().put_batch_records(events)?;
            // Post-condition: the records are the events, in order, each of its thread.
            #[cfg(debug_assertions)]
            debug_assert!(
                records.len() == threads.len()
                    && records.iter().zip(&threads).all(|(r, t)| r.thread_id == *t && r.seq > 0)
            );
            Ok(records)
        }

        fn insert_numbered(&self, events) {
            // Only debug builds note the first event's thread and its top seq in the batch.
            #[cfg(debug_assertions)]
            let (thread, top) = {
                let thread = events.first().map(|e| e.thread_id.clone());
                let of_thread = events.iter().filter(|e| Some(&e.thread_id) == thread.as_ref());
                let top = of_thread.map(|e| e.seq).max();
                (thread, top)
            };
            let mut index = self.lock();
            index.insert_numbered(events, self.planted)?;
            // Post-condition: the first event's thread is numbered at least to the batch's top.
            #[cfg(debug_assertions)]
            debug_assert!(thread.is_none_or(|t| Some(index.max_seq(&t)) >= top));
            Ok(())
        }

        fn max_seq(&self, thread_id) {
            Ok(self.lock().max_seq(thread_id))
        }

        fn list_messages(&self, thread_id, limit, cursor) {
            let rows = self.lock().list_messages(thread_id, limit, cursor, None);
            debug_assert!(is_message_page(&rows, thread_id, limit, cursor));
            Ok(rows)
        }

        fn count_messages(&self, thread_id) {
            let state = self.lock();
            let count = state.count_messages(thread_id, None);
            // Post-condition: messages are rows of the thread, none beyond its numbering unless
            // a missing unique guard (R5) let equal seqs in.
            debug_assert!(self.planted.is(BugId::R5) || count <= state.max_seq(thread_id));
            Ok(count)
        }

        fn count_events(&self, thread_id) {
            let state = self.lock();
            let rows = state.threads.get(thread_id);
            let count = rows.map_or(0, |t| (t.messages.len() + t.others.len()) as u64);
            // Post-condition: seqs are unique (but with R5), so a thread holds no more rows than
            // its high-water mark numbers.
            debug_assert!(self.planted.is(BugId::R5) || count <= state.max_seq(thread_id));
            Ok(count)
        }

        fn count_events_by_run(&self, thread_id, run_id) {
            let state = self.lock();
            let Some(rows) = state.threads.get(thread_id) else {
                return Ok(0);
            };
            let of_run =
                (rows.messages.iter().chain(&rows.others)).filter(|s| s.event.run_id == run_id);
            let count = of_run.count();
            debug_assert!(count <= rows.messages.len() + rows.others.len());
            Ok(count as u64)
        }

        fn list_events(&self, thread_id, run_id) {
            let rows = self.lock().list_events(
                thread_id,
                run_id,
                &EventFilter::everything(),
                None,
                Planted::none(),
            );
            // Post-condition: the run's rows of the thread, in seq order.
            debug_assert!(rows.windows(2).all(|w| w[0].seq <= w[1].seq));
            debug_assert!(rows.iter().all(|e| e.thread_id == thread_id && e.run_id == run_id));
            Ok(rows)
        }

        fn dump(&self) {
            Ok(self.lock().dump())
        }

        fn put_if_absent(&self, event) {
            #[cfg(debug_assertions)]
            let (thread_id, event_type) = (event.thread_id.clone(), event.event_type.clone());
            let (record, written) = self.lock().put_if_absent(event, self.planted)?;
            // Post-condition: the answer is a row of the event's thread and type, whether it
            // was just written or already there.
            #[cfg(debug_assertions)]
            debug_assert!(record.thread_id == thread_id && record.event_type == event_type);
            Ok((record, written))
        }

        fn delete_by_thread(&self, thread_id, user) {
            let user = user.resolve("delete_by_thread")?;
            let mut index = self.lock();
            let (removed, runs) = delete_thread_in(&mut index, thread_id, user, self.planted);
            // Post-condition: each fenced run held a removed row (but with R23, see
            // `delete_thread_fencing`).
            debug_assert!(self.planted.is(BugId::R23) || runs.len() as u64 <= removed);
            Ok(removed)
        }

        fn delete_by_run(&self, thread_id, run_id, user) {
            let user = user.resolve("delete_by_run")?;
            let mut index = self.lock();
            let removed = index.delete_by_run(thread_id, run_id, user, self.planted);
            // Post-condition: an unscoped deletion leaves no row of the run (R15 leaves all but
            // its messages).
            debug_assert!(
                user.is_some()
                    || self.planted.is(BugId::R15)
                    || index.threads.get(thread_id).is_none_or(|t| {
                        (t.messages.iter().chain(&t.others)).all(|s| s.event.run_id != run_id)
                    })
            );
            Ok(removed)
        }

        fn list_messages_as(&self, thread_id, limit, cursor, user) {
            let user = user.resolve("list_messages")?;
            let state = self.lock();
            let rows = match user {
                Some(u) if self.planted.is(BugId::R19) => {
                    page(&state.legacy_shared_messages(thread_id, u), limit, cursor)
                }
                _ => state.list_messages(thread_id, limit, cursor, user),
            };
            debug_assert!(is_message_page(&rows, thread_id, limit, cursor));
            // Post-condition: a scoped page holds the user's rows only (R19 adds unowned ones).
            debug_assert!(
                self.planted.is(BugId::R19)
                    || rows.iter().all(|e| UserScope::admits(user, e.user_id.as_deref()))
            );
            Ok(rows)
        }

        fn count_messages_as(&self, thread_id, user) {
            let user = user.resolve("count_messages")?;
            let state = self.lock();
            let count = match user {
                Some(u) if self.planted.is(BugId::R19) => {
                    state.legacy_shared_messages(thread_id, u).len() as u64
                }
                _ => state.count_messages(thread_id, user),
            };
            // Post-condition: a scope only narrows the thread's messages, R19's included.
            debug_assert!(count <= state.count_messages(thread_id, None));
            Ok(count)
        }

        fn list_messages_by_run(&self, thread_id, run_id, limit, cursor, user) {
            let user = user.resolve("list_messages_by_run")?;
            let state = self.lock();
            #[cfg(feature = "planted")]
            if self.planted.is(BugId::R24) && !state.has_messages_of(thread_id, run_id) {
                // planted R24: the legacy per-run page looked the run up first and failed on a run
                // with no message row (deleted, or not started) instead of answering no row.
                return Err(RunStoreError::LegacyNoSuchRun {
                    op: "list_messages_by_run",
                    run_id: run_id.to_string(),
                });
            }
            let rows =
                state.list_messages_by_run(thread_id, run_id, limit, cursor, user, self.planted);
            // Post-condition: a page of the run's messages; R16 cuts it short, never wider.
            debug_assert!(is_message_page(&rows, thread_id, limit, cursor));
            debug_assert!(rows.iter().all(|e| e.run_id == run_id));
            Ok(rows)
        }

        fn list_events_filtered(&self, thread_id, run_id, filter, user) {
            let user = user.resolve("list_events")?;
            let rows = self
                .lock()
                .list_events(thread_id, run_id, filter, user, self.planted);
            // Post-condition: at most the filter's limit of the run's rows in seq order; R17
            // filters a short page but never adds a row.
            debug_assert!(is_page(&rows, filter.limit));
            debug_assert!(rows.iter().all(|e| e.thread_id == thread_id && e.run_id == run_id));
            Ok(rows)
        }

        fn get_last_visible_ai_seq_by_run(&self, thread_id, run_ids, user) {
            let user = user.resolve("get_last_visible_ai_seq_by_run")?;
            let state = self.lock();
            let last = state.last_visible_ai_seq_by_run(thread_id, run_ids, user, self.planted);
            // Post-condition: each answer is a numbered row of the thread, R18's too.
            let mark = state.max_seq(thread_id);
            debug_assert!(last.values().all(|&seq| 0 < seq && seq <= mark));
            Ok(last)
        }

        #[cfg(feature = "planted")]
        fn legacy_edit_messages(&self, thread_id, limit, cursor, edit) {
            let mut state = self.lock();
            if let Some(rows) = state.threads.get_mut(thread_id) {
                let range = pages::window(&rows.messages, |s| s.event.seq, limit, cursor);
                for s in &mut rows.messages[range] {
                    edit(&mut s.event);
                }
            }
            Ok(true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::event::{Category, MessageCursor, NewRunEvent, RunEvent};
    use pages::{in_selection, selected_page};
    use rows::Stored;
    use serde_json::json;

    fn ev(thread: &str, category: Category) -> NewRunEvent {
        NewRunEvent {
            thread_id: thread.into(),
            run_id: "r1".into(),
            user_id: None,
            event_type: "x".into(),
            category,
            content: json!({"type": "human", "content": "m"}).into(),
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
        std::sync::Arc::make_mut(&mut rows[0].content)["id"] = json!("changed");
        assert_eq!(s.dump().unwrap()[0].content["id"], json!(null));
    }

    proptest::proptest! {
        /// A run's or a user's page, found from the cursor's end, is the page cut from the
        /// whole selection: the same rows as collecting the selection and windowing it.
        #[test]
        fn a_selected_page_is_the_window_of_the_selection(
            owners in proptest::collection::vec((0u8..3, 0u8..3), 0..40),
            run in proptest::option::of(0u8..3),
            user in proptest::option::of(0u8..3),
            limit in 0usize..12,
            cursor in 0u8..4,
            a in 0u64..45,
            b in 0u64..45,
        ) {
            let rows: Vec<Stored> = owners
                .iter()
                .enumerate()
                .map(|(i, (r, u))| {
                    let mut e = ev("t", Category::Message).with_seq(i as u64 + 1);
                    e.run_id = format!("r{r}");
                    e.user_id = (*u > 0).then(|| format!("u{u}"));
                    Stored { write_no: i as u64, event: e }
                })
                .collect();
            let run = run.map(|r| format!("r{r}"));
            let user = user.map(|u| format!("u{u}"));
            let cursor = match cursor {
                0 => MessageCursor::None,
                1 => MessageCursor::Before(b),
                2 => MessageCursor::After(a),
                _ => MessageCursor::Both { before: b, after: a },
            };
            let selection: Vec<&Stored> = rows
                .iter()
                .filter(|s| in_selection(s, run.as_deref(), user.as_deref()))
                .collect();
            proptest::prop_assert_eq!(
                selected_page(&rows, run.as_deref(), user.as_deref(), limit, cursor),
                page(&selection, limit, cursor)
            );
        }
    }
}
