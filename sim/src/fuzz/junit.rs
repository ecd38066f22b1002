//! JUnit XML for a fuzzing campaign, as `histsim run` writes it: one test case per invariant ID
//! of the workload (failing with the crash input and the imported scenario file when the
//! fuzzer found it), one for the harness itself (a crash that is no violation: a broken or
//! panicking world) and one for the fuzzer (libFuzzer ended badly without a crash input), so a
//! CI's test view shows what a campaign found where it shows `histsim run`'s verdicts.

use super::summary::{FuzzSummary, FuzzViolation};
use crate::registry;
use crate::report::junit_xml;

/// The report of `s`.
pub fn junit(s: &FuzzSummary) -> String {
    let ids: Vec<String> = registry::by_name(&s.workload)
        .map(|w| registry::ids_of(w).iter().map(|i| i.to_string()).collect())
        .unwrap_or_default();
    let mut cases: Vec<(String, Option<String>)> = ids
        .iter()
        .map(|id| {
            let found: Vec<String> = s
                .violations
                .iter()
                .filter(|v| v.id.is_some_and(|v| v.as_str() == id))
                .map(describe)
                .collect();
            (id.clone(), (!found.is_empty()).then(|| found.join("\n")))
        })
        .collect();
    let harness: Vec<String> = s
        .violations
        .iter()
        .filter(|v| v.id.is_none_or(|i| !ids.iter().any(|id| id == i.as_str())))
        .map(describe)
        .collect();
    cases.push((
        "harness".into(),
        (!harness.is_empty()).then(|| harness.join("\n")),
    ));
    cases.push(("fuzzer".into(), s.failure.clone()));
    junit_xml(
        "histsim-fuzz",
        format!("histsim.fuzz.{}", s.name),
        &s.target,
        s.elapsed_s,
        cases,
    )
}

/// One line for one crash: what panicked, the input, and how to replay it.
fn describe(v: &FuzzViolation) -> String {
    let what = v
        .message
        .as_deref()
        .unwrap_or("(no panic message in the log)");
    let replay = match (&v.scenario_file, &v.import_error) {
        (Some(f), _) => format!("replay: {} scenarios {f}", crate::run::histsim_command()),
        (None, Some(e)) => format!("not imported: {e}"),
        (None, None) => String::new(),
    };
    format!("{what}; crash input {}; {replay}", v.crash_input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::stats::LibFuzzerStats;
    use history::BugId;

    fn summary(violations: Vec<FuzzViolation>, failure: Option<String>) -> FuzzSummary {
        FuzzSummary {
            name: "t".into(),
            workload: "display".into(),
            target: "sim_display".into(),
            planted: None,
            budget_s: 30,
            jobs: 1,
            seeds: None,
            elapsed_s: 30.5,
            cpu_s: Some(29.0),
            exec_per_cpu_s: Some(3_103),
            played_per_cpu_s: None,
            libfuzzer: LibFuzzerStats::default(),
            coverage_over_time: Vec::new(),
            corpus_files: 3,
            resumed_inputs: 0,
            violations,
            failure,
            command: "cargo fuzz run sim_display".into(),
        }
    }

    #[test]
    fn a_found_id_fails_its_own_case_and_a_panic_fails_the_harness_case() {
        let found = FuzzViolation {
            id: Some(BugId::P4),
            crash_input: "artifacts/crash-1".into(),
            scenario_file: Some("scenarios/regressions/p4.toml".into()),
            import_error: None,
            message: Some("histsim violation P4: two copies <of> one row".into()),
            replay_text: None,
        };
        let panicked = FuzzViolation {
            id: None,
            crash_input: "artifacts/crash-2".into(),
            scenario_file: None,
            import_error: Some("the world broke down".into()),
            message: Some("histsim broken world: the world panicked: x".into()),
            replay_text: None,
        };
        let xml = junit(&summary(vec![found, panicked], None));
        assert!(xml.contains("<testcase name=\"P4\""), "{xml}");
        assert!(xml.contains(" scenarios scenarios/regressions/p4.toml"));
        assert!(
            xml.contains("two copies &lt;of&gt; one row"),
            "escaped: {xml}"
        );
        assert!(xml.contains("the world panicked"), "{xml}");
        let failures = xml.matches("<failure").count();
        assert_eq!(failures, 2, "P4 and the harness: {xml}");
        let cases = xml.matches("<testcase").count();
        assert_eq!(
            cases,
            registry::ids_of(registry::by_name("display").unwrap()).len() + 2
        );
    }

    #[test]
    fn a_clean_campaign_passes_every_case_and_a_bad_fuzzer_end_fails_one() {
        let clean = junit(&summary(Vec::new(), None));
        assert_eq!(clean.matches("<failure").count(), 0, "{clean}");
        let bad = junit(&summary(Vec::new(), Some("exit status: 1".into())));
        assert_eq!(bad.matches("<failure").count(), 1, "{bad}");
        assert!(bad.contains("exit status: 1"));
    }
}
