//! `histsim project`: a thread's history from an export of persisted rows (bring your own rows).

use std::io::Write as _;
use std::process::{Command, Output};

use serde_json::{json, Value};

use super::support::assert_exit;

const THREAD: &str = "665f1c0a0000000000000001";
const SHOWN: &str = "665f1c0a00000000000000d1";
const HIDDEN: &str = "665f1c0a00000000000000d2";

/// A persisted row in the platform's shape.
fn row(class: &str, display: &str, event_id: &str, parents: &[&str], data: Value) -> Value {
    json!({
        "agent_class": class,
        "agent_id": format!("{class}-1"),
        "thread_id": THREAD,
        "display_id": display,
        "run_id": "run-1",
        "event_id": event_id,
        "event_type": "display_event",
        "event_name": parents[0],
        "event_parents": parents,
        "event_data": data,
    })
}

fn user(event_id: &str, created_at: u64, text: &str) -> Value {
    let blocks = json!([{"block_type": "text", "text": text}]);
    let data = json!({"created_at": created_at, "messages": [
        {"role": "user", "additional_kwargs": {}, "blocks": blocks}]});
    row(
        "UserAgent",
        SHOWN,
        event_id,
        &["UserMessageEvent", "StartEvent"],
        data,
    )
}

fn chunk(display: &str, event_id: &str, created_at: u64, text: &str) -> Value {
    let data = json!({"created_at": created_at, "content": text});
    row("LeadAgent", display, event_id, &["ChunkEvent"], data)
}

fn stop(event_id: &str, created_at: u64, answer: &str) -> Value {
    let message = json!({"role": "assistant", "contents": [{"type": "text", "text": answer}]});
    let data = json!({"created_at": created_at, "output_messages": [message]});
    row(
        "LeadAgent",
        SHOWN,
        event_id,
        &["LLMStopEvent", "StopEvent"],
        data,
    )
}

/// Runs `histsim project FILE --thread THREAD ARGS` over `lines`.
fn project(lines: &[String], args: &[&str]) -> Output {
    let mut file = tempfile::NamedTempFile::new().expect("a temp file");
    for line in lines {
        writeln!(file, "{line}").expect("written");
    }
    Command::new(env!("CARGO_BIN_EXE_histsim"))
        .arg("project")
        .arg(file.path())
        .args(["--thread", THREAD])
        .args(args)
        .output()
        .expect("histsim runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A user turn, a chunk, a hidden nested chunk, a copy of the chunk and the primary's stop.
fn good_export() -> Vec<String> {
    [
        user("u1", 10, "hello"),
        chunk(SHOWN, "c1", 20, "Hi "),
        chunk(HIDDEN, "h1", 25, "nested secret"),
        chunk(SHOWN, "c1", 20, "Hi "),
        stop("s1", 30, "Hi there"),
    ]
    .iter()
    .map(Value::to_string)
    .collect()
}

#[test]
fn a_good_export_prints_the_history_and_passes_the_checks() {
    let out = project(
        &good_export(),
        &["--primary", "LeadAgent:LeadAgent-1", "--check"],
    );
    let text = stdout(&out);
    assert_exit(
        out.status.code(),
        &text,
        0,
        &["user: hello", "assistant: Hi there"],
    );
    assert!(!text.contains("nested secret"), "{text}");
    for check in [
        "duplicate event ids",
        "content on hidden displays",
        "malformed rows",
    ] {
        assert!(text.contains(&format!("check {check}: ok")), "{text}");
    }
    assert!(text.contains("1 copies of earlier deliveries"), "{text}");

    let out = project(&good_export(), &["--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    // Without a primary agent the stop supplies nothing.
    assert_eq!(
        doc["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hello"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi "}]},
        ])
    );
    assert_eq!(doc["warnings"], json!([]));
}

#[test]
fn extended_json_is_read_as_plain_values() {
    let mut marker = user("u1", 0, "hello");
    marker["_id"] = json!({"$oid": "665f1c0a0000000000000fff"});
    marker["event_data"]["created_at"] = json!({"$numberLong": "1717000000000000000"});
    marker["created_at"] = json!({"$date": {"$numberLong": "1717000000000"}});
    let mut answer = chunk(SHOWN, "c1", 0, "Hi");
    answer["event_data"]["created_at"] = json!({"$numberLong": "1717000000000000001"});
    answer["thread_id"] = json!({"$oid": THREAD});
    let lines = [marker.to_string(), answer.to_string()];
    let out = project(&lines, &["--json", "--check"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(out.status.code(), Some(0), "{doc:#}");
    assert_eq!(doc["warnings"], json!([]));
    assert_eq!(doc["messages"][1]["content"][0]["text"], "Hi");
}

#[test]
fn a_malformed_line_is_reported_by_number_never_fatal() {
    let mut lines = good_export();
    lines.insert(1, "{not json".into());
    let mut late = chunk(SHOWN, "c9", 0, "lost");
    late["event_data"]["created_at"] = json!({"$numberLong": "soon"});
    lines.push(late.to_string());
    let out = project(&lines, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("line 2: not JSON"), "{text}");
    assert!(
        text.contains("line 7: extended JSON: `$numberLong` is not a decimal"),
        "{text}"
    );
    assert!(text.contains("warning (line 7)"), "{text}");
    assert!(text.contains("user: hello"), "{text}");
}

#[test]
fn check_fails_on_malformed_rows_and_on_two_events_with_one_id() {
    let mut lines = good_export();
    lines.push("[1, 2]".into());
    lines.push(chunk(SHOWN, "c1", 21, "another text under c1").to_string());
    let out = project(&lines, &["--check"]);
    let text = stdout(&out);
    assert_exit(
        out.status.code(),
        &text,
        1,
        &[
            "check malformed rows: FAILED",
            "line 6: not a JSON object",
            "check duplicate event ids: FAILED",
            "event_id c1: lines 2 and 7 are different events",
        ],
    );
    // Without --check the same export is projected and exits 0.
    assert_eq!(project(&lines, &[]).status.code(), Some(0));
}

#[test]
fn a_missing_file_or_a_bad_flag_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_histsim"))
        .args(["project", "/nonexistent/rows.jsonl", "--thread", THREAD])
        .output()
        .expect("histsim runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read /nonexistent/rows.jsonl"), "{err}");
    let out = project(&good_export(), &["--primary", "LeadAgent"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("CLASS:ID"));
    let out = project(&good_export(), &["--bogus"]);
    assert_eq!(out.status.code(), Some(2));
}
