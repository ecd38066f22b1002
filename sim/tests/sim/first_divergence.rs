//! A failing seed names the first request whose answer departs from the model (op, request id,
//! simulated time, who answered, both answers trimmed to the differing part) in the terminal,
//! in `summary.md` and in `summary.json`, and shows the trace lines its violation concerns.

use super::histsim_cli;
use super::support::histsim_campaign;
use serde_json::Value;

/// Runs `histsim run` of `workload` with `planted` over `seeds` into a temporary report
/// directory: the terminal's text, summary.md and summary.json.
fn failing_campaign(workload: &str, planted: &str, seeds: &str) -> (String, String, Value) {
    let reports = tempfile::tempdir().expect("a temporary directory");
    let flags = ["--planted", planted, "--name", "diverged"];
    let (code, out) = histsim_campaign(reports.path(), workload, seeds, &flags);
    assert_eq!(code, Some(1), "{out}");
    let dir = reports.path().join("diverged");
    let md = std::fs::read_to_string(dir.join("summary.md")).expect("summary.md");
    let json = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    (out, md, serde_json::from_str(&json).expect("JSON"))
}

/// A campaign of `workload` with `id` planted over `seeds` whose first wrong answer is to `op`:
/// the terminal's text, summary.md and that divergence.
fn failing_at(workload: &str, id: &str, seeds: &str, op: &str) -> (String, String, Value) {
    let (out, md, summary) = failing_campaign(workload, id, seeds);
    let d = first_divergence(&summary, id);
    assert_eq!(d["op"], op, "{d}");
    (out, md, d.clone())
}

/// What the terminal shows after its heading of the trace lines the first violation concerns.
fn concerned_lines(out: &str) -> &str {
    out.split("the trace lines the first violation concerns:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no concerned trace lines:\n{out}"))
}

/// The first violation of the first failing seed has its divergence's every field, in words.
fn first_divergence<'a>(summary: &'a Value, id: &str) -> &'a Value {
    let v = &summary["failures"][0]["violations"][0];
    assert_eq!(v["id"], id, "{v}");
    let d = &v["first_divergence"];
    for field in ["op", "by", "answered", "expected"] {
        let text = d[field].as_str().unwrap_or_default();
        assert!(!text.is_empty(), "no {field}: {v}");
        assert!(
            !text.contains("{ ") && !text.contains("Some("),
            "{field}: {text}"
        );
    }
    for field in ["request", "at_us"] {
        assert!(d[field].is_u64(), "no {field}: {v}");
    }
    d
}

#[test]
fn a_runs_failure_names_its_first_wrong_answer_everywhere() {
    let (out, md, d) = failing_at("runs", "R2", "1..2", "views /history");
    assert!(
        d["answered"]
            .as_str()
            .unwrap_or_default()
            .ends_with("messages"),
        "{d}"
    );
    let line = format!(
        "first wrong answer: views /history (request {} at {}us",
        d["request"], d["at_us"]
    );
    assert!(out.contains(&line), "{line}\n{out}");
    assert!(md.contains("First wrong answers:"), "{md}");
    assert!(
        md.contains(&format!("| R2 | `views /history` | {} |", d["request"])),
        "{md}"
    );
    // The trace shown is the read's own line, stamped at its time.
    let first = concerned_lines(&out).lines().next().unwrap_or_default();
    assert!(
        first.contains(&format!("{}us views ", d["at_us"])),
        "{first}"
    );
}

#[test]
fn a_display_failure_names_the_read_and_the_duplicated_deliveries() {
    let (out, md, d) = failing_at("display", "P4", "1..2", "history read");
    assert!(
        d["by"].as_str().unwrap_or_default().starts_with("replica-"),
        "{d}"
    );
    assert!(md.contains("| P4 | `history read` |"), "{md}");
    let shown: Vec<&str> = concerned_lines(&out)
        .lines()
        .take_while(|l| l.starts_with("  "))
        .collect();
    // The read's answer and the deliveries of the duplicated steps, not the last polls.
    let polls = shown.iter().filter(|l| l.contains("answer turn=")).count();
    assert!(polls <= 2, "{shown:#?}");
    assert!(
        shown
            .iter()
            .any(|l| l.contains(" persist step=") && l.contains("copy=1")),
        "{shown:#?}"
    );
}

/// The first wrong answer `histsim replay` prints for the catalog scenario `file` with `id`
/// planted: its op, request id and simulated time, and the trace line of that time naming the
/// call (`delete run-1: ...` stamped at the divergence's time).
fn replayed_divergence(file: &str, id: &str) -> (String, u64, u64, Vec<String>) {
    let path = format!("{}/../scenarios/{file}.toml", env!("CARGO_MANIFEST_DIR"));
    let (_, out) = histsim_cli(&["replay", "--scenario", &path, "--planted", id, "--trace"]);
    let first = out
        .lines()
        .skip_while(|l| !l.starts_with(&format!("violation [{id}]")))
        .nth(1)
        .and_then(|l| l.strip_prefix("  first wrong answer: "))
        .unwrap_or_else(|| panic!("no first wrong answer under [{id}]:\n{out}"));
    let (op, rest) = first.split_once(" (request ").expect("a request");
    let (request, rest) = rest.split_once(" at ").expect("a time");
    let at_us: u64 = rest
        .split_once("us, ")
        .expect("who answered")
        .0
        .parse()
        .expect("us");
    let stamp = format!("{at_us}us ");
    let lines = out
        .lines()
        .filter(|l| l.trim_start().starts_with(&stamp))
        .map(str::to_string)
        .collect();
    (
        op.to_string(),
        request.parse().expect("an id"),
        at_us,
        lines,
    )
}

#[test]
fn deletions_receipts_feedback_and_refused_deliveries_name_their_call() {
    let cases = [
        (
            "runs/r13_a_deletion_hands_out_the_deleted_runs_seqs_again",
            "R13",
            "max_seq after delete_by_run",
            "delete run-2: ",
        ),
        (
            "runs/r14_a_receipt_is_found_on_another_run",
            "R14",
            "put_if_absent",
            "receipt ",
        ),
        (
            "runs/r15_a_deletion_leaves_the_runs_other_rows",
            "R15",
            "delete_by_run",
            "delete run-1: ",
        ),
        (
            "runs/r23_a_thread_deletion_leaves_the_runs_traces",
            "R23",
            "delete_by_thread",
            "delete thread t: ",
        ),
        (
            "runs/r21_anonymous_feedback_is_left_out_of_the_counts",
            "R21",
            "aggregate_by_run",
            "feedback reads ",
        ),
        (
            "runs/r22_withdrawn_feedback_comes_back_grouped",
            "R22",
            "list_by_thread_grouped",
            "feedback reads ",
        ),
        (
            "display/p15_a_copy_of_a_stored_row_is_refused",
            "P15",
            "append",
            "replica-1 persist step=1 copy=0 error",
        ),
        (
            "runs/r24_a_deleted_runs_page_answers_an_internal_error",
            "R24",
            "list_messages_by_run",
            "delete run-1: ",
        ),
    ];
    for (file, id, op, line) in cases {
        let (shown, request, at_us, stamped) = replayed_divergence(file, id);
        assert_eq!(shown, op, "{file}");
        assert!(
            request > 0 && at_us > 0,
            "{file}: request {request} at {at_us}us"
        );
        assert!(
            stamped.iter().any(|l| l.contains(line)),
            "{file}: no `{line}` at {at_us}us: {stamped:#?}"
        );
    }
}
