//! A system under test that answers `err` where the contract asks for an answer is caught, op
//! by op: histsim's reference adapter behind `sim/tests/adapters/err_on.py`, which answers
//! `internal` to every request of one op, must fail a short campaign under that op's catalog ID
//! (R24 for every run-event store op, P15 for a display append, P1 for a reconstruction or a
//! `project`). A
//! check that passed over error answers would let such a store through with "ok".

use super::support::python_missing;
use super::support::{assert_contains_all, histsim_campaign};

fn adapter() -> String {
    format!(
        "{}/tests/adapters/err_on.py",
        env!("CARGO_MANIFEST_DIR").trim_end_matches('/')
    )
}

/// The `--sut` command of a misbehaving adapter (`adapter`: its script and arguments) in
/// front of `histsim serve workload`.
fn sut_behind(adapter: &str, workload: &str) -> String {
    let histsim = env!("CARGO_BIN_EXE_histsim");
    format!("python3 {adapter} -- {histsim} serve {workload}")
}

/// `histsim run` of `seeds` of `workload` against `sut`, without shrinking, quiet, the report
/// under `NAME` of a fresh temporary directory, with `extra` arguments: exit code, output and
/// that directory.
fn campaign_against(
    workload: &str,
    seeds: &str,
    sut: &str,
    name: &str,
    extra: &[&str],
) -> (Option<i32>, String, tempfile::TempDir) {
    let reports = tempfile::tempdir().expect("a temporary directory");
    let flags = ["--sut", sut, "--name", name];
    let (code, out) = histsim_campaign(reports.path(), workload, seeds, &[&flags, extra].concat());
    (code, out, reports)
}

/// Runs `seeds` of `workload` against the reference adapter answering `internal` to `op`:
/// exit code and output.
fn campaign_erring_on(workload: &str, op: &str, seeds: &str) -> (Option<i32>, String) {
    let sut = sut_behind(&format!("{} internal {op}", adapter()), workload);
    // One seed at a time, in order: the campaign stops at the first failing seed and starts no
    // other (a store failing every write makes a seed slow: each journal flush re-sends its
    // whole growing buffer).
    let name = format!("err-on-{op}");
    let (code, out, _reports) = campaign_against(workload, seeds, &sut, &name, &["--jobs", "1"]);
    (code, out)
}

fn assert_caught(workload: &str, op: &str, seeds: &str, id: &str) {
    let (code, out) = campaign_erring_on(workload, op, seeds);
    assert_eq!(
        code,
        Some(1),
        "internal errors on every {op} must fail the campaign:\n{out}"
    );
    assert!(
        out.contains(&format!("invariant: {id}")),
        "internal errors on every {op} must be found under {id}:\n{out}"
    );
}

/// Every op of the runs workload's store, reads and writes alike: R24. Each op's seeds start at
/// one known to send it (the campaign stops at its first failure); the window is slack for
/// generator changes, and a window that no longer sends the op fails here, never passes.
#[test]
fn internal_errors_on_any_runs_op_are_r24() {
    if python_missing() {
        return;
    }
    for (op, seeds) in [
        ("put_batch", "0..8"),
        ("list_messages", "0..8"),
        ("count_messages", "0..8"),
        ("list_events", "0..8"),
        ("dump", "0..8"),
        ("max_seq", "15..23"),
        ("delete_by_run", "15..23"),
        ("put_if_absent", "1..9"),
        ("list_messages_by_run", "0..8"),
        ("list_events_filtered", "1..9"),
        ("get_last_visible_ai_seq_by_run", "7..15"),
        ("list_messages_as", "1..9"),
        ("count_messages_as", "1..9"),
        ("delete_by_thread", "42..50"),
    ] {
        assert_caught("runs", op, seeds, "R24");
    }
}

/// The display system's ops: a refused append is P15, a failed reconstruction P1.
#[test]
fn internal_errors_on_display_ops_are_caught() {
    if python_missing() {
        return;
    }
    assert_caught("display", "append", "0..4", "P15");
    assert_caught("display", "reconstruct", "0..4", "P1");
    assert_caught("display", "project", "0..4", "P1");
}

/// `project` answers the history of exactly the rows given: a projector that leaves one out
/// (`sim/tests/adapters/project_drops_a_row.py`) is found, though every reconstruction is right.
#[test]
fn a_project_of_other_rows_than_given_is_p2() {
    if python_missing() {
        return;
    }
    let script = "tests/adapters/project_drops_a_row.py";
    let dir = env!("CARGO_MANIFEST_DIR").trim_end_matches('/');
    let sut = sut_behind(&format!("{dir}/{script}"), "display");
    let name = "project-drops-a-row";
    let (code, out, _reports) = campaign_against("display", "0..8", &sut, name, &["--jobs", "1"]);
    assert_eq!(code, Some(1), "{out}");
    assert_contains_all(
        &out,
        &[
            "invariant: P2",
            "`project` of the rows the store holds differs",
        ],
    );
}

/// The report counts every answer op by op: the errors of a store answering `internal` to every
/// `count_messages` are there, in the terminal and in `summary.json`, beside the ops it answered.
#[test]
fn every_answer_is_counted_op_by_op() {
    if python_missing() {
        return;
    }
    let sut = sut_behind(&format!("{} internal count_messages", adapter()), "runs");
    let (code, out, reports) = campaign_against("runs", "0..2", &sut, "tally", &["--keep-going"]);
    assert_eq!(code, Some(1), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("answers: count_messages: "))
        .unwrap_or_else(|| panic!("no count_messages tally:\n{out}"));
    assert!(
        line.contains(", ok 0, err ") && line.ends_with(" internal"),
        "{line}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("answers: put_batch: ") && !l.contains("err")),
        "{out}"
    );
    let json = std::fs::read_to_string(reports.path().join("tally/summary.json"))
        .expect("summary.json written");
    let summary: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let answers = &summary["answers"];
    assert_eq!(
        answers["count_messages sent"], answers["count_messages err internal"],
        "{answers}"
    );
    assert!(
        answers["count_messages sent"].as_u64().unwrap_or(0) > 0,
        "{answers}"
    );
}
