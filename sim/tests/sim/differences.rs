//! Known differences (docs/display-projection.md): a display system that declares one in
//! `hello` is judged by its documented behaviour there, and the report counts each place; the
//! same behaviour undeclared is a violation; an ID the document does not define is a broken
//! world; `histsim diff` compares up to what either system declares, `--strict` not.
//!
//! The system with differences is `histsim serve display --emulate-differences`: histsim's own
//! answers less the warnings the differences cover, as the published aihub projector answers.

use super::support::assert_contains_all;
use history::BugId;
use sim::run::{run_seed, RunConfig, SeedReport};
use sim::sut::SutOptions;

use super::histsim_cli;

fn histsim() -> &'static str {
    env!("CARGO_BIN_EXE_histsim")
}

fn display_through(command: String) -> RunConfig {
    RunConfig {
        sut: Some(SutOptions::new(command)),
        ..RunConfig::only("display")
    }
}

fn emulating(ids: &str) -> String {
    format!("{} serve display --emulate-differences {ids}", histsim())
}

/// How often the model accepted difference `id` in `report`.
fn accepted(report: &SeedReport, id: &str) -> u64 {
    report
        .left_out
        .counts
        .iter()
        .filter(|(what, _)| what.starts_with(&format!("P10 for {id} ")))
        .map(|(_, n)| *n)
        .sum()
}

#[test]
fn a_system_declaring_d1_and_d2_passes_and_the_report_counts_where_each_applied() {
    let config = display_through(emulating("D1,D2"));
    let (mut d1, mut d2) = (0, 0);
    for seed in 0..12 {
        let report = run_seed(seed, &config);
        assert!(
            report.passed(),
            "seed {seed}: {:?} {:?}",
            report.violations,
            report.failure
        );
        d1 += accepted(&report, "D1");
        d2 += accepted(&report, "D2");
    }
    assert!(
        d1 > 0 && d2 > 0,
        "both differences applied: D1 {d1}x, D2 {d2}x"
    );
}

/// The system emulating difference `id`, the same answers, but its declaration cut out of
/// `hello`.
fn undeclared(id: &str) -> RunConfig {
    display_through(format!(
        r#"{} | stdbuf -oL sed 's/"differences":\["{id}"\],//'"#,
        emulating(id)
    ))
}

#[test]
fn a_system_declaring_d3_passes_and_the_same_behaviour_undeclared_is_a_violation() {
    // The emulation silences only a primary stop without `output_messages` (the primary's
    // agent-in-the-loop envelope), never one whose answer has the wrong shape: every seed passes.
    let declared = display_through(emulating("D3"));
    let mut seeds = Vec::new();
    for seed in 0..40 {
        let report = run_seed(seed, &declared);
        assert!(report.passed(), "seed {seed}: {:?}", report.violations);
        if accepted(&report, "D3") > 0 {
            seeds.push(seed);
        }
    }
    let seed = *seeds.first().expect("a primary envelope within 40 seeds");
    let report = run_seed(seed, &undeclared("D3"));
    assert_eq!(report.failure, None);
    // P5's check reads a primary stop that gets no warning as a stop never read.
    assert_eq!(report.first_violation().map(|v| v.id), Some(BugId::P5));
}

#[test]
fn the_same_behaviour_undeclared_is_a_p10_violation() {
    let declared = display_through(emulating("D1"));
    let seed = (0..40)
        .find(|&seed| accepted(&run_seed(seed, &declared), "D1") > 0)
        .expect("a seed with a block of an unconverted class within 40 seeds");
    let report = run_seed(seed, &undeclared("D1"));
    assert_eq!(report.failure, None);
    assert_eq!(report.first_violation().map(|v| v.id), Some(BugId::P10));
    assert_eq!(accepted(&report, "D1"), 0);
}

#[test]
fn a_difference_the_document_does_not_define_is_a_broken_world_naming_it() {
    let config = display_through(format!(
        r#"{} serve display | stdbuf -oL sed 's/"ops":/"differences":["D9"],"ops":/'"#,
        histsim()
    ));
    let report = run_seed(0, &config);
    let failure = report.failure.expect("a broken world");
    assert_contains_all(&failure, &["\"D9\"", "does not define"]);
    assert!(report.violations.is_empty());
}

/// `histsim diff` of seeds 0..`seeds` of the display workload, histsim's own components in
/// process against `system`, shrinking for at most 5 s into a temporary directory.
fn diff(system: &str, seeds: &str, extra: &[&str]) -> (Option<i32>, String) {
    let out_dir = tempfile::tempdir().expect("a temp dir");
    let mut args = vec![
        "diff",
        "--workload",
        "display",
        "--seeds",
        seeds,
        "--sut",
        "in-process",
        "--sut",
        system,
        "--shrink-cap-s",
        "5",
        "--out",
        out_dir.path().to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    histsim_cli(&args)
}

#[test]
fn diff_compares_up_to_declared_differences_and_strict_compares_them_too() {
    let system = emulating("D1,D2");
    let (code, text) = diff(&system, "0..6", &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_contains_all(
        &text,
        &[
            "compared up to the known differences D1, D2",
            "alike: 6 seeds",
        ],
    );
    let (code, text) = diff(&system, "0..6", &["--strict"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("DIFFERENT at seed"), "{text}");
    // Each side's campaign verdicts: histsim clean; the emulating system, judged by its own
    // declaration, clean as well.
    assert!(text.contains("`in-process`: "), "{text}");
}

#[test]
fn diff_shows_a_planted_projector_bug_as_a_difference_from_a_correct_system() {
    let system = format!("{} serve display", histsim());
    let (code, text) = diff(&system, "0..40", &["--planted", "P4"]);
    assert_eq!(code, Some(1), "{text}");
    assert_contains_all(&text, &["(planted P4)", "violation [P4]"]);
    assert!(
        text.contains("--planted P4 --scenario"),
        "the replay keeps the bug: {text}"
    );
}
