//! The in-memory run-event store: the reference backend, and the one the seed's legacy code
//! handed live references out of (R3).
//!
//! Per thread, message rows and other rows live in two vectors sorted by (seq, write order), so a
//! message page is a contiguous window found by binary search: a full paged read of n messages
//! costs O(n log n) at worst, never O(n²).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use super::current::{is_visible_ai, VISIBLE_AI_EVENT_TYPES};
use super::error::RunStoreError;
use super::event::{check_room, Category, MessageCursor, NewRunEvent, RunEvent, AI_TOOL_CALL};
use super::query::{EventFilter, UserScope};
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
    /// The high-water mark: `delete_by_run` leaves it (R13).
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

    /// Removes the rows `doomed` selects; returns how many.
    fn remove(&mut self, doomed: impl Fn(&RunEvent) -> bool) -> u64 {
        let before = self.messages.len() + self.others.len();
        self.messages.retain(|s| !doomed(&s.event));
        self.others.retain(|s| !doomed(&s.event));
        (before - self.messages.len() - self.others.len()) as u64
    }

    fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.others.is_empty()
    }
}

/// The in-memory index every operation of the memory store runs on, with no lock of its own:
/// `pub(crate)` so that another backend keeping the same rows in memory (the JSONL store's
/// index of its files) answers through exactly this logic.
#[derive(Default, Debug)]
pub(crate) struct MemoryIndex {
    threads: BTreeMap<String, ThreadRows>,
    writes: u64,
}

impl MemoryIndex {
    fn append(&mut self, event: RunEvent) {
        self.writes += 1;
        let write_no = self.writes;
        self.threads
            .entry(event.thread_id.clone())
            .or_default()
            .insert(write_no, event);
    }

    /// Validates, numbers and writes a batch atomically; returns the assigned seqs.
    pub(crate) fn put_batch(
        &mut self,
        events: Vec<NewRunEvent>,
    ) -> Result<Vec<u64>, RunStoreError> {
        for e in &events {
            e.validate()?;
        }
        check_room(&events, |t| Ok(self.max_seq(t)))?;
        let mut seqs = Vec::with_capacity(events.len());
        for e in events {
            let seq = self.max_seq_of(&e.thread_id) + 1;
            self.append(e.with_seq(seq));
            seqs.push(seq);
        }
        Ok(seqs)
    }

    /// [`MemoryIndex::put_batch`] returning the stored records.
    pub(crate) fn put_batch_records(
        &mut self,
        events: Vec<NewRunEvent>,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let seqs = self.put_batch(events.clone())?;
        Ok(events
            .into_iter()
            .zip(seqs)
            .map(|(e, s)| e.with_seq(s))
            .collect())
    }

    fn max_seq_of(&self, thread_id: &str) -> u64 {
        self.threads.get(thread_id).map_or(0, |t| t.max_seq)
    }

    /// Writes events numbered by the caller; `planted` may switch the unique guard off (R5).
    pub(crate) fn insert_numbered(
        &mut self,
        events: Vec<RunEvent>,
        planted: Planted,
    ) -> Result<(), RunStoreError> {
        // Check the whole batch first, so a conflict writes nothing.
        let mut max_by_thread: BTreeMap<&str, u64> = BTreeMap::new();
        for e in &events {
            NewRunEvent::validate_numbered(e)?;
            let max = max_by_thread
                .entry(&e.thread_id)
                .or_insert_with(|| self.max_seq_of(&e.thread_id));
            // planted R5: the legacy store had no unique guard, so duplicate seqs went in.
            if e.seq <= *max && !planted.is(BugId::R5) {
                return Err(RunStoreError::SeqConflict {
                    thread_id: e.thread_id.clone(),
                    seq: e.seq,
                    max_seq: *max,
                });
            }
            *max = (*max).max(e.seq);
        }
        for e in events {
            self.append(e);
        }
        Ok(())
    }

    /// Writes `event` unless its run has an event of its type; see the trait.
    pub(crate) fn put_if_absent(
        &mut self,
        event: NewRunEvent,
        planted: Planted,
    ) -> Result<(RunEvent, bool), RunStoreError> {
        event.validate()?;
        // planted R14: the legacy lookup keyed on (thread, event type), so a run's receipt was
        // "already there" when another run of the thread had one.
        let any_run = planted.is(BugId::R14);
        let first = self.threads.get(&event.thread_id).and_then(|rows| {
            rows.merged()
                .into_iter()
                .find(|s| {
                    (any_run || s.event.run_id == event.run_id)
                        && s.event.event_type == event.event_type
                })
                .map(|s| s.event.clone())
        });
        match first {
            Some(existing) => Ok((existing, false)),
            None => {
                let mut records = self.put_batch_records(vec![event])?;
                Ok((records.remove(0), true))
            }
        }
    }

    pub(crate) fn max_seq(&self, thread_id: &str) -> u64 {
        self.max_seq_of(thread_id)
    }

    /// Raises the thread's high-water mark to `seq` (a reopened JSONL store restoring the mark
    /// a deletion kept, whose rows are gone from its files).
    pub(crate) fn raise_max_seq(&mut self, thread_id: &str, seq: u64) {
        let rows = self.threads.entry(thread_id.to_string()).or_default();
        rows.max_seq = rows.max_seq.max(seq);
    }

    /// One thread's message rows in `user`'s resolved scope (and of `run_id`, when given), in
    /// seq order.
    fn messages_of<'a>(
        &'a self,
        thread_id: &str,
        run_id: Option<&'a str>,
        user: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Stored> + 'a {
        self.message_rows(thread_id)
            .iter()
            .filter(move |s| in_selection(s, run_id, user))
    }

    /// Every message row of one thread, in seq order.
    fn message_rows(&self, thread_id: &str) -> &[Stored] {
        self.threads
            .get(thread_id)
            .map_or(&[][..], |rows| rows.messages.as_slice())
    }

    pub(crate) fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: Option<&str>,
    ) -> Vec<RunEvent> {
        if user.is_none() {
            // The common unscoped read: a window of the seq-sorted vector, no copy of the rest.
            let Some(rows) = self.threads.get(thread_id) else {
                return Vec::new();
            };
            let range = window(&rows.messages, |s| s.event.seq, limit, cursor);
            return rows.messages[range]
                .iter()
                .map(|s| s.event.clone())
                .collect();
        }
        selected_page(self.message_rows(thread_id), None, user, limit, cursor)
    }

    /// planted R19: the legacy scoped read took rows without a user (legacy runs, background
    /// writers) for everybody's, so `user`'s reads showed and counted them too.
    fn legacy_shared_messages<'a>(&'a self, thread_id: &str, user: &str) -> Vec<&'a Stored> {
        self.threads.get(thread_id).map_or_else(Vec::new, |rows| {
            rows.messages
                .iter()
                .filter(|s| s.event.user_id.as_deref().is_none_or(|u| u == user))
                .collect()
        })
    }

    pub(crate) fn count_messages(&self, thread_id: &str, user: Option<&str>) -> u64 {
        match user {
            None => self
                .threads
                .get(thread_id)
                .map_or(0, |t| t.messages.len() as u64),
            Some(_) => self.messages_of(thread_id, None, user).count() as u64,
        }
    }

    /// Whether the thread holds a message row of `run_id` (any user's).
    #[cfg(feature = "planted")]
    pub(crate) fn has_messages_of(&self, thread_id: &str, run_id: &str) -> bool {
        (self.message_rows(thread_id).iter()).any(|s| s.event.run_id == run_id)
    }

    pub(crate) fn list_messages_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: Option<&str>,
        planted: Planted,
    ) -> Vec<RunEvent> {
        if planted.is(BugId::R16) {
            // planted R16: the legacy read cut the THREAD's page first and kept the run's rows
            // of it, so a page holds fewer than `limit` and paging stops early.
            let thread: Vec<&Stored> = self.messages_of(thread_id, None, user).collect();
            let mut rows = page(&thread, limit, cursor);
            rows.retain(|e| e.run_id == run_id);
            return rows;
        }
        selected_page(
            self.message_rows(thread_id),
            Some(run_id),
            user,
            limit,
            cursor,
        )
    }

    pub(crate) fn list_events(
        &self,
        thread_id: &str,
        run_id: &str,
        filter: &EventFilter,
        user: Option<&str>,
        planted: Planted,
    ) -> Vec<RunEvent> {
        let Some(rows) = self.threads.get(thread_id) else {
            return Vec::new();
        };
        let of_run = rows
            .merged()
            .into_iter()
            .map(|s| &s.event)
            .filter(|e| e.run_id == run_id && UserScope::admits(user, e.user_id.as_deref()));
        if planted.is(BugId::R17) {
            // planted R17: the legacy read cut the page of `limit` rows after the cursor first
            // and filtered it afterwards, so a page holds fewer than `limit` matches (none, when
            // other events come first) and a reader paging one task stops early (upstream
            // issue #3779).
            return of_run
                .filter(|e| filter.after_seq.is_none_or(|after| e.seq > after))
                .take(filter.limit)
                .filter(|e| filter.admits(e))
                .cloned()
                .collect();
        }
        of_run
            .filter(|e| filter.admits(e))
            .take(filter.limit)
            .cloned()
            .collect()
    }

    pub(crate) fn last_visible_ai_seq_by_run(
        &self,
        thread_id: &str,
        run_ids: &BTreeSet<String>,
        user: Option<&str>,
        planted: Planted,
    ) -> BTreeMap<String, u64> {
        // planted R18: the legacy read matched every AI message type (`ai_%`) and never read
        // the caller, so a run whose last AI turn called tools, or whose last AI message a
        // middleware journaled (`metadata.caller` `middleware:title`), answered with that
        // hidden message's seq.
        let legacy = planted.is(BugId::R18);
        let mut last = BTreeMap::new();
        for s in self.messages_of(thread_id, None, user) {
            let e = &s.event;
            let visible = if legacy {
                e.event_type == AI_TOOL_CALL
                    || VISIBLE_AI_EVENT_TYPES.contains(&e.event_type.as_str())
            } else {
                is_visible_ai(&e.event_type, &e.metadata)
            };
            if run_ids.contains(&e.run_id) && visible {
                let seq = last.entry(e.run_id.clone()).or_insert(e.seq);
                *seq = (*seq).max(e.seq);
            }
        }
        last
    }

    /// Deletes the thread's rows in scope; a thread left empty is forgotten, so its numbering
    /// restarts at 1.
    pub(crate) fn delete_by_thread(&mut self, thread_id: &str, user: Option<&str>) -> u64 {
        let Some(rows) = self.threads.get_mut(thread_id) else {
            return 0;
        };
        let removed = rows.remove(|e| UserScope::admits(user, e.user_id.as_deref()));
        if rows.is_empty() {
            self.threads.remove(thread_id);
        }
        removed
    }

    /// The legacy thread deletion of planted R23: the thread's message rows in scope only.
    fn delete_thread_messages(&mut self, thread_id: &str, user: Option<&str>) -> u64 {
        let Some(rows) = self.threads.get_mut(thread_id) else {
            return 0;
        };
        rows.remove(|e| {
            e.category == Category::Message && UserScope::admits(user, e.user_id.as_deref())
        })
    }

    /// Deletes one run's rows in scope; the thread's high-water mark stays (R13).
    pub(crate) fn delete_by_run(
        &mut self,
        thread_id: &str,
        run_id: &str,
        user: Option<&str>,
        planted: Planted,
    ) -> u64 {
        let Some(rows) = self.threads.get_mut(thread_id) else {
            return 0;
        };
        // planted R15: the legacy deletion dropped the run's message rows only (the message
        // projection), leaving its traces, lifecycle marks and receipts behind.
        let messages_only = planted.is(BugId::R15);
        let removed = rows.remove(|e| {
            e.run_id == run_id
                && UserScope::admits(user, e.user_id.as_deref())
                && (!messages_only || e.category == Category::Message)
        });
        if planted.is(BugId::R13) {
            // planted R13: the legacy store numbered from the largest REMAINING seq, so the
            // deleted run's numbers (and message ids) went to the next rows.
            rows.max_seq = rows.merged().last().map_or(0, |s| s.event.seq);
        }
        removed
    }

    pub(crate) fn dump(&self) -> Vec<RunEvent> {
        self.threads
            .values()
            .flat_map(|t| t.merged().into_iter().map(|s| s.event.clone()))
            .collect()
    }
}

/// The in-memory backend: a [`MemoryIndex`] behind a mutex.
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

/// The index window of a message page, per the semantics documented on [`MessageCursor`].
/// `rows` are sorted by `seq_of`; a page is always contiguous in them.
pub(crate) fn window<T>(
    rows: &[T],
    seq_of: impl Fn(&T) -> u64,
    limit: usize,
    cursor: MessageCursor,
) -> Range<usize> {
    let (bounds, latest) = cursor_bounds(rows, seq_of, cursor);
    let take = limit.min(bounds.len());
    let range = if latest {
        bounds.end - take..bounds.end
    } else {
        bounds.start..bounds.start + take
    };
    debug_assert!(range.start <= range.end && range.end <= rows.len() && range.len() <= limit);
    range
}

/// The index range of the rows inside the cursor's seq bounds, and whether a page of them is
/// their latest rows (no cursor, `Before`) rather than their first (`After`, `Both`).
fn cursor_bounds<T>(
    rows: &[T],
    seq_of: impl Fn(&T) -> u64,
    cursor: MessageCursor,
) -> (Range<usize>, bool) {
    let first_above = |a: u64| rows.partition_point(|s| seq_of(s) <= a);
    let first_at_or_above = |b: u64| rows.partition_point(|s| seq_of(s) < b);
    match cursor {
        MessageCursor::None => (0..rows.len(), true),
        MessageCursor::Before(b) => (0..first_at_or_above(b), true),
        MessageCursor::After(a) => (first_above(a)..rows.len(), false),
        MessageCursor::Both { before, after } => {
            let start = first_above(after);
            (start..first_at_or_above(before).max(start), false)
        }
    }
}

/// A message page of already selected rows (seq order), copied out.
fn page(rows: &[&Stored], limit: usize, cursor: MessageCursor) -> Vec<RunEvent> {
    rows[window(rows, |s| s.event.seq, limit, cursor)]
        .iter()
        .map(|s| s.event.clone())
        .collect()
}

/// Whether a message row belongs to a read of `run_id`'s rows (all runs' when `None`) in
/// `user`'s resolved scope.
fn in_selection(s: &Stored, run_id: Option<&str>, user: Option<&str>) -> bool {
    run_id.is_none_or(|r| s.event.run_id == r)
        && UserScope::admits(user, s.event.user_id.as_deref())
}

/// The page [`page`] cuts from the rows [`in_selection`] admits, copied out, found without
/// collecting the selection first: from the cursor's end of the thread, only as far as the page
/// needs. A run's page of a long thread, or a user's, then costs its rows and the others it
/// passes, not every row of the thread at every page.
fn selected_page(
    rows: &[Stored],
    run_id: Option<&str>,
    user: Option<&str>,
    limit: usize,
    cursor: MessageCursor,
) -> Vec<RunEvent> {
    let (bounds, latest) = cursor_bounds(rows, |s| s.event.seq, cursor);
    let selected = rows[bounds]
        .iter()
        .filter(|s| in_selection(s, run_id, user));
    let copy = |s: &Stored| s.event.clone();
    if latest {
        let mut page: Vec<RunEvent> = selected.rev().take(limit).map(copy).collect();
        page.reverse();
        page
    } else {
        selected.take(limit).map(copy).collect()
    }
}

impl RunEventStore for MemoryRunEventStore {
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
        self.lock().put_batch(events)
    }

    fn put_batch_records(&self, events: Vec<NewRunEvent>) -> Result<Vec<RunEvent>, RunStoreError> {
        self.lock().put_batch_records(events)
    }

    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
        self.lock().insert_numbered(events, self.planted)
    }

    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        Ok(self.lock().max_seq(thread_id))
    }

    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        Ok(self.lock().list_messages(thread_id, limit, cursor, None))
    }

    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        Ok(self.lock().count_messages(thread_id, None))
    }

    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError> {
        Ok(self.lock().list_events(
            thread_id,
            run_id,
            &EventFilter::everything(),
            None,
            Planted::none(),
        ))
    }

    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
        Ok(self.lock().dump())
    }

    fn put_if_absent(&self, event: NewRunEvent) -> Result<(RunEvent, bool), RunStoreError> {
        self.lock().put_if_absent(event, self.planted)
    }

    fn delete_by_thread(&self, thread_id: &str, user: &UserScope) -> Result<u64, RunStoreError> {
        let user = user.resolve("delete_by_thread")?;
        let mut index = self.lock();
        if self.planted.is(BugId::R23) {
            // planted R23: the legacy thread deletion dropped the thread's message rows only
            // (the projection the views read), leaving its traces, lifecycle marks and receipts:
            // the thread was never emptied, so its numbering went on.
            return Ok(index.delete_thread_messages(thread_id, user));
        }
        Ok(index.delete_by_thread(thread_id, user))
    }

    fn delete_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        user: &UserScope,
    ) -> Result<u64, RunStoreError> {
        let user = user.resolve("delete_by_run")?;
        Ok(self
            .lock()
            .delete_by_run(thread_id, run_id, user, self.planted))
    }

    fn list_messages_as(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let user = user.resolve("list_messages")?;
        let state = self.lock();
        Ok(match user {
            Some(u) if self.planted.is(BugId::R19) => {
                page(&state.legacy_shared_messages(thread_id, u), limit, cursor)
            }
            _ => state.list_messages(thread_id, limit, cursor, user),
        })
    }

    fn count_messages_as(&self, thread_id: &str, user: &UserScope) -> Result<u64, RunStoreError> {
        let user = user.resolve("count_messages")?;
        let state = self.lock();
        Ok(match user {
            Some(u) if self.planted.is(BugId::R19) => {
                state.legacy_shared_messages(thread_id, u).len() as u64
            }
            _ => state.count_messages(thread_id, user),
        })
    }

    fn list_messages_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        limit: usize,
        cursor: MessageCursor,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
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

    fn list_events_filtered(
        &self,
        thread_id: &str,
        run_id: &str,
        filter: &EventFilter,
        user: &UserScope,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let user = user.resolve("list_events")?;
        Ok(self
            .lock()
            .list_events(thread_id, run_id, filter, user, self.planted))
    }

    fn get_last_visible_ai_seq_by_run(
        &self,
        thread_id: &str,
        run_ids: &BTreeSet<String>,
        user: &UserScope,
    ) -> Result<BTreeMap<String, u64>, RunStoreError> {
        let user = user.resolve("get_last_visible_ai_seq_by_run")?;
        Ok(self
            .lock()
            .last_visible_ai_seq_by_run(thread_id, run_ids, user, self.planted))
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
            let range = window(&rows.messages, |s| s.event.seq, limit, cursor);
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
