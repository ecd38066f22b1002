//! The SQLite store's fences (R28, see `runs::fence`): a thread deletion writes the runs whose
//! rows it removes into `run_event_fences`, in the deletion's own transaction, and every write
//! transaction refuses a row of a fenced run before it inserts anything. The table is part of the
//! database, so a fence survives closing and reopening the store.

use std::collections::BTreeSet;

use rusqlite::{params, params_from_iter, Connection};

use super::reads::Conditions;
use crate::runs::error::RunStoreError;
use crate::runs::fence::thread_deleted;

/// Fences the runs of the rows `c` selects (the rows a thread deletion is about to remove).
pub(super) fn fence_rows(conn: &Connection, c: &Conditions) -> Result<(), RunStoreError> {
    let sql = format!(
        "INSERT OR IGNORE INTO run_event_fences (thread_id, run_id) \
         SELECT DISTINCT thread_id, run_id FROM run_events WHERE {}",
        c.sql
    );
    conn.execute(&sql, params_from_iter(c.args.iter()))
        .map_err(|e| RunStoreError::sqlite("fence the deleted runs", e))?;
    Ok(())
}

/// Refuses a write of which some row carries a fenced run: the first such row names it.
pub(super) fn admit<'a>(
    conn: &Connection,
    rows: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(), RunStoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM run_event_fences WHERE thread_id = ?1 AND run_id = ?2)",
        )
        .map_err(|e| RunStoreError::sqlite("prepare the fence check", e))?;
    let mut asked: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (thread_id, run_id) in rows {
        if !asked.insert((thread_id, run_id)) {
            continue;
        }
        let fenced: bool = stmt
            .query_row(params![thread_id, run_id], |row| row.get(0))
            .map_err(|e| RunStoreError::sqlite("check the fence", e))?;
        if fenced {
            return Err(thread_deleted(thread_id, run_id));
        }
    }
    Ok(())
}
