//! Crashes of the runs store's host: the `sqlite` store killed between two store calls and
//! opened again on its data, in process (a file, dropped unclosed) and through the SUT protocol
//! (SIGKILL, the same command again, `open` on the same data directory). A store that keeps
//! every acknowledged write passes; planted R12 (a write-behind that acknowledges a batch before
//! it commits it) is found under R12 both ways; a store that declares no durability is not
//! crashed, and the crash is counted as left out. With the JSONL store in the pair's first slot
//! (`--store jsonl`) that store is crashed too: its simulated disk loses its unsynced bytes in
//! process, its process is killed through the protocol, and it keeps every acknowledged write.

use history::runs::{Category, NewRunEvent};
use history::{BugId, Planted};
use sim::bugs::hunt;
use sim::run::RunConfig;
use sim::runs::play::world;
use sim::runs::run_scenario;
use sim::runs::scenario::RunsScenario;
use sim::runs::script::Scripts;
use sim::sut::protocol::{Count, Durability, MaxSeq, Request, Seqs};
use sim::sut::{OpenedSut, SutOptions};
use sim::workload::{StoreKind, WorldConfig};
use std::path::Path;

const PROBE: &str = "runs.fault.store_restarted";

/// The R12 scenario file's world: one run in batches of two, then a crash of the store's host,
/// then the views.
fn crash_after_a_run() -> RunsScenario {
    let scenario = runs_scenario("r12_a_restart_loses_the_last_acknowledged_batch.toml");
    assert_eq!(scenario.store_crashes.len(), 1);
    scenario
}

/// The `[runs]` table of the committed scenario file `scenarios/runs/NAME`.
fn runs_scenario(name: &str) -> RunsScenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/runs")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("the scenario file");
    let mut file: toml::Table = toml::from_str(&text).expect("TOML");
    let table = file.remove("runs").expect("a [runs] table");
    table.try_into().expect("a runs scenario")
}

fn serve_runs(args: &str) -> SutOptions {
    SutOptions::new(format!(
        "{} serve runs{args}",
        env!("CARGO_BIN_EXE_histsim")
    ))
}

fn config(store: StoreKind, planted: Planted, sut: Option<SutOptions>) -> WorldConfig {
    WorldConfig {
        sut: sut.map(std::sync::Arc::new),
        ..WorldConfig::new(store, planted)
    }
}

/// In process on either primary, through `histsim serve runs` (its memory and SQLite stores)
/// and through `histsim serve runs --store sqlite`.
fn every_way(planted: Planted) -> Vec<(&'static str, WorldConfig)> {
    vec![
        (
            "in process, memory primary",
            config(StoreKind::Memory, planted, None),
        ),
        (
            "in process, sqlite primary",
            config(StoreKind::Sqlite, planted, None),
        ),
        (
            "through serve runs",
            config(StoreKind::Sqlite, planted, Some(serve_runs(""))),
        ),
        // The JSONL store in the first slot, crashed with the `sqlite` one: in process on a
        // simulated disk, and through `histsim serve runs` on files under its data directory.
        (
            "in process, jsonl primary",
            config(StoreKind::Jsonl, planted, None),
        ),
        (
            "through serve runs, jsonl primary",
            config(StoreKind::Jsonl, planted, Some(serve_runs(""))),
        ),
        // SQLite twice: only the `sqlite` store of the pair is crashed.
        (
            "through serve runs --store sqlite",
            config(
                StoreKind::Sqlite,
                planted,
                Some(serve_runs(" --store sqlite")),
            ),
        ),
    ]
}

#[test]
fn a_store_that_keeps_its_writes_passes_a_crash_of_its_host_every_way_and_repeats_exactly() {
    let scenario = crash_after_a_run();
    for (how, config) in every_way(Planted::none()) {
        let a = run_scenario(&scenario, &config);
        assert_eq!(a.failure, None, "{how}");
        assert!(a.violations.is_empty(), "{how}: {:?}", a.violations);
        // One crash of the store's host restarts each durable store of the pair.
        let restarted = if config.store == StoreKind::Jsonl {
            2
        } else {
            1
        };
        assert_eq!(
            a.coverage.get(PROBE),
            restarted,
            "{how}: the crash was performed"
        );
        // A system hosting the run journal has it heard by histsim's journal instead when the
        // pair's first store, the journal's host, is crashed (`--store jsonl`): counted.
        let journal_left_out = (a.left_out.counts.keys())
            .filter(|k| k.starts_with("the run journal's callbacks"))
            .count();
        let hosted = config.sut.is_some() && config.store == StoreKind::Jsonl;
        assert_eq!(journal_left_out, usize::from(hosted), "{how}");
        assert_eq!(
            a.left_out.counts.len(),
            journal_left_out,
            "{how}: {:?}",
            a.left_out.counts
        );
        let b = run_scenario(&scenario, &config);
        assert_eq!(a.trace.hash(), b.trace.hash(), "{how}: deterministic");
        // The crash and the restart are in the store's record, the rows in its dump.
        let record = world::play(&scenario, &Scripts::of(&scenario), &config);
        assert_eq!(record.log.store_restarts().len() as u64, restarted, "{how}");
        let dump = record.dumps.sqlite.expect("the sqlite store's dump");
        assert_eq!(dump.len(), record.log.written().len(), "{how}");
        assert!(!dump.is_empty(), "{how}: the run wrote before the crash");
        let first = record.dumps.memory.expect("the first store's dump");
        assert_eq!(first, dump, "{how}: the pair holds the same rows");
        let jsonl = config.store == StoreKind::Jsonl;
        assert_eq!(record.first_slot, if jsonl { "jsonl" } else { "memory" });
    }
}

#[test]
fn planted_r12_is_found_under_r12_in_process_and_through_the_protocol() {
    let scenario = crash_after_a_run();
    for (how, config) in every_way(Planted::only(BugId::R12)) {
        let run = run_scenario(&scenario, &config);
        assert_eq!(run.failure, None, "{how}");
        let first = run.violations.first().map(|v| v.id);
        assert_eq!(first, Some(BugId::R12), "{how}: {:?}", run.violations);
    }
    // And by random simulation, without a hint, both ways.
    let in_process = RunConfig::only("runs");
    let through = RunConfig {
        sut: Some(serve_runs("")),
        ..RunConfig::only("runs")
    };
    for base in [in_process, through] {
        let found = hunt(BugId::R12, &base, 0, 200, 2);
        assert!(found.detected(), "{found:?}");
    }
}

#[test]
fn a_store_that_declares_no_durability_is_not_crashed_and_the_crash_is_left_out() {
    let scenario = crash_after_a_run();
    // Both stores of the pair are then memory stores, whatever `open` asks.
    let memory_only = config(
        StoreKind::Sqlite,
        Planted::none(),
        Some(serve_runs(" --store memory")),
    );
    let run = run_scenario(&scenario, &memory_only);
    assert_eq!(run.failure, None);
    assert!(run.violations.is_empty(), "{:?}", run.violations);
    assert_eq!(run.coverage.get(PROBE), 0, "not crashed");
    let left_out: Vec<(&String, &u64)> = run
        .left_out
        .counts
        .iter()
        .filter(|(what, _)| what.starts_with("store crash"))
        .collect();
    assert_eq!(left_out.len(), 1, "{:?}", run.left_out.counts);
    assert_eq!(*left_out[0].1, 1);
    assert!(left_out[0].0.contains("declares no durability"));
}

fn event(text: &str) -> NewRunEvent {
    NewRunEvent {
        thread_id: "t1".into(),
        run_id: "run-0".into(),
        user_id: Some("user-1".into()),
        event_type: "human_message".into(),
        category: Category::Message,
        content: serde_json::json!({"type": "human", "content": text}).into(),
        metadata: serde_json::json!({}),
        created_at_ns: 1_700_000_000_001_000_000,
    }
}

/// `request`'s answer from `sut`, which must give one.
fn answer<T: serde::de::DeserializeOwned>(sut: &mut OpenedSut, request: &Request) -> T {
    sut.call_for(request).expect("no breach").expect("answered")
}

/// `histsim serve runs` on `store`, which declares that it survives a restart, holding two
/// messages of thread `t1` numbered 1 and 2.
fn started_with_two_writes(store: StoreKind) -> OpenedSut {
    let mut sut =
        OpenedSut::start(serve_runs(""), store, Planted::none(), &[]).expect("starts and opens");
    assert_eq!(sut.durability(), Durability::Restart);
    let events = vec![event("hi"), event("hello")];
    let seqs: Seqs = answer(&mut sut, &Request::PutBatch { events });
    assert_eq!(seqs.seqs, vec![1, 2]);
    sut
}

/// Kills and restarts `sut`: its two acknowledged messages are still counted.
fn restarted_with_two_messages(sut: &mut OpenedSut) {
    sut.restart().expect("killed and restarted");
    let count: Count = answer(
        sut,
        &Request::CountMessages {
            thread_id: "t1".into(),
        },
    );
    assert_eq!(count.count, 2, "the acknowledged writes survived the kill");
}

#[test]
fn a_killed_store_process_is_restarted_on_the_same_data_directory_with_its_data() {
    let mut sut = started_with_two_writes(StoreKind::Sqlite);
    let before = sut.take_transcript();
    restarted_with_two_messages(&mut sut);
    let after = sut.take_transcript();
    // The new process was greeted and opened on the same directory, shown as `<data_dir>`.
    let open_of = |lines: &[String]| {
        lines
            .iter()
            .find(|l| l.contains(r#""op":"open""#))
            .cloned()
            .unwrap_or_default()
    };
    assert!(after[0].contains(r#""op":"hello""#), "{after:?}");
    assert_eq!(open_of(&before), open_of(&after));
    assert!(open_of(&after).contains("<data_dir>"), "{after:?}");
    assert!(after
        .iter()
        .any(|l| l.contains(r#""durability":"restart""#)));
    // The killed process's stderr is still part of the seed's log.
    let log = sut.stderr_log(64 * 1024);
    assert!(
        log.contains("killed (a simulated crash), restarted"),
        "{log}"
    );
    // The memory store declares none: a restart would start it empty.
    let memory = OpenedSut::start(serve_runs(""), StoreKind::Memory, Planted::none(), &[])
        .expect("starts and opens");
    assert_eq!(memory.durability(), Durability::None);
}

#[test]
fn a_killed_jsonl_store_process_reopens_its_files_with_every_write_and_deletion() {
    let mut sut = started_with_two_writes(StoreKind::Jsonl);
    restarted_with_two_messages(&mut sut);
    let deleted: Count = answer(
        &mut sut,
        &Request::DeleteByRun {
            thread_id: "t1".into(),
            run_id: "run-0".into(),
        },
    );
    assert_eq!(deleted.count, 2);
    sut.restart().expect("killed and restarted again");
    let max: MaxSeq = answer(
        &mut sut,
        &Request::MaxSeq {
            thread_id: "t1".into(),
        },
    );
    assert_eq!(
        max.max_seq, 2,
        "the deletion and the thread's mark survived (R13)"
    );
}

#[test]
fn the_jsonl_r13_scenario_restarts_the_jsonl_store_between_the_deletion_and_the_next_run() {
    let scenario = runs_scenario("r13_a_jsonl_restart_after_a_deletion_reuses_its_seqs.toml");
    assert!(scenario.jsonl_store);
    let record = world::play(
        &scenario,
        &Scripts::of(&scenario),
        &config(StoreKind::Memory, Planted::none(), None),
    );
    assert_eq!(record.failure, None);
    assert_eq!(record.first_slot, "jsonl");
    let deletion = record.log.deletions().first().expect("run-2 deleted");
    let restart = record
        .log
        .store_restarts()
        .iter()
        .find(|r| r.slot == "jsonl")
        .expect("the jsonl store restarted");
    let deleted_top = deletion.max_seq_before.memory.clone().expect("a mark");
    let run3_first = record
        .log
        .written()
        .iter()
        .find(|w| w.event.run_id == "run-3")
        .expect("run-3 wrote");
    assert!(deletion.op < restart.op && restart.op < run3_first.op);
    assert_eq!(
        run3_first.event.seq,
        deleted_top + 1,
        "numbered above run-2's seqs"
    );
}
