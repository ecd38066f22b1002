//! A green verdict means the system was checked: bad input is exit 2 naming the file, line and
//! field; a campaign that ran no seed is exit 6 and leaves every report as it was; reports of
//! different stores and systems never share a directory; left-out work fails
//! `--require-coverage` unless `--allow-left-out` names it.

use super::histsim_cli;
use super::support::{
    assert_contains_all, assert_exit, histsim_campaign, runs_campaign, runs_store_edited, temp_file,
};
use std::path::Path;

fn scenario_text(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/display")
        .join(name);
    std::fs::read_to_string(&path).expect("a committed scenario file")
}

/// `histsim scenarios FILE` of `text` written as `name`: the exit code and the output.
fn scenarios_of(name: &str, text: &str) -> (Option<i32>, String) {
    let (_dir, path) = temp_file(name, text);
    histsim_cli(&[Path::new("scenarios"), &path])
}

/// The line (from 1) of `text`'s first line that starts with `prefix`.
/// `histsim scenarios` on a file `name` holding `text`: exit 2, the error naming line `line`
/// and the field that `field` opens (after its backtick). What it printed.
fn refused_at(name: &str, text: &str, line: usize, field: &str) -> String {
    let (code, out) = scenarios_of(name, text);
    assert_eq!(code, Some(2), "{out}");
    let named = format!("{name}: line {line}, field `{field}");
    assert!(out.contains(&named), "line {line}: {out}");
    out
}

fn line_starting(text: &str, prefix: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix:?}"))
        + 1
}

#[test]
fn a_garbled_scenario_file_is_exit_2_naming_the_file_and_line() {
    let (code, text) = scenarios_of("garbled.toml", "format = 1\nid = \"P4\"\ntitle = = \"x\"\n");
    assert_exit(code, &text, 2, &["garbled.toml: line 3"]);
    assert!(
        !text.contains("FAIL"),
        "bad input is no failing scenario: {text}"
    );
}

#[test]
fn a_wrongly_typed_field_is_exit_2_naming_its_own_line_and_field() {
    let good = scenario_text("p10_payload_in_warnings.toml");
    let line = line_starting(&good, "replicas = ");
    let bad = good.replacen("replicas = ", "replicas = \"two\" # ", 1);
    refused_at("typed.toml", &bad, line, "display.replicas`");
}

#[test]
fn an_unknown_field_is_exit_2_naming_its_own_line_and_field() {
    let good = scenario_text("p10_payload_in_warnings.toml");
    let nested = good.replacen(
        "primary = \"lead\"\n",
        "primary = \"lead\"\ncolour = \"red\"\n",
        1,
    );
    let line = line_starting(&nested, "colour = ");
    let text = refused_at("unknown.toml", &nested, line, "display.colour`");
    assert!(text.contains("unknown field `colour`"), "{text}");

    let top = good.replacen("id = ", "colour = \"red\"\nid = ", 1);
    let (code, text) = scenarios_of("top.toml", &top);
    assert_exit(code, &text, 2, &["top.toml: line 2, field `colour`"]);
}

#[test]
fn a_validation_error_names_the_fields_own_line() {
    let good = scenario_text("p10_payload_in_warnings.toml");
    let bad = good.replacen("agent = \"lead\"", "agent = \"nobody\"", 1);
    let line = line_starting(&bad, "agent = \"nobody\"");
    refused_at("ref.toml", &bad, line, "display.turns[0].steps[");
}

#[test]
fn an_empty_file_is_exit_2_naming_it() {
    let (code, text) = scenarios_of("empty.toml", "\n  \n");
    assert_exit(code, &text, 2, &["empty.toml: line 1: the file is empty"]);
}

#[test]
fn an_empty_scenarios_directory_is_exit_2_not_zero_passed() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (code, text) = histsim_cli(&[Path::new("scenarios"), dir.path()]);
    assert_exit(code, &text, 2, &["no scenario file"]);
    assert!(text.contains(&dir.path().display().to_string()), "{text}");
    assert!(!text.contains("0 passed"), "{text}");
}

#[test]
fn one_bad_file_among_good_ones_plays_none_and_names_the_bad_one() {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::write(
        dir.path().join("good.toml"),
        scenario_text("p10_payload_in_warnings.toml"),
    )
    .expect("write");
    std::fs::write(dir.path().join("bad.toml"), "format = [").expect("write");
    let (code, text) = histsim_cli(&[Path::new("scenarios"), dir.path()]);
    assert_eq!(code, Some(2), "{text}");
    assert_contains_all(
        &text,
        &["bad.toml: line 1", "1 of 2 scenario files cannot be used"],
    );
    assert!(!text.contains("ok   "), "nothing is played: {text}");
}

/// `histsim run` of one quick seed with `extra` flags, its reports under `reports`.
fn run_one_seed(reports: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut flags = vec!["--seeds", "0..1"];
    flags.extend_from_slice(extra);
    run_spool(reports, &flags)
}

/// `histsim run` of the (quick) spool workload with `extra` flags, its reports under `reports`.
fn run_spool(reports: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args: Vec<String> = [
        "run",
        "--workload",
        "spool",
        "--quiet",
        "--no-shrink",
        "--report-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(reports.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    histsim_cli(&args)
}

#[test]
fn zero_jobs_is_refused() {
    let reports = tempfile::tempdir().expect("a temp dir");
    let (code, text) = run_one_seed(reports.path(), &["--jobs", "0"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--jobs") && text.contains("no seed"),
        "{text}"
    );
    for command in [
        &["bugs", "--jobs", "0"][..],
        &[
            "diff",
            "--workload",
            "display",
            "--sut",
            "in-process",
            "--jobs",
            "0",
        ],
    ] {
        let (code, text) = histsim_cli(command);
        assert_eq!(code, Some(2), "{command:?}: {text}");
        assert!(
            text.contains("--jobs") && text.contains("no seed"),
            "{text}"
        );
    }
}

#[test]
fn a_campaign_name_must_be_a_plain_name() {
    let root = tempfile::tempdir().expect("a temp dir");
    let reports = root.path().join("reports");
    for name in ["../escaped", "a/b", "/tmp/abs", ".."] {
        let (code, text) = run_one_seed(&reports, &["--name", name]);
        assert_eq!(code, Some(2), "{name}: {text}");
        assert!(
            text.contains("--name") && text.contains("not a plain name"),
            "{text}"
        );
    }
    assert!(!root.path().join("escaped").exists());
    assert!(!reports.exists(), "nothing written");
    let (code, text) = histsim_cli(&[
        "report",
        "merge",
        "--name",
        "../up",
        reports.to_str().expect("utf-8"),
    ]);
    assert_exit(code, &text, 2, &["not a plain name"]);
    let (code, text) = histsim_cli(&["fuzz", "run", "--name", "a/b", "--workload", "display"]);
    assert_exit(code, &text, 2, &["not a plain name"]);
}

#[test]
fn an_unwritable_report_directory_is_exit_2_before_the_campaign() {
    let root = tempfile::tempdir().expect("a temp dir");
    // A directory under a regular file cannot be made, even by root.
    let file = root.path().join("a-file");
    std::fs::write(&file, "").expect("write");
    let reports = file.join("reports");
    let (code, text) = run_one_seed(&reports, &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains(&format!("--report-dir {}", reports.display())),
        "{text}"
    );
    assert!(
        !text.contains("ok: "),
        "the campaign does not start: {text}"
    );
}

fn report_dirs(reports: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(reports)
        .expect("the report directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn report_names_hold_the_store_and_a_digest_of_the_system_under_test() {
    let reports = tempfile::tempdir().expect("a temp dir");
    for store in ["memory", "sqlite"] {
        let (code, text) = run_one_seed(reports.path(), &["--store", store]);
        assert_eq!(code, Some(0), "{text}");
    }
    assert_eq!(
        report_dirs(reports.path()),
        ["run-0-1-spool-memory", "run-0-1-spool-sqlite"]
    );

    let reports = tempfile::tempdir().expect("a temp dir");
    let histsim = env!("CARGO_BIN_EXE_histsim");
    for sut in [
        format!("{histsim} serve runs"),
        format!("{histsim} serve runs --store sqlite"),
    ] {
        let flags = ["--jobs", "1", "--sut", &sut];
        let (code, text) = histsim_campaign(reports.path(), "runs", "0..1", &flags);
        assert_eq!(code, Some(0), "{text}");
    }
    let names = report_dirs(reports.path());
    assert_eq!(names.len(), 2, "two systems, two reports: {names:?}");
    for name in &names {
        let digest = name
            .strip_prefix("run-0-1-runs-memory-sut-")
            .unwrap_or_else(|| panic!("{name}"));
        assert!(
            digest.len() == 8 && digest.chars().all(|c| c.is_ascii_hexdigit()),
            "{name}"
        );
    }
}

#[test]
fn a_campaign_that_ran_no_seed_is_exit_6_and_leaves_the_report_as_it_was() {
    let reports = tempfile::tempdir().expect("a temp dir");
    let earlier = reports.path().join("nightly");
    std::fs::create_dir(&earlier).expect("mkdir");
    std::fs::write(earlier.join("summary.md"), "an earlier campaign's report").expect("write");
    let shard = "shard 5/8 of seeds 0..3 holds no seed";
    let budget = "--budget-s 0 ended before the first seed";
    let cases: [(&[&str], &str); 4] = [
        (&["--seeds", "0..3", "--shard", "5/8"], shard),
        (
            &["--seeds", "0..3", "--shard", "5/8", "--require-coverage"],
            shard,
        ),
        (&["--seeds", "0..3", "--budget-s", "0"], budget),
        (&["--budget-s", "0", "--require-coverage"], budget),
    ];
    for (extra, why) in cases {
        let mut flags = vec!["--name", "nightly"];
        flags.extend_from_slice(extra);
        let (code, text) = run_spool(reports.path(), &flags);
        assert_eq!(code, Some(6), "{extra:?}: {text}");
        assert!(
            text.contains(&format!("FAILED: no seed ran ({why}): nothing was checked")),
            "{extra:?}: {text}"
        );
        assert!(!text.contains("ok: "), "{text}");
    }
    assert_eq!(
        std::fs::read_to_string(earlier.join("summary.md")).expect("still there"),
        "an earlier campaign's report"
    );
    assert_eq!(
        std::fs::read_dir(&earlier).expect("dir").count(),
        1,
        "nothing added"
    );
    assert_eq!(report_dirs(reports.path()), ["nightly"], "no other report");
}

fn names(json: &serde_json::Value, field: &str) -> Vec<String> {
    json[field]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().expect("a name").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn left_out_ops_fail_require_coverage_unless_allowed_by_name() {
    // As DeerFlow 0.1.7: no filtered reads.
    let sut =
        runs_store_edited(r#"s/"list_events_filtered",//; s/,"get_last_visible_ai_seq_by_run"//"#);
    let ops = ["get_last_visible_ai_seq_by_run", "list_events_filtered"];
    let (code, text, json) = runs_campaign(&sut, "0..8", &[]);
    assert_exit(
        code,
        &text,
        5,
        &[
            "not covered (left out): get_last_visible_ai_seq_by_run, list_events_filtered",
            "--allow-left-out get_last_visible_ai_seq_by_run,list_events_filtered",
        ],
    );
    assert_eq!(names(&json, "left_out_not_covered"), ops);
    let md = json["markdown"].as_str().expect("markdown");
    assert!(
        md.contains("| `list_events_filtered` | **not covered** |"),
        "{md}"
    );

    let (code, text, json) = runs_campaign(&sut, "0..8", &["--allow-left-out", &ops.join(",")]);
    assert!(!text.contains("not covered (left out)"), "{text}");
    assert!(
        text.contains("left out, allowed by --allow-left-out: get_last_visible_ai_seq_by_run, list_events_filtered"),
        "{text}"
    );
    assert_eq!(names(&json, "left_out_not_covered"), Vec::<String>::new());
    assert_eq!(names(&json, "left_out_allowed"), ops);
    let md = json["markdown"].as_str().expect("markdown");
    assert!(md.contains("| `list_events_filtered` | allowed |"), "{md}");
    // Eight seeds do not reach every probe of the runs workload (a pass needs hundreds, too
    // slow here; `cli::run`'s unit tests judge a summary with every probe fired): what still
    // fails is those probes alone, no left-out op.
    assert_eq!(code, Some(5), "{text}");
    let verdict = text
        .lines()
        .find(|l| l.starts_with("FAILED: "))
        .expect("a verdict line");
    let (_, why) = verdict
        .split_once("but not covered (--require-coverage): ")
        .expect("not covered");
    assert!(
        why.ends_with(" probes never fired") && !why.contains("left out"),
        "{verdict}"
    );
}

#[test]
fn a_store_crash_left_out_fails_require_coverage_unless_allowed() {
    // A store that declares no durability is never crashed; seed 6 crashes the store's host.
    let sut = format!(
        "{} serve runs --store memory",
        env!("CARGO_BIN_EXE_histsim")
    );
    let (code, text, json) = runs_campaign(&sut, "6", &[]);
    assert_exit(
        code,
        &text,
        5,
        &[
            "left out (1x): store crash:",
            "not covered (left out): store_crash",
        ],
    );
    assert_eq!(names(&json, "left_out_not_covered"), ["store_crash"]);

    let (code, text, json) = runs_campaign(&sut, "6", &["--allow-left-out", "store_crash"]);
    assert_eq!(code, Some(5), "the probes one seed misses: {text}");
    assert!(
        text.contains("left out, allowed by --allow-left-out: store_crash"),
        "{text}"
    );
    assert!(!text.contains("left out and not covered"), "{text}");
    assert_eq!(names(&json, "left_out_allowed"), ["store_crash"]);
}

#[test]
fn declared_known_differences_fail_require_coverage_unless_allowed_by_id() {
    let sut = format!(
        "{} serve display --emulate-differences D1,D2",
        env!("CARGO_BIN_EXE_histsim")
    );
    let campaign = |extra: &[&str]| {
        let reports = tempfile::tempdir().expect("a temp dir");
        let flags = ["--require-coverage", "--sut", &sut];
        histsim_campaign(reports.path(), "display", "0..4", &[&flags, extra].concat())
    };
    let (code, text) = campaign(&[]);
    assert_eq!(code, Some(5), "{text}");
    assert!(
        text.contains("left out (") && text.contains("P10 for D1"),
        "{text}"
    );
    assert!(text.contains("not covered (left out): D1, D2"), "{text}");
    let (code, text) = campaign(&["--allow-left-out", "D1,D2"]);
    assert_eq!(code, Some(5), "the probes four seeds miss: {text}");
    assert!(
        text.contains("left out, allowed by --allow-left-out: D1, D2"),
        "{text}"
    );
    assert!(!text.contains("left out and not covered"), "{text}");
}

#[test]
fn merging_reports_that_ran_no_seed_is_exit_6_and_writes_nothing() {
    let reports = tempfile::tempdir().expect("a temp dir");
    let (code, text) = run_one_seed(reports.path(), &["--name", "part"]);
    assert_eq!(code, Some(0), "{text}");
    // A shard report of no seed (written by hand: `histsim run` writes none).
    let path = reports.path().join("part/summary.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("summary.json")).expect("json");
    json["seeds"] = serde_json::json!([]);
    json["seeds_run"] = serde_json::json!(0);
    std::fs::write(&path, json.to_string()).expect("write");
    let dir = reports.path().to_str().expect("utf-8");
    let part = format!("{dir}/part");
    let (code, text) = histsim_cli(&["report", "merge", "--report-dir", dir, &part]);
    assert_exit(code, &text, 6, &["ran no seed: nothing was checked"]);
    assert_eq!(report_dirs(reports.path()), ["part"], "no merged report");
}
