//! What many of these tests do: run the `histsim` binary, run a clean campaign, hunt a family of
//! planted bugs, play a scenario file with and without its bug.

use history::BugId;
use sim::bugs::{hunt, Detection};
use sim::campaign::{run_campaign, CampaignConfig, CampaignResult};
use sim::run::{run_scenario_file, run_seed, RunConfig};
use sim::scenario_file::ScenarioFile;
use sim::workload::{StoreKind, WorkloadRun, WorldConfig};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh temporary directory holding one file, `name`, of `contents`: the directory (removed
/// when dropped) and the file's path.
pub fn temp_file(name: &str, contents: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, contents).expect("write");
    (dir, path)
}

/// The `histsim` binary, ready for arguments.
pub fn histsim_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_histsim"))
}

/// Runs `command` to its end: its exit code (`None` when a signal ended it), stdout and stderr.
pub fn finish(command: &mut Command) -> (Option<i32>, String, String) {
    let out = command.output().expect("histsim runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the `histsim` binary with `args`: its exit code, and its stdout then stderr.
pub fn histsim_cli<S: AsRef<OsStr>>(args: &[S]) -> (Option<i32>, String) {
    let (code, out, err) = finish(histsim_command().args(args));
    (code, out + &err)
}

/// `histsim diff --workload display` of histsim in process against `sut`, with `extra` arguments:
/// its exit code, and its stdout then stderr.
pub fn diff_display(sut: &str, extra: &[&str]) -> (Option<i32>, String) {
    let args = [
        "diff",
        "--workload",
        "display",
        "--sut",
        "in-process",
        "--sut",
        sut,
    ];
    histsim_cli(&[&args[..], extra].concat())
}

/// `histsim ARGS`: its exit code (-1 when a signal ended it), stdout and stderr apart.
pub fn histsim(args: &[&str]) -> (i32, String, String) {
    histsim_in(Path::new("."), args)
}

/// `histsim ARGS` run from `dir`: its exit code (-1 when a signal ended it), stdout and stderr.
pub fn histsim_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = finish(histsim_command().args(args).current_dir(dir));
    (code.unwrap_or(-1), out, err)
}

/// The `trace-hash:` line `histsim ARGS` prints (a replay), checking its stdout with `check`.
pub fn printed_trace_hash(args: &[&str], check: impl Fn(&str)) -> String {
    let (_, text, _) = histsim(args);
    check(&text);
    text.lines()
        .find_map(|l| l.strip_prefix("trace-hash: "))
        .unwrap_or_else(|| panic!("no trace-hash line in:\n{text}"))
        .to_string()
}

/// The `kind` of each JSON line `histsim journal dump` printed (`out`).
pub fn dumped_kinds(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["kind"].as_str().unwrap_or("").to_string()
        })
        .collect()
}

/// `workload` alone, on `store`.
pub fn only_on(workload: &str, store: StoreKind) -> RunConfig {
    RunConfig {
        store,
        ..RunConfig::only(workload)
    }
}

/// Each of `seeds` of `workload` alone plays one trace on either store: the store is not part of
/// the trace's randomness.
pub fn assert_stores_alike(workload: &str, seeds: &[u64]) {
    for &seed in seeds {
        let m = run_seed(seed, &only_on(workload, StoreKind::Memory));
        let s = run_seed(seed, &only_on(workload, StoreKind::Sqlite));
        assert_eq!((m.workload, s.workload), (workload, workload));
        assert_eq!(m.trace_hash, s.trace_hash, "seed {seed}");
    }
}

/// A campaign of `seeds` with `run` on two threads, every seed run (`stop_at_first`: or up to the
/// first failure).
pub fn campaign(
    run: RunConfig,
    seeds: std::ops::Range<u64>,
    stop_at_first: bool,
) -> CampaignResult {
    run_campaign(&CampaignConfig {
        seeds,
        shard: None,
        jobs: 2,
        stop_at_first,
        progress: false,
        budget: None,
        run,
    })
}

/// Each campaign, with `config` on its store, runs every one of its seeds, steps, and fails none.
pub fn assert_clean_campaigns(
    config: impl Fn(StoreKind) -> RunConfig,
    campaigns: [(StoreKind, std::ops::Range<u64>); 2],
) {
    for (store, seeds) in campaigns {
        let result = campaign(config(store), seeds.clone(), false);
        assert_eq!(result.seeds_run(), (seeds.end - seeds.start) as usize);
        if let Some(f) = result.failures.first() {
            panic!(
                "seed {} failed on {store:?}: {:?} {:?}\n{}",
                f.seed, f.violations, f.failure, f.options
            );
        }
        assert!(result.steps_total > 0);
    }
}

/// Hunts every catalog ID of `family` from random seeds: each is found under its own ID. The
/// detections, for what a family checks besides. The family's IDs come from the catalog itself
/// (history's own tests state each family's size), so a new ID is hunted with no edit here.
pub fn assert_family_found(family: char) -> Vec<Detection> {
    let ids: Vec<BugId> = BugId::ALL
        .iter()
        .copied()
        .filter(|id| id.family() == family)
        .collect();
    assert!(!ids.is_empty(), "the catalog has no {family} family");
    let found: Vec<Detection> = ids
        .into_iter()
        .map(|id| hunt(id, &RunConfig::new(), 0, 10_000, 2))
        .collect();
    for d in &found {
        assert!(
            d.detected(),
            "{}: fired {:?} after {:?} seeds ({:?})",
            d.id,
            d.fired,
            d.seeds_to_detection,
            d.message
        );
    }
    found
}

/// The committed scenario files of `area` (`scenarios/AREA`).
pub fn scenario_dir(area: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(area)
}

/// `file` played on `store` with its own bug planted, then with nothing planted.
pub fn played_with_and_without(
    file: &ScenarioFile,
    store: StoreKind,
) -> (WorkloadRun, WorkloadRun) {
    let world = WorldConfig::new(store, history::Planted::none());
    (
        run_scenario_file(file, &world, Some(file.id)),
        run_scenario_file(file, &world, None),
    )
}

/// `file` (at `path`) on `store` reports its own ID first with its bug planted, and passes without.
pub fn assert_reproduces_first(path: &Path, file: &ScenarioFile, store: StoreKind) {
    let (with_bug, without) = played_with_and_without(file, store);
    assert_eq!(
        with_bug.violations.first().map(|v| v.id),
        Some(file.id),
        "{} ({store:?}) with its bug: {:?}",
        path.display(),
        with_bug.violations
    );
    assert_passes_without(path, store, &without);
}

/// `without` (the scenario at `path`, played on `store` with nothing planted) passed.
pub fn assert_passes_without(path: &Path, store: StoreKind, without: &WorkloadRun) {
    assert!(
        without.violations.is_empty() && without.failure.is_none(),
        "{} ({store:?}) without its bug: {:?} {:?}",
        path.display(),
        without.violations,
        without.failure
    );
}

/// Whether python3, which runs the misbehaving adapters of `sim/tests/adapters`, is missing
/// here; when it is, says that the test calling is skipped.
pub fn python_missing() -> bool {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: no python3 to run the misbehaving adapter");
    }
    !found
}

/// Seed `seed` of `workload` played twice in this process on `store`: the same trace hash both
/// times, a trace of more than `events_min` events. The first play's report.
pub fn replayed_alike(
    workload: &str,
    seed: u64,
    store: StoreKind,
    events_min: u64,
) -> sim::run::SeedReport {
    let config = only_on(workload, store);
    let (a, b) = (run_seed(seed, &config), run_seed(seed, &config));
    assert_eq!(a.workload, workload);
    assert_eq!(a.trace_hash, b.trace_hash, "seed {seed} {store:?}");
    assert!(
        a.trace_events > events_min,
        "seed {seed} ran almost nothing"
    );
    a
}

/// Each of `parts` stands in `text` (a command's output or a report), naming the one missing.
pub fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part} missing from:\n{text}");
    }
}

/// A command that ended with exit code `code` and printed `text`: the code is `expected` and
/// the text holds each of `parts`.
pub fn assert_exit(code: Option<i32>, text: &str, expected: i32, parts: &[&str]) {
    assert_eq!(code, Some(expected), "{text}");
    assert_contains_all(text, parts);
}

/// The arguments of `histsim run --workload WORKLOAD --seeds SEEDS --quiet`, then `extra`.
pub fn run_args<'a>(workload: &'a str, seeds: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let args = ["run", "--workload", workload, "--seeds", seeds, "--quiet"];
    [&args[..], extra].concat()
}

/// `histsim run --workload WORKLOAD --seeds SEEDS --quiet` with `extra` arguments: its exit
/// code, and its stdout then stderr.
pub fn histsim_run(workload: &str, seeds: &str, extra: &[&str]) -> (Option<i32>, String) {
    histsim_cli(&run_args(workload, seeds, extra))
}

/// `histsim run` of `seeds` of `workload`, quiet, with no shrinking, its reports under `reports`,
/// with `extra` arguments: its exit code, and its stdout then stderr.
pub fn histsim_campaign(
    reports: &Path,
    workload: &str,
    seeds: &str,
    extra: &[&str],
) -> (Option<i32>, String) {
    let dir = reports.to_str().expect("a UTF-8 path");
    let flags = ["--no-shrink", "--report-dir", dir];
    histsim_run(workload, seeds, &[&flags[..], extra].concat())
}

/// The reference runs store behind the protocol, with `sed` applied to what it says.
pub fn runs_store_edited(sed: &str) -> String {
    format!(
        r#"{} serve runs | stdbuf -oL sed '{sed}'"#,
        env!("CARGO_BIN_EXE_histsim")
    )
}

/// `histsim run --workload runs` through `sut` on `seeds` with `--require-coverage` and
/// `extra`: the exit code, the output and the summary.json (its `markdown` field summary.md).
pub fn runs_campaign(
    sut: &str,
    seeds: &str,
    extra: &[&str],
) -> (Option<i32>, String, serde_json::Value) {
    let reports = tempfile::tempdir().expect("a temp dir");
    let flags = ["--require-coverage", "--name", "c", "--sut", sut];
    let (code, text) = histsim_campaign(reports.path(), "runs", seeds, &[&flags, extra].concat());
    let dir: PathBuf = reports.path().join("c");
    let json = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    let md = std::fs::read_to_string(dir.join("summary.md")).expect("summary.md");
    let mut json: serde_json::Value = serde_json::from_str(&json).expect("json");
    json["markdown"] = serde_json::Value::String(md);
    (code, text, json)
}
