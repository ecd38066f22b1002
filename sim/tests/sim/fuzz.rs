//! `histsim fuzz`: seed corpus, and crash inputs imported as scenario files that fail with their
//! bug planted and pass without.

use crate::histsim_cli;
use crate::support::temp_file;
use history::BugId;
use sim::fuzz::input::{decode, SCENARIO_MODE};
use sim::fuzz::target::{play, Played};
use sim::registry;
use sim::scenario_file::ScenarioFile;
use sim::workload::{StoreKind, WorldConfig};
use std::path::Path;

fn scenarios_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// The first generator-mode input of a small family that violates `id` with it planted: the
/// crash input a fuzzer would have written.
fn crash_input(workload: &str, id: BugId) -> Vec<u8> {
    let w = registry::by_name(workload).unwrap();
    for i in 0u8..64 {
        let data: Vec<u8> = std::iter::once(0)
            .chain((0..40u8).map(|j| j.wrapping_mul(31).wrapping_add(i.wrapping_mul(101))))
            .collect();
        if let Played::Violated(v) = play(w, &data, Some(id)) {
            if v.id == id {
                return data;
            }
        }
    }
    panic!("none of 64 {workload} inputs violates {id}: the generator lost that bug");
}

#[test]
fn import_turns_a_crash_input_into_a_scenario_that_fails_with_its_bug_only() {
    let (dir, crash) = temp_file("crash-0123456789abcdef", crash_input("display", BugId::P4));
    let out = dir.path().join("regressions");
    let (code, text) = histsim_cli(&[
        "fuzz".as_ref(),
        "import".as_ref(),
        crash.as_os_str(),
        "--workload".as_ref(),
        "display".as_ref(),
        "--planted".as_ref(),
        "P4".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{text}");
    let files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(text.contains(&files[0].display().to_string()), "{text}");
    let file = ScenarioFile::load(&files[0]).unwrap();
    assert_eq!(file.id, BugId::P4);
    assert!(file.origin.unwrap().contains("crash-0123456789abcdef"));
    let with = file.scenario.play(&WorldConfig::new(
        StoreKind::Memory,
        history::Planted::only(BugId::P4),
    ));
    assert_eq!(with.violations.first().map(|v| v.id), Some(BugId::P4));
    let (code, text) = histsim_cli(&["scenarios".as_ref(), files[0].as_os_str()]);
    assert_eq!(code, Some(0), "fails with P4 and passes without: {text}");
}

#[test]
fn import_refuses_inputs_with_nothing_to_reproduce() {
    let (dir, passing) = temp_file("passing", crash_input("display", BugId::P4));
    let garbage = dir.path().join("garbage");
    std::fs::write(&garbage, [SCENARIO_MODE, b'{', 0xff]).unwrap();
    let import = |file: &Path| {
        histsim_cli(&[
            "fuzz".as_ref(),
            "import".as_ref(),
            file.as_os_str(),
            "--workload".as_ref(),
            "display".as_ref(),
            "--out".as_ref(),
            dir.path().join("out").as_os_str(),
        ])
    };
    let (code, text) = import(&passing);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("the input passes"), "{text}");
    let (code, text) = import(&garbage);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("not a display input"), "{text}");
    assert!(!dir.path().join("out").exists());
}

#[test]
fn the_seed_corpus_holds_every_scenario_file_for_its_workload() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = scenarios_dir();
    let (code, text) = histsim_cli(&[
        "fuzz".as_ref(),
        "seed-corpus".as_ref(),
        "--scenarios".as_ref(),
        scenarios.as_os_str(),
        "--out".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{text}");
    let files = sim::scenario_file::discover(&scenarios).unwrap();
    let mut inputs = 0;
    for w in registry::REGISTRY {
        let Ok(entries) = std::fs::read_dir(dir.path().join(format!("sim_{}", w.name()))) else {
            continue;
        };
        for entry in entries {
            let data = std::fs::read(entry.unwrap().path()).unwrap();
            let scenario = decode(*w, &data).unwrap();
            assert_eq!(scenario.workload().name(), w.name());
            inputs += 1;
        }
    }
    assert_eq!(inputs, files.len());
}

#[test]
fn an_empty_corpus_run_refuses_a_name_whose_corpus_holds_inputs() {
    // A second run of a name grows the first one's corpus folder; with `--empty-corpus` that
    // would measure time to detection from a corpus that already found the bug. Refused before
    // anything is built, and the earlier inputs are kept.
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("again").join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("earlier-input"), [0u8; 41]).unwrap();
    let (code, text) = histsim_cli(&[
        "fuzz".as_ref(),
        "run".as_ref(),
        "--workload".as_ref(),
        "display".as_ref(),
        "--budget-s".as_ref(),
        "1".as_ref(),
        "--empty-corpus".as_ref(),
        "--name".as_ref(),
        "again".as_ref(),
        "--report-dir".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("holds inputs of an earlier run named again (1)"),
        "{text}"
    );
    assert!(corpus.join("earlier-input").exists());
    assert!(!dir.path().join("again").join("summary.json").exists());
}

/// The fuzz targets' rustc wrapper, run with `printf` for rustc: the arguments rustc would get.
fn wrapped_rustc_args(args: &[&str]) -> Vec<String> {
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/rustc-instrument-ours");
    let out = std::process::Command::new(wrapper)
        .arg("printf")
        .arg("%s\\n")
        .args(args)
        .output()
        .expect("the wrapper runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

const CARGO_FUZZ_FLAGS: [&str; 9] = [
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "--cfg",
    "fuzzing",
    "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
    "-Cllvm-args=-sanitizer-coverage-stack-depth",
    "-Cdebug-assertions",
];

#[test]
fn the_fuzz_wrapper_instruments_histsims_crates_and_not_the_registrys() {
    let ours = ["--crate-name", "sim", "/work/histsim/sim/src/lib.rs"];
    let args: Vec<&str> = ours.iter().chain(&CARGO_FUZZ_FLAGS).copied().collect();
    assert_eq!(
        wrapped_rustc_args(&args),
        args,
        "our crates: every flag, as given"
    );

    let theirs = [
        "--crate-name",
        "tokio",
        "/home/u/.cargo/registry/src/index.crates.io-x/tokio-1.0.0/src/lib.rs",
        "--cfg",
        "feature=\"a b\"",
    ];
    let args: Vec<&str> = theirs.iter().chain(&CARGO_FUZZ_FLAGS).copied().collect();
    let kept: Vec<&str> = theirs.iter().copied().chain(["--cfg", "fuzzing"]).collect();
    assert_eq!(
        wrapped_rustc_args(&args),
        kept,
        "a registry crate: no coverage instrumentation, no debug assertions, the rest as given"
    );
}
