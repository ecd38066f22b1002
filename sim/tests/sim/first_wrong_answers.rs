//! The first wrong answer of the rules about one request beyond the runs workload's reads: the
//! journal's operations and restarts, the spool's requests, the runs stores disagreeing on a
//! deletion or on what reads show after it (R9); and the whole-state rules, which say so.
//! Played through the library on the catalog's scenario files, with their bug planted.

use crate::support::python_missing;
use history::BugId;
use sim::run::run_scenario_file;
use sim::runs::check;
use sim::runs::observations::{Observation, WorldRecord};
use sim::runs::play::world;
use sim::runs::record::Both;
use sim::runs::scenario::RunsScenario;
use sim::runs::script::Scripts;
use sim::scenario_file::ScenarioFile;
use sim::workload::{StoreKind, WorldConfig};
use sim::Violation;
use std::path::{Path, PathBuf};

fn scenario_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{file}.toml"))
}

/// The violations of catalog scenario `file` played with `id` planted, and its full trace.
fn played(file: &str, id: BugId) -> (Vec<Violation>, Vec<String>) {
    let file = ScenarioFile::load(&scenario_path(file)).unwrap_or_else(|e| panic!("{e}"));
    let config = WorldConfig {
        keep_trace: true,
        ..WorldConfig::new(StoreKind::Memory, history::Planted::none())
    };
    let run = run_scenario_file(&file, &config, Some(id));
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let trace = run.trace.full().expect("the full trace").to_vec();
    (run.violations, trace)
}

/// The first violation of `id`, which names its first wrong answer: every field said, and the
/// trace line of its request marked at its time.
fn first_wrong(violations: &[Violation], trace: &[String], id: BugId) -> sim::Divergence {
    let v = violations
        .iter()
        .find(|v| v.id == id)
        .unwrap_or_else(|| panic!("no {id} in {violations:#?}"));
    let d = v
        .first_divergence
        .clone()
        .unwrap_or_else(|| panic!("{id} names no first wrong answer: {v}"));
    for (field, text) in [
        ("op", &d.op),
        ("by", &d.by),
        ("answered", &d.answered),
        ("expected", &d.expected),
    ] {
        assert!(!text.is_empty(), "{id}: no {field}: {d}");
        assert!(
            !text.contains("Some(") && !text.contains("{ "),
            "{id}: {field}: {text}"
        );
    }
    assert_ne!(d.answered, d.expected, "{id}: {d}");
    let mark = v.trace_marks.first().expect("the request's trace mark");
    assert_eq!(mark.at_us, Some(d.at_us), "{id}: {d}");
    assert!(
        trace.iter().any(|l| mark.marks(l)),
        "{id}: no trace line of {d} in\n{}",
        trace.join("\n")
    );
    d
}

#[test]
fn a_journal_operation_names_its_step_and_both_answers() {
    let cases = [
        (
            "j11_statistics_rescan_the_journal",
            BugId::J11,
            "read",
            3,
            "536 bytes read",
        ),
        (
            "j15_compound_shapes_as_several_records",
            BugId::J15,
            "rewind",
            3,
            "2 records written",
        ),
        (
            "j17_interleaved_token_counts",
            BugId::J17,
            "estimate",
            1,
            "6, 2 tokens",
        ),
        (
            "j13_truncation_reprojects_per_candidate",
            BugId::J13,
            "send",
            2,
            "24 rows visited",
        ),
        (
            "j12_mutation_refolds_the_journal",
            BugId::J12,
            "shared",
            0,
            "69 bytes read back",
        ),
        (
            "j04_failed_resume_leaves_no_recording",
            BugId::J4,
            "switch",
            2,
            "recording none",
        ),
        (
            "j18_disposal_is_fire_and_forget",
            BugId::J18,
            "process start",
            1,
            "scratch left: ",
        ),
    ];
    for (file, id, op, request, answered) in cases {
        let (violations, trace) = played(&format!("journal/{file}"), id);
        let d = first_wrong(&violations, &trace, id);
        assert_eq!((d.op.as_str(), d.request), (op, request), "{file}: {d}");
        assert!(d.answered.starts_with(answered), "{file}: {d}");
        assert!(d.by.starts_with("session 0's "), "{file}: {d}");
    }
}

#[test]
fn a_restart_after_a_crash_names_the_crash_and_what_it_reopened() {
    let (violations, trace) = played("journal/j01_crash_mid_replacement_shows_a_mix", BugId::J1);
    let d = first_wrong(&violations, &trace, BugId::J1);
    assert_eq!(
        d.op, "resume session.journal after the crash at op 2",
        "{d}"
    );
    assert_eq!(d.request, 2, "{d}");
    assert_eq!(d.by, "session 0's restarted process", "{d}");
    assert!(d.answered.starts_with("reopened as 1 rows"), "{d}");
    assert!(d.expected.starts_with("4 rows"), "{d}");
    let (violations, trace) = played(
        "journal/j21_recovery_forgets_an_open_replacement",
        BugId::J21,
    );
    let d = first_wrong(&violations, &trace, BugId::J21);
    assert_eq!(d.answered, "transaction 3 open after the resume", "{d}");
    assert_eq!(d.expected, "no transaction open", "{d}");
}

#[test]
fn a_spool_request_names_its_index_time_and_the_bound() {
    let (violations, trace) = played("spool/j14_body_built_in_memory", BugId::J14);
    let d = first_wrong(&violations, &trace, BugId::J14);
    assert_eq!(
        (d.op.as_str(), d.request, d.at_us),
        ("send (openai)", 0, 1),
        "{d}"
    );
    assert_eq!(d.answered, "14891 bytes held in memory", "{d}");
    assert_eq!(
        d.expected, "at most 7975 bytes held (the streaming bound)",
        "{d}"
    );
}

#[test]
fn whole_state_rules_say_so_instead_of_nothing() {
    let (violations, _) = played("journal/j16_unbounded_density_record", BugId::J16);
    let v = violations.iter().find(|v| v.id == BugId::J16).expect("J16");
    assert!(v.first_divergence.is_none(), "{v}");
    assert_eq!(
        v.first_wrong_answer().as_deref(),
        Some("none, a whole-state rule: the bytes of session.journal at the end")
    );
    let (violations, _) = played("runs/r03_reads_write_into_the_store", BugId::R3);
    let v = violations.iter().find(|v| v.id == BugId::R3).expect("R3");
    assert_eq!(
        v.whole_state.as_deref(),
        Some("the rows the memory store holds at the end"),
        "{v}"
    );
    let json = serde_json::to_value(v).expect("JSON");
    assert_eq!(
        json["whole_state"],
        "the rows the memory store holds at the end"
    );
}

/// The runs scenario of catalog file `file`, played with no bug planted.
fn runs_world(file: &str) -> (RunsScenario, WorldRecord) {
    let text = std::fs::read_to_string(scenario_path(file)).expect("the scenario file");
    let mut table: toml::Table = toml::from_str(&text).expect("TOML");
    let scenario: RunsScenario = table
        .remove("runs")
        .expect("a [runs] table")
        .try_into()
        .expect("a runs scenario");
    let config = WorldConfig::new(StoreKind::Memory, history::Planted::none());
    let record = world::play(&scenario, &Scripts::of(&scenario), &config);
    assert!(record.failure.is_none(), "{:?}", record.failure);
    (scenario, record)
}

/// The violations the runs checks find in `record`, a world played from `scenario` on the
/// memory store.
fn judged(scenario: &RunsScenario, record: &WorldRecord) -> Vec<Violation> {
    check::check(scenario, &Scripts::of(scenario), record, StoreKind::Memory)
}

/// The one violation the runs checks find in `record` (of scenario `file`): R24's, with its
/// first wrong answer.
fn only_r24(
    scenario: &RunsScenario,
    record: &WorldRecord,
    file: &str,
) -> (Violation, sim::Divergence) {
    let violations = judged(scenario, record);
    let ids: Vec<BugId> = violations.iter().map(|v| v.id).collect();
    assert_eq!(ids, [BugId::R24], "{file}: {violations:#?}");
    let d = first_of(&violations, BugId::R24).clone();
    (violations[0].clone(), d)
}

/// The first wrong answer the violation of `id` names.
fn first_of(violations: &[Violation], id: BugId) -> &sim::Divergence {
    let v = violations.iter().find(|v| v.id == id);
    let v = v.unwrap_or_else(|| panic!("no {id} in {violations:#?}"));
    v.first_divergence.as_ref().expect("a first wrong answer")
}

/// R9 of a deletion: no planted bug splits the two stores on a deletion (each planted deletion
/// bug is in both), so the sqlite store's answers are replaced in the record, as a store that
/// answered them would have: the finding names the first call of the deletion whose answers
/// differ, the deletion's own or a read right after it.
#[test]
fn backends_apart_on_a_deletion_name_the_first_call_that_differs() {
    let (scenario, mut record) = runs_world("runs/r15_a_deletion_leaves_the_runs_other_rows");
    let d = record.log.deletions()[0].clone();
    let (op, at_us) = (d.op, d.at_us);
    let seq = (record.log.written().iter())
        .find(|w| w.event.run_id == d.run_id)
        .map(|w| w.event.seq);
    let mut rows = d.answers.events_after.sqlite.clone().expect("an answer");
    // A row of the deleted run the sqlite store still shows.
    let deleted = record
        .log
        .written()
        .iter()
        .find(|w| w.event.run_id == d.run_id);
    rows.push(deleted.expect("a row of the run").event.clone());
    let events_after = Both::new(d.answers.events_after.memory.clone(), Ok(rows));
    record.log = record.log.edited(|o| match o {
        Observation::Deletion(x) if x.op == op => x.answers.events_after = events_after.clone(),
        _ => {}
    });
    let violations = judged(&scenario, &record);
    let first = first_of(&violations, BugId::R9);
    assert_eq!(first.op, "list_events after delete_by_run", "{first}");
    assert_eq!((first.request, first.at_us), (op, at_us), "{first}");
    let seq = seq.expect("a row of the run");
    assert_eq!(
        first.answered,
        format!("sqlite: 1 rows, seqs {seq}"),
        "{first}"
    );
    assert_eq!(
        first.expected, "0 rows, seqs none, as the memory store answered",
        "{first}"
    );

    let (scenario, mut record) = runs_world("runs/r23_a_thread_deletion_leaves_the_runs_traces");
    let (op, at_us) = {
        let d = &record.log.thread_deletions()[0];
        (d.op, d.at_us)
    };
    record.log = record.log.edited(|o| match o {
        Observation::ThreadDeletion(d) if d.op == op => d.count_after = Both::new(Ok(0), Ok(2)),
        _ => {}
    });
    let violations = judged(&scenario, &record);
    let first = first_of(&violations, BugId::R9);
    assert_eq!(first.op, "count_messages after delete_by_thread", "{first}");
    assert_eq!((first.request, first.at_us), (op, at_us), "{first}");
    assert_eq!(first.answered, "sqlite: 2 rows", "{first}");
    assert_eq!(
        first.expected, "0 rows, as the memory store answered",
        "{first}"
    );
}

/// R9 of a write: the two stores of the pair gave a journal's write (or a writer's read)
/// different answers. No planted bug splits them (each is in both), so a disagreement is added
/// to a clean record as the tap records one: the finding names the call, the last operation
/// begun, its time and both answers in words.
#[test]
fn backends_apart_on_a_write_name_the_call_and_both_answers() {
    use sim::runs::record::WriteDisagreement;
    let (scenario, mut record) = runs_world("runs/r15_a_deletion_leaves_the_runs_other_rows");
    assert!(judged(&scenario, &record).is_empty());
    record
        .log
        .push(Observation::WriteDisagreement(WriteDisagreement {
            op: 3,
            at_us: 5_000,
            call: "put_batch".into(),
            first_slot: "memory",
            first: "seqs 4, 5".into(),
            sqlite: "seqs 4, 4".into(),
        }));
    let violations = judged(&scenario, &record);
    let first = first_of(&violations, BugId::R9);
    assert_eq!(first.op, "put_batch", "{first}");
    assert_eq!((first.request, first.at_us), (3, 5_000), "{first}");
    assert_eq!(first.answered, "sqlite: seqs 4, 4", "{first}");
    assert_eq!(first.expected, "seqs 4, 5, as the memory store answered");
    let r9 = violations.iter().find(|v| v.id == BugId::R9).expect("R9");
    assert!(
        !r9.message.contains("Ok(") && !r9.message.contains("Err("),
        "{}",
        r9.message
    );
}

/// An error answer to a per-run page (R16's read) or a filtered event read (R17's) is judged
/// under R24, which names the read that answered it, the error and what the contract asks: an
/// answer. The rules of R16 and R17 pass over the error (they have nothing to compare), so the
/// read has one first wrong answer, not two.
#[test]
fn an_error_answer_to_a_run_page_or_a_filtered_read_names_its_read() {
    use sim::runs::record::ReadKind;
    for (file, op) in [
        (
            "runs/r16_a_runs_page_is_cut_from_the_threads",
            "run messages",
        ),
        (
            "runs/r17_a_tasks_page_is_cut_before_its_filter",
            "filtered events",
        ),
    ] {
        let (scenario, mut record) = runs_world(file);
        let failed = || Err("internal: no such run".to_string());
        let mut found = None;
        record.log = record.log.edited(|o| match o {
            Observation::Read(read) if found.is_none() => match &mut read.kind {
                ReadKind::RunMessages { pages, .. } | ReadKind::FilteredEvents { pages, .. } => {
                    found = Some((read.op, read.at_us));
                    *pages = Both::new(failed(), failed());
                }
                _ => {}
            },
            _ => {}
        });
        let (request, at_us) = found.expect("a read of the rule");
        let (_, d) = only_r24(&scenario, &record, file);
        assert_eq!(
            (d.op.as_str(), d.request, d.at_us),
            (op, request, at_us),
            "{d}"
        );
        assert!(d.answered.ends_with(": error internal: no such run"), "{d}");
        assert!(d.expected.ends_with(": an answer"), "{d}");
    }
}

/// R24 of a worker's batch write: a journal's `put_batch` answered with an error names the
/// call, the last operation begun and its time, as R9 on a write does; the retries a journal
/// makes at once are one finding, and the first error (in simulated time) is the first wrong
/// answer.
#[test]
fn an_error_answer_to_a_journals_write_names_the_write_and_its_time() {
    use sim::runs::record::WriteError;
    let (scenario, mut record) = runs_world("runs/r15_a_deletion_leaves_the_runs_other_rows");
    let error = |at_us: u64, stores: &str| WriteError {
        op: 3,
        at_us,
        call: "put_batch",
        run_id: Some("run-0".into()),
        stores: stores.into(),
        conflict: false,
        message: "internal: disk full".into(),
    };
    record.log.extend(
        [
            error(9_000, "the sqlite store"),
            error(5_000, "the memory and sqlite stores"),
            error(5_000, "the memory and sqlite stores"),
            error(5_000, "the memory and sqlite stores"),
        ]
        .map(Observation::WriteError),
    );
    let (r24, d) = only_r24(&scenario, &record, "r15");
    assert_eq!(
        d.to_string(),
        "put_batch (request 3 at 5000us, the memory and sqlite stores): answered \
         `error internal: disk full`, the model expects `an answer`"
    );
    assert_eq!(r24.whole_state, None, "{r24}");
    assert_eq!(
        r24.message,
        "op 3 at 9000us: run-0's journal writing a batch (put_batch): the sqlite store answered \
         with an error where the contract asks for an answer: internal: disk full; \
         op 3 at 5000us: run-0's journal writing a batch (put_batch, 3 calls alike): the memory \
         and sqlite stores answered with an error where the contract asks for an answer: \
         internal: disk full"
    );
}

/// The same through a system under test that answers `internal` to every `put_batch`
/// (`sim/tests/adapters/err_on.py` in front of `histsim serve runs`): the first wrong answer
/// is the first batch write, named with its time and the system's command, and its trace
/// lines (the worker's `flush failed`, the request's own protocol lines) are at that time.
#[test]
fn a_system_refusing_a_batch_write_is_named_at_that_write() {
    use sim::run::RunConfig;
    use sim::sut::SutOptions;
    use sim::SeedRng;
    if python_missing() {
        return;
    }
    let command = format!(
        "python3 {}/tests/adapters/err_on.py internal put_batch -- {} serve runs",
        env!("CARGO_MANIFEST_DIR").trim_end_matches('/'),
        env!("CARGO_BIN_EXE_histsim")
    );
    let config = RunConfig {
        sut: Some(SutOptions::new(command.clone())),
        keep_trace: true,
        ..RunConfig::only("runs")
    };
    let (scenario, _) = config
        .workload_of(0)
        .derive(SeedRng::new(0), &config.overrides());
    let run = scenario.play(&config.world());
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let trace = run.trace.full().expect("the full trace").to_vec();
    let d = first_wrong(&run.violations, &trace, BugId::R24);
    assert_eq!(d.op, "put_batch", "{d}");
    assert_eq!(
        d.by,
        format!("the memory and sqlite stores (`{command}`)"),
        "{d}"
    );
    assert_eq!(d.answered, "error put_batch refused by err_on.py", "{d}");
    assert_eq!(d.expected, "an answer", "{d}");
    let stamp = format!("{}us ", d.at_us);
    let at_that_time: Vec<&String> = trace
        .iter()
        .filter(|l| l.trim_start().starts_with(&stamp))
        .collect();
    assert!(
        at_that_time
            .iter()
            .any(|l| l.contains("\"op\":\"put_batch\"")),
        "{at_that_time:#?}"
    );
    assert!(
        at_that_time.iter().any(|l| l.contains(" flush failed: ")),
        "{at_that_time:#?}"
    );
    // No earlier put_batch was answered at all: this is the first.
    let first_put = trace
        .iter()
        .find(|l| l.contains("\"op\":\"put_batch\""))
        .expect("a put_batch sent");
    assert!(first_put.trim_start().starts_with(&stamp), "{first_put}");
}

/// R21 of a feedback read: the first wrong answer is the feedback read's call (its op, its
/// request id and time, where the trace's `feedback reads` line is), both answers in words.
#[test]
fn a_wrong_feedback_read_names_the_read_and_both_answers() {
    let (violations, trace) = played(
        "runs/r21_anonymous_feedback_is_left_out_of_the_counts",
        BugId::R21,
    );
    let d = first_wrong(&violations, &trace, BugId::R21);
    assert_eq!(
        d.to_string(),
        "aggregate_by_run (request 10 at 3000us, the feedback store): answered \
         `1 rating: 1 up, 0 down`, the model expects `2 ratings: 1 up, 1 down`"
    );
    let r21 = violations.iter().find(|v| v.id == BugId::R21).expect("R21");
    assert!(r21.message.starts_with("op 10 at 3000us: "), "{r21}");
    let mark = r21.trace_marks.first().expect("a mark");
    assert!(
        trace
            .iter()
            .any(|l| mark.marks(l) && l.contains("feedback reads ")),
        "{trace:#?}"
    );
}

/// A withdrawal the feedback store answered wrongly, found while the feedback calls are
/// replayed into the model, names its call too (every finding of the replay has its request):
/// the withdrawal's answer is turned in a clean record, as a store answering so would have.
#[test]
fn a_wrong_withdrawal_names_its_call_and_both_answers() {
    use sim::runs::feedback_record::FeedbackEntry;
    let (scenario, mut record) = runs_world("runs/r22_withdrawn_feedback_comes_back_grouped");
    assert!(judged(&scenario, &record).is_empty());
    let mut found = None;
    record.log = record.log.edited(|o| match o {
        Observation::Feedback(
            FeedbackEntry::Deleted {
                op, at_us, deleted, ..
            }
            | FeedbackEntry::DeletedByRun {
                op, at_us, deleted, ..
            },
        ) if found.is_none() => {
            *deleted = !*deleted;
            found = Some((*op, *at_us));
        }
        _ => {}
    });
    let (op, at_us) = found.expect("a withdrawal in the scenario");
    let violations = judged(&scenario, &record);
    let d = first_of(&violations, BugId::R21);
    assert_eq!((d.request, d.at_us), (op, at_us), "{d}");
    assert!(d.op.starts_with("delete"), "{d}");
    assert_eq!(d.by, "the feedback store", "{d}");
    assert_eq!(
        (d.answered.as_str(), d.expected.as_str()),
        ("nothing deleted", "a rating deleted"),
        "{d}"
    );
}

/// A feedback read whose `/messages` (the thread's messages, each with its feedback) the store
/// answered with an error is judged (R24), naming the feedback read: no silent pass.
#[test]
fn an_error_answer_to_a_feedback_read_names_the_read() {
    use sim::runs::feedback_record::FeedbackEntry;
    let (scenario, mut record) = runs_world("runs/r22_withdrawn_feedback_comes_back_grouped");
    let mut found = None;
    record.log = record.log.edited(|o| match o {
        Observation::Feedback(FeedbackEntry::Read(read)) if found.is_none() => {
            read.messages = Err("internal: no such thread".into());
            found = Some((read.op, read.at_us));
        }
        _ => {}
    });
    let (op, at_us) = found.expect("a feedback read in the scenario");
    let (_, d) = only_r24(&scenario, &record, "r22");
    assert_eq!(
        d.to_string(),
        format!(
            "/messages with feedback (request {op} at {at_us}us, the memory store): answered \
             `error internal: no such thread`, the model expects `an answer`"
        )
    );
}

/// A display finding through `--sut` names the replica and the system's command, as a runs
/// finding names its store: P4 planted through `histsim serve display` (its switch goes
/// through `open`).
#[test]
fn a_display_finding_through_a_system_names_the_replica_and_the_command() {
    use sim::run::{run_seed, RunConfig};
    use sim::sut::SutOptions;
    let command = format!("{} serve display", env!("CARGO_BIN_EXE_histsim"));
    let config = RunConfig {
        sut: Some(SutOptions::new(command.clone())),
        planted: Some(BugId::P4),
        ..RunConfig::only("display")
    };
    let report = (0..5)
        .map(|seed| run_seed(seed, &config))
        .find(|r| !r.passed())
        .expect("P4 found within 5 seeds");
    assert_eq!(report.failure, None);
    let p4 = report.first_violation().expect("a violation");
    assert_eq!(p4.id, BugId::P4, "{p4}");
    let d = p4.first_divergence.as_ref().expect("a first wrong answer");
    let replica =
        d.by.strip_suffix(&format!(" (`{command}`)"))
            .unwrap_or_else(|| panic!("{d}"));
    assert!(replica.starts_with("replica-"), "{d}");
    // In process, the same finding names the replica alone.
    let here = run_seed(
        report.seed,
        &RunConfig {
            sut: None,
            ..config.clone()
        },
    );
    let d_here = here
        .first_violation()
        .and_then(|v| v.first_divergence.clone());
    assert_eq!(d_here.map(|d| d.by), Some(replica.to_string()));
}

#[test]
fn a_late_write_after_a_thread_deletion_names_the_write_and_both_answers() {
    let (violations, trace) = played(
        "runs/r28_a_late_write_brings_a_deleted_thread_back",
        BugId::R28,
    );
    assert_eq!(violations.first().map(|v| v.id), Some(BugId::R28));
    let d = first_wrong(&violations, &trace, BugId::R28);
    assert_eq!(d.op, "put_batch", "{d}");
    assert_eq!(
        (d.answered.as_str(), d.expected.as_str()),
        ("stored", "refused: thread deleted"),
        "{d}"
    );
    assert!(d.by.starts_with("the memory and sqlite stores"), "{d}");
    // The retried receipt of the same run is a wrong answer too.
    let receipt = |v: &&Violation| v.id == BugId::R28 && v.message.contains("put_if_absent");
    assert!(violations.iter().any(|v| receipt(&v)), "{violations:#?}");
}
