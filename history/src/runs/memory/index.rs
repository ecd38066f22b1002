//! The in-memory index: every operation of the memory store on rows it holds, with no lock of
//! its own.

use std::collections::{BTreeMap, BTreeSet};

use super::pages::{in_selection, page, selected_page, window};
use super::rows::{Stored, ThreadRows};
use crate::planted::{BugId, Planted};
use crate::runs::current::{is_visible_ai, VISIBLE_AI_EVENT_TYPES};
use crate::runs::error::RunStoreError;
use crate::runs::event::{
    check_room, Category, MessageCursor, NewRunEvent, RunEvent, AI_TOOL_CALL,
};
use crate::runs::fence::Fences;
use crate::runs::invariants::{debug_assert_seqs_follow, is_page};
use crate::runs::query::{EventFilter, UserScope};

/// The in-memory index every operation of the memory store runs on, with no lock of its own:
/// `pub(crate)` so that another backend keeping the same rows in memory (the JSONL store's
/// index of its files) answers through exactly this logic.
#[derive(Default, Debug)]
pub(crate) struct MemoryIndex {
    pub(super) threads: BTreeMap<String, ThreadRows>,
    writes: u64,
    /// The runs each thread's deletions fenced (R28).
    fences: Fences,
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
        self.fences
            .admit(events.iter().map(|e| (&*e.thread_id, &*e.run_id)))?;
        check_room(&events, |t| Ok(self.max_seq(t)))?;
        // What the post-condition compares with, gathered in debug builds only.
        let (prior, threads): (BTreeMap<String, u64>, Vec<String>) = if cfg!(debug_assertions) {
            let prior = events
                .iter()
                .map(|e| (e.thread_id.clone(), self.max_seq_of(&e.thread_id)))
                .collect();
            (prior, events.iter().map(|e| e.thread_id.clone()).collect())
        } else {
            Default::default()
        };
        let mut seqs = Vec::with_capacity(events.len());
        for e in events {
            let seq = self.max_seq_of(&e.thread_id) + 1;
            self.append(e.with_seq(seq));
            seqs.push(seq);
        }
        debug_assert_seqs_follow(&threads, &seqs, &prior);
        Ok(seqs)
    }

    /// [`MemoryIndex::put_batch`] returning the stored records.
    pub(crate) fn put_batch_records(
        &mut self,
        events: Vec<NewRunEvent>,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let seqs = self.put_batch(events.clone())?;
        // Post-condition: one seq an event.
        debug_assert_eq!(seqs.len(), events.len());
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
        // Check the whole batch first, so a conflict or a fenced run writes nothing.
        self.fences
            .admit(events.iter().map(|e| (&*e.thread_id, &*e.run_id)))?;
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
        let maxima: Vec<(String, u64)> = (max_by_thread.into_iter())
            .map(|(t, max)| (t.to_string(), max))
            .collect();
        let (written, before) = (events.len(), self.rows_held());
        for e in events {
            self.append(e);
        }
        // Post-condition: the whole batch went in, and each thread's mark covers its rows.
        debug_assert_eq!(self.rows_held(), before + written);
        debug_assert!(maxima.iter().all(|(t, max)| self.max_seq_of(t) >= *max));
        Ok(())
    }

    /// How many rows the index holds, every thread's.
    fn rows_held(&self) -> usize {
        (self.threads.values())
            .map(|t| t.messages.len() + t.others.len())
            .sum()
    }

    /// Writes `event` unless its run has an event of its type; see the trait.
    pub(crate) fn put_if_absent(
        &mut self,
        event: NewRunEvent,
        planted: Planted,
    ) -> Result<(RunEvent, bool), RunStoreError> {
        event.validate()?;
        self.fences.admit([(&*event.thread_id, &*event.run_id)])?;
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
            Some(existing) => {
                // Post-condition: what was there is of the same type (and run, but with R14).
                debug_assert!(
                    existing.event_type == event.event_type
                        && (any_run || existing.run_id == event.run_id)
                );
                Ok((existing, false))
            }
            None => {
                let mut records = self.put_batch_records(vec![event])?;
                // Post-condition: the one written record is the thread's newest.
                debug_assert!(
                    records.len() == 1 && self.max_seq_of(&records[0].thread_id) == records[0].seq
                );
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
        debug_assert!(self.max_seq_of(thread_id) >= seq);
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
            let page: Vec<RunEvent> = rows.messages[range]
                .iter()
                .map(|s| s.event.clone())
                .collect();
            debug_assert!(is_page(&page, limit));
            return page;
        }
        selected_page(self.message_rows(thread_id), None, user, limit, cursor)
    }

    /// planted R19: the legacy scoped read took rows without a user (legacy runs, background
    /// writers) for everybody's, so `user`'s reads showed and counted them too.
    pub(super) fn legacy_shared_messages<'a>(
        &'a self,
        thread_id: &str,
        user: &str,
    ) -> Vec<&'a Stored> {
        self.threads.get(thread_id).map_or_else(Vec::new, |rows| {
            rows.messages
                .iter()
                .filter(|s| s.event.user_id.as_deref().is_none_or(|u| u == user))
                .collect()
        })
    }

    pub(crate) fn count_messages(&self, thread_id: &str, user: Option<&str>) -> u64 {
        let count = match user {
            None => self
                .threads
                .get(thread_id)
                .map_or(0, |t| t.messages.len() as u64),
            Some(_) => self.messages_of(thread_id, None, user).count() as u64,
        };
        // Post-condition: a user's messages are among the thread's.
        debug_assert!(count <= self.message_rows(thread_id).len() as u64);
        count
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
        let rows = selected_page(
            self.message_rows(thread_id),
            Some(run_id),
            user,
            limit,
            cursor,
        );
        debug_assert!(rows
            .iter()
            .all(|e| e.run_id == run_id && e.thread_id == thread_id));
        rows
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
            // issue #3779); and it matched a task by its text, the number 5 for `"5"`.
            return of_run
                .filter(|e| filter.after_seq.is_none_or(|after| e.seq > after))
                .take(filter.limit)
                .filter(|e| filter.admits_by_text(e))
                .cloned()
                .collect();
        }
        let rows: Vec<RunEvent> = of_run
            .filter(|e| filter.admits(e))
            .take(filter.limit)
            .cloned()
            .collect();
        debug_assert!(is_page(&rows, filter.limit) && rows.iter().all(|e| filter.admits(e)));
        rows
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
        debug_assert!(last.keys().all(|r| run_ids.contains(r)));
        last
    }

    /// Deletes the thread's rows in scope and fences the runs they held (R28: unless `planted`
    /// says the legacy deletion took no fence); a thread left empty is forgotten, so its
    /// numbering restarts at 1. Returns how many rows went, and the runs fenced now.
    pub(crate) fn delete_by_thread(
        &mut self,
        thread_id: &str,
        user: Option<&str>,
        planted: Planted,
    ) -> (u64, BTreeSet<String>) {
        let runs = self.fence_scope(thread_id, user, planted);
        let Some(rows) = self.threads.get_mut(thread_id) else {
            return (0, runs);
        };
        let removed = rows.remove(|e| UserScope::admits(user, e.user_id.as_deref()));
        if rows.is_empty() {
            self.threads.remove(thread_id);
        }
        // Post-condition: no row of the thread in scope is left.
        debug_assert!(self.threads.get(thread_id).is_none_or(|rows| rows
            .merged()
            .iter()
            .all(|s| !UserScope::admits(user, s.event.user_id.as_deref()))));
        (removed, runs)
    }

    /// Fences the runs of the thread's rows in `user`'s scope, which a thread deletion is about
    /// to remove (unless planted R28: the legacy deletion took no fence, so a writer admitted
    /// before it, or one carrying a run of the deleted thread, committed rows afterwards).
    /// Returns the runs fenced.
    pub(crate) fn fence_scope(
        &mut self,
        thread_id: &str,
        user: Option<&str>,
        planted: Planted,
    ) -> BTreeSet<String> {
        let Some(rows) = self
            .threads
            .get(thread_id)
            .filter(|_| !planted.is(BugId::R28))
        else {
            return BTreeSet::new();
        };
        let runs: BTreeSet<String> = (rows.merged().into_iter())
            .filter(|s| UserScope::admits(user, s.event.user_id.as_deref()))
            .map(|s| s.event.run_id.clone())
            .collect();
        self.fence(thread_id, &runs);
        runs
    }

    /// Fences `runs` of the thread: later writes carrying one of them are refused (R28).
    pub(crate) fn fence(&mut self, thread_id: &str, runs: &BTreeSet<String>) {
        self.fences
            .fence(thread_id, runs.iter().map(String::as_str));
        debug_assert!(runs.iter().all(|r| self.fences.fenced(thread_id, r)));
    }

    /// The legacy thread deletion of planted R23: the thread's message rows in scope only.
    pub(super) fn delete_thread_messages(&mut self, thread_id: &str, user: Option<&str>) -> u64 {
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
        let mark = rows.max_seq;
        let removed = rows.remove(|e| {
            e.run_id == run_id
                && UserScope::admits(user, e.user_id.as_deref())
                && (!messages_only || e.category == Category::Message)
        });
        if planted.is(BugId::R13) {
            // planted R13: the legacy store numbered from the largest REMAINING seq, so the
            // deleted run's numbers (and message ids) went to the next rows.
            rows.max_seq = rows.merged().last().map_or(0, |s| s.event.seq);
        } else {
            // Post-condition: the thread's high-water mark stays (R13).
            debug_assert_eq!(rows.max_seq, mark, "a deletion moved the high-water mark");
        }
        removed
    }

    pub(crate) fn dump(&self) -> Vec<RunEvent> {
        let rows: Vec<RunEvent> = (self.threads.values())
            .flat_map(|t| t.merged().into_iter().map(|s| s.event.clone()))
            .collect();
        // Post-condition: every row, none twice.
        debug_assert_eq!(rows.len(), self.rows_held());
        rows
    }
}
