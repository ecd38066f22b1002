//! The list a chat client must show while it merges the live stream, the history pages it
//! loaded and summarization's resets (catalog M1 to M6, docs/catalog.md).
//!
//! Ground truth is what the server persisted ([`Truth`]: each thread's messages with their
//! seqs, runs and steps) and which messages reached the client since it opened the thread
//! ([`Expected`]: through a page, which tells the seq, or live, in any copy). The rule: the
//! thread's messages the client has, each once, those whose seq a page told in seq order, then
//! the others in run then step order; nothing of another thread. A copy (the optimistic one,
//! an injected one) is the message it copies: the caller names the message, never the copy.

use std::collections::BTreeMap;

/// A message, named by the id the server persisted it under.
pub type Key = String;

/// One persisted message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Persisted {
    pub key: Key,
    pub seq: u64,
    pub run: u32,
    pub step: u32,
}

/// What the server persisted, thread by thread; seqs count from 1 in each thread.
#[derive(Clone, Debug, Default)]
pub struct Truth {
    threads: BTreeMap<String, Vec<Persisted>>,
}

impl Truth {
    /// Persists `key` in `thread` at `run` and `step`; its seq.
    pub fn persist(&mut self, thread: &str, key: &str, run: u32, step: u32) -> u64 {
        let rows = self.threads.entry(thread.to_string()).or_default();
        let seq = rows.len() as u64 + 1;
        rows.push(Persisted {
            key: key.to_string(),
            seq,
            run,
            step,
        });
        seq
    }

    /// The page a `before_seq` read answers: the latest `limit` messages of `thread` (of run
    /// `run` only, when given) below `before`, in ascending seq.
    pub fn page(
        &self,
        thread: &str,
        run: Option<u32>,
        before: Option<u64>,
        limit: usize,
    ) -> Vec<Persisted> {
        let rows = self.threads.get(thread).map_or(&[][..], |r| &r[..]);
        let matching: Vec<&Persisted> = rows
            .iter()
            .filter(|r| run.is_none_or(|run| r.run == run))
            .filter(|r| before.is_none_or(|b| r.seq < b))
            .collect();
        let from = matching.len().saturating_sub(limit);
        matching[from..].iter().map(|r| (*r).clone()).collect()
    }

    /// The persisted message `key` of `thread`.
    pub fn get(&self, thread: &str, key: &str) -> Option<&Persisted> {
        self.threads.get(thread)?.iter().find(|r| r.key == key)
    }

    /// The thread that persisted `key`.
    pub fn thread_of(&self, key: &str) -> Option<&str> {
        self.threads
            .iter()
            .find(|(_, rows)| rows.iter().any(|r| r.key == key))
            .map(|(t, _)| t.as_str())
    }
}

/// What the client holds of the thread open: the messages it has and what it knows of them.
#[derive(Clone, Debug, Default)]
pub struct Expected {
    thread: String,
    /// Each message it has: the seq a page told (if one did), its run and step.
    held: BTreeMap<Key, (Option<u64>, u32, u32)>,
}

impl Expected {
    pub fn new(thread: &str) -> Self {
        Expected {
            thread: thread.to_string(),
            held: BTreeMap::new(),
        }
    }

    /// The thread open now.
    pub fn thread(&self) -> &str {
        &self.thread
    }

    /// The client switched to `thread`: it holds nothing yet.
    pub fn open(&mut self, thread: &str) {
        *self = Expected::new(thread);
    }

    /// A copy of `key` (of the open thread) reached the client live.
    pub fn received(&mut self, key: &str, run: u32, step: u32) {
        self.held
            .entry(key.to_string())
            .or_insert((None, run, step));
    }

    /// A page brought `row` of the open thread.
    pub fn loaded(&mut self, row: &Persisted) {
        self.held
            .insert(row.key.clone(), (Some(row.seq), row.run, row.step));
    }

    /// Whether the client has `key`.
    pub fn holds(&self, key: &str) -> bool {
        self.held.contains_key(key)
    }

    /// The messages a page delivered, with the seq it told: the client must show each with
    /// that seq, and never lose one.
    pub fn paged(&self) -> BTreeMap<Key, u64> {
        self.held
            .iter()
            .filter_map(|(key, (seq, _, _))| seq.map(|seq| (key.clone(), seq)))
            .collect()
    }

    /// The list the client must show.
    pub fn view(&self) -> Vec<Key> {
        let mut told: Vec<(u64, &Key)> = Vec::new();
        let mut tail: Vec<((u32, u32), &Key)> = Vec::new();
        for (key, (seq, run, step)) in &self.held {
            match seq {
                Some(seq) => told.push((*seq, key)),
                None => tail.push(((*run, *step), key)),
            }
        }
        told.sort();
        tail.sort();
        told.into_iter()
            .map(|(_, k)| k.clone())
            .chain(tail.into_iter().map(|(_, k)| k.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_the_latest_below_the_cursor() {
        let mut t = Truth::default();
        for (k, key) in ["a", "b", "c", "d"].iter().enumerate() {
            t.persist("t", key, (k / 2) as u32, (k % 2) as u32);
        }
        let keys = |p: Vec<Persisted>| p.into_iter().map(|r| r.key).collect::<Vec<_>>();
        assert_eq!(keys(t.page("t", None, None, 2)), ["c", "d"]);
        assert_eq!(keys(t.page("t", None, Some(3), 5)), ["a", "b"]);
        assert_eq!(keys(t.page("t", Some(1), None, 1)), ["d"]);
        assert!(t.page("u", None, None, 3).is_empty());
        assert_eq!(t.thread_of("c"), Some("t"));
    }

    #[test]
    fn the_view_is_told_seqs_then_the_tail_by_run_and_step() {
        let mut t = Truth::default();
        t.persist("t", "a", 0, 0);
        let b = t.persist("t", "b", 0, 1);
        let mut e = Expected::new("t");
        e.received("c", 1, 0);
        e.received("a", 0, 0);
        e.loaded(&Persisted {
            key: "b".into(),
            seq: b,
            run: 0,
            step: 1,
        });
        assert_eq!(e.view(), ["b", "a", "c"]);
        e.open("u");
        assert!(e.view().is_empty());
    }
}
