//! The shared store read back from its file after the run: every row (the store's own dump),
//! each thread's `count_events`, and the order the rows were committed in (the table's
//! AUTOINCREMENT `id`: SQLite serializes the writers, so ids follow the commits of every
//! process).

use crate::runs::record::Answer;
use history::runs::{RunEvent, RunEventStore, SqliteRunEventStore};
use history::Planted;
use std::collections::BTreeMap;
use std::path::Path;

/// A row as the commit order names it: (thread, run, seq).
pub type RowKey = (String, String, u64);

#[derive(Clone, Debug)]
pub struct StoredRows {
    pub dump: Answer<Vec<RunEvent>>,
    /// (thread id, count_events) in the scenario's order of threads.
    pub counts: Answer<Vec<(String, u64)>>,
    /// Each row's place in commit order (its `id`); a key held twice keeps its first.
    pub commit_order: BTreeMap<RowKey, u64>,
}

pub fn key_of(row: &RunEvent) -> RowKey {
    (row.thread_id.clone(), row.run_id.clone(), row.seq)
}

/// Reads the store at `path` back; `thread_ids` are the scenario's threads.
pub fn read_back(
    path: &Path,
    planted: Planted,
    thread_ids: &[String],
) -> Result<StoredRows, String> {
    let store = SqliteRunEventStore::open_surviving_process_death(path, planted)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let dump = store.dump().map_err(|e| e.to_string());
    let counts = (thread_ids.iter())
        .map(|t| store.count_events(t).map(|n| (t.clone(), n)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string());
    drop(store);
    let read = || -> rusqlite::Result<BTreeMap<RowKey, u64>> {
        let conn = rusqlite::Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let mut stmt =
            conn.prepare("SELECT id, thread_id, run_id, seq FROM run_events ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                (r.get(1)?, r.get(2)?, r.get::<_, i64>(3)? as u64),
                r.get::<_, i64>(0)? as u64,
            ))
        })?;
        let mut order = BTreeMap::new();
        for row in rows {
            let (key, id) = row?;
            order.entry(key).or_insert(id);
        }
        Ok(order)
    };
    let commit_order = read().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(StoredRows {
        dump,
        counts,
        commit_order,
    })
}
