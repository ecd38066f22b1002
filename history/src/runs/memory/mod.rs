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
        Ok(delete_thread_in(
            &mut self.lock(),
            thread_id,
            user,
            self.planted,
        ))
    }

    /// See [`MemoryIndex::fence`]: a reopened JSONL store restoring a deletion's fence, whose
    /// rows may be gone from its files.
    pub(crate) fn fence(&self, thread_id: &str, runs: &BTreeSet<String>) {
        self.lock().fence(thread_id, runs);
    }

    /// See [`MemoryIndex::raise_max_seq`].
    pub(crate) fn raise_max_seq(&self, thread_id: &str, seq: u64) {
        self.lock().raise_max_seq(thread_id, seq);
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
    if planted.is(BugId::R23) {
        // planted R23: the legacy thread deletion dropped the thread's message rows only
        // (the projection the views read), leaving its traces, lifecycle marks and receipts:
        // the thread was never emptied, so its numbering went on. It fenced the thread's runs
        // as the deletion does.
        let runs = index.fence_scope(thread_id, user, planted);
        return (index.delete_thread_messages(thread_id, user), runs);
    }
    index.delete_by_thread(thread_id, user, planted)
}

impl RunEventStore for MemoryRunEventStore {
    run_store_methods! {
        fn put_batch(&self, events) {
            self.lock().put_batch(events)
        }

        fn put_batch_records(&self, events) {
            self.lock().put_batch_records(events)
        }

        fn insert_numbered(&self, events) {
            self.lock().insert_numbered(events, self.planted)
        }

        fn max_seq(&self, thread_id) {
            Ok(self.lock().max_seq(thread_id))
        }

        fn list_messages(&self, thread_id, limit, cursor) {
            Ok(self.lock().list_messages(thread_id, limit, cursor, None))
        }

        fn count_messages(&self, thread_id) {
            Ok(self.lock().count_messages(thread_id, None))
        }

        fn count_events(&self, thread_id) {
            let state = self.lock();
            let rows = state.threads.get(thread_id);
            Ok(rows.map_or(0, |t| (t.messages.len() + t.others.len()) as u64))
        }

        fn count_events_by_run(&self, thread_id, run_id) {
            let state = self.lock();
            let Some(rows) = state.threads.get(thread_id) else {
                return Ok(0);
            };
            let of_run =
                (rows.messages.iter().chain(&rows.others)).filter(|s| s.event.run_id == run_id);
            Ok(of_run.count() as u64)
        }

        fn list_events(&self, thread_id, run_id) {
            Ok(self.lock().list_events(
                thread_id,
                run_id,
                &EventFilter::everything(),
                None,
                Planted::none(),
            ))
        }

        fn dump(&self) {
            Ok(self.lock().dump())
        }

        fn put_if_absent(&self, event) {
            self.lock().put_if_absent(event, self.planted)
        }

        fn delete_by_thread(&self, thread_id, user) {
            let user = user.resolve("delete_by_thread")?;
            let mut index = self.lock();
            Ok(delete_thread_in(&mut index, thread_id, user, self.planted).0)
        }

        fn delete_by_run(&self, thread_id, run_id, user) {
            let user = user.resolve("delete_by_run")?;
            Ok(self
                .lock()
                .delete_by_run(thread_id, run_id, user, self.planted))
        }

        fn list_messages_as(&self, thread_id, limit, cursor, user) {
            let user = user.resolve("list_messages")?;
            let state = self.lock();
            Ok(match user {
                Some(u) if self.planted.is(BugId::R19) => {
                    page(&state.legacy_shared_messages(thread_id, u), limit, cursor)
                }
                _ => state.list_messages(thread_id, limit, cursor, user),
            })
        }

        fn count_messages_as(&self, thread_id, user) {
            let user = user.resolve("count_messages")?;
            let state = self.lock();
            Ok(match user {
                Some(u) if self.planted.is(BugId::R19) => {
                    state.legacy_shared_messages(thread_id, u).len() as u64
                }
                _ => state.count_messages(thread_id, user),
            })
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
            Ok(state.list_messages_by_run(thread_id, run_id, limit, cursor, user, self.planted))
        }

        fn list_events_filtered(&self, thread_id, run_id, filter, user) {
            let user = user.resolve("list_events")?;
            Ok(self
                .lock()
                .list_events(thread_id, run_id, filter, user, self.planted))
        }

        fn get_last_visible_ai_seq_by_run(&self, thread_id, run_ids, user) {
            let user = user.resolve("get_last_visible_ai_seq_by_run")?;
            Ok(self
                .lock()
                .last_visible_ai_seq_by_run(thread_id, run_ids, user, self.planted))
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
