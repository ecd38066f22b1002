//! `junit.xml`: one test case per invariant ID the campaign checked, plus world failures,
//! determinism and coverage, so a CI system shows each invariant as a test of its own.

use super::Summary;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// JUnit XML: one test case per invariant ID, plus world failures, determinism and coverage.
pub fn junit(s: &Summary) -> String {
    let mut cases: Vec<(String, Option<String>)> = Vec::new();
    for id in &s.invariants {
        let hits: Vec<String> = s
            .failures
            .iter()
            .flat_map(|f| {
                f.violations
                    .iter()
                    .filter(|v| v.id.as_str() == id)
                    .map(move |v| hit_line(f, v))
            })
            .collect();
        cases.push((id.clone(), (!hits.is_empty()).then(|| hits.join("\n"))));
    }
    let world: Vec<String> = s
        .failures
        .iter()
        .filter_map(|f| f.failure.as_ref().map(|e| format!("seed {}: {e}", f.seed)))
        .collect();
    cases.push((
        "world".into(),
        (!world.is_empty()).then(|| world.join("\n")),
    ));
    if let Some(d) = &s.determinism {
        let m: Vec<String> = d
            .mismatches
            .iter()
            .map(|m| {
                format!(
                    "seed {}: {} vs {}: {}",
                    m.seed, m.hash_here, m.hash_fresh_process, m.first_difference
                )
            })
            .collect();
        cases.push(("determinism".into(), (!m.is_empty()).then(|| m.join("\n"))));
    }
    let mut uncovered = Vec::new();
    if !s.coverage_never_fired.is_empty() {
        uncovered.push(format!(
            "never fired: {}",
            s.coverage_never_fired.join(", ")
        ));
    }
    if !s.left_out_not_covered.is_empty() {
        uncovered.push(format!(
            "left out, not covered: {}",
            s.left_out_not_covered.join(", ")
        ));
    }
    cases.push((
        "coverage".into(),
        (!uncovered.is_empty()).then(|| uncovered.join("\n")),
    ));
    junit_xml(
        "histsim",
        format!("histsim.{}", s.campaign),
        "histsim",
        s.elapsed_s,
        cases,
    )
}

/// One violation of a failing seed as its case's text says it: the seed, the message, the first
/// wrong answer when the violation names one, and the replay command.
fn hit_line(f: &super::FailureSummary, v: &crate::outcome::Violation) -> String {
    let first = v
        .first_wrong_answer()
        .map_or(String::new(), |d| format!("; first wrong answer: {d}"));
    format!(
        "seed {}: {}{first} (replay: {})",
        f.seed, v.message, f.replay
    )
}

/// A JUnit report of one suite: each case passes (`None`) or fails with its text, whose first
/// line is the failure's message. `histsim run`'s and `histsim fuzz run`'s reports both.
pub(crate) fn junit_xml(
    report: &str,
    suite: String,
    classname: &str,
    elapsed_s: f64,
    cases: Vec<(String, Option<String>)>,
) -> String {
    let mut suite = TestSuite::new(suite);
    // A merged or hand-edited summary may carry a time `Duration` cannot hold: report none.
    if let Ok(elapsed) = Duration::try_from_secs_f64(elapsed_s) {
        suite.set_time(elapsed);
    }
    for (name, failure) in cases {
        let status = match failure {
            None => TestCaseStatus::success(),
            Some(text) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status
                    .set_message(text.lines().next().unwrap_or(""))
                    .set_description(text);
                status
            }
        };
        let mut case = TestCase::new(name, status);
        case.set_classname(classname.to_string());
        suite.add_test_case(case);
    }
    let mut out = Report::new(report);
    out.add_test_suite(suite);
    out.to_string()
        .expect("a report of strings serializes into a String")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::summary_with_one_failure;

    #[test]
    fn junit_has_one_case_per_invariant_plus_world_and_coverage_and_escapes_text() {
        let xml = junit(&summary_with_one_failure());
        assert_eq!(xml.matches("<testcase ").count(), 4, "{xml}");
        for name in ["P1", "P4", "world", "coverage"] {
            assert!(xml.contains(&format!(r#"name="{name}""#)), "{name}: {xml}");
        }
        assert!(
            xml.contains(r#"tests="4""#) && xml.contains(r#"failures="2""#),
            "{xml}"
        );
        assert!(xml.contains(r#"name="histsim.c&lt;1&gt;""#), "{xml}");
        assert!(xml.contains("a &amp; &quot;b&quot; &lt;c&gt;"), "{xml}");
        assert!(xml.contains("replay: histsim replay --seed 1"), "{xml}");
        assert!(xml.contains("never fired: idle"), "{xml}");
        assert!(
            !xml.contains('\u{1}'),
            "a control character is not XML: {xml}"
        );
    }

    /// A violation's first wrong answer is in its failure's message, the line a CI system shows.
    #[test]
    fn a_failure_message_names_the_first_wrong_answer() {
        let mut s = summary_with_one_failure();
        let d = crate::divergence::Divergence::of("delete_by_run", 16, 6000, "the sqlite store")
            .answers("4 rows deleted", "9 rows deleted");
        let v = &mut s.failures[0].violations[0];
        v.first_divergence = Some(d);
        let xml = junit(&s);
        let message = xml
            .split("message=\"")
            .nth(1)
            .and_then(|m| m.split('"').next())
            .unwrap_or_else(|| panic!("no failure message: {xml}"));
        assert!(
            message.contains("first wrong answer: delete_by_run (request 16 at 6000us, the sqlite store): answered `4 rows deleted`, the model expects `9 rows deleted`"),
            "{message}"
        );
    }
}
