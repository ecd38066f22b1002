//! The server side of the world: each thread's persisted messages with their seqs, runs and
//! steps, and the `before_seq` pages it answers. What the client merge is fed from.

use history::client_merge::{LiveMessage, PersistedMessage, Position, Role};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
struct Thread {
    rows: Vec<PersistedMessage>,
    /// Messages written in each run so far (the next one's step).
    runs: Vec<u32>,
}

/// Every thread's persisted messages.
#[derive(Debug, Default)]
pub struct Server {
    threads: BTreeMap<String, Thread>,
}

impl Server {
    /// Starts a run on `thread`; its index.
    pub fn start_run(&mut self, thread: &str) -> u32 {
        let t = self.threads.entry(thread.to_string()).or_default();
        t.runs.push(0);
        t.runs.len() as u32 - 1
    }

    /// The newest run of `thread`, if it has one.
    pub fn newest_run(&self, thread: &str) -> Option<u32> {
        let runs = self.threads.get(thread)?.runs.len() as u32;
        runs.checked_sub(1)
    }

    /// Persists a message in the newest run of `thread` (a run started if it has none).
    pub fn persist(&mut self, thread: &str, id: &str, role: Role, text: &str) -> PersistedMessage {
        if self.newest_run(thread).is_none() {
            self.start_run(thread);
        }
        let t = self.threads.get_mut(thread).expect("a run was started");
        let run = t.runs.len() as u32 - 1;
        let step = t.runs[run as usize];
        t.runs[run as usize] += 1;
        let row = PersistedMessage {
            id: id.to_string(),
            seq: t.rows.len() as u64 + 1,
            role,
            text: text.to_string(),
            position: Position { run, step },
        };
        t.rows.push(row.clone());
        row
    }

    /// The messages of `thread`, of run `run` only when given, in seq order.
    pub fn rows(&self, thread: &str, run: Option<u32>) -> Vec<&PersistedMessage> {
        self.threads.get(thread).map_or_else(Vec::new, |t| {
            t.rows
                .iter()
                .filter(|r| run.is_none_or(|run| r.position.run == run))
                .collect()
        })
    }

    /// A `before_seq` page: the latest `limit` rows (of run `run`) below `before`.
    pub fn page(
        &self,
        thread: &str,
        run: Option<u32>,
        before: Option<u64>,
        limit: usize,
    ) -> Vec<PersistedMessage> {
        let below: Vec<&PersistedMessage> = self
            .rows(thread, run)
            .into_iter()
            .filter(|r| before.is_none_or(|b| r.seq < b))
            .collect();
        let from = below.len().saturating_sub(limit);
        below[from..].iter().map(|r| (*r).clone()).collect()
    }
}

/// A persisted message as the live stream shows it.
pub fn live(row: &PersistedMessage) -> LiveMessage {
    LiveMessage {
        id: row.id.clone(),
        role: row.role,
        text: row.text.clone(),
        position: row.position,
        hidden: false,
    }
}
