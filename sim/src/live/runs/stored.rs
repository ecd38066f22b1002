//! The shared store read back after the run: every row (the store's own dump), each thread's
//! `count_events`, and the order the rows were committed in: the SQLite table's AUTOINCREMENT
//! `id` (SQLite serializes the writers, so ids follow the commits of every process), or the
//! JSONL store's store-wide write number each line carries (`write`, kept across reopenings).

use crate::runs::record::Answer;
use crate::workload::StoreKind;
use history::runs::{RunEvent, RunEventStore};
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

/// Reads the store of kind `kind` at `path` back; `thread_ids` are the scenario's threads.
pub fn read_back(
    kind: StoreKind,
    path: &Path,
    planted: Planted,
    thread_ids: &[String],
) -> Result<StoredRows, String> {
    let store = super::store_tap::open_store(kind, path, planted)?;
    let dump = store.dump().map_err(|e| e.to_string());
    let counts = (thread_ids.iter())
        .map(|t| store.count_events(t).map(|n| (t.clone(), n)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string());
    drop(store);
    let commit_order = match kind {
        StoreKind::Jsonl => jsonl_commit_order(path)?,
        _ => sqlite_commit_order(path)?,
    };
    Ok(StoredRows {
        dump,
        counts,
        commit_order,
    })
}

fn sqlite_commit_order(path: &Path) -> Result<BTreeMap<RowKey, u64>, String> {
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
    read().map_err(|e| format!("{}: {e}", path.display()))
}

/// Each row's write number, from every run file of the JSONL store's directory (the store was
/// opened before, so a torn tail is already cut).
fn jsonl_commit_order(dir: &Path) -> Result<BTreeMap<RowKey, u64>, String> {
    let mut order = BTreeMap::new();
    for file in run_files(&dir.join("threads")) {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        for (n, line) in text.lines().enumerate() {
            let row: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| format!("{} line {}: {e}", file.display(), n + 1))?;
            let text_of = |field: &str| row[field].as_str().unwrap_or_default().to_string();
            let key = (
                text_of("thread_id"),
                text_of("run_id"),
                row["seq"].as_u64().unwrap_or(0),
            );
            let write = row["write"].as_u64().unwrap_or(u64::MAX);
            order.entry(key).or_insert(write);
        }
    }
    Ok(order)
}

/// The files `threads/*/runs/*.jsonl` of the store.
fn run_files(threads: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(threads) else {
        return files;
    };
    for thread in entries.flatten() {
        let Ok(runs) = std::fs::read_dir(thread.path().join("runs")) else {
            continue;
        };
        let jsonl = |p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "jsonl");
        files.extend(runs.flatten().map(|e| e.path()).filter(jsonl));
    }
    files
}
