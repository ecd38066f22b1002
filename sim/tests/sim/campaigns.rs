//! Short clean campaigns: no violation on either store.

use super::support::{assert_clean_campaigns, finish, histsim_command};
use sim::campaign::{run_campaign, CampaignConfig};
use sim::run::RunConfig;
use sim::workload::StoreKind;

#[test]
fn a_short_clean_campaign_passes_on_each_store() {
    let on = |store| RunConfig {
        store,
        ..RunConfig::new()
    };
    assert_clean_campaigns(
        on,
        [(StoreKind::Memory, 0..60), (StoreKind::Sqlite, 1000..1040)],
    );
}

#[test]
fn a_campaign_verdict_does_not_depend_on_threads() {
    let run = |jobs| {
        run_campaign(&CampaignConfig {
            seeds: 0..12,
            shard: None,
            jobs,
            stop_at_first: true,
            progress: false,
            budget: None,
            run: RunConfig {
                planted: Some(history::BugId::P8),
                ..RunConfig::new()
            },
        })
    };
    let one = run(1);
    let two = run(2);
    let seeds =
        |r: &sim::campaign::CampaignResult| r.failures.iter().map(|f| f.seed).collect::<Vec<_>>();
    assert_eq!(seeds(&one), seeds(&two));
    assert_eq!(one.failures.len(), 1, "stop at the first failing seed");
}

#[test]
fn shards_are_disjoint_and_their_merged_report_equals_the_whole_campaign() {
    use sim::report::{summary, Summary};
    let config = RunConfig::new();
    let run = |shard| {
        let result = run_campaign(&CampaignConfig {
            seeds: 10..31,
            shard,
            jobs: 2,
            stop_at_first: false,
            progress: false,
            budget: None,
            run: config.clone(),
        });
        summary("c", &config, 10..31, shard, &result)
    };
    let whole = run(None);
    let parts = [run(Some((0, 3))), run(Some((1, 3))), run(Some((2, 3)))];
    let mut seen = std::collections::BTreeSet::new();
    for p in &parts {
        for l in &p.seeds {
            assert!(seen.insert(l.seed), "seed {} in two shards", l.seed);
        }
    }
    assert_eq!(seen.len(), 21);
    let merged = Summary::merge(&parts, "c").expect("merge");
    assert_eq!(merged.deterministic_view(), whole.deterministic_view());
    assert!(whole.coverage.values().any(|n| *n > 0));
    let junit = sim::report::junit(&merged);
    assert!(junit.contains(r#"name="P4""#));
    // Shards of another commit are another campaign.
    let mut stale = parts.clone();
    stale[1].commit = Some("000000000000".into());
    stale[0].commit = Some("111111111111".into());
    let err = Summary::merge(&stale, "c").expect_err("two commits");
    assert!(err.contains("commit"), "{err}");
}

#[test]
fn a_history_that_never_converges_is_a_liveness_failure_apart_from_safety() {
    use sim::run::run_seed;
    use sim::ViolationKind;
    // Missing dedup keeps duplicates forever: the replicas never converge on the model.
    let report = run_seed(
        2,
        &RunConfig {
            planted: Some(history::BugId::P4),
            ..RunConfig::new()
        },
    );
    assert_eq!(
        report.first_violation().map(|v| v.id),
        Some(history::BugId::P4)
    );
    assert_eq!(
        report.first_violation().map(|v| v.kind),
        Some(ViolationKind::Safety)
    );
    assert!(
        report
            .violations
            .iter()
            .any(|v| v.kind == ViolationKind::Liveness && v.id == history::BugId::P14),
        "{:?}",
        report.violations
    );
    assert_eq!(report.converged_after_ms, None);
    // The same display world without the bug converges.
    let clean = run_seed(2, &RunConfig::only("display"));
    assert!(clean.passed(), "{:?}", clean.violations);
    assert!(clean.converged_after_ms.is_some());
}

/// Every variable `--shard auto` reads, cleared so the machine's own CI cannot leak into a test.
const SHARD_VARIABLES: &[&str] = &[
    "HISTSIM_SHARD_INDEX",
    "HISTSIM_SHARD_COUNT",
    "JOB_COMPLETION_INDEX",
    "CI_NODE_INDEX",
    "CI_NODE_TOTAL",
    "CIRCLE_NODE_INDEX",
    "CIRCLE_NODE_TOTAL",
    "BUILDKITE_PARALLEL_JOB",
    "BUILDKITE_PARALLEL_JOB_COUNT",
];

fn histsim_with_env(args: &[&str], env: &[(&str, String)]) -> (Option<i32>, String) {
    let mut command = histsim_command();
    for name in SHARD_VARIABLES {
        command.env_remove(name);
    }
    let (code, out, err) = finish(command.args(args).envs(env.iter().map(|(k, v)| (k, v))));
    (code, out + &err)
}

#[test]
fn shard_processes_of_a_kubernetes_indexed_job_merge_into_the_unsharded_report() {
    use sim::report::Summary;
    let dir = tempfile::tempdir().expect("tempdir");
    let reports = dir.path().to_str().expect("utf-8 path");
    let campaign = |name: &str, extra: &[&str], env: &[(&str, String)]| {
        let mut args = vec![
            "run",
            "--seeds",
            "40..64",
            "--jobs",
            "1",
            "--quiet",
            "--keep-going",
            "--no-shrink",
            "--name",
            name,
            "--report-dir",
            reports,
        ];
        args.extend_from_slice(extra);
        let (code, text) = histsim_with_env(&args, env);
        assert_eq!(code, Some(0), "{name}: {text}");
        text
    };
    campaign("whole", &[], &[]);
    let mut shard_dirs = Vec::new();
    for k in 0..3 {
        let name = format!("shard-{k}");
        let text = campaign(
            &name,
            &["--shard", "auto", "--shard-count", "3"],
            &[("JOB_COMPLETION_INDEX", k.to_string())],
        );
        assert!(
            text.contains(&format!(
                "shard {k}/3 (from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX"
            )),
            "{text}"
        );
        shard_dirs.push(dir.path().join(name).to_str().expect("utf-8").to_string());
    }
    let mut merge = vec![
        "report",
        "merge",
        "--name",
        "merged",
        "--report-dir",
        reports,
    ];
    merge.extend(shard_dirs.iter().map(String::as_str));
    let (code, text) = histsim_with_env(&merge, &[]);
    assert_eq!(code, Some(0), "{text}");
    let read = |name: &str| Summary::read(&dir.path().join(name)).expect("summary.json");
    let (whole, merged) = (read("whole"), read("merged"));
    assert_eq!(merged.seeds.len(), 24);
    assert_eq!(merged.deterministic_view(), whole.deterministic_view());
    // Every shard's seeds are in the merged series of seeds over time, drawn on its page.
    let over_time = merged.seeds_over_time.as_ref().expect("seeds over time");
    assert_eq!(over_time.total(), 24);
    let index = std::fs::read_to_string(dir.path().join("merged/index.html")).expect("index");
    assert!(
        index.contains("id=\"seeds-per-second\""),
        "the merged page's chart"
    );
}

#[test]
fn shard_auto_without_its_index_or_count_is_a_usage_error_naming_the_variable() {
    let run = |extra: &[&str], env: &[(&str, String)]| {
        let mut args = vec!["run", "--seeds", "0..2", "--quiet", "--no-shrink"];
        args.extend_from_slice(extra);
        histsim_with_env(&args, env)
    };
    let (code, text) = run(&["--shard", "auto"], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("JOB_COMPLETION_INDEX"), "{text}");
    let (code, text) = run(
        &["--shard", "auto"],
        &[("JOB_COMPLETION_INDEX", "1".into())],
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("add --shard-count N"), "{text}");
    let (code, text) = run(
        &["--shard", "auto"],
        &[("CI_NODE_INDEX", "3".into()), ("CI_NODE_TOTAL", "2".into())],
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("not below the count 2"), "{text}");
}

#[test]
fn a_reader_that_stops_reading_ends_histsim_quietly_as_sigpipe_would() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    // A replay with its whole trace prints more than a pipe buffer holds (83 KB against 64), so histsim is
    // still writing when the reader goes away (`histsim replay ... --trace | head`).
    let mut child = Command::new(env!("CARGO_BIN_EXE_histsim"))
        .args(["replay", "--workload", "display", "--seed", "5", "--trace"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("histsim starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).expect("the trace starts");
    drop(stdout);
    let out = child.wait_with_output().expect("histsim ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
