//! Resume, clone and fork (J2), and the session's recording across a resume (J4, J5, J6).

use std::sync::Arc;

use history::journal::{
    clone_journal, fork_journal, resume_journal, FaultOp, Journal, JournalError, LoadProgress,
    MemStorage, Origin, Session,
};
#[cfg(feature = "planted")]
use history::{BugId, Planted};

use super::*;

/// A journal whose last records are a replacement that never terminated (a crash during it).
fn crashed_mid_replace(storage: SharedStorage, opts: &JournalOptions) {
    let mut j = Journal::create(storage, "j", opts.clone(), None).expect("create");
    j.append(Origin::Main, rows(&["kept"])).expect("append");
    let mut g = j.begin_replace(Origin::Main).expect("begin");
    g.push_rows(rows(&["half"])).expect("rows");
    // The process dies here: no terminator, not even the guard's abort.
    std::mem::forget(g);
}

/// Resume, clone and fork of a journal with an open replacement, each then replaced again.
fn recover_and_replace(
    storage: SharedStorage,
    opts: &JournalOptions,
) -> Vec<Result<Vec<String>, JournalError>> {
    crashed_mid_replace(storage.clone(), opts);
    let again = |j: Result<Journal, JournalError>, name: &str| {
        let mut j = j?;
        assert_eq!(
            texts(j.fold()),
            ["kept"],
            "{name}: the open replacement is invisible"
        );
        j.replace_all(Origin::Main, rows(&["replaced"]))?;
        let reopened = Journal::open(storage.clone(), name, opts.clone())?;
        Ok(texts(reopened.fold()))
    };
    vec![
        again(clone_journal(storage.clone(), "j", "c", opts.clone()), "c"),
        again(
            fork_journal(storage.clone(), "j", "f", 4, opts.clone()),
            "f",
        ),
        again(resume_journal(storage.clone(), "j", opts.clone()), "j"),
    ]
}

#[test]
fn j2_resume_clone_and_fork_close_an_open_replacement_first() {
    on_every_storage(|kind, storage| {
        for result in recover_and_replace(storage, &opts()) {
            assert_eq!(result.expect(kind), ["replaced"]);
        }
    });
}

#[cfg(feature = "planted")]
#[test]
fn planted_j2_the_next_replacement_fails_on_the_open_transaction() {
    let p = opts_with(Planted::only(BugId::J2));
    for result in recover_and_replace(Arc::new(MemStorage::new()), &p) {
        let err = result.expect_err("the old transaction is still open");
        assert!(err.to_string().contains("still open"), "{err}");
    }
}

/// A session recording "a"; journal "b" with two rows; resume "b" while its appends fail.
fn failing_resume(opts: JournalOptions) -> Session {
    let mem = Arc::new(MemStorage::new());
    let mut b = Journal::create(mem.clone(), "b", opts.clone(), None).expect("create");
    b.append(Origin::Main, rows(&["b1", "b2"])).expect("append");
    drop(b);
    let mut session = Session::new(mem.clone(), opts);
    session.start("a").expect("start");
    session.record(rows(&["a1"])).expect("record");
    mem.fail("b", FaultOp::Append);
    let err = session
        .resume("b", &mut |p: LoadProgress| {
            if p.done {
                rows(&["typed while loading"])
            } else {
                Vec::new()
            }
        })
        .expect_err("the arrivals cannot be recorded");
    assert!(err.to_string().contains("append"), "{err}");
    session
}

#[test]
fn j4_a_resume_that_fails_after_publishing_restores_the_previous_recording() {
    let mut session = failing_resume(opts());
    let rec = session.recording().expect("a recording always exists");
    assert_eq!(rec.journal().name(), "a");
    session.record(rows(&["a2"])).expect("still recording");
    let a = session.recording().expect("recording").journal();
    assert_eq!(texts(a.fold()), ["a1", "a2"]);
}

#[cfg(feature = "planted")]
#[test]
fn planted_j4_a_failed_resume_leaves_no_recording() {
    let session = failing_resume(opts_with(Planted::only(BugId::J4)));
    assert!(session.recording().is_none());
}

/// Resumes the same journal twice; returns (rows, file length) after each.
fn resume_twice(opts: JournalOptions) -> [(Vec<String>, u64); 2] {
    let mem = Arc::new(MemStorage::new());
    let mut j = Journal::create(mem.clone(), "j", opts.clone(), None).expect("create");
    j.append(Origin::Main, rows(&["x", "y"])).expect("append");
    drop(j);
    let mut session = Session::new(mem.clone(), opts);
    let mut out = Vec::new();
    for _ in 0..2 {
        session.resume("j", &mut |_| Vec::new()).expect("resume");
        out.push((
            texts(session.recording().expect("recording").journal().fold()),
            mem.bytes("j").len() as u64,
        ));
    }
    [out[0].clone(), out[1].clone()]
}

#[test]
fn j5_resuming_twice_gives_the_same_fold_and_file_size() {
    let [first, second] = resume_twice(opts());
    assert_eq!(first, second);
    assert_eq!(first.0, ["x", "y"]);
}

#[cfg(feature = "planted")]
#[test]
fn planted_j5_each_resume_records_the_rows_again() {
    let [first, second] = resume_twice(opts_with(Planted::only(BugId::J5)));
    assert_ne!(first, second);
    assert!(second.1 > first.1);
}

/// Resumes a journal of 10 rows in load steps of 2 records; one row arrives at every step.
fn resume_with_arrivals(opts: JournalOptions) -> Vec<String> {
    let mem: SharedStorage = Arc::new(MemStorage::new());
    let mut j = Journal::create(mem.clone(), "j", opts.clone(), None).expect("create");
    for i in 0..10 {
        j.append(Origin::Main, rows(&[&format!("loaded {i}")]))
            .expect("append");
    }
    drop(j);
    let mut session = Session::new(
        mem.clone(),
        JournalOptions {
            load_step_records: 2,
            ..opts.clone()
        },
    );
    let report = session
        .resume("j", &mut |p| {
            if p.done {
                Vec::new()
            } else {
                rows(&[&format!("arrived at {}", p.records_loaded)])
            }
        })
        .expect("resume");
    assert_eq!(report.rows_loaded, 10);
    let reopened = Journal::open(mem, "j", opts).expect("reopen");
    assert_eq!(
        texts(reopened.fold()),
        texts(session.recording().expect("recording").journal().fold())
    );
    texts(reopened.fold())
}

#[test]
fn j6_rows_that_arrive_while_a_resume_loads_are_kept_after_the_loaded_rows() {
    let shown = resume_with_arrivals(opts());
    assert_eq!(shown.len(), 15);
    assert!(shown[..10].iter().all(|t| t.starts_with("loaded")));
    assert_eq!(
        shown[10..],
        [
            "arrived at 2",
            "arrived at 4",
            "arrived at 6",
            "arrived at 8",
            "arrived at 10"
        ]
    );
}

#[cfg(feature = "planted")]
#[test]
fn planted_j6_the_loaded_transcript_replaces_the_arrivals() {
    let shown = resume_with_arrivals(opts_with(Planted::only(BugId::J6)));
    assert_eq!(shown.len(), 10);
}

#[test]
fn resume_makes_the_history_it_starts_from_durable() {
    // The last process appended, its sync failed (the writer is poisoned) and it died: the
    // record is in the file but not durable. The resumed writer shows it, so it must make it
    // durable before building on it; a crash later cannot fall back below what it showed.
    // (Found by `histsim crash`'s faulty-disk seeds: resume used to start from unsynced bytes.)
    let storage = Arc::new(MemStorage::new());
    let opts = JournalOptions::default();
    let mut j = Journal::create(storage.clone(), "j", opts.clone(), None).expect("create");
    j.append(Origin::Main, rows(&["synced"])).expect("append");
    storage.fail("j", FaultOp::Sync);
    assert!(j.append(Origin::Main, rows(&["unsynced"])).is_err());
    assert!(j.poisoned().is_some());
    storage.clear_faults();
    let durable_before = storage.durable_bytes("j");
    assert!(durable_before.len() < storage.bytes("j").len());
    drop(j);
    let resumed = resume_journal(storage.clone(), "j", opts.clone()).expect("resume");
    assert_eq!(texts(resumed.fold()), ["synced", "unsynced"]);
    assert_eq!(storage.durable_bytes("j"), storage.bytes("j"));
    // And a resume whose sync fails reports it rather than starting from unsynced bytes.
    drop(resumed);
    storage.fail("j", FaultOp::Sync);
    assert!(resume_journal(storage.clone(), "j", opts).is_err());
}

#[test]
fn j10_a_resume_of_the_same_file_that_fails_after_cutting_its_torn_tail_leaves_a_writable_session()
{
    // Issue 15, seed 140881, shrunk: a crash tears the tail of the session's journal; the
    // restarted session resumes it (the tail stays until the first write); a second resume of
    // the same file cuts the tail, then fails on an injected EIO and puts the first writer back.
    // That writer must write again, not refuse for ever because the file is shorter than the
    // tail it remembered.
    let storage = Arc::new(MemStorage::new());
    let shared: SharedStorage = storage.clone();
    let mut j = Journal::create(shared.clone(), "j", opts(), None).expect("create");
    j.append(Origin::Main, rows(&["one"])).expect("append");
    let end = j.end_offset() as usize;
    j.append(Origin::Main, rows(&["torn"])).expect("append");
    let full = j.end_offset() as usize;
    drop(j);
    assert!(full > end + 4, "the tear keeps a part of the record");
    shared
        .truncate("j", (end + 4) as u64)
        .expect("tear the last record");

    let mut session = Session::new(shared.clone(), opts());
    session.resume("j", &mut |_| Vec::new()).expect("resume");
    assert!(session
        .recording()
        .expect("recording")
        .journal()
        .torn_tail()
        .is_some());
    storage.fail("j", FaultOp::Append);
    let failed = session.resume("j", &mut |p: LoadProgress| {
        if p.done {
            rows(&["typed while loading"])
        } else {
            Vec::new()
        }
    });
    assert!(failed.is_err(), "the injected EIO fails the second resume");
    storage.clear_faults();
    assert_eq!(
        shared.len("j").expect("len"),
        Some(end as u64),
        "the tail was cut"
    );
    session
        .record(rows(&["after"]))
        .expect("the restored writer keeps writing");
    let reopened = Journal::open(shared, "j", opts()).expect("reopen");
    assert_eq!(texts(reopened.fold()), ["one", "after"]);
}
