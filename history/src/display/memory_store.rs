//! The in-memory display-event store: a vector of rows with a per-thread index.
//!
//! The reference backend for tests and the simulation; it answers exactly as the SQLite store.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use super::envelope::{self, AdmissionError, Envelope, KeptEnvelope};
use super::family::Family;
use super::store::{
    ascending_once, display_store_methods, in_insertion_order, numbered_from_one, Admission,
    DisplayEventStore, StoreError, StoreOptions, StoredRow,
};
use super::USER_AGENT_CLASS;
use crate::Planted;

/// The in-memory store. Methods take `&self` (a mutex inside) so it can be shared like SQLite.
#[derive(Debug)]
pub struct MemoryDisplayStore {
    planted: Planted,
    display_event_type: String,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    rows: Vec<Indexed>,
    /// thread_id -> positions in `rows`, ascending.
    by_thread: BTreeMap<String, Vec<usize>>,
    quarantine: Vec<StoredRow>,
    /// Per distinct bytes, the position in `rows` of the first row stored with them. Every
    /// replica stores its own copy of a delivery (P4), so a row mostly arrives several times; a
    /// copy shares the first one's bytes and kept envelope instead of being read again. Only
    /// looked up, never iterated; the hasher (xxh3: a row is hundreds of bytes) has fixed keys.
    first_with_bytes: HashMap<Arc<[u8]>, usize, crate::fixed_hash::FixedState>,
}

/// A stored row with the fields the thread query reads, and its envelope, read once here so
/// that the projector does not parse the row again at every read.
#[derive(Debug)]
struct Indexed {
    seq: u64,
    /// Where this row stands in its thread's list of positions (`by_thread`).
    thread_slot: usize,
    /// The `thread_slot` of the first row stored with these bytes (its own if it is that row):
    /// the one whose kept envelope this row shares (copies have equal bytes, so one thread).
    first_slot: usize,
    bytes: Arc<[u8]>,
    kept: Arc<KeptEnvelope>,
    event_is_display: bool,
    from_user_agent: bool,
}

impl Indexed {
    fn row(&self) -> StoredRow {
        StoredRow {
            seq: self.seq,
            bytes: self.bytes.clone(),
            kept: Some(self.kept.clone()),
        }
    }
    fn display_id(&self) -> &str {
        // Admission requires a string display_id, and the kept envelope reads it as admission did.
        self.kept
            .str_field(envelope::DISPLAY_ID)
            .unwrap_or_default()
    }
    fn parents(&self) -> &[Cow<'static, str>] {
        self.kept.parents()
    }
}

impl MemoryDisplayStore {
    /// An empty store. `planted` switches the legacy substring membership (P7) of the queries.
    pub fn new(planted: Planted) -> Self {
        Self::with_options(StoreOptions::planted(planted))
    }

    /// An empty store reading rows as `options` says.
    pub fn with_options(options: StoreOptions) -> Self {
        MemoryDisplayStore {
            planted: options.planted,
            display_event_type: options.display_event_type,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The display of each marker row of the thread (a `UserAgent` row of a user-turn family),
    /// in insertion order, repeats included.
    fn marked_displays<'s>(
        &'s self,
        inner: &'s Inner,
        thread_id: &str,
    ) -> impl Iterator<Item = &'s str> + 's {
        (inner.thread_rows(thread_id))
            .filter(|r| r.from_user_agent && Family::marks_visible(r.parents(), self.planted))
            .map(Indexed::display_id)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves the vectors consistent (every mutation
        // is a single push), so a poisoned lock is still safe to use.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl DisplayEventStore for MemoryDisplayStore {
    display_store_methods! {
        fn append(&self, row) {
            let mut inner = self.lock();
            if let Some(&first) = inner.first_with_bytes.get(row) {
                #[cfg(feature = "planted")]
                if self.planted.is(crate::BugId::P15) {
                    // planted P15: the legacy table had a unique index on the row, so every copy
                    // after the first (each replica persists every delivery) failed its insert.
                    return Err(StoreError::LegacyDuplicate);
                }
                inner.push_copy_of(first);
                // Post-condition: the copy is the newest row, numbered next, with the bytes given.
                debug_assert!(inner
                    .rows
                    .last()
                    .is_some_and(|r| { r.seq == inner.rows.len() as u64 && *r.bytes == *row }));
                return Ok(Admission::Stored);
            }
            let bytes: Arc<[u8]> = Arc::from(row);
            let admitted = Envelope::parse(row)
                .map_err(AdmissionError::Object)
                .and_then(|env| env.admissible_fields());
            let fields = match admitted {
                Ok(admitted) => admitted,
                Err(reason) => {
                    let seq = inner.quarantine.len() as u64 + 1;
                    inner.quarantine.push(StoredRow::new(seq, bytes));
                    debug_assert!(
                        !inner.first_with_bytes.contains_key(row),
                        "quarantined bytes are never those of a stored row"
                    );
                    return Ok(Admission::Quarantined {
                        reason: reason.to_string(),
                    });
                }
            };
            let indexed = |index: usize| {
                fields
                    .str_field(index)
                    .expect("an admissible row has its indexed strings")
            };
            let position = inner.rows.len();
            // Persistence indexes a row under its thread's canonical id (P16).
            let thread_id = super::thread_id::canonical_thread_id(indexed(envelope::THREAD_ID));
            let thread_slot = inner.index(&thread_id, position);
            inner.first_with_bytes.insert(bytes.clone(), position);
            inner.rows.push(Indexed {
                seq: position as u64 + 1,
                thread_slot,
                first_slot: thread_slot,
                bytes,
                kept: Arc::new(KeptEnvelope::of(&fields, self.planted)),
                event_is_display: indexed(envelope::EVENT_TYPE) == self.display_event_type,
                from_user_agent: indexed(envelope::AGENT_CLASS) == USER_AGENT_CLASS,
            });
            // Post-condition: a new row is the first with its bytes, and its kept envelope reads
            // the thread it is filed under.
            debug_assert!(inner.rows.last().is_some_and(|r| {
                r.first_slot == r.thread_slot
                    && inner.by_thread[&*thread_id][r.thread_slot] == position
            }));
            Ok(Admission::Stored)
        }

        fn visible_displays(&self, thread_id) {
            let inner = self.lock();
            let displays: BTreeSet<&str> = self.marked_displays(&inner, thread_id).collect();
            let displays: Vec<String> = displays.into_iter().map(str::to_owned).collect();
            debug_assert!(ascending_once(&displays));
            Ok(displays)
        }

        fn rows_on_displays(&self, thread_id, display_ids) {
            let inner = self.lock();
            let wanted: BTreeSet<&str> = display_ids.iter().map(String::as_str).collect();
            // Whether a row is wanted depends on its kept envelope only, which copies share: each
            // first row is asked once (by its slot in the thread; `None` until asked), and most
            // rows are copies (every replica stores its own copy of a delivery).
            let thread_len = inner.by_thread.get(thread_id).map_or(0, Vec::len);
            let mut first_wanted: Vec<Option<bool>> = vec![None; thread_len];
            let rows: Vec<StoredRow> = inner
                .thread_rows(thread_id)
                .filter(|r| {
                    *first_wanted[r.first_slot].get_or_insert_with(|| {
                        wanted.contains(r.display_id())
                            && Family::of_parents(r.parents(), self.planted).is_some()
                    })
                })
                .map(Indexed::row)
                .collect();
            // Post-condition: each row once, in insertion order, on a display asked for.
            debug_assert!(in_insertion_order(&rows));
            debug_assert!(rows.iter().all(|r| r
                .kept
                .as_ref()
                .and_then(|k| k.str_field(envelope::DISPLAY_ID))
                .is_some_and(|d| wanted.contains(d))));
            Ok(rows)
        }

        fn thread_displays(&self, thread_id) {
            let inner = self.lock();
            let displays: BTreeSet<&str> = inner
                .thread_rows(thread_id)
                .map(Indexed::display_id)
                .collect();
            let displays: Vec<String> = displays.into_iter().map(str::to_owned).collect();
            // Post-condition: the thread's visible displays are among its displays.
            debug_assert!(self
                .marked_displays(&inner, thread_id)
                .all(|v| displays.iter().any(|d| d == v)));
            Ok(displays)
        }

        fn row_count(&self) {
            Ok(self.lock().rows.len() as u64)
        }

        fn quarantined(&self) {
            let quarantined = self.lock().quarantine.clone();
            debug_assert!(numbered_from_one(&quarantined));
            Ok(quarantined)
        }

        fn rows(&self) {
            let rows: Vec<StoredRow> = self.lock().rows.iter().map(Indexed::row).collect();
            debug_assert!(numbered_from_one(&rows));
            Ok(rows)
        }
    }
}

impl Inner {
    /// Files the row at `position` under its thread; its slot in the thread's list.
    fn index(&mut self, thread_id: &str, position: usize) -> usize {
        debug_assert_eq!(position, self.rows.len(), "the row filed is the next one");
        match self.by_thread.get_mut(thread_id) {
            Some(positions) => {
                // Pre-condition: a thread's positions ascend, so its rows read in insertion
                // order.
                debug_assert!(positions.last().is_none_or(|&last| last < position));
                positions.push(position);
                positions.len() - 1
            }
            None => {
                self.by_thread.insert(thread_id.to_owned(), vec![position]);
                0
            }
        }
    }

    /// Stores another copy of the row at `first`: equal bytes are admitted and indexed alike.
    fn push_copy_of(&mut self, first: usize) {
        let original = &self.rows[first];
        let mut copy = Indexed {
            seq: self.rows.len() as u64 + 1,
            thread_slot: 0,
            first_slot: original.thread_slot,
            bytes: original.bytes.clone(),
            kept: original.kept.clone(),
            event_is_display: original.event_is_display,
            from_user_agent: original.from_user_agent,
        };
        let kept = copy.kept.clone();
        // Admission required a string thread_id, and the kept envelope reads it as admission did.
        let raw = kept.str_field(envelope::THREAD_ID).unwrap_or_default();
        let thread_id = super::thread_id::canonical_thread_id(raw);
        let position = self.rows.len();
        copy.thread_slot = self.index(&thread_id, position);
        debug_assert_eq!(
            self.by_thread[&*thread_id][copy.first_slot], first,
            "a copy's first row is in its thread's list at its slot"
        );
        self.rows.push(copy);
    }

    /// The thread's display-event rows in insertion order.
    fn thread_rows<'s>(&'s self, thread_id: &str) -> impl Iterator<Item = &'s Indexed> + 's {
        self.by_thread
            .get(thread_id)
            .into_iter()
            .flatten()
            .map(|&i| &self.rows[i])
            .filter(|r| r.event_is_display)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(event_id: &str) -> Vec<u8> {
        serde_json::json!({
            "agent_class": "UserAgent", "agent_id": "u1", "thread_id": "t1",
            "display_id": "d1", "run_id": "r1", "event_type": super::super::DISPLAY_EVENT,
            "event_name": "UserMessageEvent", "event_id": event_id,
            "event_parents": ["UserMessageEvent"],
            "event_data": {"created_at": 1, "messages": []}
        })
        .to_string()
        .into_bytes()
    }

    fn row_on(thread: &str, display: &str, event_id: &str) -> Vec<u8> {
        let mut value: serde_json::Value = serde_json::from_slice(&row(event_id)).unwrap();
        value["thread_id"] = thread.into();
        value["display_id"] = display.into();
        value.to_string().into_bytes()
    }

    /// Copies interleaved over two threads and two displays: each copy is answered as its
    /// first row is, by its own seq.
    #[test]
    fn copies_are_answered_as_their_first_rows_on_every_thread() {
        let store = MemoryDisplayStore::new(Planted::none());
        let appended = [
            row_on("t2", "d1", "e0"),
            row_on("t1", "d2", "e1"),
            row_on("t1", "d1", "e2"),
            row_on("t2", "d1", "e0"),
            row_on("t1", "d2", "e1"),
            row_on("t1", "d1", "e2"),
            row_on("t1", "d1", "e3"),
            row_on("t2", "d1", "e0"),
            row_on("t1", "d1", "e2"),
        ];
        for bytes in &appended {
            assert_eq!(store.append(bytes).unwrap(), Admission::Stored);
        }
        let seqs = |thread: &str, displays: &[&str]| -> Vec<u64> {
            let displays: Vec<String> = displays.iter().map(|d| d.to_string()).collect();
            let rows = store.rows_on_displays(thread, &displays).unwrap();
            for r in &rows {
                assert_eq!(&*r.bytes, &appended[r.seq as usize - 1][..]);
            }
            rows.iter().map(|r| r.seq).collect()
        };
        assert_eq!(seqs("t1", &["d1"]), [3, 6, 7, 9]);
        assert_eq!(seqs("t1", &["d2"]), [2, 5]);
        assert_eq!(seqs("t1", &["d1", "d2"]), [2, 3, 5, 6, 7, 9]);
        assert_eq!(seqs("t2", &["d1"]), [1, 4, 8]);
        assert_eq!(seqs("t2", &["d2"]), Vec::<u64>::new());
        assert_eq!(seqs("t3", &["d1"]), Vec::<u64>::new());
    }

    #[test]
    fn copies_of_a_row_are_rows_of_their_own_sharing_one_read() {
        let store = MemoryDisplayStore::new(Planted::none());
        for bytes in [row("e1"), row("e2"), row("e1"), row("e1")] {
            assert_eq!(store.append(&bytes).unwrap(), Admission::Stored);
        }
        let rows = store.rows_on_displays("t1", &["d1".to_string()]).unwrap();
        assert_eq!(rows.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(rows[2], StoredRow::new(3, Arc::from(row("e1"))));
        let kept = |i: usize| rows[i].kept.clone().unwrap();
        assert!(Arc::ptr_eq(&kept(0), &kept(2)) && Arc::ptr_eq(&kept(0), &kept(3)));
        assert!(Arc::ptr_eq(&rows[0].bytes, &rows[3].bytes));
        assert!(!Arc::ptr_eq(&kept(0), &kept(1)));
        assert_eq!(store.visible_displays("t1").unwrap(), ["d1"]);
        assert_eq!(store.row_count().unwrap(), 4);
    }
}
