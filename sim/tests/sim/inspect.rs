//! `histsim runs inspect`: a DeerFlow run-event store brought by the user, checked per thread,
//! opened read-only; bad input is a clear error naming what is wrong, an unreadable row a finding.

use super::support::{assert_exit, temp_file};
use history::runs::{Category, NewRunEvent, RunEventStore, SqliteRunEventStore};
use history::Planted;
use rusqlite::{params, Connection};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use super::histsim_cli;

fn inspect(path: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec![
        std::ffi::OsStr::new("runs"),
        std::ffi::OsStr::new("inspect"),
        path.as_os_str(),
    ];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    histsim_cli(&args)
}

/// The published ORM's tables (deerflow/persistence/models/run_event.py, feedback/model.py),
/// without the unique guard on (thread_id, seq) when `guarded` is false (a legacy table), in a
/// file `name` of a fresh temporary directory: the directory, the file's path and the database.
fn deerflow_db(name: &str, guarded: bool) -> (tempfile::TempDir, PathBuf, Connection) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join(name);
    let db = Connection::open(&path).expect("a database");
    let guard = if guarded {
        ", UNIQUE (thread_id, seq)"
    } else {
        ""
    };
    db.execute_batch(&format!(
        "CREATE TABLE run_events (id INTEGER PRIMARY KEY AUTOINCREMENT, thread_id VARCHAR(64) NOT NULL,
           run_id VARCHAR(64) NOT NULL, user_id VARCHAR(64), event_type VARCHAR(32) NOT NULL,
           category VARCHAR(16) NOT NULL, content TEXT, event_metadata JSON, seq INTEGER NOT NULL,
           created_at DATETIME{guard});
         CREATE TABLE feedback (feedback_id VARCHAR(64) PRIMARY KEY, run_id VARCHAR(64) NOT NULL,
           thread_id VARCHAR(64) NOT NULL, user_id VARCHAR(64), message_id VARCHAR(64),
           rating INTEGER NOT NULL, comment TEXT, created_at DATETIME);"
    ))
    .expect("the schema");
    (dir, path, db)
}

fn event(
    db: &Connection,
    thread: &str,
    run: &str,
    seq: i64,
    event_type: &str,
    category: &str,
    content: &str,
) {
    db.execute(
        "INSERT INTO run_events (thread_id, run_id, user_id, event_type, category, content, event_metadata, seq, created_at)
         VALUES (?1, ?2, NULL, ?3, ?4, ?5, '{}', ?6, '2026-12-01 10:00:00.000000')",
        params![thread, run, event_type, category, content, seq],
    )
    .expect("an insert");
}

fn feedback(db: &Connection, id: &str, thread: &str, run: &str, message: Option<&str>) {
    db.execute(
        "INSERT INTO feedback (feedback_id, run_id, thread_id, user_id, message_id, rating) VALUES (?1, ?2, ?3, 'u1', ?4, 1)",
        params![id, run, thread, message],
    )
    .expect("an insert");
}

/// A run as DeerFlow 0.1.7's journal writes it: start, a human and an AI message, end.
fn run(db: &Connection, thread: &str, run: &str, first_seq: i64) {
    event(db, thread, run, first_seq, "run.start", "lifecycle", "");
    let human = json!({"type": "human", "id": format!("{run}-h"), "content": "hi"}).to_string();
    event(
        db,
        thread,
        run,
        first_seq + 1,
        "llm.human.input",
        "message",
        &human,
    );
    let ai = json!({"type": "ai", "id": format!("{run}-a"), "content": "hello"}).to_string();
    event(
        db,
        thread,
        run,
        first_seq + 2,
        "llm.ai.response",
        "message",
        &ai,
    );
    event(db, thread, run, first_seq + 3, "run.end", "outputs", "{}");
}

fn kinds(json_text: &str) -> Vec<String> {
    let report: Value = serde_json::from_str(json_text).expect("the report is JSON");
    let mut kinds: Vec<String> = report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .flat_map(|t| t["findings"].as_array().cloned().unwrap_or_default())
        .map(|f| f["kind"].as_str().unwrap_or_default().to_string())
        .collect();
    kinds.sort();
    kinds
}

#[test]
fn a_database_written_by_histsims_own_store_and_a_clean_deerflow_one_have_nothing_to_report() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("histsim.sqlite");
    let store = SqliteRunEventStore::open(&path, Planted::none()).expect("the store");
    let put =
        |run: &str, event_type: &str, category: Category, content: Value, at: i64| NewRunEvent {
            thread_id: "t1".into(),
            run_id: run.into(),
            user_id: Some("u1".into()),
            event_type: event_type.into(),
            category,
            content: content.into(),
            metadata: json!({}),
            created_at_ns: at,
        };
    for (i, r) in ["r1", "r2"].iter().enumerate() {
        let at = i as i64 * 10;
        store
            .put_batch(vec![
                put(r, "run_start", Category::Lifecycle, json!(""), at),
                put(
                    r,
                    "human",
                    Category::Message,
                    json!({"type": "human", "content": "hi"}),
                    at + 1,
                ),
                put(r, "run_end", Category::Lifecycle, json!(""), at + 2),
            ])
            .expect("written");
    }
    drop(store);
    let (code, text) = inspect(&path, &["--all"]);
    assert_exit(
        code,
        &text,
        0,
        &[
            "thread t1: ok (6 events, 2 messages, 2 runs)",
            "clean: nothing found in 1 threads",
        ],
    );

    let (_other, path, db) = deerflow_db("deerflow.sqlite", true);
    run(&db, "t1", "r1", 1);
    run(&db, "t1", "r2", 5);
    feedback(&db, "f1", "t1", "r2", Some("r2-a"));
    drop(db);
    let (code, text) = inspect(&path, &[]);
    assert_exit(
        code,
        &text,
        0,
        &["SQLite database, 1 threads, 8 events, 1 feedback rows"],
    );
}

#[test]
fn every_defect_seed_003_leaves_behind_is_found_and_named_by_thread() {
    let (dir, path, db) = deerflow_db("legacy.sqlite", false);
    run(&db, "t1", "r1", 1);
    // r2: seq 5 and 6 lost (a gap), 7 given twice, written out of order, no end event.
    event(&db, "t1", "r2", 8, "run.start", "lifecycle", "");
    event(
        &db,
        "t1",
        "r2",
        7,
        "llm.human.input",
        "message",
        &json!({"id": "r2-h"}).to_string(),
    );
    event(
        &db,
        "t1",
        "r2",
        7,
        "llm.ai.response",
        "message",
        &json!({"id": "r2-a"}).to_string(),
    );
    // Feedback on a run the thread does not have, and on r1's message under r2's name.
    feedback(&db, "f1", "t1", "r9", None);
    feedback(&db, "f2", "t1", "r2", Some("r1-a"));
    // t2: one run with 1001 messages.
    event(&db, "t2", "r3", 1, "run.start", "lifecycle", "");
    for seq in 2..=1002 {
        event(&db, "t2", "r3", seq, "llm.ai.response", "message", "{}");
    }
    event(&db, "t2", "r3", 1003, "run.end", "outputs", "{}");
    drop(db);
    let before = std::fs::read(&path).expect("the file");
    let (code, text) = inspect(&path, &[]);
    assert_exit(
        code,
        &text,
        1,
        &[
            "thread t1: FOUND",
            "seqs missing below the highest (8): 5..=6",
            "seq 7 (run_events row 6, run_events row 7)",
            "run_events row 6 (seq 7) after run_events row 5 (seq 8)",
            "r2 (from seq 7)",
            "feedback row 1 (feedback f1) names run r9",
            "its message r1-a belongs to run r1",
            "1001 messages; a latest-1000 read",
            "hides the oldest 1: seq 2..=2",
        ],
    );
    let (code, json_text) = inspect(&path, &["--json"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        kinds(&json_text),
        [
            "feedback_unknown_run",
            "feedback_wrong_run",
            "hidden_by_latest_read",
            "out_of_order",
            "run_without_end",
            "seq_duplicate",
            "seq_gap"
        ]
    );
    // Read-only: not a byte changed, no journal left beside it.
    assert_eq!(std::fs::read(&path).expect("the file"), before);
    let beside: Vec<_> = std::fs::read_dir(dir.path()).expect("the dir").collect();
    assert_eq!(beside.len(), 1, "{beside:?}");
}

#[test]
fn an_unreadable_row_is_a_finding_naming_it_and_the_rest_is_still_checked() {
    let (_dir, path, db) = deerflow_db("bad-row.sqlite", true);
    run(&db, "t1", "r1", 1);
    db.execute(
        "INSERT INTO run_events (thread_id, run_id, event_type, category, content, seq) VALUES ('t1', 'r2', 'run.start', 'lifecycle', '', 'five')",
        [],
    )
    .expect("SQLite stores text in an integer column");
    db.execute(
        "INSERT INTO run_events (thread_id, run_id, event_type, category, content, seq) VALUES ('t1', 'r3', 'run.start', 'lifecycle', '', 6)",
        [],
    )
    .expect("an insert");
    drop(db);
    let (code, text) = inspect(&path, &[]);
    assert_exit(
        code,
        &text,
        1,
        &["unreadable: run_events row 5: seq is Text, not an integer"],
    );
    assert!(
        text.contains("r3 (from seq 6)"),
        "the rows after it are checked: {text}"
    );
}

#[test]
fn what_is_not_a_run_event_store_is_a_clear_error() {
    let (dir, text_file) = temp_file(
        "notes.txt",
        "these are not the rows you are looking for\n".repeat(200),
    );
    // SQLite databases of other tables, each file with its schema.
    let other = dir.path().join("other.sqlite");
    let narrow = dir.path().join("narrow.sqlite");
    for (path, schema) in [
        (&other, "CREATE TABLE messages (id INTEGER);"),
        (&narrow, "CREATE TABLE run_events (thread_id TEXT, run_id TEXT, event_type TEXT, category TEXT, content TEXT);"),
    ] {
        Connection::open(path)
            .and_then(|db| db.execute_batch(schema))
            .expect("a database");
    }
    for (path, said) in [
        (text_file, "not a SQLite database"),
        (other, "no table `run_events` (tables: messages)"),
        (narrow, "table `run_events` lacks the columns seq"),
        (dir.path().join("absent.sqlite"), "cannot read"),
        (dir.path().to_path_buf(), "no threads/ directory"),
    ] {
        let (code, text) = inspect(&path, &[]);
        assert_exit(code, &text, 2, &[said]);
    }
}

fn jsonl_line(thread: &str, run: &str, seq: i64, event_type: &str, category: &str) -> String {
    json!({"thread_id": thread, "run_id": run, "event_type": event_type, "category": category,
           "content": "", "metadata": {}, "seq": seq, "created_at": "2026-12-01T10:00:00+00:00"})
    .to_string()
}

#[test]
fn a_jsonl_store_is_read_file_by_file_and_a_bad_line_is_named() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let runs = dir.path().join(".deer-flow/threads/t1/runs");
    std::fs::create_dir_all(&runs).expect("dirs");
    let r1 = [
        jsonl_line("t1", "r1", 1, "run.start", "lifecycle"),
        jsonl_line("t1", "r1", 3, "llm.ai.response", "message"),
        jsonl_line("t1", "r1", 2, "llm.human.input", "message"),
        "{\"thread_id\": \"t1\", \"run_id\"".to_string(),
        jsonl_line("t1", "r1", 4, "run.end", "outputs"),
    ];
    std::fs::write(runs.join("r1.jsonl"), r1.join("\n") + "\n").expect("written");
    let r2 = [
        jsonl_line("t1", "r2", 5, "run.start", "lifecycle"),
        jsonl_line("t1", "r9", 6, "llm.human.input", "message"),
    ];
    std::fs::write(runs.join("r2.jsonl"), r2.join("\n") + "\n").expect("written");
    // The directory holding .deer-flow/, as a user would point at a deployment's working dir.
    let (code, text) = inspect(dir.path(), &[]);
    assert_exit(code, &text, 1, &["JSONL store, 1 threads, 5 events", ".deer-flow/threads/t1/runs/r1.jsonl:3 (seq 2) after .deer-flow/threads/t1/runs/r1.jsonl:2 (seq 3)", "unreadable: .deer-flow/threads/t1/runs/r1.jsonl:4: not JSON", "r2.jsonl:2: a record of thread \"t1\", run \"r9\" in another run's file", "r2 (from seq 5)"]);
}
