//! The checkpointer: per-thread agent state (messages plus title and other fields), newest last.
//!
//! The checkpoint's message list is working state, not history: summarization rewrites it in
//! place (R1). History is read from the run-event store; only the other fields come from here.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::ChatMessage;

/// One saved state of a thread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The agent's working message list (summarization may have replaced its head).
    pub messages: Vec<ChatMessage>,
    pub title: Option<String>,
    /// Every other channel (artifacts, todos, thread data), kept as the agent wrote it.
    pub extra: BTreeMap<String, Value>,
}

/// An in-memory checkpointer keeping every checkpoint of every thread.
#[derive(Debug, Default)]
pub struct Checkpointer {
    threads: Mutex<BTreeMap<String, Vec<Checkpoint>>>,
}

impl Checkpointer {
    pub fn new() -> Checkpointer {
        Checkpointer::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Vec<Checkpoint>>> {
        // Each operation is a single push or clone, so a poisoned lock still guards whole data.
        self.threads.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of the newest checkpoint of a thread.
    pub fn latest(&self, thread_id: &str) -> Option<Checkpoint> {
        self.lock().get(thread_id).and_then(|v| v.last().cloned())
    }

    /// Saves a new newest checkpoint.
    pub fn put(&self, thread_id: &str, checkpoint: Checkpoint) {
        self.lock()
            .entry(thread_id.to_string())
            .or_default()
            .push(checkpoint);
    }

    /// Forgets every checkpoint of a thread (a thread's deletion); whether it had any.
    pub fn delete(&self, thread_id: &str) -> bool {
        self.lock().remove(thread_id).is_some()
    }

    /// How many checkpoints a thread has.
    pub fn versions(&self, thread_id: &str) -> usize {
        self.lock().get(thread_id).map_or(0, Vec::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_is_the_last_put_and_a_copy() {
        let c = Checkpointer::new();
        assert_eq!(c.latest("t"), None);
        let mut cp = Checkpoint {
            messages: vec![ChatMessage::human("a")],
            ..Checkpoint::default()
        };
        c.put("t", cp.clone());
        cp.title = Some("second".into());
        c.put("t", cp.clone());
        let mut got = c.latest("t").unwrap();
        assert_eq!(got, cp);
        got.messages.clear();
        assert_eq!(c.latest("t").unwrap().messages.len(), 1);
        assert_eq!(c.versions("t"), 2);
    }
}
