//! The schema of the SQLite run-event store: the `run_events` table (with or without the unique
//! guard of planted R5), the high-water marks, the fences of thread deletions (R28), the indexes the reads need, and their creation.

use rusqlite::Connection;

use crate::planted::{BugId, Planted};
use crate::runs::error::RunStoreError;

/// The `run_events` table, its columns written once; `$guard`, when given, is a table constraint.
macro_rules! run_events_table {
    ($($guard:literal)?) => {
        concat!(
            "
CREATE TABLE IF NOT EXISTS run_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    user_id TEXT,
    event_type TEXT NOT NULL,
    category TEXT NOT NULL,
    content TEXT NOT NULL,
    event_metadata TEXT NOT NULL,
    seq INTEGER NOT NULL,
    created_at INTEGER NOT NULL",
            $(",\n    ", $guard,)?
            "\n);"
        )
    };
}

const SCHEMA_UNIQUE: &str = run_events_table!("UNIQUE (thread_id, seq)");

// planted R5: the legacy table had no unique guard on (thread_id, seq).
const SCHEMA_NO_UNIQUE: &str = run_events_table!();

// A thread's high-water mark, written when a deletion removes rows: `delete_by_run` must not let
// the next write reuse a deleted run's seqs (R13), and `MAX(seq)` of the remaining rows would.
const SEQ_MARKS: &str = "
CREATE TABLE IF NOT EXISTS run_event_seq_marks (
    thread_id TEXT PRIMARY KEY,
    max_seq INTEGER NOT NULL
);";

// The runs each thread deletion fenced (R28): a row of one of them is refused on its thread.
const FENCES: &str = "
CREATE TABLE IF NOT EXISTS run_event_fences (
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    PRIMARY KEY (thread_id, run_id)
) WITHOUT ROWID;";

const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS ix_run_events_thread_category_seq
    ON run_events (thread_id, category, seq);
CREATE INDEX IF NOT EXISTS ix_run_events_thread_run_seq
    ON run_events (thread_id, run_id, seq);";

pub(super) const COLUMNS: &str =
    "thread_id, run_id, user_id, event_type, category, content, event_metadata, seq, created_at";

pub(super) const INSERT: &str =
    "INSERT INTO run_events (thread_id, run_id, user_id, event_type, category, \
     content, event_metadata, seq, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// Creates the tables and indexes `conn` lacks, after setting the connection up once.
pub(super) fn create(conn: &Connection, planted: Planted) -> Result<(), RunStoreError> {
    let table = if planted.is(BugId::R5) {
        SCHEMA_NO_UNIQUE
    } else {
        SCHEMA_UNIQUE
    };
    crate::sqlite_setup::plan_statements_once(conn)
        .map_err(|e| RunStoreError::sqlite("set up the connection", e))?;
    conn.execute_batch(table)
        .and_then(|_| conn.execute_batch(SEQ_MARKS))
        .and_then(|_| conn.execute_batch(FENCES))
        .and_then(|_| conn.execute_batch(INDEXES))
        .map_err(|e| RunStoreError::sqlite("create schema", e))
}
