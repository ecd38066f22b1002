//! The rows of the in-memory store: a stored row with its write number, and one thread's rows
//! split into messages and the rest, each sorted by (seq, write order).

use crate::runs::event::{Category, RunEvent};

/// A stored row with its global write number (the tie-break between equal seqs, which only a
/// missing unique guard can produce: R5).
#[derive(Clone, Debug)]
pub(super) struct Stored {
    pub(super) write_no: u64,
    pub(super) event: RunEvent,
}

#[derive(Default, Debug)]
pub(super) struct ThreadRows {
    pub(super) messages: Vec<Stored>,
    pub(super) others: Vec<Stored>,
    /// The high-water mark: `delete_by_run` leaves it (R13).
    pub(super) max_seq: u64,
}

impl ThreadRows {
    pub(super) fn insert(&mut self, write_no: u64, event: RunEvent) {
        self.max_seq = self.max_seq.max(event.seq);
        let rows = if event.category == Category::Message {
            &mut self.messages
        } else {
            &mut self.others
        };
        // Appending is the common case; the search only matters for equal seqs (no guard, R5).
        let at = rows.partition_point(|s| s.event.seq <= event.seq);
        let seq = event.seq;
        rows.insert(at, Stored { write_no, event });
        // Post-condition: the rows stay sorted by (seq, write order) around the new one.
        debug_assert!(at == 0 || rows[at - 1].event.seq <= seq);
        debug_assert!(rows.get(at + 1).is_none_or(|next| next.event.seq > seq));
        debug_assert!(self.max_seq >= seq);
    }

    /// All rows merged back into (seq, write order).
    pub(super) fn merged(&self) -> Vec<&Stored> {
        let mut all: Vec<&Stored> = self.messages.iter().chain(self.others.iter()).collect();
        all.sort_by_key(|s| (s.event.seq, s.write_no));
        all
    }

    /// Removes the rows `doomed` selects; returns how many.
    pub(super) fn remove(&mut self, doomed: impl Fn(&RunEvent) -> bool) -> u64 {
        let before = self.messages.len() + self.others.len();
        self.messages.retain(|s| !doomed(&s.event));
        self.others.retain(|s| !doomed(&s.event));
        (before - self.messages.len() - self.others.len()) as u64
    }

    pub(super) fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.others.is_empty()
    }
}
