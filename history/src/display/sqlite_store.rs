//! The SQLite display-event store.
//!
//! `rows` holds the bytes in insertion order (`seq` is the rowid). `row_parents` holds one entry
//! per element of a row's `event_parents`, like the multikey index of the original document store,
//! and its one index `(thread_id, event_type, parent, agent_class, display_id)` serves both stages
//! of the thread query: no stage scans a table (checked by `explain_query_plans` in the tests).
//! Unindexable rows go to `quarantine`.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{params, Connection, Statement, ToSql};

use super::envelope::admit;
use super::family::Family;
use super::store::{
    ascending_once, display_store_methods, in_insertion_order, numbered_from_one, Admission,
    DisplayEventStore, StoreError, StoreOptions, StoredRow,
};
use super::USER_AGENT_CLASS;
use crate::{BugId, Planted};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS rows(
    seq INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL,
    display_id TEXT NOT NULL,
    agent_class TEXT NOT NULL,
    event_type TEXT NOT NULL,
    bytes BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS row_parents(
    seq INTEGER NOT NULL,
    thread_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    parent TEXT NOT NULL,
    agent_class TEXT NOT NULL,
    display_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS row_parents_thread_type_parent
    ON row_parents(thread_id, event_type, parent, agent_class, display_id);
CREATE TABLE IF NOT EXISTS quarantine(
    seq INTEGER PRIMARY KEY,
    reason TEXT NOT NULL,
    bytes BLOB NOT NULL);
";

/// Stage 2 binds one parameter per display; batches stay far below SQLite's variable limit.
const DISPLAYS_PER_QUERY: usize = 500;

/// The SQLite store. One connection behind a mutex; methods take `&self`.
pub struct SqliteDisplayStore {
    planted: Planted,
    display_event_type: String,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteDisplayStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteDisplayStore").finish_non_exhaustive()
    }
}

fn sqlite(operation: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |source| StoreError::Sqlite { operation, source }
}

impl SqliteDisplayStore {
    /// Opens (creating if needed) the store in the file at `path`.
    pub fn open(path: &Path, planted: Planted) -> Result<Self, StoreError> {
        Self::open_with_options(path, StoreOptions::planted(planted))
    }

    /// Opens (creating if needed) the store in the file at `path`, reading rows as `options` says.
    pub fn open_with_options(path: &Path, options: StoreOptions) -> Result<Self, StoreError> {
        let conn = Connection::open(path).map_err(sqlite("opening the database file"))?;
        Self::with_connection(conn, options)
    }

    /// Opens (creating if needed) the store in the file at `path` for several processes writing
    /// it at once: write-ahead logging, so readers never block the writer, and a busy timeout of
    /// `busy_timeout_ms`, so a writer waits for another's transaction instead of failing with
    /// `SQLITE_BUSY`.
    pub fn open_shared(
        path: &Path,
        options: StoreOptions,
        busy_timeout_ms: u64,
    ) -> Result<Self, StoreError> {
        let conn = Connection::open(path).map_err(sqlite("opening the database file"))?;
        conn.busy_timeout(std::time::Duration::from_millis(busy_timeout_ms))
            .map_err(sqlite("setting the busy timeout"))?;
        conn.pragma_update(None, "journal_mode", "wal")
            .map_err(sqlite("switching to write-ahead logging"))?;
        Self::with_connection(conn, options)
    }

    /// A fresh store in memory.
    pub fn open_in_memory(planted: Planted) -> Result<Self, StoreError> {
        Self::open_in_memory_with_options(StoreOptions::planted(planted))
    }

    /// A fresh store in memory, reading rows as `options` says.
    pub fn open_in_memory_with_options(options: StoreOptions) -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory().map_err(sqlite("opening an in-memory database"))?;
        Self::with_connection(conn, options)
    }

    fn with_connection(conn: Connection, options: StoreOptions) -> Result<Self, StoreError> {
        crate::sqlite_setup::plan_statements_once(&conn)
            .map_err(sqlite("setting up the connection"))?;
        conn.execute_batch(SCHEMA)
            .map_err(sqlite("creating the schema"))?;
        Ok(SqliteDisplayStore {
            planted: options.planted,
            display_event_type: options.display_event_type,
            conn: Mutex::new(conn),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // Every write runs in a transaction, so a panic while holding the lock cannot leave a
        // half-written row behind: the poisoned connection is still consistent.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `EXPLAIN QUERY PLAN` detail lines of both stages for `thread_id`, as
    /// `("stage 1: visible displays", lines)` and `("stage 2: conversation rows", lines)`.
    pub fn explain_query_plans(
        &self,
        thread_id: &str,
    ) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let mut displays = self.visible_displays(thread_id)?;
        if displays.is_empty() {
            displays.push(String::new());
        }
        let conn = self.lock();
        let (sql1, params1) = self.stage1_query(thread_id);
        let (sql2, params2) = self.stage2_query(
            thread_id,
            &displays[..displays.len().min(DISPLAYS_PER_QUERY)],
        );
        let mut out = Vec::new();
        for (stage, sql, params) in [
            ("stage 1: visible displays", sql1, params1),
            ("stage 2: conversation rows", sql2, params2),
        ] {
            let mut stmt = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .map_err(sqlite("preparing EXPLAIN QUERY PLAN"))?;
            // The plan's fourth column is its `detail` line.
            let lines = text_column(&mut stmt, &params, 3, "EXPLAIN QUERY PLAN")?;
            out.push((stage.to_string(), lines));
        }
        Ok(out)
    }

    /// Stage 1: markers are `UserAgent` rows belonging to a user-turn family.
    fn stage1_query(&self, thread_id: &str) -> (String, Vec<String>) {
        let (membership, mut params) =
            self.membership(&[Family::UserMessage, Family::HitlResponse], 3);
        let sql = format!(
            "SELECT DISTINCT display_id FROM row_parents \
             WHERE thread_id = ?1 AND event_type = ?2 AND {membership} AND agent_class = ?{} \
             ORDER BY display_id",
            params.len() + 3
        );
        let mut all = vec![thread_id.to_string(), self.display_event_type.clone()];
        all.append(&mut params);
        all.push(USER_AGENT_CLASS.to_string());
        // Post-condition: one parameter for each numbered slot, the last the agent class.
        debug_assert!(
            sql.contains(&format!("?{}", all.len()))
                && !sql.contains(&format!("?{}", all.len() + 1))
        );
        (sql, all)
    }

    /// Stage 2: rows of a family on the given displays, once each, by seq.
    fn stage2_query(&self, thread_id: &str, displays: &[String]) -> (String, Vec<String>) {
        assert!(!displays.is_empty() && displays.len() <= DISPLAYS_PER_QUERY);
        let (membership, mut params) = self.membership(&Family::ALL, 3);
        let first = params.len() + 3;
        let slots: Vec<String> = (first..first + displays.len())
            .map(|i| format!("?{i}"))
            .collect();
        // `seq IN (subquery)` returns a row once even when several of its parents match.
        let sql = format!(
            "SELECT seq, bytes FROM rows WHERE seq IN (\
             SELECT seq FROM row_parents WHERE thread_id = ?1 AND event_type = ?2 AND {membership} \
             AND display_id IN ({})) ORDER BY seq",
            slots.join(", ")
        );
        let mut all = vec![thread_id.to_string(), self.display_event_type.clone()];
        all.append(&mut params);
        all.extend(displays.iter().cloned());
        // Post-condition: one parameter for each numbered slot, the displays last.
        debug_assert!(
            sql.contains(&format!("?{}", all.len()))
                && !sql.contains(&format!("?{}", all.len() + 1))
        );
        (sql, all)
    }

    /// The SQL condition "some parent is one of `families`", with its parameters numbered from
    /// `first`.
    fn membership(&self, families: &[Family], first: usize) -> (String, Vec<String>) {
        // Pre-condition: slots 1 and 2 are the thread and the event type.
        debug_assert!(first >= 3 && !families.is_empty());
        let params: Vec<String> = families
            .iter()
            .map(|f| f.class_name().to_string())
            .collect();
        let slots = (first..first + params.len()).map(|i| format!("?{i}"));
        let sql = if self.planted.is(BugId::P7) {
            // planted P7: the legacy query matched class names by substring.
            let terms: Vec<String> = slots.map(|s| format!("instr(parent, {s}) > 0")).collect();
            format!("({})", terms.join(" OR "))
        } else {
            format!("parent IN ({})", slots.collect::<Vec<_>>().join(", "))
        };
        (sql, params)
    }

    /// Every row of a table no row is ever deleted from (`rows`, `quarantine`), by `seq`.
    fn whole_table(&self, sql: &str) -> Result<Vec<StoredRow>, StoreError> {
        let rows = Self::stored_rows(&self.lock(), sql, &[])?;
        // Post-condition: rowids of a table no row is ever deleted from are 1 to n.
        debug_assert!(numbered_from_one(&rows));
        Ok(rows)
    }

    fn stored_rows(
        conn: &Connection,
        sql: &str,
        params: &[String],
    ) -> Result<Vec<StoredRow>, StoreError> {
        let mut stmt = conn
            .prepare_cached(sql)
            .map_err(sqlite("preparing a row query"))?;
        let refs: Vec<&dyn ToSql> = params.iter().map(|p| p as &dyn ToSql).collect();
        let rows = stmt
            .query_map(refs.as_slice(), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .map_err(sqlite("running a row query"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sqlite("reading rows"))?;
        rows.into_iter()
            .map(|(seq, bytes)| {
                let seq = u64::try_from(seq)
                    .ok()
                    .filter(|s| *s >= 1)
                    .ok_or_else(|| StoreError::Corrupt(format!("row seq {seq} is not positive")))?;
                Ok(StoredRow::new(seq, Arc::from(bytes)))
            })
            .collect()
    }

    fn strings(conn: &Connection, sql: &str, params: &[String]) -> Result<Vec<String>, StoreError> {
        let mut stmt = conn
            .prepare_cached(sql)
            .map_err(sqlite("preparing a display query"))?;
        text_column(&mut stmt, params, 0, "a display query")
    }
}

/// Column `column`, as text, of every row `stmt` answers for `params`; `query` names the
/// statement in an error.
fn text_column(
    stmt: &mut Statement<'_>,
    params: &[String],
    column: usize,
    query: &'static str,
) -> Result<Vec<String>, StoreError> {
    let refs: Vec<&dyn ToSql> = params.iter().map(|p| p as &dyn ToSql).collect();
    let rows = stmt
        .query_map(refs.as_slice(), |r| r.get::<_, String>(column))
        .map_err(sqlite(query))?;
    rows.collect::<Result<Vec<_>, _>>().map_err(sqlite(query))
}

impl DisplayEventStore for SqliteDisplayStore {
    display_store_methods! {
        fn append(&self, row) {
            let mut conn = self.lock();
            let tx = conn.transaction().map_err(sqlite("starting an append"))?;
            let admission = match admit(row) {
                Err(reason) => {
                    let reason = reason.to_string();
                    tx.execute(
                        "INSERT INTO quarantine(reason, bytes) VALUES (?1, ?2)",
                        params![reason, row],
                    )
                    .map_err(sqlite("quarantining a row"))?;
                    Admission::Quarantined { reason }
                }
                Ok(key) => {
                    #[cfg(feature = "planted")]
                    if self.planted.is(crate::BugId::P15) {
                        // planted P15: the legacy table had a unique index on the row, so every
                        // copy after the first (each replica persists every delivery) failed.
                        let copies: i64 = tx
                            .query_row("SELECT COUNT(*) FROM rows WHERE bytes = ?1", [row], |r| {
                                r.get(0)
                            })
                            .map_err(sqlite("looking for a copy"))?;
                        if copies > 0 {
                            return Err(StoreError::LegacyDuplicate);
                        }
                    }
                    tx.execute(
                        "INSERT INTO rows(thread_id, display_id, agent_class, event_type, bytes) \
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![
                            key.thread_id,
                            key.display_id,
                            key.agent_class,
                            key.event_type,
                            row
                        ],
                    )
                    .map_err(sqlite("inserting a row"))?;
                    let seq = tx.last_insert_rowid();
                    // Reads take a seq below 1 for corruption: the key SQLite gave is 1 or more.
                    debug_assert!(seq >= 1);
                    let mut stmt = tx
                        .prepare_cached(
                            "INSERT INTO row_parents(seq, thread_id, event_type, parent, \
                             agent_class, display_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        )
                        .map_err(sqlite("preparing the parent insert"))?;
                    for parent in &key.parents {
                        stmt.execute(params![
                            seq,
                            key.thread_id,
                            key.event_type,
                            parent,
                            key.agent_class,
                            key.display_id
                        ])
                        .map_err(sqlite("inserting a row parent"))?;
                    }
                    drop(stmt);
                    Admission::Stored
                }
            };
            tx.commit().map_err(sqlite("committing an append"))?;
            Ok(admission)
        }

        fn visible_displays(&self, thread_id) {
            let (sql, params) = self.stage1_query(thread_id);
            let displays = Self::strings(&self.lock(), &sql, &params)?;
            // Post-condition: `DISTINCT ... ORDER BY display_id` is the contract's order.
            debug_assert!(ascending_once(&displays));
            Ok(displays)
        }

        fn rows_on_displays(&self, thread_id, display_ids) {
            let conn = self.lock();
            let mut out = Vec::new();
            for batch in display_ids.chunks(DISPLAYS_PER_QUERY) {
                let (sql, params) = self.stage2_query(thread_id, batch);
                out.extend(Self::stored_rows(&conn, &sql, &params)?);
            }
            // A row has one display, so batches are disjoint unless a display id repeats.
            out.sort_by_key(|r| r.seq);
            out.dedup_by_key(|r| r.seq);
            debug_assert!(in_insertion_order(&out));
            Ok(out)
        }

        fn thread_displays(&self, thread_id) {
            // Legacy paths only: the scan over `rows` is accepted there (no index for it, by
            // design).
            let sql = "SELECT DISTINCT display_id FROM rows \
                       WHERE thread_id = ?1 AND event_type = ?2 ORDER BY display_id";
            let displays = Self::strings(
                &self.lock(),
                sql,
                &[thread_id.to_string(), self.display_event_type.clone()],
            )?;
            debug_assert!(ascending_once(&displays));
            Ok(displays)
        }

        fn row_count(&self) {
            let n: i64 = self
                .lock()
                .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
                .map_err(sqlite("counting rows"))?;
            u64::try_from(n).map_err(|_| StoreError::Corrupt(format!("row count {n} is negative")))
        }

        fn quarantined(&self) {
            self.whole_table("SELECT seq, bytes FROM quarantine ORDER BY seq")
        }

        fn rows(&self) {
            self.whole_table("SELECT seq, bytes FROM rows ORDER BY seq")
        }
    }
}
