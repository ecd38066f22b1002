//! A DeerFlow `run_events` database (and its `feedback` table, when there is one), opened
//! read-only. The columns are the published ORM's (`deerflow/persistence/models/run_event.py`:
//! `event_metadata`, `created_at` a timestamp) or the seed's (`metadata`); histsim's own SQLite
//! store writes the same table.

use super::{EventRow, FeedbackRow, Input, InputError};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

const EVENTS: &str = "run_events";
const FEEDBACK: &str = "feedback";
const EVENT_COLUMNS: [&str; 6] = [
    "thread_id",
    "run_id",
    "event_type",
    "category",
    "content",
    "seq",
];
const FEEDBACK_COLUMNS: [&str; 4] = ["feedback_id", "thread_id", "run_id", "message_id"];

/// Reads every row of `run_events` and `feedback`.
pub fn read(path: &Path) -> Result<Input, InputError> {
    let shown = path.display();
    // Read-only and no URI tricks: SQLite itself refuses every write on this connection.
    let db = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| InputError(format!("{shown}: cannot open as a SQLite database: {e}")))?;
    let tables =
        tables(&db).map_err(|e| InputError(format!("{shown}: not a SQLite database ({e})")))?;
    if !tables.iter().any(|t| t == EVENTS) {
        return Err(InputError(format!(
            "{shown}: no table `{EVENTS}` (tables: {}); expected DeerFlow's run-event store",
            if tables.is_empty() {
                "none".to_string()
            } else {
                tables.join(", ")
            }
        )));
    }
    let columns = columns_of(&db, EVENTS, &EVENT_COLUMNS, path)?;
    let mut input = Input {
        kind: "SQLite database",
        ..Input::default()
    };
    read_events(&db, &columns, &mut input)
        .map_err(|e| InputError(format!("{shown}: table `{EVENTS}`: {e}")))?;
    if tables.iter().any(|t| t == FEEDBACK) {
        columns_of(&db, FEEDBACK, &FEEDBACK_COLUMNS, path)?;
        input.has_feedback = true;
        read_feedback(&db, &mut input)
            .map_err(|e| InputError(format!("{shown}: table `{FEEDBACK}`: {e}")))?;
    }
    Ok(input)
}

fn tables(db: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut statement =
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
    let names = statement.query_map([], |row| row.get::<_, String>(0))?;
    names.collect()
}

/// The table's column names, checked to include `required`.
fn columns_of(
    db: &Connection,
    table: &str,
    required: &[&str],
    path: &Path,
) -> Result<Vec<String>, InputError> {
    let fail = |e: rusqlite::Error| InputError(format!("{}: table `{table}`: {e}", path.display()));
    let mut statement = db
        .prepare(&format!("PRAGMA table_info({table})"))
        .map_err(fail)?;
    let columns: Vec<String> = statement
        .query_map([], |row| row.get::<_, String>(1))
        .map_err(fail)?
        .collect::<rusqlite::Result<_>>()
        .map_err(fail)?;
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|c| !columns.iter().any(|have| have == c))
        .collect();
    if !missing.is_empty() {
        return Err(InputError(format!(
            "{}: table `{table}` lacks the columns {} (it has: {})",
            path.display(),
            missing.join(", "),
            columns.join(", ")
        )));
    }
    Ok(columns)
}

fn read_events(db: &Connection, columns: &[String], input: &mut Input) -> rusqlite::Result<()> {
    let metadata = ["event_metadata", "metadata"]
        .into_iter()
        .find(|c| columns.iter().any(|have| have == c))
        .unwrap_or("NULL");
    let sql = format!(
        "SELECT rowid, thread_id, run_id, event_type, category, content, {metadata}, seq \
         FROM {EVENTS} ORDER BY rowid"
    );
    let mut statement = db.prepare(&sql)?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let origin = format!("{EVENTS} row {id}");
        match event_of(row, &origin, id) {
            Ok(event) => input.events.push(event),
            Err(why) => input.unreadable.push(format!("{origin}: {why}")),
        }
    }
    Ok(())
}

fn event_of(row: &rusqlite::Row<'_>, origin: &str, id: i64) -> Result<EventRow, String> {
    let text = |i: usize, name: &str| -> Result<String, String> {
        match row.get_ref(i).map_err(|e| e.to_string())? {
            ValueRef::Text(t) => {
                String::from_utf8(t.to_vec()).map_err(|_| format!("{name} is not UTF-8 text"))
            }
            ValueRef::Null => Err(format!("{name} is NULL")),
            other => Err(format!("{name} is {:?}, not text", other.data_type())),
        }
    };
    let seq = match row.get_ref(7).map_err(|e| e.to_string())? {
        ValueRef::Integer(n) => n,
        other => return Err(format!("seq is {:?}, not an integer", other.data_type())),
    };
    let metadata = match row.get_ref(6).map_err(|e| e.to_string())? {
        ValueRef::Text(t) => serde_json::from_slice(t).ok(),
        _ => None,
    };
    Ok(EventRow {
        origin: origin.to_string(),
        thread_id: text(1, "thread_id")?,
        run_id: text(2, "run_id")?,
        event_type: text(3, "event_type")?,
        category: text(4, "category")?,
        content: text(5, "content").unwrap_or_default(),
        metadata,
        seq,
        written: id,
        stream: EVENTS.to_string(),
    })
}

fn read_feedback(db: &Connection, input: &mut Input) -> rusqlite::Result<()> {
    let mut statement = db.prepare(&format!(
        "SELECT rowid, feedback_id, thread_id, run_id, message_id FROM {FEEDBACK} ORDER BY rowid"
    ))?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let origin = format!("{FEEDBACK} row {id}");
        let text = |i: usize| match row.get_ref(i) {
            Ok(ValueRef::Text(t)) => String::from_utf8(t.to_vec()).ok(),
            _ => None,
        };
        match (text(1), text(2), text(3)) {
            (Some(feedback_id), Some(thread_id), Some(run_id)) => {
                input.feedback.push(FeedbackRow {
                    origin,
                    feedback_id,
                    thread_id,
                    run_id,
                    message_id: text(4),
                })
            }
            _ => input.unreadable.push(format!(
                "{origin}: feedback_id, thread_id or run_id is not text"
            )),
        }
    }
    Ok(())
}
