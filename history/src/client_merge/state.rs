//! [`ClientMerge`]: what the client holds of one thread, and the list it shows.

use super::order::Arrival;
use super::{
    injected_copy_of, LiveFrame, LiveMessage, PageScope, PersistedMessage, Position, Role, Shown,
};
use crate::{BugId, Planted};
use std::collections::BTreeMap;

/// The optimistic copy of a message the user sent, shown until the server's copy is held.
#[derive(Clone, Debug)]
struct Optimistic {
    id: String,
    text: String,
    run: u32,
}

/// One message of the merged list before it is ordered.
#[derive(Clone, Debug)]
struct Entry {
    role: Role,
    text: String,
    seq: Option<u64>,
    position: Position,
    hidden: bool,
}

/// The client's merge of one open thread.
#[derive(Clone, Debug)]
pub struct ClientMerge {
    thread: String,
    planted: Planted,
    /// Every message of the pages loaded since the thread was opened, by id.
    pages: BTreeMap<String, PersistedMessage>,
    /// The oldest seq loaded in each scope: the next older page's `before_seq`.
    oldest: BTreeMap<PageScope, u64>,
    /// The live stream's state, in arrival order, one message an id.
    live: Vec<LiveMessage>,
    /// Messages a reset or a reconnect took out of the live state: rescued, still shown.
    archive: BTreeMap<String, LiveMessage>,
    /// Planted M1 only: a reset's moved messages, archived at the next event.
    deferred: Vec<LiveMessage>,
    optimistic: Vec<Optimistic>,
    /// Planted M2 only: the legacy placement by anchor.
    arrival: Arrival,
    /// Planted M5 only: the stream state a reopen restored, kept beside what pages bring and
    /// never merged with it by id.
    restored: Vec<LiveMessage>,
}

impl ClientMerge {
    /// A client with `thread` open and nothing loaded.
    pub fn new(thread: &str, planted: Planted) -> Self {
        ClientMerge {
            thread: thread.to_string(),
            planted,
            pages: BTreeMap::new(),
            oldest: BTreeMap::new(),
            live: Vec::new(),
            archive: BTreeMap::new(),
            deferred: Vec::new(),
            optimistic: Vec::new(),
            arrival: Arrival::default(),
            restored: Vec::new(),
        }
    }

    /// The thread open now.
    pub fn thread(&self) -> &str {
        &self.thread
    }

    /// Switches to `thread`: nothing of the previous one is held any more.
    pub fn open(&mut self, thread: &str) {
        *self = ClientMerge::new(thread, self.planted);
    }

    /// The client reopens `thread` (a reload, or the view mounted again): it holds nothing,
    /// then the stream restores the thread's state, `state`, in one delivery. The history
    /// pages that follow bring some of the same messages again, under the same ids.
    pub fn reopen(&mut self, thread: &str, state: Vec<LiveMessage>) {
        self.open(thread);
        if self.planted.is(BugId::M5) {
            // The legacy client kept the restored state as its own list and showed it beside
            // the loaded messages without matching ids.
            self.restored = state;
            return;
        }
        for m in state {
            self.receive(m);
        }
    }

    /// The `before_seq` cursor of the next older page of `scope`: the oldest seq loaded there
    /// (`None`: nothing loaded yet, the next page is the latest).
    pub fn cursor(&self, scope: PageScope) -> Option<u64> {
        self.oldest.get(&scope).copied()
    }

    /// A history page of `thread` in `scope` reached the client (ascending seqs).
    pub fn page(&mut self, thread: &str, scope: PageScope, rows: &[PersistedMessage]) {
        self.settle();
        if thread != self.thread {
            return;
        }
        debug_assert!(rows.windows(2).all(|w| w[0].seq < w[1].seq));
        if let Some(first) = rows.first() {
            let oldest = self.oldest.entry(scope).or_insert(first.seq);
            *oldest = (*oldest).min(first.seq);
        }
        let keys: Vec<String> = rows.iter().map(|r| self.key(&r.id).to_string()).collect();
        if self.planted.is(BugId::M6) {
            self.drop_window(&keys);
        }
        self.arrival.page(&keys);
        for row in rows {
            self.pages
                .insert(self.key(&row.id).to_string(), row.clone());
        }
    }

    /// The user sent `text`, shown at once as `id` until the server's copy of the human
    /// message of `run` is held.
    pub fn optimistic(&mut self, id: &str, text: &str, run: u32) {
        self.settle();
        self.arrival.push(id);
        self.optimistic.push(Optimistic {
            id: id.to_string(),
            text: text.to_string(),
            run,
        });
    }

    /// A frame of `thread`'s live stream reached the client.
    pub fn frame(&mut self, thread: &str, frame: LiveFrame) {
        self.settle();
        // The legacy client took every frame for the open thread's.
        if thread != self.thread && !self.planted.is(BugId::M3) {
            return;
        }
        match frame {
            LiveFrame::Message(m) => {
                if self.planted.is(BugId::M1) {
                    // The legacy client cleared its optimistic message at the first frame.
                    self.optimistic.clear();
                }
                self.receive(m);
            }
            LiveFrame::Reset { kept, summary } => self.reset(kept, summary),
            LiveFrame::Reconnect => {
                let moved = std::mem::take(&mut self.live);
                self.rescue(moved);
            }
        }
    }

    /// Planted M6: the legacy client held one page window, the last page loaded: a message
    /// of an earlier window that the live state and the archive do not hold fell out.
    fn drop_window(&mut self, window: &[String]) {
        let planted = self.planted;
        let held_live: Vec<String> = self
            .live
            .iter()
            .map(|m| key_for(planted, &m.id).to_string())
            .chain(self.archive.keys().cloned())
            .collect();
        self.pages
            .retain(|key, _| window.contains(key) || held_live.contains(key));
    }

    /// A live message, new or replacing the one of its key.
    fn receive(&mut self, m: LiveMessage) {
        let key = self.key_of(&m.id);
        if self.planted.is(BugId::M4) {
            // The legacy client replaced the held message with the frame's, which has no seq.
            self.pages.remove(&key);
        }
        self.arrival.push(&key);
        let planted = self.planted;
        match self
            .live
            .iter_mut()
            .find(|held| key_for(planted, &held.id) == key)
        {
            Some(held) => *held = m,
            None => self.live.push(m),
        }
    }

    /// Summarization: the live state becomes the kept window and its summary; what it held
    /// besides is rescued.
    fn reset(&mut self, kept: Vec<LiveMessage>, summary: LiveMessage) {
        let kept_keys: Vec<String> = kept.iter().map(|m| self.key(&m.id).to_string()).collect();
        let planted = self.planted;
        let moved: Vec<LiveMessage> = std::mem::take(&mut self.live)
            .into_iter()
            .filter(|m| !kept_keys.iter().any(|k| k == key_for(planted, &m.id)))
            .collect();
        if self.planted.is(BugId::M1) {
            // The legacy client archived in a deferred state update: one render late.
            self.deferred = moved;
        } else {
            self.rescue(moved);
        }
        for m in kept.into_iter().chain([summary]) {
            self.receive(m);
        }
    }

    fn rescue(&mut self, moved: Vec<LiveMessage>) {
        for m in moved {
            self.archive.insert(self.key(&m.id).to_string(), m);
        }
    }

    /// Commits what an earlier event left for later (planted M1's deferred archive).
    fn settle(&mut self) {
        let deferred = std::mem::take(&mut self.deferred);
        self.rescue(deferred);
    }

    /// The message a copy stands for: an injected copy is its original (the legacy client
    /// matched copies by id only).
    fn key<'a>(&self, id: &'a str) -> &'a str {
        key_for(self.planted, id)
    }

    fn key_of(&self, id: &str) -> String {
        self.key(id).to_string()
    }

    /// The list the user sees.
    pub fn view(&self) -> Vec<Shown> {
        let mut items: Vec<(String, Entry)> = self
            .entries()
            .into_iter()
            .filter(|(_, e)| !e.hidden)
            .collect();
        items.extend(self.restored.iter().map(|m| (m.id.clone(), live_entry(m))));
        items.sort_by_key(|(k, e)| order_key(e, k));
        if self.planted.is(BugId::M2) {
            let placed = self.arrival.place(items.iter().map(|(k, _)| k).collect());
            let placed: Vec<String> = placed.into_iter().cloned().collect();
            items.sort_by_key(|(k, _)| placed.iter().position(|p| p == k));
        }
        items
            .into_iter()
            .map(|(id, e)| Shown {
                id,
                role: e.role,
                text: e.text,
                seq: e.seq,
            })
            .collect()
    }

    /// Every held message by key: pages, then the archive and the live state over them (their
    /// text is the newer), then the optimistic messages whose server copy is not held.
    fn entries(&self) -> BTreeMap<String, Entry> {
        let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
        for (key, row) in &self.pages {
            let entry = Entry {
                role: row.role,
                text: row.text.clone(),
                seq: Some(row.seq),
                position: row.position,
                hidden: false,
            };
            entries.insert(key.clone(), entry);
        }
        for m in self.archive.values().chain(&self.live) {
            let entry = entries
                .entry(self.key_of(&m.id))
                .or_insert_with(|| live_entry(m));
            entry.text.clone_from(&m.text);
        }
        for o in &self.optimistic {
            if !self.server_copy_held(o, &entries) {
                let entry = Entry {
                    role: Role::Human,
                    text: o.text.clone(),
                    seq: None,
                    position: Position {
                        run: o.run,
                        step: 0,
                    },
                    hidden: false,
                };
                entries.insert(o.id.clone(), entry);
            }
        }
        entries
    }

    /// Whether the server's copy of `o` is held: the human message of its run (the legacy
    /// client matched by id only, and the server's id is never the optimistic one).
    fn server_copy_held(&self, o: &Optimistic, entries: &BTreeMap<String, Entry>) -> bool {
        if self.planted.is(BugId::M3) {
            return entries.contains_key(&o.id);
        }
        entries.values().any(|e| {
            e.role == Role::Human
                && e.position
                    == Position {
                        run: o.run,
                        step: 0,
                    }
                && !e.hidden
        })
    }
}

/// A live message as an entry of the list: no seq told.
fn live_entry(m: &LiveMessage) -> Entry {
    Entry {
        role: m.role,
        text: m.text.clone(),
        seq: None,
        position: m.position,
        hidden: m.hidden,
    }
}

/// The key of `id` under `planted` ([`ClientMerge::key`]).
fn key_for(planted: Planted, id: &str) -> &str {
    if planted.is(BugId::M3) {
        return id;
    }
    injected_copy_of(id).unwrap_or(id)
}

/// Persisted messages by seq, then the live tail by run and step.
fn order_key(e: &Entry, key: &str) -> (bool, u64, Position, String) {
    match e.seq {
        Some(seq) => (false, seq, e.position, key.to_string()),
        None => (true, 0, e.position, key.to_string()),
    }
}
