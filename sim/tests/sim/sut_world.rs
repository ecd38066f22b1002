//! Whole seeds through a system under test in a child process: the same verdicts as in
//! process, planted bugs found under their own IDs through `histsim serve`, deterministic
//! traces that include every answer, and a system that breaks the protocol mid-world ending
//! the seed as a broken world (exit 3) that names the request, never as a violation.

use super::support::{assert_contains_all, finish, histsim_command, run_args};
use history::BugId;
use sim::run::{run_seed, RunConfig};
use sim::sut::SutOptions;
use sim::Verdict;

fn serve(workload: &str) -> SutOptions {
    SutOptions::new(format!(
        "{} serve {workload}",
        env!("CARGO_BIN_EXE_histsim")
    ))
}

fn through(workload: &str, sut: SutOptions) -> RunConfig {
    RunConfig {
        sut: Some(sut),
        ..RunConfig::only(workload)
    }
}

/// The reference store (`histsim serve runs`), its output edited by the `sed` script `script`
/// (e.g. to leave an op out of its `hello`).
fn serve_runs_edited(script: &str) -> SutOptions {
    SutOptions::new(format!(
        "{} serve runs | stdbuf -oL sed '{script}'",
        env!("CARGO_BIN_EXE_histsim")
    ))
}

/// Plays `seeds` with `config`: every seed passes. How many of each of `kinds` they left out.
fn passing_seeds_leave_out<const N: usize>(
    config: &RunConfig,
    seeds: impl IntoIterator<Item = u64>,
    kinds: [&str; N],
) -> [u64; N] {
    let mut left_out = [0; N];
    for seed in seeds {
        let report = run_seed(seed, config);
        assert!(
            report.passed(),
            "seed {seed}: {:?} {:?}",
            report.violations,
            report.failure
        );
        for (n, kind) in left_out.iter_mut().zip(kinds) {
            *n += report.left_out.counts.get(kind).copied().unwrap_or(0);
        }
    }
    left_out
}

/// Plays `seeds` of `workload` through `histsim serve` twice (the second time on a process kept
/// from the first) and in process: all pass, the protocol path repeats exactly and plays the
/// same world. Returns the trace events the protocol added (its requests and answers).
fn through_the_reference_adapter_as_in_process(workload: &str, seeds: u64) -> u64 {
    let config = through(workload, serve(workload));
    let mut protocol_events = 0;
    for seed in 0..seeds {
        let a = run_seed(seed, &config);
        let b = run_seed(seed, &config);
        let here = run_seed(seed, &RunConfig::only(workload));
        assert!(
            a.passed(),
            "seed {seed}: {:?} {:?}",
            a.violations,
            a.failure
        );
        assert!(here.passed(), "seed {seed}");
        assert_eq!(
            a.trace_hash, b.trace_hash,
            "seed {seed}: the SUT path repeats"
        );
        assert_eq!(a.steps, here.steps, "seed {seed}: the same world played");
        assert_eq!(a.converged_after_ms, here.converged_after_ms, "seed {seed}");
        protocol_events += a.trace_events - here.trace_events;
    }
    protocol_events
}

#[test]
fn display_seeds_through_the_reference_adapter_pass_as_in_process_and_repeat_exactly() {
    // Every request and answer is a trace event, so the hash covers them.
    assert!(through_the_reference_adapter_as_in_process("display", 4) >= 4 * 4);
}

#[test]
fn a_planted_display_bug_is_found_through_the_protocol_under_its_own_id() {
    // P12 (a replica answering from its own deliveries) lives in histsim's store; through the
    // protocol the reference adapter switches it on from `open`'s `planted`.
    let config = RunConfig {
        planted: Some(BugId::P12),
        ..through("display", serve("display"))
    };
    let found = (0..200)
        .map(|seed| run_seed(seed, &config))
        .find(|r| !r.passed());
    let report = found.expect("P12 found within 200 seeds");
    assert_eq!(report.failure, None);
    assert_eq!(report.first_violation().map(|v| v.id), Some(BugId::P12));
}

/// An adapter that greets, opens, answers `append`s, and then breaks at its first
/// `reconstruct` the way `script` says. The script file lives as long as the test process.
fn breaking_at_reconstruct(script: &str) -> SutOptions {
    let body = r#"
while read -r line; do
  id=$(printf '%s' "$line" | sed 's/^{"id":\([0-9]*\).*/\1/')
  case "$line" in
    *'"op":"hello"'*)
      echo '{"id":'"$id"',"ok":{"system":"bad","version":"0","protocol":1,"ops":["hello","open","close","append","reconstruct"]}}' ;;
    *'"op":"open"'*) echo '{"id":'"$id"',"ok":{}}' ;;
    *'"op":"append"'*)
      n=$(printf '%s' "$line" | grep -o 'event_id' | wc -l)
      a=$(yes '"stored"' | head -n "$n" | paste -sd, -)
      echo '{"id":'"$id"',"ok":{"admitted":['"$a"']}}' ;;
    *) BREAK ;;
  esac
done
"#
    .replace("BREAK", script);
    let file = tempfile::Builder::new()
        .suffix(".sh")
        .tempfile()
        .expect("a temp file");
    std::fs::write(file.path(), body).expect("writes the adapter");
    let (_, path) = file.keep().expect("kept");
    SutOptions {
        timeout_ms: 2_000,
        ..SutOptions::new(format!("sh {}", path.display()))
    }
}

#[test]
fn a_system_that_breaks_mid_world_ends_the_seed_as_a_broken_world_naming_the_request() {
    let cases = [
        ("echo 'not json'", "not a response"),
        (
            "echo 'reconstruct failed hard' >&2; exit 7",
            "reconstruct failed hard",
        ),
        ("sleep 30", "no answer within 2000 ms"),
        (r#"echo '{"id":99999,"ok":{}}'"#, "answered request 99999"),
    ];
    for (script, shown) in cases {
        let report = run_seed(1, &through("display", breaking_at_reconstruct(script)));
        let failure = report.failure.clone().unwrap_or_default();
        assert!(
            report.violations.is_empty(),
            "{script}: {:?}",
            report.violations
        );
        assert!(failure.contains("reconstruct"), "{script}: {failure}");
        assert!(failure.contains(shown), "{script}: {failure}");
        assert_eq!(Verdict::of_seed(&report), Verdict::WorldFailure, "{script}");
    }
}

#[test]
fn the_breaching_systems_stderr_is_kept_for_the_report() {
    let report = run_seed(
        1,
        &through(
            "display",
            breaking_at_reconstruct("echo 'the whole log line' >&2; exit 7"),
        ),
    );
    assert!(report.failure.is_some());
    let log = report.sut_log.unwrap_or_default();
    assert!(log.contains("the whole log line"), "{log}");
}

#[test]
fn runs_seeds_through_the_reference_store_pass_as_in_process_and_repeat_exactly() {
    assert!(through_the_reference_adapter_as_in_process("runs", 3) >= 3 * 4);
}

#[test]
fn planted_store_bugs_are_found_through_the_protocol_under_their_own_ids() {
    // R3 (reads writing into the store's rows), R9 (the backends disagree), R17 (a filter
    // applied after the limit), R18 (a tool call taken for the answer) and R19 (a user's read
    // showing rows without a user) live in the store, on the far side of the boundary; `open`
    // switches them on in the reference store.
    for id in [BugId::R3, BugId::R9, BugId::R17, BugId::R18, BugId::R19] {
        let config = RunConfig {
            planted: Some(id),
            ..through("runs", serve("runs"))
        };
        let report = (0..50)
            .map(|seed| run_seed(seed, &config))
            .find(|r| !r.passed())
            .unwrap_or_else(|| panic!("{id} found within 50 seeds"));
        assert_eq!(report.failure, None, "{id}");
        assert_eq!(report.first_violation().map(|v| v.id), Some(id));
    }
}

#[test]
fn a_store_that_lacks_an_op_the_workload_needs_is_refused_by_name() {
    // The display reference adapter serves no run-event store.
    let report = run_seed(0, &through("runs", serve("display")));
    let failure = report.failure.unwrap_or_default();
    assert_contains_all(&failure, &["put_batch", "did not declare"]);
}

#[test]
fn what_a_system_does_not_serve_is_left_out_and_counted_not_weakened_in_silence() {
    // The reference store, minus `list_events` in its `hello`.
    let config = through("runs", serve_runs_edited(r#"s/"list_events",//"#));
    let kind = "the client's `events` reads (the system does not serve list_events)";
    let [left_out] = passing_seeds_leave_out(&config, 0..6, [kind]);
    for seed in 0..6 {
        let full = run_seed(seed, &through("runs", serve("runs")));
        assert!(full.left_out.counts.is_empty(), "seed {seed}");
    }
    assert!(left_out > 0, "some seed issued an `events` read");
}

#[test]
fn filtered_reads_a_system_does_not_declare_are_left_out_and_counted() {
    // The reference store, minus the two filtered reads in its `hello` (as DeerFlow 0.1.7).
    let without =
        serve_runs_edited(r#"s/"list_events_filtered",//; s/,"get_last_visible_ai_seq_by_run"//"#);
    let config = through("runs", without);
    let kinds = [
        "the client's filtered event reads (the system does not serve list_events_filtered)",
        "the client's last-answer reads (the system does not serve get_last_visible_ai_seq_by_run)",
    ];
    let left_out = passing_seeds_leave_out(&config, 0..8, kinds);
    assert!(left_out.iter().all(|n| *n > 0), "left out {left_out:?}");
}

#[test]
fn user_scoped_reads_a_system_does_not_declare_are_left_out_and_counted() {
    // The reference store, minus the user-scoped reads in its `hello` (as DeerFlow 0.1.7's
    // memory and JSONL stores, which take no user_id).
    let without = serve_runs_edited(r#"s/,"list_messages_as","count_messages_as"//"#);
    let config = through("runs", without);
    let kind = "the client's user-scoped reads (the system does not serve list_messages_as)";
    let [left_out] = passing_seeds_leave_out(&config, 0..8, [kind]);
    assert!(left_out > 0, "some seed issued a user-scoped read");
}

#[test]
fn thread_deletions_a_system_does_not_declare_are_left_out_and_counted() {
    // Seeds 42 and 52 delete a thread and run on it again (generate_thread_ops.rs): through the
    // reference store they pass with every deletion made; without `delete_by_thread` in its
    // `hello` the deletions are left out, counted, and the seeds still pass.
    let kind = "the client's thread deletions (the system does not serve delete_by_thread)";
    let with = through("runs", serve("runs"));
    let without = through("runs", serve_runs_edited(r#"s/,"delete_by_thread"//"#));
    let left_out = [with, without].map(|c| passing_seeds_leave_out(&c, [42, 52], [kind])[0]);
    assert_eq!(left_out[0], 0, "the reference store serves every deletion");
    assert!(left_out[1] > 0, "left out {left_out:?}");
}

#[test]
fn a_nondeterministic_system_fails_the_determinism_check_with_exit_3_naming_the_answer() {
    // The reference store, but every answer to `hello` carries the process id: it differs
    // between the campaign's process and the replay's.
    let histsim = env!("CARGO_BIN_EXE_histsim");
    let sut = format!(
        r#"{histsim} serve runs | stdbuf -oL sed "s/\"protocol\":1/\"protocol\":1,\"pid\":$$/""#
    );
    let reports = tempfile::tempdir().expect("a temp dir");
    let flags = [
        "--no-shrink",
        "--check-determinism",
        "100",
        "--sut",
        &sut,
        "--report-dir",
    ];
    let (code, text, _) = finish(
        histsim_command()
            .args(run_args("runs", "0..1", &flags))
            .arg(reports.path()),
    );
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("NONDETERMINISTIC seed"), "{text}");
    assert!(
        text.contains("\"pid\""),
        "the first differing answer is named: {text}"
    );
}

use super::support::diff_display;

#[test]
fn diff_finds_alike_systems_alike_and_shrinks_the_first_difference_into_a_replayable_file() {
    let histsim = env!("CARGO_BIN_EXE_histsim");
    let reference = format!("{histsim} serve display --store sqlite");
    let (code, text) = diff_display(&reference, &["--seeds", "0..3"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("alike: 3 seeds"), "{text}");
    // A system whose answers spell every text part starting with `c` in capitals.
    let altered = format!(r#"{histsim} serve display | stdbuf -oL sed 's/"text":"c/"text":"C/g'"#);
    let out = tempfile::tempdir().expect("a temp dir");
    let out_dir = out.path().to_str().expect("utf-8");
    let (code, text) = diff_display(
        &altered,
        &["--seeds", "0..5", "--shrink-cap-s", "20", "--out", out_dir],
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("DIFFERENT at seed"), "{text}");
    let file = std::fs::read_dir(out.path())
        .expect("the out dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".diff.toml"))
        .expect("a difference file");
    let file = file.to_str().expect("utf-8");
    let (code, text) = diff_display(&altered, &["--scenario", file]);
    assert_eq!(
        code,
        Some(1),
        "the difference replays from its file: {text}"
    );
    let (code, text) = diff_display(&reference, &["--scenario", file]);
    assert_eq!(code, Some(0), "and is the altered system's: {text}");
}
