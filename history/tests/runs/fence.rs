//! R28: a thread deletion fences its writers. Once `delete_by_thread` (or the API's deletion of
//! the thread) has returned, a write of the thread carrying a run the deletion removed is refused
//! with `ThreadDeleted` and writes nothing, on every backend and after a reopen; a new run writes
//! the thread's new era from seq 1.

use std::sync::Arc;

use history::journal::MemStorage;
use history::runs::*;
use history::Planted;

use crate::support::*;

fn numbered(thread: &str, run: &str, seq: u64) -> RunEvent {
    trace_event(thread, run, 7).with_seq(seq)
}

/// Two runs on `t`, one on `u`, then `t` deleted.
fn written_then_deleted(store: &dyn RunEventStore) {
    for (thread, run) in [("t", "a"), ("t", "b"), ("u", "a")] {
        store.put_batch(vec![trace_event(thread, run, 1)]).unwrap();
    }
    assert_eq!(store.delete_by_thread("t", &UserScope::All).unwrap(), 2);
}

/// Every write of a fenced run is refused and leaves the thread empty; a new run writes seq 1.
fn late_writes_are_refused(store: &dyn RunEventStore) -> Result<(), String> {
    let refused = |what: &str, r: Result<(), RunStoreError>| match r {
        Err(e) if e.is_thread_deleted() => Ok(()),
        other => Err(format!("{what}: {other:?}")),
    };
    refused(
        "put_batch",
        store.put_batch(vec![trace_event("t", "a", 2)]).map(drop),
    )?;
    refused(
        "insert_numbered",
        store.insert_numbered(vec![numbered("t", "b", 9)]),
    )?;
    refused(
        "put_if_absent",
        store.put_if_absent(trace_event("t", "b", 3)).map(drop),
    )?;
    let mixed = vec![trace_event("t", "new", 4), trace_event("t", "a", 4)];
    refused(
        "a batch with one fenced row",
        store.put_batch(mixed).map(drop),
    )?;
    if store.count_events("t").unwrap() != 0 {
        return Err(format!("rows came back: {:?}", store.dump().unwrap()));
    }
    Ok(())
}

#[test]
fn a_thread_deletion_fences_the_runs_it_removed_on_every_backend() {
    for b in BACKENDS {
        let store = open(b, Planted::none());
        written_then_deleted(&*store);
        late_writes_are_refused(&*store).unwrap_or_else(|e| panic!("{b:?}: {e}"));
        let err = store.put_batch(vec![trace_event("t", "a", 2)]).unwrap_err();
        assert!(err.to_string().contains("thread `t`"), "{b:?}: {err}");
        // The thread id is usable again by a new run; the same run id on another thread is not
        // fenced.
        let new = store.put_batch(vec![trace_event("t", "new", 5)]).unwrap();
        assert_eq!(new, vec![1], "{b:?}");
        assert_eq!(
            store.put_batch(vec![trace_event("u", "a", 5)]).unwrap(),
            vec![2]
        );
        // A run deletion fences nothing.
        assert_eq!(store.delete_by_run("t", "new", &UserScope::All).unwrap(), 1);
        assert!(
            store.put_batch(vec![trace_event("t", "new", 6)]).is_ok(),
            "{b:?}"
        );
    }
}

#[test]
fn the_api_deletion_fences_too() {
    for b in BACKENDS {
        let store = open(b, Planted::none());
        store.put_batch(vec![trace_event("t", "a", 1)]).unwrap();
        let (checkpointer, feedback) = (Checkpointer::new(), FeedbackStore::new());
        let records = ThreadRecords {
            checkpointer: &checkpointer,
            feedback: &feedback,
            planted: Planted::none(),
        };
        assert_eq!(records.delete_thread(&*store, "t").unwrap().rows, 1);
        let late = store.put_batch(vec![trace_event("t", "a", 2)]).unwrap_err();
        assert!(late.is_thread_deleted(), "{b:?}: {late}");
    }
}

#[test]
fn the_fence_survives_a_jsonl_reopen() {
    let disk = Arc::new(MemStorage::new());
    let store = JsonlRunEventStore::open(disk.clone(), Planted::none()).unwrap();
    written_then_deleted(&store);
    drop(store);
    // The run files are gone; the deletion's line keeps the fence.
    let reopened = JsonlRunEventStore::open(disk, Planted::none()).unwrap();
    late_writes_are_refused(&reopened).unwrap();
    assert_eq!(
        reopened
            .put_batch(vec![trace_event("t", "new", 5)])
            .unwrap(),
        vec![1]
    );
}

#[test]
fn the_fence_survives_a_sqlite_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let store = SqliteRunEventStore::open(&path, Planted::none()).unwrap();
    written_then_deleted(&store);
    drop(store);
    let reopened = SqliteRunEventStore::open(&path, Planted::none()).unwrap();
    late_writes_are_refused(&reopened).unwrap();
}

#[cfg(feature = "planted")]
#[test]
fn planted_r28_the_deletion_takes_no_fence_and_late_rows_come_back() {
    for b in BACKENDS {
        let store = open(b, Planted::only(history::BugId::R28));
        written_then_deleted(&*store);
        let err = late_writes_are_refused(&*store).unwrap_err();
        assert!(err.starts_with("put_batch: Ok"), "{b:?}: {err}");
        assert_eq!(
            store.count_events("t").unwrap(),
            1,
            "{b:?}: the late row landed"
        );
    }
}
