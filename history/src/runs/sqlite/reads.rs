//! The reads of the SQLite run-event store: row decoding, WHERE clauses under construction, and
//! the message and event pages every list operation shares.

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{params_from_iter, Connection, OptionalExtension, Row};
use serde_json::Value;

use super::schema::COLUMNS;
use super::SqliteRunEventStore;
use crate::planted::BugId;
use crate::runs::error::RunStoreError;
use crate::runs::event::{Category, MessageCursor, RunEvent, SEQ_MAX};
use crate::runs::invariants::is_page;

pub(super) fn to_sql_seq(seq: u64) -> i64 {
    // Callers validate seq <= SEQ_MAX; cursors beyond it are clamped (no row is above it).
    seq.min(SEQ_MAX) as i64
}

/// `seq < before` as the inclusive bound `seq <= before - 1` (SQLite integers are signed).
pub(super) fn below(before: u64) -> i64 {
    if before == 0 {
        -1
    } else {
        to_sql_seq(before - 1)
    }
}

pub(super) fn json_text(v: &Value) -> String {
    // Serializing a `Value` cannot fail: its map keys are strings.
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_string())
}

/// Column `index` as text borrowed from the row, with the errors `row.get::<_, String>` gives:
/// the JSON columns are parsed from SQLite's own buffer, not from a copy of it (a long thread's
/// full read copied every row's content and metadata once more).
pub(super) fn text<'r>(row: &'r Row<'_>, index: usize) -> rusqlite::Result<&'r str> {
    match row.get_ref(index)? {
        ValueRef::Text(bytes) => {
            std::str::from_utf8(bytes).map_err(|e| rusqlite::Error::Utf8Error(index, e))
        }
        other => Err(rusqlite::Error::InvalidColumnType(
            index,
            row.as_ref().column_name(index)?.to_string(),
            other.data_type(),
        )),
    }
}

pub(super) fn decode_row(row: &Row<'_>) -> Result<RunEvent, RunStoreError> {
    let sql = |e| RunStoreError::sqlite("read row", e);
    let thread_id: String = row.get(0).map_err(sql)?;
    let seq: i64 = row.get(7).map_err(sql)?;
    let bad = |field: &'static str, reason: String| RunStoreError::Decode {
        thread_id: thread_id.clone(),
        seq,
        field,
        reason,
    };
    let category = text(row, 4).map_err(sql)?;
    let category = Category::parse(category)
        .ok_or_else(|| bad("category", format!("unknown category `{category}`")))?;
    let content = text(row, 5).map_err(sql)?;
    let content = serde_json::from_str(content).map_err(|e| bad("content", e.to_string()))?;
    let metadata = text(row, 6).map_err(sql)?;
    let metadata =
        serde_json::from_str(metadata).map_err(|e| bad("event_metadata", e.to_string()))?;
    let seq_u = u64::try_from(seq).map_err(|_| bad("seq", "negative".to_string()))?;
    Ok(RunEvent {
        thread_id: thread_id.clone(),
        run_id: row.get(1).map_err(sql)?,
        user_id: row.get(2).map_err(sql)?,
        event_type: row.get(3).map_err(sql)?,
        category,
        content,
        metadata,
        seq: seq_u,
        created_at_ns: row.get(8).map_err(sql)?,
    })
}

pub(super) fn query(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<RunEvent>, RunStoreError> {
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(|e| RunStoreError::sqlite("prepare", e))?;
    let mut rows = stmt
        .query(params)
        .map_err(|e| RunStoreError::sqlite("query", e))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| RunStoreError::sqlite("step", e))? {
        out.push(decode_row(row)?);
    }
    Ok(out)
}

pub(super) fn max_seq_in(conn: &Connection, thread_id: &str) -> Result<u64, RunStoreError> {
    let max: Option<i64> = conn
        .prepare_cached(
            "SELECT MAX(COALESCE((SELECT MAX(seq) FROM run_events WHERE thread_id = ?1), 0), \
             COALESCE((SELECT max_seq FROM run_event_seq_marks WHERE thread_id = ?1), 0))",
        )
        .and_then(|mut stmt| stmt.query_row([thread_id], |r| r.get(0)).optional())
        .map_err(|e| RunStoreError::sqlite("max seq", e))?
        .flatten();
    Ok(max.map_or(0, |m| u64::try_from(m).unwrap_or(0)))
}

/// A WHERE clause under construction, with its positional arguments in order.
pub(super) struct Conditions {
    pub(super) sql: String,
    pub(super) args: Vec<SqlValue>,
}

impl Conditions {
    pub(super) fn thread(thread_id: &str) -> Conditions {
        Conditions {
            sql: "thread_id = ?".to_string(),
            args: vec![SqlValue::Text(thread_id.to_string())],
        }
    }

    /// Adds `cond`, whose `?`s take `args` in order.
    pub(super) fn and(
        mut self,
        cond: &str,
        args: impl IntoIterator<Item = SqlValue>,
    ) -> Conditions {
        let before = self.args.len();
        self.sql.push_str(" AND ");
        self.sql.push_str(cond);
        self.args.extend(args);
        // Post-condition: `cond` has one placeholder per argument it brings.
        debug_assert_eq!(
            cond.matches('?').count(),
            self.args.len() - before,
            "{cond}"
        );
        self
    }

    /// [`Conditions::and_user`], or planted R19's legacy condition: rows without a user were
    /// taken for everybody's (`user_id = ? OR user_id IS NULL`).
    pub(super) fn and_user_or_shared(self, user: Option<&str>, legacy: bool) -> Conditions {
        match user {
            Some(u) if legacy => self.and(
                "(user_id = ? OR user_id IS NULL)",
                [SqlValue::Text(u.to_string())],
            ),
            _ => self.and_user(user),
        }
    }

    pub(super) fn and_user(self, user: Option<&str>) -> Conditions {
        match user {
            Some(u) => self.and("user_id = ?", [SqlValue::Text(u.to_string())]),
            None => self,
        }
    }

    pub(super) fn and_in(self, column: &str, values: &[&str]) -> Conditions {
        if values.is_empty() {
            return self.and("0", []);
        }
        let marks = vec!["?"; values.len()].join(", ");
        self.and(
            &format!("{column} IN ({marks})"),
            values.iter().map(|v| SqlValue::Text(v.to_string())),
        )
    }
}

pub(super) fn seq_arg(seq: u64) -> SqlValue {
    SqlValue::Integer(to_sql_seq(seq))
}

pub(super) fn query_where(
    conn: &Connection,
    sql: &str,
    args: Vec<SqlValue>,
) -> Result<Vec<RunEvent>, RunStoreError> {
    query(conn, sql, params_from_iter(args))
}

pub(super) fn count_where(conn: &Connection, c: &Conditions) -> Result<u64, RunStoreError> {
    let sql = format!("SELECT COUNT(*) FROM run_events WHERE {}", c.sql);
    let n: i64 = conn
        .prepare_cached(&sql)
        .and_then(|mut stmt| stmt.query_row(params_from_iter(c.args.iter()), |r| r.get(0)))
        .map_err(|e| RunStoreError::sqlite("count", e))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

impl SqliteRunEventStore {
    /// A message page of the rows `c` selects, per the semantics of [`MessageCursor`].
    pub(super) fn message_page(
        &self,
        c: Conditions,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let page_size = limit;
        let limit = SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX));
        let c = c.and("category = 'message'", []);
        // Pages taken from the end are selected newest-first, then put back in ascending order.
        let (c, newest_first) = match cursor {
            MessageCursor::None => (c, true),
            MessageCursor::Before(b) => (c.and("seq <= ?", [SqlValue::Integer(below(b))]), true),
            MessageCursor::After(a) => (c.and("seq > ?", [seq_arg(a)]), false),
            MessageCursor::Both { before, after } => (
                c.and(
                    "seq > ? AND seq <= ?",
                    [seq_arg(after), SqlValue::Integer(below(before))],
                ),
                // planted R9: the DB store let before_seq win, paging backwards from it.
                self.planted.is(BugId::R9),
            ),
        };
        let base = format!(
            "SELECT {COLUMNS}, id FROM run_events WHERE {}{}",
            c.sql,
            self.user_filter()
        );
        let sql = if newest_first {
            format!(
                "SELECT {COLUMNS} FROM ({base} ORDER BY seq DESC, id DESC LIMIT ?) \
                 ORDER BY seq ASC, id ASC"
            )
        } else {
            format!("SELECT {COLUMNS} FROM ({base} ORDER BY seq ASC, id ASC LIMIT ?)")
        };
        let mut args = c.args;
        args.push(limit);
        let rows = query_where(&self.lock(), &sql, args)?;
        debug_assert!(is_page(&rows, page_size), "{} rows", rows.len());
        Ok(rows)
    }

    /// The first `limit` rows matching `c`, ascending by seq (write order among equal seqs).
    pub(super) fn event_page(
        &self,
        c: Conditions,
        limit: usize,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM run_events WHERE {}{} ORDER BY seq ASC, id ASC LIMIT ?",
            c.sql,
            self.user_filter()
        );
        let mut args = c.args;
        args.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        let rows = query_where(&self.lock(), &sql, args)?;
        debug_assert!(is_page(&rows, limit), "{} rows", rows.len());
        Ok(rows)
    }
}
