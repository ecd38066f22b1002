//! The committed scenario files: each reproduces its ID with the planted bug and passes without.

use sim::run::run_scenario_file;
use sim::scenario_file::{discover, ScenarioFile};
use sim::workload::StoreKind;
use std::path::Path;

fn scenario_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

#[test]
fn every_scenario_reproduces_its_id_and_passes_without_its_bug() {
    let files = discover(&scenario_dir()).expect("the scenarios directory is readable");
    assert!(files.len() >= 14, "only {} scenario files", files.len());
    for path in files {
        let file = ScenarioFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            let with_bug = run_scenario_file(
                &file,
                &sim::workload::WorldConfig::new(store, history::Planted::none()),
                Some(file.id),
            );
            assert!(
                with_bug.violations.iter().any(|v| v.id == file.id),
                "{} ({store:?}): no {} violation with the bug planted: {:?}",
                path.display(),
                file.id,
                with_bug.violations
            );
            let without = run_scenario_file(
                &file,
                &sim::workload::WorldConfig::new(store, history::Planted::none()),
                None,
            );
            assert!(
                without.violations.is_empty() && without.failure.is_none(),
                "{} ({store:?}): fails without the bug: {:?} {:?}",
                path.display(),
                without.violations,
                without.failure
            );
        }
    }
}

#[test]
fn a_bad_scenario_file_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.toml");
    std::fs::write(
        &path,
        "format = 1\nid = \"P4\"\ntitle = \"x\"\n[display]\nthread_id = 7\n",
    )
    .expect("write");
    let e = ScenarioFile::load(&path).expect_err("must fail");
    let text = e.to_string();
    assert!(text.contains("broken.toml"), "{text}");
    assert!(text.contains("display.thread_id"), "{text}");
}

#[test]
fn a_payload_defect_must_name_the_field_the_event_reads() {
    // Found by `histsim fuzz run --workload display` mutating this file: a misspelt field passed
    // validation and tripped the model's precondition (a panic, not an error naming the line).
    let path = scenario_dir().join("display/p10_payload_in_warnings.toml");
    let text = std::fs::read_to_string(&path).expect("the P10 scenario");
    let mutated = text.replacen("field = \"content\"", "field = \"cont?nt\"", 1);
    assert_ne!(text, mutated, "the P10 scenario names the `content` field");
    let e = ScenarioFile::parse(Path::new("p10.toml"), &mutated).expect_err("must fail");
    let text = e.to_string();
    assert!(text.contains("defect.field"), "{text}");
    assert!(text.contains("`content`") && text.contains("`cont?nt`"), "{text}");
}

#[test]
fn a_world_that_panics_is_a_broken_run_and_the_next_world_still_plays() {
    use sim::display::scenario::Defect;
    use sim::display::DisplayWorkload;
    let path = scenario_dir().join("display/p10_payload_in_warnings.toml");
    let file = ScenarioFile::load(&path).expect("the P10 scenario");
    let world = sim::workload::WorldConfig::new(StoreKind::Memory, history::Planted::none());
    let mut scenario = file.scenario.clone();
    // Past validation, as a caller building scenarios in code could: the model's precondition
    // panics inside the world.
    let display = scenario.get_mut::<DisplayWorkload>().expect("a display scenario");
    let step = display
        .turns
        .iter_mut()
        .flat_map(|t| t.steps.iter_mut())
        .find(|s| matches!(s.defect, Some(Defect::BadPayload { .. })))
        .expect("a payload defect");
    step.defect = Some(Defect::BadPayload {
        field: "cont?nt".into(),
    });
    let broken = scenario.play(&world);
    let failure = broken.failure.expect("a panicking world is broken");
    assert!(failure.contains("the world panicked"), "{failure}");
    assert!(failure.contains("BadPayload must name"), "{failure}");
    assert!(broken.violations.is_empty());
    let again = file.scenario.play(&world);
    assert!(again.failure.is_none() && again.violations.is_empty(), "{:?}", again.failure);
}
