//! A team testing its own system: from a red seed to a regression file in their directory that
//! passes once the system is fixed (issue 48). The "broken system" is `histsim serve runs
//! --planted R14` (a store that answers `put_if_absent` wrongly), the fixed one `histsim serve
//! runs`; R14 fires on seed 1 of the runs workload.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The built binary, as a user's `--sut` command names it.
const BIN: &str = env!("CARGO_BIN_EXE_histsim");

/// histsim run directly, as an installed binary is: in `dir`, without the variables `cargo
/// test` set for this process (a child inherits them, and `CARGO` with `CARGO_PKG_NAME=sim`
/// is what `cargo run` sets). `extra_env`: variables to set.
fn histsim_in(dir: &Path, args: &[&str], extra_env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(dir)
        .env_remove("CARGO")
        .env_remove("CARGO_PKG_NAME");
    for (name, value) in extra_env {
        command.env(name, value);
    }
    let out = command.output().expect("histsim runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("histsim-uw-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn broken() -> String {
    format!("{BIN} serve runs --planted R14")
}

fn fixed() -> String {
    format!("{BIN} serve runs")
}

#[test]
fn printed_replay_lines_use_the_name_histsim_was_run_by() {
    let dir = temp_dir("names");
    let args = [
        "run",
        "--seeds",
        "1..2",
        "--workload",
        "runs",
        "--planted",
        "R14",
        "--no-shrink",
        "--quiet",
        "--report-dir",
        "reports",
    ];
    let (code, text) = histsim_in(&dir, &args, &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("replay: histsim replay --seed 1 --workload runs --planted R14"),
        "{text}"
    );
    assert!(!text.contains("cargo run"), "{text}");
    // Started by `cargo run` in this repository, the same line is the cargo form.
    let cargo = [("CARGO", "cargo"), ("CARGO_PKG_NAME", "sim")];
    let (_, text) = histsim_in(&dir, &args, &cargo);
    assert!(
        text.contains("replay: cargo run --release -p sim -- replay --seed 1"),
        "{text}"
    );
    // The help's `--sut` example names a program a user can start: installed, `histsim`;
    // through cargo, the built binary (cargo itself is no system under test).
    let (_, help) = histsim_in(&dir, &["run", "--help"], &[]);
    assert!(help.contains("--sut \"histsim serve display\""), "{help}");
    let (_, help) = histsim_in(&dir, &["run", "--help"], &cargo);
    assert!(!help.contains("\"histsim serve"), "{help}");
    assert!(help.contains("histsim serve display\""), "{help}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_regression_of_your_system_goes_to_your_directory_and_passes_once_fixed() {
    let dir = temp_dir("regressions");
    let repository_file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/regressions/r14-seed-1.toml");
    let broken = broken();
    let (code, text) = histsim_in(
        &dir,
        &[
            "run",
            "--seeds",
            "1..2",
            "--workload",
            "runs",
            "--sut",
            &broken,
            "--quiet",
            "--report-dir",
            "reports",
            "--shrink-cap-s",
            "5",
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{text}");
    let written = dir.join("histsim-regressions/r14-seed-1.toml");
    let file = std::fs::read_to_string(&written).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(file.contains(&format!("found_in = \"{broken}\"")), "{file}");
    assert!(!file.contains("\nsystem ="), "{file}");
    assert!(
        !repository_file.exists(),
        "written into the repository:\n{text}"
    );
    // The follow-up is the command that passes once the system is fixed.
    let follow_up = format!("histsim scenarios histsim-regressions --sut '{broken}'");
    assert!(text.contains(&follow_up), "{text}");

    let scenarios = |sut: &str| {
        histsim_in(
            &dir,
            &["scenarios", "histsim-regressions", "--sut", sut],
            &[],
        )
    };
    let (code, text) = scenarios(&fixed());
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("ok   histsim-regressions/r14-seed-1.toml [R14]"),
        "{text}"
    );
    assert!(text.contains("passes against"), "{text}");
    let (code, text) = scenarios(&broken);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("FAIL histsim-regressions/r14-seed-1.toml [R14]"),
        "{text}"
    );
    assert!(text.contains("still fails against"), "{text}");
    assert!(text.contains("R14"), "{text}");
    // The request to look at in the user's system, with both answers.
    assert!(text.contains("first wrong answer: put_if_absent"), "{text}");
    // The instance that answered is named with the command it runs.
    assert!(text.contains(&format!("store (`{broken}`)")), "{text}");
    // Without `--sut` the file plays against the system it was found in: still broken.
    let (code, text) = histsim_in(&dir, &["scenarios", "histsim-regressions"], &[]);
    assert_eq!(code, Some(1), "{text}");

    // `histsim shrink --sut` does the same, into the directory it is given.
    let (code, text) = histsim_in(
        &dir,
        &[
            "shrink",
            "--seed",
            "1",
            "--workload",
            "runs",
            "--sut",
            &broken,
            "--time-cap-s",
            "2",
            "--regressions-dir",
            "mine",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(dir.join("mine/r14-seed-1.toml").is_file(), "{text}");
    assert!(text.contains("histsim scenarios mine --sut"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bugs_on_a_system_without_planted_switches_says_so_and_hunts_histsims_side_only() {
    let dir = temp_dir("bugs");
    // Every display bug's switch lives in the display system: nothing is left to hunt.
    let display = format!("{BIN} serve display --without-planted");
    let (code, text) = histsim_in(
        &dir,
        &["bugs", "--sut", &display, "--clean-seeds", "1"],
        &[],
    );
    assert_eq!(code, Some(6), "{text}");
    assert!(
        text.contains("does not declare `planted` in its hello"),
        "{text}"
    );
    assert!(text.contains("no planted bug to hunt"), "{text}");
    assert!(!text.contains("none"), "ground through a hunt:\n{text}");
    // Naming such a bug is bad usage, said before any seed runs.
    let (code, text) = histsim_in(&dir, &["bugs", "--sut", &display, "--only", "P4"], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("P4 cannot be planted in it"), "{text}");
    // R1 lives in histsim's runs world (the history view): planted there, whatever the system.
    let runs = format!("{BIN} serve runs --without-planted");
    let (code, text) = histsim_in(
        &dir,
        &[
            "bugs",
            "--sut",
            &runs,
            "--only",
            "R1",
            "--max-seeds",
            "3",
            "--clean-seeds",
            "1",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("detected 1/1"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
