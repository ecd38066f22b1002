//! A green verdict means the system was checked (issue 46): every wait on a system under test
//! follows a flag (`hello` and `open` the start timeout), a hung system ends its seed as a broken
//! world that is never shrunk as if it passed, a command that cannot run is a usage error before
//! the first seed, and answers are compared by what they mean, not by how their JSON is spelled.
//!
//! Only the hang tests depend on time, and only through a system that never answers: any
//! timeout, with or without its grace, ends them with the same outcome.

use super::histsim_cli;
use super::support::diff_display;
use super::support::{assert_contains_all, histsim_campaign, histsim_run};
use sim::sut::{check_command, Breach, SutOptions, SutProcess, START_TIMEOUT_FLAG};
use std::path::Path;

fn histsim() -> &'static str {
    env!("CARGO_BIN_EXE_histsim")
}

/// A system that never answers `hello`: it does not even read it (`exec` leaves no shell
/// behind whose child would outlive the kill).
const HANGS_AT_HELLO: &str = "exec sleep 100000 </dev/null";

/// `histsim ARGS` against `hung`, a system that never answers, given little time to start, with
/// its reports in `out`: it exits with the broken world's code and says it did not shrink. The
/// output.
fn not_shrunk(args: &[&str], hung: &str, out: &Path) -> String {
    let out = out.to_str().expect("a UTF-8 path");
    let tail = ["--sut", hung, "--sut-start-timeout-ms", "300", "--out", out];
    let (code, text) = histsim_cli(&[args, &tail].concat());
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("broken world, not shrunk"), "{text}");
    text
}

#[test]
fn a_hello_that_hangs_is_ended_within_the_start_timeout_whatever_the_request_timeout() {
    let e = SutProcess::start(SutOptions {
        start_timeout_ms: 300,
        // The request timeout does not apply to `hello`: were it waited for, this test would
        // take a minute and still fail on the flag named below.
        timeout_ms: 60_000,
        ..SutOptions::new(HANGS_AT_HELLO)
    })
    .err()
    .expect("a hung hello is a breach");
    assert_eq!(e.request, "#1 hello");
    assert!(
        matches!(&e.breach, Breach::Timeout { ms: 300, flag, .. } if *flag == START_TIMEOUT_FLAG),
        "{e}"
    );
    let shown = e.to_string();
    assert!(
        shown.contains("no answer within 300 ms (--sut-start-timeout-ms)"),
        "{shown}"
    );
}

#[test]
fn an_open_that_hangs_is_ended_within_the_start_timeout() {
    let hello = r#"read line; echo '{"id":1,"ok":{"system":"slow","version":"0","protocol":1,"ops":["hello","open","close"]}}'"#;
    let mut sut = SutProcess::start(SutOptions {
        start_timeout_ms: 300,
        timeout_ms: 60_000,
        ..SutOptions::new(format!("{hello}; read line; exec sleep 100000"))
    })
    .expect("greets");
    let e = sut
        .call(&sim::sut::protocol::Request::Open {
            data_dir: std::env::temp_dir().display().to_string(),
            options: sim::sut::protocol::OpenOptions {
                store: "memory".into(),
                planted: None,
                crashes: false,
            },
        })
        .expect_err("a hung open is a breach");
    assert_eq!(e.request, "#2 open");
    assert!(
        matches!(&e.breach, Breach::Timeout { ms: 300, flag, .. } if *flag == START_TIMEOUT_FLAG),
        "{e}"
    );
}

#[test]
fn a_hung_seed_is_a_broken_world_and_not_shrunk_as_if_it_passed() {
    let reports = tempfile::tempdir().expect("a temp dir");
    let dir = reports.path().to_str().expect("utf-8");
    let (code, text) = histsim_run(
        "display",
        "0..1",
        &[
            "--sut",
            HANGS_AT_HELLO,
            "--sut-start-timeout-ms",
            "300",
            "--report-dir",
            dir,
            "--shrink-out",
            dir,
        ],
    );
    assert_eq!(code, Some(3), "{text}");
    assert_contains_all(
        &text,
        &[
            "world failure",
            "--sut-start-timeout-ms",
            "seed 0: broken world, not shrunk",
        ],
    );
    assert!(!text.contains("nothing to shrink"), "{text}");
    // `histsim shrink` of that seed says the same, with the broken world's exit code.
    let shrink = ["shrink", "--seed", "0", "--workload", "display"];
    not_shrunk(&shrink, HANGS_AT_HELLO, reports.path());
}

/// `histsim diff` against a system that never answers: the difference is a broken world, which
/// is said as such (exit 3) and never shrunk into a difference file.
#[test]
fn a_diff_with_a_broken_world_is_not_shrunk() {
    let out = tempfile::tempdir().expect("a temporary directory");
    let diff = [
        "diff",
        "--workload",
        "runs",
        "--seeds",
        "0..1",
        "--sut",
        "in-process",
    ];
    let text = not_shrunk(&diff, "sleep 100", out.path());
    let written = std::fs::read_dir(out.path()).expect("readable").count();
    assert_eq!(written, 0, "no difference file for a broken world: {text}");
}

#[test]
fn a_sut_command_that_cannot_run_is_a_usage_error_before_any_seed() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let not_executable = dir.path().join("adapter.sh");
    std::fs::write(&not_executable, "#!/bin/sh\n").expect("written");
    let missing = dir.path().join("no-such-adapter");
    let cases = [
        (missing.display().to_string(), "does not exist"),
        (not_executable.display().to_string(), "is not executable"),
        (dir.path().display().to_string(), "is not a file"),
        (
            "histsim-no-such-program-46 serve runs".to_string(),
            "not a program on PATH",
        ),
        // Run by `sh -c` (a pipe), its first word plain: still checked.
        (
            "histsim-no-such-program-46 serve runs | cat".to_string(),
            "not a program on PATH",
        ),
    ];
    for (command, why) in cases {
        for workload in ["display", "runs"] {
            let (code, text) = histsim_run(workload, "0..3", &["--sut", &command]);
            assert_eq!(code, Some(2), "{command}: {text}");
            assert!(text.contains(why), "{command}: {text}");
            assert!(!text.contains("seed 0"), "no seed ran: {text}");
        }
        let (code, text) = histsim_cli(&["bugs", "--max-seeds", "3", "--sut", &command]);
        assert_eq!(code, Some(2), "bugs --sut {command}: {text}");
        assert!(text.contains(why), "bugs --sut {command}: {text}");
    }
    let (code, text) = diff_display(&missing.display().to_string(), &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("does not exist"), "{text}");
}

#[test]
fn only_a_plain_first_word_that_is_not_the_shells_own_is_checked() {
    assert!(check_command(&format!("{} serve runs", histsim())).is_ok());
    assert!(check_command("sh -c 'exit 0'").is_ok());
    // The shell's own words and what is not plain are the shell's business.
    assert!(check_command("read line; echo hi").is_ok());
    assert!(check_command("exec histsim-no-such-program-46 2>&1").is_ok());
    assert!(check_command("FOO=1 histsim-no-such-program-46").is_ok());
    assert!(check_command("'quoted program' x").is_ok());
    // Run directly (plain words), `exec` would be looked up as a program.
    assert!(check_command("exec histsim").is_err());
    assert!(check_command("   ").is_err());
}

#[test]
fn a_system_that_spells_its_json_differently_each_time_is_deterministic() {
    let adapter = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/adapters/shuffle_keys.py"
    );
    let reports = tempfile::tempdir().expect("a temp dir");
    for workload in ["runs", "display"] {
        let sut = format!("python3 {adapter} {} serve {workload}", histsim());
        let flags = ["--check-determinism", "50", "--sut", &sut];
        let (code, text) = histsim_campaign(reports.path(), workload, "0..6", &flags);
        assert_eq!(code, Some(0), "{workload}: {text}");
        assert!(text.contains("every trace hash matched"), "{text}");
    }
}
