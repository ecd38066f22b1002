//! The JSONL backend's own promises, beyond answering like the others (`props` runs every rule on
//! it): acknowledged batches survive a crash, failed writes leave nothing, a reopened store keeps
//! whole batches only and reports each tail it cut, and files no crash explains are refused with
//! their file and line. Crashes are `MemStorage`'s: a crash keeps exactly the synced bytes.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use history::journal::{FaultOp, MemStorage, Storage};
use history::runs::*;
use history::Planted;
use proptest::prelude::*;
use serde_json::{json, Value};

fn ev(thread: &str, run: &str, text: &str) -> NewRunEvent {
    NewRunEvent {
        thread_id: thread.into(),
        run_id: run.into(),
        user_id: Some("u".into()),
        event_type: HUMAN_MESSAGE.into(),
        category: Category::Message,
        content: ChatMessage::human(text).to_content().into(),
        metadata: json!({"k": text}),
        created_at_ns: 1_700_000_000_123_456_789,
    }
}

fn open(disk: &Arc<MemStorage>) -> JsonlRunEventStore {
    JsonlRunEventStore::open(disk.clone(), Planted::none()).expect("open")
}

/// A JSONL store on fresh in-memory storage, with `batches` written and acknowledged (each event
/// a human message, as `(thread, run, text)`).
fn written(batches: &[&[(&str, &str, &str)]]) -> (Arc<MemStorage>, JsonlRunEventStore) {
    let disk = Arc::new(MemStorage::new());
    let store = open(&disk);
    for batch in batches {
        let events = batch.iter().map(|&(t, r, text)| ev(t, r, text)).collect();
        store.put_batch(events).expect("an acknowledged batch");
    }
    (disk, store)
}

/// What a crash now leaves: every file cut to its synced bytes.
fn crash(disk: &MemStorage) -> Arc<MemStorage> {
    let after = MemStorage::new();
    for name in disk.list("threads").expect("list") {
        let bytes = disk.durable_bytes(&name);
        after.append(&name, &bytes).expect("append");
        after.sync(&name).expect("sync");
    }
    Arc::new(after)
}

fn texts(store: &JsonlRunEventStore) -> Vec<String> {
    store
        .dump()
        .expect("dump")
        .iter()
        .map(|r| {
            r.content["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn acknowledged_batches_survive_a_crash_and_numbering_goes_on() {
    // Transcribes upstream test_jsonl_event_store_async_io.py
    // test_ensure_seq_loaded_recovers_from_disk: three rows, a fresh store, the next seq is 4.
    let (disk, store) = written(&[
        &[("t1", "r1", "m0")],
        &[("t1", "r1", "m1")],
        &[("t1", "r1", "m2")],
        &[("t1", "r2", "a"), ("t2", "r1", "b"), ("t1", "r1", "c")],
    ]);
    let before = store.dump().unwrap();
    let reopened = open(&crash(&disk));
    assert_eq!(reopened.dump().unwrap(), before);
    assert!(reopened.dropped_tails().is_empty());
    assert_eq!(
        reopened.put_batch(vec![ev("t1", "r1", "new")]).unwrap(),
        vec![6]
    );
    assert_eq!(
        reopened.put_batch(vec![ev("t2", "r9", "x")]).unwrap(),
        vec![2]
    );
}

#[test]
fn a_failed_append_writes_nothing_and_the_store_goes_on() {
    let (disk, store) = written(&[&[("t", "r1", "first")]]);
    disk.fail("threads/t/runs/r2.jsonl", FaultOp::Append);
    let failed = store.put_batch(vec![ev("t", "r1", "lost"), ev("t", "r2", "lost too")]);
    assert!(
        matches!(&failed, Err(RunStoreError::Storage { op: "append", file, .. }) if file.ends_with("r2.jsonl")),
        "{failed:?}"
    );
    assert_eq!(
        disk.bytes("threads/t/runs/r1.jsonl")
            .iter()
            .filter(|b| **b == b'\n')
            .count(),
        1
    );
    assert_eq!(texts(&store), ["first"]);
    assert_eq!(disk.bytes("threads/t/runs/r2.jsonl"), b"");
    disk.clear_faults();
    assert_eq!(
        store.put_batch(vec![ev("t", "r2", "second")]).unwrap(),
        vec![2]
    );
    let reopened = open(&crash(&disk));
    assert_eq!(texts(&reopened), ["first", "second"]);
    assert!(reopened.dropped_tails().is_empty());
}

/// A storage whose appends, while `tear` is set, write half their bytes and then fail: the
/// disk-full-mid-batch of upstream's test.
#[derive(Debug)]
struct HalfAppends {
    inner: MemStorage,
    tear: AtomicBool,
}

impl Storage for HalfAppends {
    history::forward_storage!(inner: len, read_at, truncate, sync, remove, list);
    fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        if !self.tear.load(Ordering::SeqCst) {
            return self.inner.append(name, bytes);
        }
        self.inner.append(name, &bytes[..bytes.len() / 2])?;
        Err(io::Error::other("simulated mid-batch write failure"))
    }
}

#[test]
fn a_torn_append_is_cut_back_and_the_retry_stores_each_event_once() {
    // Transcribes upstream test_jsonl_event_store_async_io.py
    // test_put_batch_failure_rolls_back_no_partial_records: half a batch of four reaches the
    // file, the write fails, the whole batch is retried: four records, seqs unique and
    // increasing. Ours is stricter: the retry gets seqs 1..=4 and the file holds those 4 only.
    let disk = Arc::new(HalfAppends {
        inner: MemStorage::new(),
        tear: AtomicBool::new(true),
    });
    let store = JsonlRunEventStore::open(disk.clone(), Planted::none()).unwrap();
    let batch: Vec<NewRunEvent> = (0..4)
        .map(|i| {
            let mut e = ev("t1", "r1", &format!("event-{i}"));
            e.category = Category::Trace;
            e.event_type = "trace".into();
            e
        })
        .collect();
    assert!(store.put_batch(batch.clone()).is_err());
    assert_eq!(store.dump().unwrap(), vec![]);
    disk.tear.store(false, Ordering::SeqCst);
    assert_eq!(store.put_batch(batch).unwrap(), vec![1, 2, 3, 4]);
    let file = disk.inner.bytes("threads/t1/runs/r1.jsonl");
    let seqs: Vec<u64> = file
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice::<Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
}

#[test]
fn a_sync_that_keeps_failing_breaks_the_store_and_the_unsynced_batch_is_gone_after_a_crash() {
    let (disk, store) = written(&[&[("t", "r1", "first")]]);
    // r1.jsonl syncs; r2.jsonl cannot, not even its cut-back: the store stops.
    disk.fail("threads/t/runs/r2.jsonl", FaultOp::Sync);
    let failed = store.put_batch(vec![ev("t", "r1", "lost"), ev("t", "r2", "lost too")]);
    assert!(matches!(
        failed,
        Err(RunStoreError::Storage { op: "sync", .. })
    ));
    assert!(store.count_messages("t").is_err());
    disk.clear_faults();
    let reopened = open(&crash(&disk));
    assert_eq!(texts(&reopened), ["first"]);
}

#[test]
fn a_failed_cut_back_refuses_every_operation_until_reopened() {
    let (disk, store) = written(&[&[("t", "a", "kept")]]);
    // The batch touches a.jsonl (appended first, names sorted) and b.jsonl (its append fails);
    // cutting a.jsonl back fails too.
    disk.fail("threads/t/runs/b.jsonl", FaultOp::Append);
    disk.fail("threads/t/runs/a.jsonl", FaultOp::Truncate);
    let failed = store.put_batch(vec![ev("t", "a", "half"), ev("t", "b", "never")]);
    assert!(matches!(
        failed,
        Err(RunStoreError::Storage { op: "append", .. })
    ));
    assert!(
        store.dump().is_err(),
        "a broken store must not answer reads"
    );
    assert!(store.put_batch(vec![ev("t", "a", "later")]).is_err());
    disk.clear_faults();
    // Reopened on the same (uncrashed) files: the half batch is cut, reported, and gone.
    let reopened = open(&disk);
    assert_eq!(texts(&reopened), ["kept"]);
    let dropped = reopened.dropped_tails();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].file, "threads/t/runs/a.jsonl");
    assert_eq!(dropped[0].line, 2);
    assert!(
        dropped[0].reason.contains("other rows are missing"),
        "{dropped:?}"
    );
    assert_eq!(
        reopened.put_batch(vec![ev("t", "b", "next")]).unwrap(),
        vec![2]
    );
    assert_eq!(texts(&open(&crash(&disk))), ["kept", "next"]);
}

#[test]
fn a_torn_last_line_is_dropped_with_a_warning_never_read_as_a_row() {
    let (disk, _store) = written(&[&[("t", "r", "whole")], &[("t", "r", "torn")]]);
    let name = "threads/t/runs/r.jsonl";
    let bytes = disk.bytes(name);
    // Every cut inside the second line, including the one that leaves it valid JSON without its
    // newline, reopens as the first row only.
    let first_end = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
    for cut in first_end + 1..bytes.len() {
        let torn = Arc::new(MemStorage::with_file(name, &bytes[..cut]));
        let reopened = open(&torn);
        assert_eq!(texts(&reopened), ["whole"], "cut at {cut}");
        let dropped = reopened.dropped_tails();
        assert_eq!(dropped.len(), 1, "cut at {cut}");
        assert_eq!(
            (dropped[0].offset, dropped[0].line, dropped[0].bytes),
            (first_end as u64, 2, (cut - first_end) as u64)
        );
        assert!(dropped[0].reason.starts_with("torn"), "{dropped:?}");
        assert_eq!(
            dropped[0].to_string(),
            format!(
                "{name}: cut {} bytes from line 2 (offset {first_end}): torn: no newline at the end",
                cut - first_end
            )
        );
        // The cut is made on disk, so the next write starts on a line of its own.
        assert_eq!(torn.bytes(name).len(), first_end);
        reopened.put_batch(vec![ev("t", "r", "after")]).unwrap();
        assert_eq!(texts(&open(&crash(&torn))), ["whole", "after"]);
    }
}

#[test]
fn a_batch_a_crash_cut_short_in_another_file_is_dropped_whole() {
    let (disk, store) = written(&[&[("t", "a", "kept")]]);
    let b_before = disk.bytes("threads/t/runs/b.jsonl").len();
    store
        .put_batch(vec![
            ev("t", "a", "x"),
            ev("t", "b", "y"),
            ev("u", "c", "z"),
        ])
        .unwrap();
    // A crash state where a.jsonl and c.jsonl have the batch and b.jsonl does not (the batch was
    // not yet acknowledged: its syncs had not all returned).
    let crashed = crash(&disk);
    crashed
        .truncate("threads/t/runs/b.jsonl", b_before as u64)
        .unwrap();
    let reopened = open(&crashed);
    assert_eq!(texts(&reopened), ["kept"]);
    let files: Vec<String> = reopened
        .dropped_tails()
        .into_iter()
        .map(|d| d.file)
        .collect();
    assert_eq!(files, ["threads/t/runs/a.jsonl", "threads/u/runs/c.jsonl"]);
    assert_eq!(reopened.max_seq("u").unwrap(), 0);
}

#[test]
fn lines_no_crash_explains_fail_the_open_naming_file_and_line() {
    let (disk, _store) = written(&[&[("t", "r", "one")], &[("t", "r", "two")]]);
    let name = "threads/t/runs/r.jsonl";
    // The first line unreadable, a whole row after it: corruption, not a torn tail.
    let broken = Arc::new(MemStorage::with_file(name, &disk.bytes(name)));
    broken.corrupt_byte(name, 0, b'{' ^ b'[');
    match JsonlRunEventStore::open(broken, Planted::none()) {
        Err(RunStoreError::CorruptLine { file, line, reason }) => {
            assert_eq!((file.as_str(), line), (name, 2));
            assert!(reason.contains("follows line 1"), "{reason}");
        }
        other => panic!("expected CorruptLine, got {other:?}"),
    }
    // A row in another run's file.
    let moved = Arc::new(MemStorage::with_file(
        "threads/t/runs/other.jsonl",
        &disk.bytes(name),
    ));
    let err = JsonlRunEventStore::open(moved, Planted::none()).unwrap_err();
    assert!(
        err.to_string()
            .contains("its file is threads/t/runs/r.jsonl"),
        "{err}"
    );
}

#[test]
fn a_row_deerflow_appended_is_kept_and_numbering_goes_on_after_it() {
    // The published 0.1.7 store, pointed at our files, appended this with `put` (seq 3: it
    // numbers from the files' maximum); its record has no `user_id`, `write` or `batch`.
    let (disk, _store) = written(&[&[("thread-a", "run-2", "q"), ("thread-a", "run-2", "a")]]);
    let name = "threads/thread-a/runs/run-2.jsonl";
    let upstream = r#"{"thread_id": "thread-a", "run_id": "run-2", "event_type": "human_message", "category": "message", "content": "more", "metadata": {}, "seq": 3, "created_at": "2026-12-02T01:23:45.123456+00:00"}"#;
    disk.append(name, format!("{upstream}\n").as_bytes())
        .unwrap();
    disk.sync(name).unwrap();
    let reopened = open(&disk);
    assert!(reopened.dropped_tails().is_empty());
    let rows = reopened.dump().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!((rows[2].seq, rows[2].user_id.as_deref()), (3, None));
    assert_eq!(rows[2].content, json!("more").into());
    assert_eq!(
        reopened
            .put_batch(vec![ev("thread-a", "run-2", "next")])
            .unwrap(),
        vec![4]
    );
    assert_eq!(open(&crash(&disk)).dump().unwrap().len(), 4);
}

#[test]
fn the_real_filesystem_holds_upstreams_layout_and_record_shape() {
    let dir = tempfile::tempdir().unwrap();
    let store = JsonlRunEventStore::open_dir(dir.path(), Planted::none()).unwrap();
    store
        .put_batch(vec![ev("t1", "r1", "hello"), ev("t1", "r1", "world")])
        .unwrap();
    let before = store.dump().unwrap();
    drop(store);
    let file = dir.path().join("threads/t1/runs/r1.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["seq"], 2);
    assert_eq!(lines[0]["category"], "message");
    assert_eq!(
        lines[0]["created_at"],
        "2023-11-14T22:13:20.123456789+00:00"
    );
    let reopened = JsonlRunEventStore::open_dir(dir.path(), Planted::none()).unwrap();
    assert_eq!(reopened.dump().unwrap(), before);
}

/// One write of the fault property: a batch of (thread, run, is_message) and the storage fault
/// armed during it (on one run file, for one operation).
type FaultyWrite = (Vec<(u8, u8, bool)>, Option<(u8, u8, FaultOp)>);

fn faulty_write() -> impl Strategy<Value = FaultyWrite> {
    let event = (0u8..2, 0u8..3, any::<bool>());
    let op = prop::sample::select(vec![FaultOp::Append, FaultOp::Sync, FaultOp::Truncate]);
    (
        prop::collection::vec(event, 0..6),
        prop::option::weighted(0.4, (0u8..2, 0u8..3, op)),
    )
}

/// Plays the writes on a JSONL store whose storage fails as scripted, beside a memory store that
/// gets only the writes the JSONL store acknowledged. Both must agree after every write, and after
/// a final crash, which cuts nothing.
fn acknowledged_writes_are_exactly_what_survives(writes: &[FaultyWrite]) -> Result<(), String> {
    let reopened = beside_the_reference(writes.len(), dump, |i, disk, store, reference| {
        let (batch, fault) = &writes[i];
        let events: Vec<NewRunEvent> = batch
            .iter()
            .enumerate()
            .map(|(k, &(thread, run, is_message))| {
                let mut e = ev(
                    &format!("t{thread}"),
                    &format!("r{run}"),
                    &format!("w{i} e{k}"),
                );
                if !is_message {
                    e.category = Category::Trace;
                }
                e
            })
            .collect();
        if let Some((thread, run, op)) = fault {
            disk.fail(&format!("threads/t{thread}/runs/r{run}.jsonl"), *op);
        }
        let got = store.put_batch(events.clone());
        if let Ok(seqs) = &got {
            let want = reference.put_batch(events).map_err(|e| e.to_string())?;
            if *seqs != want {
                return Err(format!(
                    "write {i}: seqs {seqs:?}, the memory store gave {want:?}"
                ));
            }
        }
        Ok(format!("write {i} ({got:?})"))
    })?;
    if !reopened.dropped_tails().is_empty() {
        return Err(format!(
            "a crash after acknowledged writes cut {:?}",
            reopened.dropped_tails()
        ));
    }
    Ok(())
}

fn dump(s: &dyn RunEventStore) -> Result<Vec<RunEvent>, String> {
    s.dump().map_err(|e| e.to_string())
}

/// The frame of the fault properties: plays `steps` steps on a JSONL store over storage that
/// fails as each step arms it, beside a memory store that gets only what the JSONL store
/// acknowledged. A step returns what it did (for messages) or how the two answered apart. After
/// every step, a store a failed cut-back broke is crashed and reopened, and both must show the
/// same `state`; so must the store reopened after a final crash, which is returned.
fn beside_the_reference<T: PartialEq>(
    steps: usize,
    state: fn(&dyn RunEventStore) -> Result<T, String>,
    mut step: impl FnMut(
        usize,
        &MemStorage,
        &JsonlRunEventStore,
        &MemoryRunEventStore,
    ) -> Result<String, String>,
) -> Result<JsonlRunEventStore, String> {
    let reference = MemoryRunEventStore::new(Planted::none());
    let mut disk = Arc::new(MemStorage::new());
    let mut store = open(&disk);
    for i in 0..steps {
        let done = step(i, &disk, &store, &reference)?;
        disk.clear_faults();
        if store.dump().is_err() {
            disk = crash(&disk);
            store = open(&disk);
        }
        if state(&store)? != state(&reference)? {
            return Err(format!("{done}: the stores differ"));
        }
    }
    let reopened = open(&crash(&disk));
    if state(&reopened)? != state(&reference)? {
        return Err("after the final crash the stores differ".into());
    }
    Ok(reopened)
}

/// A crash under a file system that reorders unsynced writes (`histsim crash --persistence
/// reorder`): of the last, unacknowledged batch, any 512-byte sector may hold its old bytes
/// (zeros past the synced length) while later sectors hold the new ones. Whichever sector stayed
/// old, the reopened store keeps the acknowledged batch, cuts the unacknowledged one whole at its
/// first line and reports the cut; readable rows of that batch after the zeros never fail the
/// open or come back.
#[test]
fn a_reordered_crash_of_the_unacknowledged_batch_cuts_it_whole() {
    const SECTOR: usize = 512;
    let file = "threads/t/runs/r.jsonl";
    let (disk, store) = written(&[&[("t", "r", "acknowledged")]]);
    let synced = disk.durable_bytes(file).len();
    let long = "x".repeat(300);
    let batch: Vec<NewRunEvent> = (0..8)
        .map(|i| ev("t", "r", &format!("unacknowledged {i} {long}")))
        .collect();
    store.put_batch(batch).unwrap();
    let written = disk.durable_bytes(file);
    assert!(
        written.len() > synced + 3 * SECTOR,
        "the batch spans sectors"
    );
    let sectors = (synced / SECTOR)..written.len().div_ceil(SECTOR);
    for old in sectors {
        let mut image = written.clone();
        let start = (old * SECTOR).max(synced);
        let end = ((old + 1) * SECTOR).min(image.len());
        image[start..end].fill(0);
        let after = Arc::new(MemStorage::new());
        after.append(file, &image).unwrap();
        after.sync(file).unwrap();
        let reopened = JsonlRunEventStore::open(after.clone(), Planted::none())
            .unwrap_or_else(|e| panic!("sector {old} left old: {e}"));
        assert_eq!(texts(&reopened), vec!["acknowledged"], "sector {old}");
        let cuts = reopened.dropped_tails();
        assert_eq!(cuts.len(), 1, "sector {old}: {cuts:?}");
        assert_eq!(cuts[0].offset, synced as u64, "sector {old}");
        assert_eq!(after.durable_bytes(file).len(), synced, "sector {old}");
    }
}

// --- Deletions: one line in the thread's deletions file, then the emptied run files removed ---

fn of(thread: &str, run: &str, user: &str, text: &str) -> NewRunEvent {
    NewRunEvent {
        user_id: Some(user.into()),
        ..ev(thread, run, text)
    }
}

/// Everything a reader can ask after deletions, per thread.
fn answers(s: &dyn RunEventStore) -> (Vec<RunEvent>, Vec<u64>, Vec<u64>) {
    let threads = ["t1", "t2"];
    (
        s.dump().expect("dump"),
        threads.iter().map(|t| s.max_seq(t).expect("max")).collect(),
        threads
            .iter()
            .map(|t| s.count_messages(t).expect("count"))
            .collect(),
    )
}

#[test]
fn deletions_answer_as_the_memory_store_and_survive_a_crash() {
    let disk = Arc::new(MemStorage::new());
    let jsonl = open(&disk);
    let memory = MemoryRunEventStore::new(Planted::none());
    for s in [&jsonl as &dyn RunEventStore, &memory] {
        s.put_batch(vec![
            of("t1", "r1", "u", "a"),
            of("t1", "r1", "v", "b"),
            of("t1", "r2", "u", "c"),
            of("t2", "r1", "u", "d"),
            of("t1", "r3", "u", "e"),
        ])
        .unwrap();
        // r3 holds t1's largest seq (4): the mark must outlive its file (R13).
        assert_eq!(s.delete_by_run("t1", "r3", &UserScope::All), Ok(1));
        // One user's rows of r1: its file stays with the other user's row.
        assert_eq!(
            s.delete_by_run("t1", "r1", &UserScope::Only("v".into())),
            Ok(1)
        );
        assert_eq!(s.delete_by_thread("t2", &UserScope::All), Ok(1));
        assert_eq!(s.delete_by_run("t1", "nope", &UserScope::All), Ok(0));
    }
    assert_eq!(answers(&jsonl), answers(&memory));
    assert_eq!(
        disk.list("threads").unwrap(),
        [
            "threads/t1/deletions.jsonl",
            "threads/t1/runs/r1.jsonl",
            "threads/t1/runs/r2.jsonl",
            "threads/t2/deletions.jsonl"
        ]
    );
    drop(jsonl);
    let again = open(&crash(&disk));
    assert!(again.dropped_tails().is_empty());
    assert_eq!(answers(&again), answers(&memory));
    assert_eq!(
        answers(&again).1,
        [4, 0],
        "t1 keeps its mark, t2 starts over"
    );
    for s in [&again as &dyn RunEventStore, &memory] {
        assert_eq!(
            s.put_batch(vec![ev("t1", "r4", "f"), ev("t2", "r5", "g")]),
            Ok(vec![5, 1])
        );
    }
    assert_eq!(answers(&again), answers(&memory));
}

#[test]
fn a_crash_between_removals_leaves_the_deletion_made_and_a_reopen_tidies_the_files() {
    let (disk, store) = written(&[&[("t", "r1", "a"), ("t", "r2", "b"), ("t", "r3", "c")]]);
    // The second removal never happens: the process died after the first.
    disk.fail("threads/t/runs/r2.jsonl", FaultOp::Remove);
    assert_eq!(store.delete_by_thread("t", &UserScope::All), Ok(3));
    assert!(disk
        .list("threads")
        .unwrap()
        .contains(&"threads/t/runs/r2.jsonl".to_string()));
    assert_eq!(store.max_seq("t"), Ok(0));
    drop(store);
    let crashed = crash(&disk);
    let again = open(&crashed);
    assert_eq!(again.dump(), Ok(vec![]), "r2's rows stay deleted");
    assert_eq!(
        crashed.list("threads").unwrap(),
        ["threads/t/deletions.jsonl"],
        "the open removed the file the deletion had emptied"
    );
    // The deletion fenced r2 (R28), its file gone or not; a new run writes the new era.
    let late = again.put_batch(vec![ev("t", "r2", "late")]).unwrap_err();
    assert!(late.is_thread_deleted(), "{late}");
    assert_eq!(again.put_batch(vec![ev("t", "r4", "d")]), Ok(vec![1]));
    let last = open(&crash(&crashed));
    assert_eq!(
        texts(&last),
        ["d"],
        "a new run written after the deletion keeps its new rows"
    );
}

#[test]
fn a_deletion_whose_line_fails_is_not_made_and_a_torn_line_is_cut() {
    let (disk, store) = written(&[&[("t", "r1", "a"), ("t", "r2", "b")]]);
    disk.fail("threads/t/deletions.jsonl", FaultOp::Append);
    assert!(store.delete_by_run("t", "r2", &UserScope::All).is_err());
    assert_eq!(texts(&store), ["a", "b"], "nothing deleted");
    disk.clear_faults();
    assert_eq!(store.delete_by_run("t", "r2", &UserScope::All), Ok(1));
    // A crash mid-append of a later deletion's line: torn, cut, that deletion not made.
    disk.append("threads/t/deletions.jsonl", b"{\"thread_id\":\"t\",\"run")
        .unwrap();
    disk.sync("threads/t/deletions.jsonl").unwrap();
    drop(store);
    let again = open(&crash(&disk));
    assert_eq!(texts(&again), ["a"]);
    assert_eq!(again.max_seq("t"), Ok(2));
    let cut = again.dropped_tails();
    assert_eq!(cut.len(), 1);
    assert_eq!(
        (cut[0].file.as_str(), cut[0].line),
        ("threads/t/deletions.jsonl", 2)
    );
    // A bad line with a deletion after it is no torn tail: refused with its file and line.
    let bad = MemStorage::new();
    bad.append("threads/t/deletions.jsonl", b"nonsense\n{\"thread_id\":\"t\",\"run_id\":null,\"user_id\":null,\"max_seq\":0,\"write\":1}\n")
        .unwrap();
    let err = JsonlRunEventStore::open(Arc::new(bad), Planted::none()).unwrap_err();
    assert!(
        err.to_string().contains("threads/t/deletions.jsonl line 1"),
        "{err}"
    );
}

/// One step of the deletion property: a batch of (thread, run, user), or a deletion (thread,
/// run or the whole thread, every user's rows or one user's), with a storage fault armed during
/// it (on a run file or the thread's deletions file, for one operation).
#[derive(Clone, Debug)]
enum Step {
    Write(Vec<(u8, u8, bool)>),
    Delete {
        thread: u8,
        run: Option<u8>,
        only_v: bool,
    },
}

/// A storage fault: the thread, the run file (`None`: the thread's deletions file), the op.
type StepFault = Option<(u8, Option<u8>, FaultOp)>;

fn step() -> impl Strategy<Value = (Step, StepFault)> {
    let write = prop::collection::vec((0u8..2, 0u8..3, any::<bool>()), 1..5).prop_map(Step::Write);
    let delete =
        (0u8..2, prop::option::of(0u8..3), any::<bool>()).prop_map(|(thread, run, only_v)| {
            Step::Delete {
                thread,
                run,
                only_v,
            }
        });
    let op = prop::sample::select(vec![
        FaultOp::Append,
        FaultOp::Sync,
        FaultOp::Truncate,
        FaultOp::Remove,
    ]);
    (
        prop_oneof![2 => write, 1 => delete],
        prop::option::weighted(0.3, (0u8..2, prop::option::of(0u8..3), op)),
    )
}

/// Everything a reader sees of both threads.
fn state_of(s: &dyn RunEventStore) -> Result<(Vec<RunEvent>, Vec<u64>), String> {
    let dump = s.dump().map_err(|e| e.to_string())?;
    let marks = ["t0", "t1"]
        .iter()
        .map(|t| s.max_seq(t).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    Ok((dump, marks))
}

/// Plays the steps on a JSONL store whose storage fails as scripted, beside a memory store that
/// gets only the steps the JSONL store acknowledged: both must agree (rows and every thread's
/// numbering) after every step and after a final crash.
fn acknowledged_deletions_are_exactly_what_survives(
    steps: &[(Step, StepFault)],
) -> Result<(), String> {
    beside_the_reference(steps.len(), state_of, |i, disk, store, reference| {
        let (step, fault) = &steps[i];
        if let Some((thread, run, op)) = fault {
            let file = match run {
                Some(r) => format!("threads/t{thread}/runs/r{r}.jsonl"),
                None => format!("threads/t{thread}/deletions.jsonl"),
            };
            disk.fail(&file, *op);
        }
        let (got, want) = match step {
            Step::Write(batch) => {
                let events: Vec<NewRunEvent> = batch
                    .iter()
                    .enumerate()
                    .map(|(k, &(t, r, by_v))| {
                        let user = if by_v { "v" } else { "u" };
                        of(
                            &format!("t{t}"),
                            &format!("r{r}"),
                            user,
                            &format!("s{i} e{k}"),
                        )
                    })
                    .collect();
                let got = store.put_batch(events.clone()).map(|s| s.len() as u64);
                let want = if got.is_ok() {
                    Some(reference.put_batch(events).map(|s| s.len() as u64))
                } else {
                    None
                };
                (got, want)
            }
            Step::Delete {
                thread,
                run,
                only_v,
            } => {
                let scope = if *only_v {
                    UserScope::Only("v".into())
                } else {
                    UserScope::All
                };
                let t = format!("t{thread}");
                let delete = |s: &dyn RunEventStore| match run {
                    Some(r) => s.delete_by_run(&t, &format!("r{r}"), &scope),
                    None => s.delete_by_thread(&t, &scope),
                };
                let got = delete(store);
                let want = if got.is_ok() {
                    Some(delete(reference))
                } else {
                    None
                };
                (got, want)
            }
        };
        if let (Ok(g), Some(w)) = (&got, &want) {
            if Ok(*g) != *w {
                return Err(format!("step {i} {step:?}: {g}, the memory store {w:?}"));
            }
        }
        Ok(format!("step {i} {step:?} ({got:?})"))
    })?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn storage_faults_and_crashes_keep_exactly_the_acknowledged_writes(
        writes in prop::collection::vec(faulty_write(), 1..20)
    ) {
        prop_assert_eq!(acknowledged_writes_are_exactly_what_survives(&writes), Ok(()));
    }

    #[test]
    fn storage_faults_and_crashes_keep_exactly_the_acknowledged_deletions(
        steps in prop::collection::vec(step(), 1..25)
    ) {
        prop_assert_eq!(acknowledged_deletions_are_exactly_what_survives(&steps), Ok(()));
    }
}

#[test]
fn delete_by_thread_of_a_thread_emptied_run_by_run_ends_its_numbering_across_a_crash() {
    // Found by the deletion property: no row goes, yet the mark does, and a reopen must know.
    let (disk, store) = written(&[&[("t", "r", "a"), ("t", "r", "b")]]);
    assert_eq!(store.delete_by_run("t", "r", &UserScope::All), Ok(2));
    assert_eq!(store.max_seq("t"), Ok(2));
    assert_eq!(store.delete_by_thread("t", &UserScope::All), Ok(0));
    assert_eq!(store.max_seq("t"), Ok(0));
    drop(store);
    let again = open(&crash(&disk));
    assert_eq!(again.max_seq("t"), Ok(0));
    assert_eq!(again.put_batch(vec![ev("t", "r", "c")]), Ok(vec![1]));
}

#[cfg(feature = "planted")]
#[test]
fn planted_r12_acknowledges_unsynced_writes_and_a_crash_loses_them() {
    let disk = Arc::new(MemStorage::new());
    let store =
        JsonlRunEventStore::open(disk.clone(), Planted::only(history::BugId::R12)).expect("open");
    assert_eq!(store.put_batch(vec![ev("t", "r", "a")]), Ok(vec![1]));
    assert_eq!(texts(&open(&disk)), ["a"], "the bytes are in the file");
    assert_eq!(
        texts(&open(&crash(&disk))),
        Vec::<String>::new(),
        "none of them synced"
    );
}
