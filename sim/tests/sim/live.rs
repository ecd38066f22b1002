//! `histsim live` end to end on this machine: a clean run, a planted bug found and written as a
//! scenario the simulation plays, and an interrupted run that leaves no child behind. Each
//! display test needs nats-server (scripts/install-nats-server.sh) and is skipped, saying so,
//! without it; the runs tests (worker processes and one SQLite file) need nothing.

use super::histsim_cli;
use super::support::assert_contains_all;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn nats_server() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/nats-server-venv/bin");
    let found = (on_path.into_iter().chain([venv]))
        .map(|dir| dir.join("nats-server"))
        .find(|p| p.is_file());
    if found.is_none() {
        println!("skipped: nats-server not found (run scripts/install-nats-server.sh)");
    }
    found
}

fn live(args: &[&str]) -> (Option<i32>, String) {
    histsim_cli(&[&["live"], args].concat())
}

/// A 6-second live run of seed 1 with P4 planted on `server`, with `extra` arguments.
fn live_with_p4(server: &str, extra: &[&str]) -> (Option<i32>, String) {
    let args = [
        "--seconds",
        "6",
        "--seed",
        "1",
        "--planted",
        "P4",
        "--nats-server",
        server,
    ];
    live(&[&args[..], extra].concat())
}

/// `histsim live --workload runs` of seed `seed` for `seconds`, with `extra` arguments.
fn live_runs(seconds: &str, seed: &str, extra: &[&str]) -> (Option<i32>, String) {
    let args = ["--workload", "runs", "--seconds", seconds, "--seed", seed];
    live(&[&args[..], extra].concat())
}

#[test]
fn a_clean_live_run_exits_0_with_its_report() {
    let Some(server) = nats_server() else { return };
    let server = server.to_string_lossy().into_owned();
    let (code, out) = live(&["--seconds", "8", "--seed", "1", "--nats-server", &server]);
    assert_eq!(code, Some(0), "{out}");
    // Every event of the seed's scenario was published: the count the run's first line gives.
    let events = out
        .split_once(" events in ")
        .and_then(|(head, _)| head.rsplit(' ').next())
        .expect("the run's first line counts the scenario's events");
    let published = format!("deliveries: {events} events published");
    assert_contains_all(
        &out,
        &[
            published.as_str(),
            "faults: 1 injected",
            "losses accepted:",
            "reads checked:",
            "converged: every replica answered the model's history",
        ],
    );
    assert!(!out.contains("violation"), "{out}");
}

#[test]
fn planted_p4_fails_the_live_run_and_the_simulation_replays_it() {
    let Some(server) = nats_server() else { return };
    let server = server.to_string_lossy().into_owned();
    let dir = tempfile::tempdir().unwrap();
    let regressions = dir.path().to_string_lossy().into_owned();
    let (code, out) = live_with_p4(&server, &["--regressions-dir", &regressions]);
    assert_eq!(code, Some(1), "{out}");
    let file = dir.path().join("live-seed-1-P4.toml");
    assert_written_and_replayed(&out, "P4", &file, &["--store", "sqlite"]);
}

/// A live run that found `id` (its output `out`) wrote `file`, a scenario the simulation
/// playing finds `id` in; `histsim replay` of the file with `extra` arguments, without the bug,
/// passes.
fn assert_written_and_replayed(out: &str, id: &str, file: &std::path::Path, extra: &[&str]) {
    assert!(out.contains(&format!("violation [{id}]")), "{out}");
    assert!(file.is_file(), "{out}");
    let replayed = format!("the simulation playing it finds: [\"{id}\"");
    assert!(out.contains(&replayed), "{out}");
    let file = file.to_string_lossy();
    let (code, replayed) = histsim_cli(&[&["replay", "--scenario", &file][..], extra].concat());
    assert_eq!(code, Some(0), "{replayed}");
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // The fields after the command's closing parenthesis: state, ppid, ...
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        let ppid = after.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
            after.split_whitespace().next() != Some("Z")
        })
        .unwrap_or(false)
}

#[test]
fn ctrl_c_mid_run_leaves_no_child_process() {
    let Some(server) = nats_server() else { return };
    interrupted_mid_run_leaves_no_child(&server, rustix::process::Signal::INT);
}

/// SIGKILL gives histsim no chance to stop anything: its children die of their parent-death
/// signal.
#[test]
fn sigkill_mid_run_leaves_no_child_process() {
    let Some(server) = nats_server() else { return };
    interrupted_mid_run_leaves_no_child(&server, rustix::process::Signal::KILL);
}

fn interrupted_mid_run_leaves_no_child(server: &std::path::Path, signal: rustix::process::Signal) {
    let server = server.to_string_lossy();
    let args = ["--seconds", "60", "--seed", "0", "--nats-server", &server];
    // nats-server and three replicas.
    let (code, stderr, children) = interrupted_live(&args, 4, Duration::from_secs(2), signal);
    if signal == rustix::process::Signal::INT {
        assert_eq!(code, Some(3), "{stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
    }
    // A child killed by its parent-death signal may take a moment to be reaped by init.
    let deadline = Instant::now() + Duration::from_secs(10);
    while children.iter().any(|&c| alive(c)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<u32> = children.into_iter().filter(|&c| alive(c)).collect();
    assert!(left.is_empty(), "children left running: {left:?}");
}

/// `histsim live ARGS` started, left to run until it has `children` child processes and for
/// `settle` more, then sent `signal`: its exit code, its stderr and those children.
fn interrupted_live(
    args: &[&str],
    children: usize,
    settle: Duration,
    signal: rustix::process::Signal,
) -> (Option<i32>, String, Vec<u32>) {
    let mut histsim = Command::new(env!("CARGO_BIN_EXE_histsim"))
        .arg("live")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = histsim.id();
    let started = Instant::now();
    let mut found = Vec::new();
    while found.len() < children && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(200));
        found = children_of(pid);
    }
    assert_eq!(found.len(), children, "children of histsim live: {found:?}");
    std::thread::sleep(settle);
    let pid_raw = rustix::process::Pid::from_raw(pid as i32).unwrap();
    rustix::process::kill_process(pid_raw, signal).unwrap();
    let status = histsim.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut histsim.stderr.take().unwrap(), &mut stderr).unwrap();
    (status.code(), stderr, found)
}

/// `histsim serve display`, as `--sut` runs it: each replica process opens it on the run's
/// directory, and the judge lists what the store holds through its `stored_rows`.
fn served_display(extra: &str) -> String {
    format!("{} serve display{extra}", env!("CARGO_BIN_EXE_histsim"))
}

#[test]
fn a_live_run_through_a_sut_exits_0_and_1_with_planted_p4() {
    let Some(server) = nats_server() else { return };
    let server = server.to_string_lossy().into_owned();
    let sut = served_display("");
    let (code, out) = live(&[
        "--seconds",
        "8",
        "--seed",
        "1",
        "--nats-server",
        &server,
        "--sut",
        &sut,
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("through the system under test"), "{out}");
    assert!(
        out.contains("converged: every replica answered the model's history"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = live_with_p4(
        &server,
        &[
            "--sut",
            &sut,
            "--regressions-dir",
            &dir.path().to_string_lossy(),
        ],
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("violation [P4]"), "{out}");
}

/// Said at once, before any process of the run starts (so no nats-server is needed).
#[test]
fn a_sut_without_what_a_live_run_needs_is_refused_at_once() {
    let without_stored_rows = served_display(r#" | sed -u 's/,"stored_rows"//'"#);
    let (code, out) = live(&[
        "--sut",
        &without_stored_rows,
        "--nats-url",
        "nats://127.0.0.1:1",
    ]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains(r#"does not declare ["stored_rows"]"#), "{out}");
    let memory = served_display(" --store memory");
    let (code, out) = live(&["--sut", &memory, "--nats-url", "nats://127.0.0.1:1"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("declares no durability"), "{out}");
    let without_switches = served_display(" --without-planted");
    let (code, out) = live(&["--sut", &without_switches, "--planted", "P4"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("does not declare `planted`"), "{out}");
}

// `histsim live --workload runs`: worker processes writing one shared SQLite file. No
// nats-server: these always run.

#[test]
fn a_clean_live_runs_run_with_a_kill_and_a_pause_exits_0_with_its_report() {
    // Seed 3 at 14 s: a SIGKILL of a worker (restarted) and a pause; the kill lands inside a run.
    let (code, out) = live_runs("14", "3", &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_contains_all(
        &out,
        &[
            "live runs seed 3: sqlite store, 3 workers, 3 runs",
            "write calls (",
            "kills: 1 SIGKILLs of a worker (restarted), 1 SIGSTOP/SIGCONT pauses",
            "events stored: ",
            "reads checked: ",
            "accepted losses: ",
            "left out of the scenario (not played live): ",
        ],
    );
    assert!(!out.contains("violation"), "{out}");
    // Every event the journals were handed of the runs that were not killed is stored: the
    // rows read back are the rows the confirmed and committed calls wrote.
    let figure = |label: &str| {
        out.split_once(label)
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{label} missing from:\n{out}"))
    };
    assert!(figure("events stored: ") > 0, "{out}");
    assert!(figure("reads checked: ") > 0, "{out}");
}

#[test]
fn planted_r10_fails_a_kill_free_live_runs_run_and_the_simulation_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    let regressions = dir.path().to_string_lossy().into_owned();
    let (code, out) = live_runs(
        "6",
        "3",
        &["--planted", "R10", "--regressions-dir", &regressions],
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("kills: 0 SIGKILLs"), "{out}");
    let file = dir.path().join("live-runs-seed-3-R10.toml");
    assert_written_and_replayed(&out, "R10", &file, &[]);
}

#[test]
fn a_live_runs_run_on_the_jsonl_store_exits_0_with_its_report() {
    // The JSONL store has one writer process: seed 3 at 14 s kills it (and restarts it, which
    // reopens the store on its files) and pauses it; the client reads once it stopped.
    let (code, out) = live_runs("14", "3", &["--store", "jsonl"]);
    assert_eq!(code, Some(0), "{out}");
    assert_contains_all(
        &out,
        &[
            "live runs seed 3: jsonl store, 1 workers, 3 runs",
            "kills: 1 SIGKILLs of a worker (restarted), 1 SIGSTOP/SIGCONT pauses",
            "rows read back from the shared jsonl store",
            "reads and receipts not made: ",
            "accepted losses: ",
        ],
    );
    assert!(!out.contains("violation"), "{out}");
    // Several writer processes on one JSONL store are refused, saying why.
    let (code, out) = live(&["--workload", "runs", "--store", "jsonl", "--workers", "2"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("one writer process"), "{out}");
}

#[test]
fn a_filtered_read_and_a_receipt_are_played_live_and_planted_bugs_in_their_paths_are_caught() {
    // Seed 4's client pages runs' events through filters (`filtered_events`) and writes runs'
    // delivery receipts (`put_if_absent`). With R17 (the page cut before the filter) or R14
    // (a receipt looked up in the thread, not the run) planted, the live client's answers are
    // judged wrong, and the simulation playing the run's scenario file finds the ID too.
    for (id, shown) in [("R17", "paging run-"), ("R14", "put_if_absent of run-")] {
        let dir = tempfile::tempdir().unwrap();
        let regressions = dir.path().to_string_lossy().into_owned();
        let (code, out) = live_runs(
            "6",
            "4",
            &["--planted", id, "--regressions-dir", &regressions],
        );
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(&format!("violation [{id}]")), "{out}");
        assert!(out.contains(shown), "{out}");
        let replayed = format!("the simulation playing it finds: [\"{id}\"");
        assert!(out.contains(&replayed), "{out}");
    }
    // Without a bug the same reads and receipts pass, none of them left out.
    let (code, out) = live_runs("6", "4", &[]);
    assert_eq!(code, Some(0), "{out}");
    for op in ["filtered_events x", "receipt x"] {
        assert!(!out.contains(op), "{op} left out:\n{out}");
    }
}

#[test]
fn live_runs_compare_sim_prints_its_table() {
    let args = [
        "--workload",
        "runs",
        "--compare-sim",
        "--seeds",
        "0..1",
        "--seconds",
        "4",
    ];
    let (code, out) = live(&args);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("| seed | runs | write calls accepted (refused), live / sim |"),
        "{out}"
    );
    let row = (out.lines())
        .find(|l| l.starts_with("| 0 | "))
        .unwrap_or_else(|| panic!("no row for seed 0 in:\n{out}"));
    assert_eq!(row.matches('|').count(), 11, "{row}");
}

#[test]
fn ctrl_c_mid_live_runs_run_leaves_no_worker_process() {
    let args = ["--workload", "runs", "--seconds", "60", "--seed", "1"];
    let signal = rustix::process::Signal::INT;
    let (code, stderr, children) = interrupted_live(&args, 3, Duration::from_secs(1), signal);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let left: Vec<u32> = children.into_iter().filter(|&c| alive(c)).collect();
    assert!(left.is_empty(), "workers left running: {left:?}");
}
