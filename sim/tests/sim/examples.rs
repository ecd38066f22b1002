//! The examples people copy (`examples/`): the sample-data commands of their READMEs work on
//! `examples/data/`, and the Python run-event store passes a short campaign.

use super::support::dumped_kinds;
use super::support::{assert_contains_all, run_args};
use history::journal::{Journal, JournalOptions, MemStorage, Origin, Row, Speaker};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

/// The repository's `examples/` directory.
fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// `histsim ARGS` run from the repository's root: exit code, stdout, stderr.
fn histsim(args: &[&str]) -> (i32, String, String) {
    super::support::histsim_in(&examples().join(".."), args)
}

#[test]
fn histsim_project_reads_the_sample_display_rows() {
    let (code, out, err) = histsim(&[
        "project",
        "examples/data/display-rows.jsonl",
        "--thread",
        "665f1c0a0000000000000001",
        "--primary",
        "LeadAgent:LeadAgent-1",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("4 messages, 1 warnings"), "{out}");
    // The chunk that never reached the store is recovered from the primary agent's stop.
    assert!(
        out.contains("assistant: The capital of France is Paris."),
        "{out}"
    );
    assert!(
        !out.contains("atlas"),
        "a hidden display's text was shown: {out}"
    );
    assert!(out.contains("bad_created_at"), "{out}");
}

#[test]
fn histsim_runs_inspect_finds_the_sample_jsonl_store_clean() {
    let (code, out, err) = histsim(&["runs", "inspect", "examples/data/runs-store", "--all"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_contains_all(
        &out,
        &[
            "JSONL store, 2 threads, 12 events",
            "clean: nothing found in 2 threads",
        ],
    );
}

#[test]
fn histsim_journal_dump_prints_the_sample_journal() {
    let (code, out, err) = histsim(&["journal", "dump", "examples/data/sample.journal"]);
    assert_eq!(code, 0, "{out}{err}");
    let kinds = dumped_kinds(&out);
    assert_eq!(kinds, ["start", "append", "append", "append"], "{out}");
}

/// The long display scenario the pictures' size figure is timed on fails with P4 planted (its
/// page names it) and is over 10,000 trace events long.
#[test]
fn the_long_display_scenario_fails_with_p4_and_is_long() {
    let page = tempfile::tempdir().expect("a temporary directory");
    let html = page.path().join("long.html");
    let (code, out, err) = histsim(&[
        "replay",
        "--scenario",
        "examples/data/long-display.toml",
        "--planted",
        "P4",
        "--html",
        html.to_str().expect("a UTF-8 path"),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("P4"), "{out}");
    // `steps: N, trace events: N, simulated N ms`
    let events: u64 = out
        .lines()
        .find_map(|l| l.split("trace events: ").nth(1))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no trace-event count in:\n{out}"));
    assert!(events > 10_000, "{events} events");
    assert!(std::fs::metadata(&html).expect("the page").len() > 0);
}

/// Writes `examples/data/sample.journal` again with histsim's own journal code:
/// `cargo test -p sim --test sim regenerate_the_sample_journal -- --ignored`.
#[test]
#[ignore]
fn regenerate_the_sample_journal() {
    let storage = Arc::new(MemStorage::new());
    let mut j =
        Journal::create(storage.clone(), "j", JournalOptions::default(), None).expect("create");
    let turns = [
        (Speaker::Human, "What is the capital of France?"),
        (Speaker::Ai, "Paris."),
        (Speaker::Human, "Thanks!"),
    ];
    for (speaker, text) in turns {
        j.append(Origin::Main, vec![Row::text(speaker, Origin::Main, text)])
            .expect("append");
    }
    std::fs::write(examples().join("data/sample.journal"), storage.bytes("j")).expect("write");
}

/// Whether `python3` can be started; the Python examples are skipped (with a note) without it.
fn python3() -> bool {
    let found = Command::new("python3").arg("--version").output().is_ok();
    if !found {
        eprintln!("python3 not found: the Python example is not run");
    }
    found
}

#[test]
fn the_python_examples_pass_a_short_campaign() {
    if !python3() {
        return;
    }
    for (workload, sut) in [
        ("runs", "python3 examples/python-runs-store/store.py"),
        ("display", "python3 examples/python-display/display.py"),
    ] {
        let flags = ["--sut", sut, "--no-shrink", "--jobs", "2"];
        let (code, out, err) = histsim(&run_args(workload, "0..4", &flags));
        assert_eq!(code, 0, "{workload}: {out}{err}");
        assert!(out.contains("0 violations"), "{workload}: {out}");
    }
}
