//! The writes of the SQLite run-event store: row insertion, the IMMEDIATE write transaction (and
//! planted R12's write-behind one), and deletion keeping a thread's high-water mark.

use rusqlite::{params, params_from_iter, Connection};

use super::reads::{json_text, max_seq_in, to_sql_seq, Conditions};
use super::schema::INSERT;
use super::SqliteRunEventStore;
use crate::planted::{BugId, Planted};
use crate::runs::error::RunStoreError;
use crate::runs::event::RunEvent;

/// Keeps `mark` as the thread's high-water mark (after a deletion removed rows).
fn keep_mark(conn: &Connection, thread_id: &str, mark: u64) -> Result<(), RunStoreError> {
    conn.prepare_cached(
        "INSERT INTO run_event_seq_marks (thread_id, max_seq) VALUES (?1, ?2) \
         ON CONFLICT (thread_id) DO UPDATE SET max_seq = MAX(max_seq, excluded.max_seq)",
    )
    .and_then(|mut stmt| stmt.execute(params![thread_id, to_sql_seq(mark)]))
    .map_err(|e| RunStoreError::sqlite("keep the seq mark", e))?;
    Ok(())
}

pub(super) fn insert_row(conn: &Connection, e: &RunEvent) -> Result<(), RunStoreError> {
    let mut stmt = conn
        .prepare_cached(INSERT)
        .map_err(|err| RunStoreError::sqlite("prepare insert", err))?;
    stmt.execute(params![
        e.thread_id,
        e.run_id,
        e.user_id,
        e.event_type,
        e.category.as_str(),
        json_text(&e.content),
        json_text(&e.metadata),
        to_sql_seq(e.seq),
        e.created_at_ns,
    ])
    .map_err(|err| match err {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            RunStoreError::SeqConflict {
                thread_id: e.thread_id.clone(),
                seq: e.seq,
                max_seq: e.seq,
            }
        }
        other => RunStoreError::sqlite("insert", other),
    })?;
    Ok(())
}

/// planted R12: the legacy write-behind buffer. A batch was acknowledged while its transaction
/// was still open, and committed only when the next write came; reads on the same connection
/// see it, so nothing shows until the process dies: a kill (or any close) rolls it back.
fn commit_pending(conn: &Connection) -> Result<(), RunStoreError> {
    if conn.is_autocommit() {
        return Ok(());
    }
    run_cached(conn, "COMMIT").map_err(|e| RunStoreError::sqlite("commit the pending batch", e))?;
    debug_assert!(conn.is_autocommit());
    Ok(())
}

/// Runs a statement without parameters or rows through the connection's statement cache.
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// A write's IMMEDIATE transaction. rusqlite's `Transaction` runs `BEGIN` and `COMMIT` through
/// `execute_batch`, which parses them again at every write; these are cached statements,
/// prepared once a connection. Like a `Transaction`, it rolls back if it is dropped still open
/// (the write's body failed, or its commit did).
struct WriteTx<'c> {
    conn: &'c Connection,
    /// planted R12 leaves the transaction open for the next write to commit.
    left_open: bool,
}

impl<'c> WriteTx<'c> {
    fn begin(conn: &'c Connection) -> Result<WriteTx<'c>, RunStoreError> {
        run_cached(conn, "BEGIN IMMEDIATE").map_err(|e| RunStoreError::sqlite("begin", e))?;
        debug_assert!(!conn.is_autocommit(), "BEGIN left no transaction open");
        Ok(WriteTx {
            conn,
            left_open: false,
        })
    }

    /// Ends the write: commits it, or (planted R12) leaves it open for the next write.
    fn finish(mut self, planted: Planted) -> Result<(), RunStoreError> {
        if planted.is(BugId::R12) {
            // planted R12: acknowledged now, committed at the next write.
            self.left_open = true;
            return Ok(());
        }
        run_cached(self.conn, "COMMIT").map_err(|e| RunStoreError::sqlite("commit", e))?;
        debug_assert!(
            self.conn.is_autocommit(),
            "COMMIT left the transaction open"
        );
        Ok(())
    }
}

impl Drop for WriteTx<'_> {
    fn drop(&mut self) {
        if !self.left_open && !self.conn.is_autocommit() {
            // Nothing to report to: the write already failed, and its error says why.
            let _ = run_cached(self.conn, "ROLLBACK");
        }
    }
}

impl SqliteRunEventStore {
    /// Runs `body` in one IMMEDIATE write transaction ([`WriteTx`]), after committing a
    /// pending one (planted R12).
    pub(super) fn write<T>(
        &self,
        body: impl FnOnce(&Connection) -> Result<T, RunStoreError>,
    ) -> Result<T, RunStoreError> {
        let conn = self.lock();
        commit_pending(&conn)?;
        let tx = WriteTx::begin(&conn)?;
        let out = body(tx.conn)?;
        tx.finish(self.planted)?;
        Ok(out)
    }
}

/// Deletes the rows `c` selects, keeping the thread's high-water mark; returns how many.
pub(super) fn delete_keeping_mark(
    conn: &Connection,
    thread_id: &str,
    c: &Conditions,
    planted: Planted,
) -> Result<u64, RunStoreError> {
    let mark = max_seq_in(conn, thread_id)?;
    let sql = format!("DELETE FROM run_events WHERE {}", c.sql);
    let n = conn
        .execute(&sql, params_from_iter(c.args.iter()))
        .map_err(|e| RunStoreError::sqlite("delete", e))?;
    // planted R13: the legacy DB store kept no mark and numbered from MAX(seq) of what was left.
    if n > 0 && mark > 0 && !planted.is(BugId::R13) {
        keep_mark(conn, thread_id, mark)?;
        // Post-condition: the deletion left the thread's high-water mark where it was (R13).
        debug_assert_eq!(max_seq_in(conn, thread_id).ok(), Some(mark));
    }
    Ok(n as u64)
}
