//! The journal and spool workloads: determinism, clean campaigns, every planted J bug found under
//! its own ID, crash-point exploration, the J scenario files and the journal commands.

use super::support::assert_contains_all;
use super::support::{
    assert_family_found, assert_reproduces_first, campaign, dumped_kinds, histsim, scenario_dir,
};
use history::journal::{Journal, JournalOptions, MemStorage, Origin, Row, Speaker};
use history::{BugId, Planted};
use sim::journal::crash::{explore, run_faulted, CrashOptions, FaultedOptions};
use sim::run::{run_seed, RunConfig};
use sim::scenario_file::{discover, ScenarioFile};
use sim::workload::StoreKind;
use sim::Persistence;
use std::sync::Arc;

fn config(workload: &str) -> RunConfig {
    RunConfig::only(workload)
}

#[test]
fn a_journal_seed_and_a_spool_seed_replay_to_one_trace_hash() {
    for workload in ["journal", "spool"] {
        let c = config(workload);
        let a = run_seed(7, &c);
        let b = run_seed(7, &c);
        assert_eq!(a.workload, workload);
        assert_eq!(a.trace_hash, b.trace_hash, "{workload}");
        assert!(a.trace_events > 1, "{workload}: an empty trace");
        assert!(a.passed(), "{workload}: {:?} {:?}", a.violations, a.failure);
        assert_ne!(a.trace_hash, run_seed(8, &c).trace_hash, "{workload}");
    }
}

#[test]
fn short_clean_campaigns_of_both_workloads_pass() {
    for (choice, seeds) in [("journal", 0..40), ("spool", 0..16)] {
        let result = campaign(config(choice), seeds, true);
        assert!(
            result.failures.is_empty(),
            "{:?}: {:?}",
            choice,
            result
                .failures
                .iter()
                .map(|f| (f.seed, f.violations.first().cloned(), f.failure.clone()))
                .collect::<Vec<_>>()
        );
        assert!(result.coverage.counts.values().sum::<u64>() > 0);
    }
}

#[test]
fn random_simulation_finds_every_planted_j_bug_under_its_own_id() {
    for d in assert_family_found('J') {
        let expected = if d.id == BugId::J14 {
            "spool"
        } else {
            "journal"
        };
        assert_eq!(d.workload, expected, "{}", d.id);
    }
}

#[test]
fn crash_exploration_finds_nothing_clean_and_names_j1_j2_j10() {
    let opts = |planted| CrashOptions {
        ops: 6,
        planted,
        cut_step_bytes: 8,
        persistence: Persistence::Prefix,
        crash_depth: 1,
        ..CrashOptions::default()
    };
    let clean = explore(&opts(Planted::none()));
    assert!(clean.mutations >= 6, "{}", clean.summary());
    assert!(clean.states_checked > 100, "{}", clean.summary());
    assert_eq!(clean.states_failed, 0, "{:#?}", clean.failures);
    for id in [BugId::J1, BugId::J2, BugId::J10] {
        let report = explore(&opts(Planted::only(id)));
        assert!(report.names(id), "{id}: {}", report.summary());
        assert!(
            report.failed_by_id.iter().all(|(i, _)| *i == id),
            "{id}: {}",
            report.summary()
        );
    }
}

#[test]
fn reorder_exploration_finds_nothing_clean_and_names_j19_where_prefix_cannot() {
    let opts = |persistence, planted| CrashOptions {
        ops: 6,
        planted,
        persistence,
        cap_per_point: 64,
        crash_depth: 1,
        ..CrashOptions::default()
    };
    let clean = explore(&opts(Persistence::Reorder, Planted::none()));
    assert!(
        clean.space >= u128::from(clean.states_checked),
        "{}",
        clean.summary()
    );
    assert_eq!(clean.states_failed, 0, "{:#?}", clean.failures);
    let j19 = Planted::only(BugId::J19);
    let reorder = explore(&opts(Persistence::Reorder, j19));
    assert!(reorder.names(BugId::J19), "{}", reorder.summary());
    assert!(
        reorder.failed_by_id.iter().all(|(i, _)| *i == BugId::J19),
        "{}",
        reorder.summary()
    );
    let prefix = explore(&opts(Persistence::Prefix, j19));
    assert_eq!(prefix.states_failed, 0, "{}", prefix.summary());
}

#[test]
fn crash_sequences_find_nothing_clean_and_j21_only_inside_a_recovery() {
    let opts = |planted, crash_depth| CrashOptions {
        ops: 4,
        planted,
        crash_depth,
        ..CrashOptions::default()
    };
    let clean = explore(&opts(Planted::none(), 3));
    assert_eq!(clean.states_failed, 0, "{:#?}", clean.failures);
    let s = &clean.sequences;
    for d in 0..2 {
        assert!(s.recoveries[d] > s.after_kill[d], "{s:?}");
        assert!(s.after_kill[d] > 0, "{s:?}");
        assert!(s.checked[d] >= s.points[d], "{s:?}");
        assert!(s.space[d] >= u128::from(s.checked[d]), "{s:?}");
    }
    let j21 = Planted::only(BugId::J21);
    let one_crash = explore(&opts(j21, 1));
    assert_eq!(one_crash.states_failed, 0, "{}", one_crash.summary());
    let two = explore(&opts(j21, 2));
    assert!(two.names(BugId::J21), "{}", two.summary());
    assert!(
        two.failures
            .iter()
            .all(|f| f.bug_id == BugId::J21 && f.depth == 2),
        "{:#?}",
        two.failures
    );
}

#[test]
fn every_j_scenario_reproduces_its_id_first_and_passes_without_its_bug() {
    let mut ids = std::collections::BTreeSet::new();
    for area in ["journal", "spool"] {
        for path in discover(&scenario_dir(area)).expect("the scenario directory is readable") {
            let file = ScenarioFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_reproduces_first(&path, &file, StoreKind::Memory);
            ids.insert(file.id);
        }
    }
    for id in BugId::ALL.iter().filter(|id| id.family() == 'J') {
        assert!(ids.contains(id), "no scenario for {id}");
    }
}

#[test]
fn journal_dump_prints_json_lines_and_names_a_corrupt_offset() {
    let storage = Arc::new(MemStorage::new());
    let mut j =
        Journal::create(storage.clone(), "j", JournalOptions::default(), None).expect("create");
    for i in 0..3 {
        j.append(
            Origin::Main,
            vec![Row::text(Speaker::Human, Origin::Main, format!("row {i}"))],
        )
        .expect("append");
    }
    let bytes = storage.bytes("j");
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.journal");
    std::fs::write(&good, &bytes).expect("write");
    let (code, out, _) = histsim(&["journal", "dump", good.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0);
    let kinds = dumped_kinds(&out);
    assert_eq!(kinds, ["start", "append", "append", "append"]);

    // Flip a byte inside the second record: the dump stops there and names its offset.
    let second: u64 = out
        .lines()
        .nth(1)
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|v| v["offset"].as_u64())
        .expect("an offset");
    let mut bad = bytes.clone();
    bad[second as usize + 14] ^= 0x20;
    let corrupt = dir.path().join("bad.journal");
    std::fs::write(&corrupt, &bad).expect("write");
    let (code, out, err) = histsim(&["journal", "dump", corrupt.to_str().expect("utf-8 path")]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(out.lines().count(), 1);
    assert!(err.contains(&format!("byte offset {second}")), "{err}");
}

#[test]
fn histsim_crash_is_clean_and_names_a_planted_bug() {
    let (code, out, _) = histsim(&["crash", "--ops", "6", "--cut-step-bytes", "16"]);
    assert_eq!(code, 0, "{out}");
    assert_contains_all(
        &out,
        &[
            ", 0 failed",
            "crash 3 (inside a recovery): ",
            "record kinds hit by a parsable corruption: 11 of 11",
        ],
    );
    let (code, out, _) = histsim(&[
        "crash",
        "--ops",
        "6",
        "--cut-step-bytes",
        "16",
        "--crash-depth",
        "1",
        "--planted",
        "J2",
    ]);
    assert_eq!(code, 1, "{out}");
    assert_contains_all(&out, &["J2:", "faulty disk: 400 seeds"]);
    let (code, out, _) = histsim(&["crash", "--ops", "2", "--fault-seeds", "none"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("faulty disk"), "{out}");
}

#[test]
fn histsim_crash_on_the_recorded_production_storage_is_clean_and_names_j22() {
    let (code, out, _) = histsim(&["crash", "--storage", "recorded", "--ops", "4"]);
    assert_eq!(code, 0, "{out}");
    assert_contains_all(&out, &["fsync(dir) 2", ", 0 failed"]);
    assert!(!out.contains("faulty disk"), "{out}");
    let args = [
        "crash",
        "--storage",
        "recorded",
        "--ops",
        "4",
        "--planted",
        "J22",
    ];
    let (code, out, _) = histsim(&args);
    assert_eq!(code, 1, "{out}");
    assert_contains_all(&out, &["J22:", "the file is gone"]);
    // The simulated disk makes a new file durable with its first sync: the same planted
    // storage is invisible there.
    let simulated = [
        "crash",
        "--ops",
        "4",
        "--crash-depth",
        "1",
        "--planted",
        "J22",
    ];
    let (code, out, _) = histsim(&[&simulated[..], &["--fault-seeds", "none"]].concat());
    assert_eq!(code, 0, "{out}");
}

#[test]
fn the_journal_on_a_faulty_disk_loses_nothing_it_acknowledged() {
    let clean = run_faulted(&FaultedOptions {
        seeds: 0..300,
        ..FaultedOptions::default()
    });
    assert!(clean.failures.is_empty(), "{:?}", clean.failures.first());
    // The seeds really met every kind of trouble.
    assert!(clean.mutations_failed > 100, "{}", clean.summary());
    assert!(clean.resumes > 100, "{}", clean.summary());
    assert!(clean.corruptions_reported > 0, "{}", clean.summary());
    assert!(clean.corruptions_discarded > 0, "{}", clean.summary());
    assert!(clean.seeds_given_up > 0, "a full disk: {}", clean.summary());
    assert!(
        clean.mutations_ok > clean.mutations_failed,
        "{}",
        clean.summary()
    );
}

#[test]
fn the_default_faulty_disk_budget_corrupts_every_record_kind_parsably() {
    let report = run_faulted(&FaultedOptions::default());
    assert!(report.failures.is_empty(), "{:?}", report.failures.first());
    let (hit, missed) = report.parsable_kinds();
    assert!(missed.is_empty(), "never hit: {missed:?} (hit: {hit:?})");
    assert_eq!(
        hit.len(),
        sim::journal::crash::faulted::PARSABLE_PROBES.len()
    );
}

#[test]
fn the_faulty_disk_check_names_the_planted_bug() {
    // Each legacy behaviour the faulty disk can reach is reported under its own ID first.
    for id in [BugId::J1, BugId::J2, BugId::J10, BugId::J15, BugId::J20] {
        let report = run_faulted(&FaultedOptions {
            seeds: 0..300,
            planted: Planted::only(id),
            ..FaultedOptions::default()
        });
        assert_eq!(
            report.failures.first().map(|f| f.bug_id),
            Some(id),
            "{id}: {:?}",
            report.failures.first()
        );
    }
}
