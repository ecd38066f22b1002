//! The committed scenario files: each reproduces its ID with the planted bug and passes without.

use super::support::{assert_contains_all, temp_file};
use super::support::{assert_passes_without, played_with_and_without};
use sim::run::run_scenario_file;
use sim::scenario_file::{discover, ScenarioFile};
use sim::workload::StoreKind;
use std::path::Path;

fn scenario_dir() -> std::path::PathBuf {
    super::support::scenario_dir("")
}

#[test]
fn every_scenario_reproduces_its_id_and_passes_without_its_bug() {
    let files = discover(&scenario_dir()).expect("the scenarios directory is readable");
    let upstream = files
        .iter()
        .filter(|f| f.starts_with(scenario_dir().join("upstream")));
    assert!(
        upstream.count() >= 7,
        "the DeerFlow findings live under scenarios/upstream/"
    );
    assert!(files.len() >= 14, "only {} scenario files", files.len());
    for path in files {
        let file = ScenarioFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            let (with_bug, without) = played_with_and_without(&file, store);
            assert_passes_without(&path, store, &without);
            if file.system.is_some() {
                // An upstream finding: nothing of ours is planted; our components pass it (that
                // it still fails the system it names is adapters/deerflow/findings_check.sh's).
                continue;
            }
            assert!(
                with_bug.violations.iter().any(|v| v.id == file.id),
                "{} ({store:?}): no {} violation with the bug planted: {:?}",
                path.display(),
                file.id,
                with_bug.violations
            );
        }
    }
}

#[test]
fn a_bad_scenario_file_is_a_clear_error() {
    let (_dir, path) = temp_file(
        "broken.toml",
        "format = 1\nid = \"P4\"\ntitle = \"x\"\n[display]\nthread_id = 7\n",
    );
    let e = ScenarioFile::load(&path).expect_err("must fail");
    let text = e.to_string();
    assert_contains_all(&text, &["broken.toml", "display.thread_id"]);
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
    assert!(
        text.contains("`content`") && text.contains("`cont?nt`"),
        "{text}"
    );
}

fn on_memory() -> sim::workload::WorldConfig {
    sim::workload::WorldConfig::new(StoreKind::Memory, history::Planted::none())
}

/// Reads `text` as the scenario file `name` and plays it with nothing planted: it must pass.
fn assert_passes(name: &str, text: &str, what: &str) -> ScenarioFile {
    let file = ScenarioFile::parse(Path::new(name), text).expect("a valid scenario file");
    let run = run_scenario_file(&file, &on_memory(), None);
    assert!(
        run.violations.is_empty() && run.failure.is_none(),
        "{what}: {:?} {:?}",
        run.violations,
        run.failure
    );
    file
}

#[test]
fn a_payload_string_that_is_also_an_identifier_is_no_p10_leak() {
    // Found by mutating this file: a url that is the main display's id (and, the other way
    // round, a display id that is the url) made every bad_media warning, which names its display
    // by design, look like a leak of the url. With its bug, P10 is still found.
    let path = scenario_dir().join("display/p13_legacy_media_payloads.toml");
    let text = std::fs::read_to_string(&path).expect("the P13 scenario");
    let (url, display_id) = (
        "https://img.example/u1-chart.png",
        "65a0000000000000000000d1",
    );
    for mutated in [
        text.replacen(
            &format!("url = \"{url}\""),
            &format!("url = \"{display_id}\""),
            1,
        ),
        text.replacen(
            &format!("main = \"{display_id}\""),
            &format!("main = \"{url}\""),
            1,
        ),
    ] {
        assert_ne!(
            text, mutated,
            "the P13 scenario has the url and the display id"
        );
        let file = assert_passes("p13.toml", &mutated, "a url that is an id");
        let leaked = run_scenario_file(&file, &on_memory(), Some(history::BugId::P10));
        assert!(
            leaked
                .violations
                .iter()
                .any(|v| v.id == history::BugId::P10),
            "{:?}",
            leaked.violations
        );
    }
}

#[test]
fn a_bad_identity_may_only_blank_a_field_that_keeps_the_row_in_place() {
    // A blank display_id (or agent_class, thread_id, event_type) passed validation, then the
    // model's precondition panicked: the row would be another emission somewhere else.
    let path = scenario_dir().join("display/p03_hitl_in_both_roles.toml");
    let text = std::fs::read_to_string(&path).expect("the P3 scenario");
    let answer = "event = { kind = \"hitl_answer\", answer = true }\n";
    for (field, valid) in [
        ("agent_class", false),
        ("thread_id", false),
        ("display_id", false),
        ("event_type", false),
        ("agent_id", true),
        ("event_id", true),
    ] {
        let mutated = text.replacen(
            answer,
            &format!("{answer}defect = {{ kind = \"bad_identity\", field = \"{field}\" }}\n"),
            1,
        );
        assert_ne!(text, mutated, "the P3 scenario has a bool answer");
        match ScenarioFile::parse(Path::new("p03.toml"), &mutated) {
            Ok(_) => assert!(valid, "{field} passed validation"),
            Err(e) => {
                let message = e.to_string();
                assert!(!valid, "{field}: {message}");
                assert!(
                    message.contains("defect.field") && message.contains(field),
                    "{message}"
                );
            }
        }
    }
}

#[test]
fn an_envelope_rows_own_defect_comes_before_its_payload() {
    // Found by mutating this file: an envelope stop with a malformed created_at was expected to
    // warn bad_payload (the envelope's) when the projector, rightly, skips the row for its
    // created_at before reading the payload. Whether or not the envelope's agent is the primary.
    let path = scenario_dir().join("display/p01_unknown_envelope_crashes_reconstruction.toml");
    let text = std::fs::read_to_string(&path).expect("the P1 scenario");
    let envelope = "family = \"StopEvent\", text = \"e3a \" }\n";
    for primary in ["lead", "retriever"] {
        for defect in [
            "{ kind = \"bad_created_at\", as_type = \"string\" }",
            "{ kind = \"bad_identity\", field = \"run_id\" }",
        ] {
            let mutated = text
                .replacen("primary = \"lead\"", &format!("primary = \"{primary}\""), 1)
                .replacen(envelope, &format!("{envelope}defect = {defect}\n"), 1);
            assert_eq!(
                mutated.len(),
                text.len() + primary.len() - 4 + defect.len() + 10,
                "the P1 scenario has its envelope stop"
            );
            assert_passes(
                "p01.toml",
                &mutated,
                &format!("primary {primary}, {defect}"),
            );
        }
    }
}

#[test]
fn a_delay_past_the_worlds_time_is_a_clear_error() {
    // A delay of 4,000,000,000 ms passed validation, and the world ran its 600 s out: a broken
    // run where the file had a bad number.
    let path = scenario_dir().join("display/p05_trailing_chunks_lost_to_the_race.toml");
    let text = std::fs::read_to_string(&path).expect("the P5 scenario");
    let at_most = sim::display::scenario::TIMELINE_MS_MAX;
    let held = |ms: u64| text.replacen("ms = 20\n", &format!("ms = {ms}\n"), 1);
    assert_ne!(text, held(21), "the P5 scenario delays a delivery by 20 ms");
    let e = ScenarioFile::parse(Path::new("p05.toml"), &held(4_000_000_000)).expect_err("too long");
    let message = e.to_string();
    assert!(
        message.contains("display.faults") && message.contains(&format!("at most {at_most} ms")),
        "{message}"
    );
    // The bound counts the delay twice: a third of it passes with the file's other pauses.
    ScenarioFile::parse(Path::new("p05.toml"), &held(at_most / 3)).expect("fits");
}

#[test]
fn an_other_block_must_not_name_a_converted_block_type() {
    // Found by mutating this file: `other` naming `audio` passed validation, then the model's
    // precondition panicked (a broken world, not an error naming the line).
    let path = scenario_dir().join("display/p13_legacy_media_payloads.toml");
    let text = std::fs::read_to_string(&path).expect("the P13 scenario");
    for name in ["text", "image", "audio"] {
        let mutated = text.replacen(
            "{ block_type = \"other\", name = \"video\" }",
            &format!("{{ block_type = \"other\", name = \"{name}\" }}"),
            1,
        );
        assert_ne!(text, mutated, "the P13 scenario has a video `other` block");
        let e = ScenarioFile::parse(Path::new("p13.toml"), &mutated).expect_err("must fail");
        let text = e.to_string();
        assert!(
            text.contains("event.blocks[") && text.contains(&format!("`{name}`")),
            "{text}"
        );
    }
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
    let display = scenario
        .get_mut::<DisplayWorkload>()
        .expect("a display scenario");
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
    assert_contains_all(&failure, &["the world panicked", "BadPayload must name"]);
    assert!(broken.violations.is_empty());
    let again = file.scenario.play(&world);
    assert!(
        again.failure.is_none() && again.violations.is_empty(),
        "{:?}",
        again.failure
    );
}

#[test]
fn an_upstream_finding_names_its_system_and_round_trips() {
    let path = scenario_dir().join("upstream/deerflow/r13_db_delete_by_run_reuses_seqs.toml");
    let file = ScenarioFile::load(&path).expect("the F7 finding");
    let system = file.system.clone().expect("a finding names its system");
    assert!(
        system.starts_with("adapters/deerflow/run --backend db"),
        "{system}"
    );
    let text = file.to_toml().expect("serializes");
    let again = ScenarioFile::parse(Path::new("again.toml"), &text).expect("reads back");
    assert_eq!(again, file);
    let bad = text.replacen("system = ", "systen = ", 1);
    let e = ScenarioFile::parse(Path::new("bad.toml"), &bad).expect_err("unknown field");
    assert!(e.to_string().contains("system"), "{e}");
}

#[test]
fn with_systems_a_finding_the_named_system_passes_is_reported_as_no_longer_reproducing() {
    // The system here is histsim's own store, which has no R13 bug: `--systems` must say the
    // finding no longer reproduces there (exit 1), after histsim's components passed it.
    let dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(
        scenario_dir().join("upstream/deerflow/r13_db_delete_by_run_reuses_seqs.toml"),
    )
    .expect("the F7 finding");
    let system = format!("{} serve runs", env!("CARGO_BIN_EXE_histsim"));
    let start = text.find("system = ").expect("a system line");
    let end = start + text[start..].find('\n').expect("one line");
    let ours = format!("{}system = {system:?}{}", &text[..start], &text[end..]);
    let path = dir.path().join("finding.toml");
    std::fs::write(&path, ours).expect("write");
    let (code, out) = crate::histsim_cli(&["scenarios".as_ref(), path.as_os_str()]);
    assert_eq!(
        code,
        Some(0),
        "without --systems only our components play: {out}"
    );
    assert!(out.contains("histsim's components pass it"), "{out}");
    let (code, out) =
        crate::histsim_cli(&["scenarios".as_ref(), path.as_os_str(), "--systems".as_ref()]);
    assert_eq!(code, Some(1), "{out}");
    assert_contains_all(
        &out,
        &["no R13 violation against", "scenarios: 0 passed, 1 failed"],
    );
}

/// `histsim replay --scenario FILE` plays a scenario file exactly as a seed: its trace with
/// `--trace`, its violation with the bug planted, a clean verdict without; a file and a `--sut`
/// whose workload has no process boundary is usage.
#[test]
fn replay_plays_a_scenario_file_as_a_seed() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/runs/r24_a_deleted_runs_page_answers_an_internal_error.toml"
    );
    let (code, out) =
        super::histsim_cli(&["replay", "--scenario", file, "--planted", "R24", "--trace"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("trace:") && out.contains("violation [R24]"),
        "{out}"
    );
    let (code, out) = super::histsim_cli(&["replay", "--scenario", file]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("trace-hash: ") && !out.contains("violation"),
        "{out}"
    );
    let journal = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/journal/j01_crash_mid_replacement_shows_a_mix.toml"
    );
    let (code, out) = super::histsim_cli(&["replay", "--scenario", journal, "--sut", "true"]);
    assert_eq!(code, Some(2), "{out}");
}
