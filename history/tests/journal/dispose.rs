//! Disposal and scratch (J18).

use std::sync::Arc;

use history::journal::{FaultOp, JournalStore, MemStorage, Origin, ScratchOptions, Storage};
#[cfg(feature = "planted")]
use history::{BugId, Planted};

use super::*;

fn scratch(owner: &str, opts: &JournalOptions) -> ScratchOptions {
    ScratchOptions {
        root_dir: "scratch".into(),
        owner: owner.into(),
        planted: opts.planted,
    }
}

#[test]
fn j18_dispose_removes_scratch_before_it_returns() {
    on_every_storage(|kind, storage| {
        let o = opts();
        let (mut store, _) =
            JournalStore::open(storage.clone(), o.clone(), &scratch("p1", &o), &|_| true)
                .expect("open");
        store
            .create_recorder("main.journal", None)
            .expect("recorder");
        store
            .scratch()
            .write("resolver/one", b"x")
            .expect("scratch");
        let report = store.dispose().expect("dispose");
        assert_eq!(report.recorders_closed, 1);
        assert_eq!(
            report.scratch_files_removed, 2,
            "{kind}: file and owner marker"
        );
        assert!(storage.list("scratch").expect("list").is_empty(), "{kind}");
        assert!(storage.len("main.journal").expect("len").is_some());
    });
}

/// A store whose recorder cannot sync and whose scratch file cannot be removed.
fn dispose_with_faults(o: JournalOptions) -> (Result<(), String>, Vec<String>) {
    let mem = Arc::new(MemStorage::new());
    let (mut store, _) =
        JournalStore::open(mem.clone(), o.clone(), &scratch("p1", &o), &|_| true).expect("open");
    let rec = store
        .create_recorder("main.journal", None)
        .expect("recorder");
    rec.journal_mut()
        .inbox()
        .submit(Origin::Main, rows(&["queued"]));
    let f = store.scratch().write("spool", b"body").expect("scratch");
    mem.fail("main.journal", FaultOp::Sync);
    mem.fail(&f, FaultOp::Remove);
    let result = store.dispose().map(|_| ()).map_err(|e| e.to_string());
    (result, mem.list("scratch").expect("list"))
}

#[test]
fn j18_dispose_reports_every_cleanup_failure() {
    let (result, left) = dispose_with_faults(opts());
    let err = result.expect_err("failures are reported");
    assert!(
        err.contains("main.journal") && err.contains("sync"),
        "{err}"
    );
    assert!(err.contains("scratch/p1/spool"), "{err}");
    assert_eq!(
        left,
        ["scratch/p1/spool"],
        "only the file that failed is left"
    );
}

#[cfg(feature = "planted")]
#[test]
fn planted_j18_dispose_swallows_failures_and_leaves_scratch() {
    let (result, left) = dispose_with_faults(opts_with(Planted::only(BugId::J18)));
    assert!(result.is_ok());
    assert_eq!(left.len(), 2);
}

/// Scratch of a dead process p0 and a live process p2, then process p1 starts.
fn sweep_after_crash(o: JournalOptions) -> Vec<String> {
    let mem: SharedStorage = Arc::new(MemStorage::new());
    for owner in ["p0", "p2"] {
        let (mut store, _) =
            JournalStore::open(mem.clone(), o.clone(), &scratch(owner, &o), &|_| true)
                .expect("open");
        store.scratch().write("resolver/r", b"r").expect("scratch");
        // The process is killed: no dispose.
        std::mem::forget(store);
    }
    let alive = |owner: &str| owner != "p0";
    let (_store, report) =
        JournalStore::open(mem.clone(), o.clone(), &scratch("p1", &o), &alive).expect("open");
    if !o.planted.is(history::BugId::J18) {
        assert_eq!(report.owners_swept, ["p0"]);
        assert_eq!(report.files_removed, 2);
    }
    mem.list("scratch").expect("list")
}

#[test]
fn j18_scratch_left_by_dead_processes_is_swept_at_the_next_start() {
    let left = sweep_after_crash(opts());
    assert!(
        left.iter().all(|f| !f.starts_with("scratch/p0/")),
        "{left:?}"
    );
    assert!(
        left.iter().any(|f| f.starts_with("scratch/p2/")),
        "live scratch kept"
    );
}

#[cfg(feature = "planted")]
#[test]
fn planted_j18_dead_scratch_is_never_swept() {
    let left = sweep_after_crash(opts_with(Planted::only(BugId::J18)));
    assert!(left.iter().any(|f| f.starts_with("scratch/p0/")));
}
