//! How every SQLite connection of this crate is set up before its schema: the settings both
//! stores (display rows, run events) need for their cached statements to stay prepared.

use rusqlite::config::DbConfig;
use rusqlite::Connection;

/// Statements kept prepared per connection. The stores' filters and cursors make a few dozen
/// distinct statements, and rusqlite keeps 16 by default, so a mixed load kept preparing.
const STATEMENT_CACHE_CAPACITY: usize = 64;

/// Turns on the query planner's stability guarantee and sizes the statement cache.
///
/// Without the guarantee, SQLite (3.54, bundled) marks a statement to be planned again whenever
/// a parameter its plan looked at is rebound: every `LIMIT ?`, and every `col = ?` of a query
/// with an ORDER BY or a MAX. Nearly every cached read of these stores was therefore parsed and
/// planned again at each call: `sqlite3_stmt_status` counted one re-preparation per call, and
/// it was 9 % of the runs workload's time. The plans here come from the indexes, which no bound
/// value changes, so planning once from the statement's text loses nothing.
pub(crate) fn plan_statements_once(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::StatementStatus;

    /// Re-preparations of a cached statement called `calls` times with a new value each time.
    fn re_preparations(conn: &Connection, sql: &str, calls: i64) -> i32 {
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, thread TEXT, seq INTEGER);
             CREATE INDEX IF NOT EXISTS ix ON t (thread, seq);",
        )
        .unwrap();
        let mut last = 0;
        for call in 0..calls {
            let mut stmt = conn.prepare_cached(sql).unwrap();
            let rows = stmt
                .query_map((format!("thread {call}"), call + 1), |r| r.get::<_, i64>(0))
                .unwrap()
                .count();
            assert_eq!(rows, 0, "the table is empty");
            last = stmt.get_status(StatementStatus::RePrepare);
        }
        last
    }

    const READ: &str = "SELECT seq FROM t WHERE thread = ?1 ORDER BY seq LIMIT ?2";

    #[test]
    fn without_the_guarantee_sqlite_plans_a_read_again_at_each_call() {
        // The reason for the setting (one re-preparation per call, the first included, since
        // binding the first values already invalidates the plan made without them). If a later
        // SQLite stops doing this, the setting may go.
        let conn = Connection::open_in_memory().unwrap();
        assert_eq!(re_preparations(&conn, READ, 5), 5);
    }

    #[test]
    fn with_the_guarantee_a_cached_read_is_planned_once() {
        let conn = Connection::open_in_memory().unwrap();
        plan_statements_once(&conn).unwrap();
        assert_eq!(re_preparations(&conn, READ, 5), 0);
    }
}
