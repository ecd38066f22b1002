//! `histsim runs inspect`: a DeerFlow run-event store brought by the user (a `run_events` SQLite
//! database, or a JSONL store directory), read without changing a byte, and checked per thread
//! for what seed 003's bugs leave behind: seq gaps and duplicates, rows out of order, messages a
//! latest-1000 read would hide, runs with no end event, feedback pointing at the wrong run.
//!
//! Reading ([`sqlite_input`], [`jsonl_input`]) is apart from checking ([`checks`]): both stores
//! become the same [`Input`], and a row that cannot be read is a finding naming where it is,
//! never a reason to stop.

pub mod checks;
pub mod jsonl_input;
pub mod sqlite_input;

use std::path::Path;

/// One run event as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    /// Where it is: `run_events row id=7`, or `threads/t1/runs/r1.jsonl:3`.
    pub origin: String,
    pub thread_id: String,
    pub run_id: String,
    pub event_type: String,
    pub category: String,
    /// The content as stored (a JSON text for a serialized message).
    pub content: String,
    /// The metadata object, when it parses as one.
    pub metadata: Option<serde_json::Value>,
    pub seq: i64,
    /// Where it comes in the order it was written: the table's row id, or the line within its
    /// file (`stream` tells the files apart).
    pub written: i64,
    /// Rows of one stream were written in one sequence: the table, or one JSONL file.
    pub stream: String,
}

/// One feedback row (DeerFlow's `feedback` table).
#[derive(Clone, Debug, PartialEq)]
pub struct FeedbackRow {
    pub origin: String,
    pub feedback_id: String,
    pub thread_id: String,
    pub run_id: String,
    pub message_id: Option<String>,
}

/// Everything read from one store.
#[derive(Debug, Default)]
pub struct Input {
    /// What was read: `SQLite database`, `JSONL store`.
    pub kind: &'static str,
    pub events: Vec<EventRow>,
    pub feedback: Vec<FeedbackRow>,
    /// Whether the store has feedback at all (a JSONL store has none; a database may lack the
    /// table).
    pub has_feedback: bool,
    /// Rows or lines that could not be read, each with where and why.
    pub unreadable: Vec<String>,
}

/// Why a store cannot be inspected at all (exit 2).
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads the store at `path`: a directory is a JSONL store, a file a SQLite database.
pub fn read(path: &Path) -> Result<Input, InputError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| InputError(format!("{}: cannot read: {e}", path.display())))?;
    if meta.is_dir() {
        jsonl_input::read(path)
    } else {
        sqlite_input::read(path)
    }
}
