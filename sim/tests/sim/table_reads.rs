//! The table reads: the store's reads the model answers, asked once the world ended and judged
//! by one rule. A wrong answer is the row's ID, an error R24, and a system that does not serve
//! one has it left out, counted, never passed.

use super::support::{assert_contains_all, runs_campaign, runs_store_edited};
use history::BugId;
use sim::runs::check;
use sim::runs::observations::{Observation, WorldRecord};
use sim::runs::play::world;
use sim::runs::record::Both;
use sim::runs::scenario::RunsScenario;
use sim::runs::script::Scripts;
use sim::runs::table_reads::TableReadStep;
use sim::workload::{StoreKind, WorldConfig};
use std::path::Path;

/// Catalog scenario `file` with `count_events_by_run` asked of every run on its own thread
/// and of the first run on every thread, played with no bug planted.
fn played_with_counts(file: &str) -> (RunsScenario, WorldRecord) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{file}.toml"));
    let text = std::fs::read_to_string(path).expect("the scenario file");
    let mut table: toml::Table = toml::from_str(&text).expect("TOML");
    let mut scenario: RunsScenario = table
        .remove("runs")
        .expect("a [runs] table")
        .try_into()
        .expect("a runs scenario");
    let ask = |thread: &str, run: &str| TableReadStep {
        op: "count_events_by_run".into(),
        thread: thread.into(),
        run: Some(run.into()),
    };
    let first = scenario.runs[0].id.clone();
    let mut steps: Vec<TableReadStep> = (scenario.runs.iter())
        .map(|r| ask(&r.thread, &r.id))
        .collect();
    steps.extend(scenario.threads.keys().map(|t| ask(t, &first)));
    scenario.table_reads = steps;
    scenario.validate().expect("a valid scenario");
    let config = WorldConfig::new(StoreKind::Memory, history::Planted::none());
    let record = world::play(&scenario, &Scripts::of(&scenario), &config);
    assert!(record.failure.is_none(), "{:?}", record.failure);
    (scenario, record)
}

fn violations(scenario: &RunsScenario, record: &WorldRecord) -> Vec<sim::Violation> {
    check::check(scenario, &Scripts::of(scenario), record, StoreKind::Memory)
}

#[test]
fn a_wrong_count_is_the_rows_id_and_an_error_is_r24() {
    // A deletion: the deleted run counts 0, the thread's other run its rows.
    let (scenario, record) = played_with_counts("runs/r15_a_deletion_leaves_the_runs_other_rows");
    assert_eq!(violations(&scenario, &record), Vec::new());
    let reads = record.log.table_reads();
    assert_eq!(reads.len(), scenario.table_reads.len());
    let counts: Vec<u64> = (reads.iter())
        .map(|r| {
            r.answers
                .memory
                .clone()
                .expect("an answer")
                .as_u64()
                .expect("a count")
        })
        .collect();
    assert!(counts.contains(&0), "{counts:?}");
    assert!(counts.iter().any(|&c| c > 0), "{counts:?}");
    assert!(reads.iter().all(|r| r.answers.memory == r.answers.sqlite));

    // The sqlite store answers one more than it holds.
    let wrong = |answer: &Result<serde_json::Value, String>| {
        let n = answer
            .clone()
            .expect("an answer")
            .as_u64()
            .expect("a count");
        serde_json::Value::from(n + 1)
    };
    let (scenario, mut record) =
        played_with_counts("runs/r15_a_deletion_leaves_the_runs_other_rows");
    record.log = record.log.edited(|o| {
        if let Observation::TableRead(r) = o {
            if r.step == 0 {
                let sqlite = Ok(wrong(&r.answers.sqlite));
                r.answers = Both::new(r.answers.memory.clone(), sqlite);
            }
        }
    });
    let found = violations(&scenario, &record);
    let r3 = found.iter().find(|v| v.id == BugId::R3).expect("R3");
    assert!(
        r3.message
            .contains("sqlite answered count_events_by_run(thread "),
        "{r3:?}"
    );
    assert!(r3.message.contains("but the model says"), "{r3:?}");
    assert!(r3.whole_state.is_some(), "{r3:?}");

    // The memory store answers an error where the table says `errors Never`.
    let (scenario, mut record) =
        played_with_counts("runs/r15_a_deletion_leaves_the_runs_other_rows");
    record.log = record.log.edited(|o| {
        if let Observation::TableRead(r) = o {
            if r.step == 1 {
                r.answers = Both::new(Err("disk full".into()), r.answers.sqlite.clone());
            }
        }
    });
    let found = violations(&scenario, &record);
    let r24 = found.iter().find(|v| v.id == BugId::R24).expect("R24");
    assert!(r24.message.contains("count_events_by_run"), "{r24:?}");
    assert!(r24.message.contains("disk full"), "{r24:?}");
}

#[test]
fn a_table_read_names_an_op_run_and_thread_of_its_scenario() {
    let (mut scenario, _) = played_with_counts("runs/r15_a_deletion_leaves_the_runs_other_rows");
    scenario.table_reads[0].op = "count_everything".into();
    let e = scenario.validate().expect_err("an unknown op");
    assert!(
        e.starts_with("table_reads[0].op: no table read `count_everything`"),
        "{e}"
    );
    scenario.table_reads[0].op = "count_events_by_run".into();
    scenario.table_reads[0].run = None;
    let e = scenario.validate().expect_err("no run");
    assert_eq!(e, "table_reads[0].run: `count_events_by_run` takes a run");
    scenario.table_reads[0].run = Some("run-none".into());
    let e = scenario.validate().expect_err("an unknown run");
    assert_eq!(e, "table_reads[0].run: no run `run-none`");
}

#[test]
fn a_system_without_a_table_read_has_it_left_out_and_counted() {
    // histsim's own store, its hello without count_events_by_run: the protocol's way of
    // saying it does not offer the op.
    let sut = runs_store_edited(r#"s/,"count_events_by_run"//"#);
    let (code, text, _) = runs_campaign(&sut, "0..6", &[]);
    assert_eq!(code, Some(5), "{text}");
    assert_contains_all(
        &text,
        &[
            "the table read count_events_by_run (the system does not serve count_events_by_run)",
            "answers: count_events_by_run: sent 0, ok 0, left out ",
        ],
    );
    let not_covered = text
        .lines()
        .find(|l| l.starts_with("not covered (left out): "))
        .expect("a not-covered line");
    assert!(not_covered.contains("count_events_by_run"), "{text}");
}
