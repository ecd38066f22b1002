//! Torn tails and corruption (J10).

use std::sync::Arc;

use history::journal::storage::read_all;
use history::journal::{resume_journal, Journal, JournalError, MemStorage, Origin, SharedStorage};
#[cfg(feature = "planted")]
use history::{BugId, Planted};

use super::*;

/// A journal of three appends; returns its bytes and where the last record starts.
fn three_appends() -> (Vec<u8>, usize) {
    let s = Arc::new(MemStorage::new());
    let mut j = Journal::create(s.clone(), "j", opts(), None).expect("create");
    j.append(Origin::Main, rows(&["one"])).expect("append");
    j.append(Origin::Main, rows(&["two"])).expect("append");
    let last = j.end_offset() as usize;
    j.append(Origin::Main, rows(&["three"])).expect("append");
    (s.bytes("j"), last)
}

#[test]
fn j10_every_cut_of_the_last_record_is_discarded_and_appends_continue() {
    let (bytes, last) = three_appends();
    for cut in last..bytes.len() {
        on_every_storage(|kind, storage| {
            storage.append("j", &bytes[..cut]).expect("seed file");
            let mut j = resume_journal(storage.clone(), "j", opts()).expect("a tear reopens");
            assert_eq!(texts(j.fold()), ["one", "two"], "{kind} cut {cut}");
            assert_eq!(j.torn_tail().is_some(), cut > last);
            j.append(Origin::Main, rows(&["four"])).expect("append");
            let reopened = Journal::open(storage.clone(), "j", opts()).expect("reopen");
            assert_eq!(
                texts(reopened.fold()),
                ["one", "two", "four"],
                "{kind} {cut}"
            );
            assert!(reopened.torn_tail().is_none());
            let len = storage.len("j").expect("len").expect("exists");
            assert_eq!(len, reopened.end_offset(), "no garbage left in the file");
        });
    }
}

#[test]
fn j10_corruption_before_the_tail_is_an_error_naming_it_and_the_file_is_untouched() {
    let (bytes, last) = three_appends();
    // The first append is the second record, after the start record.
    let second = history::journal::dump_records(&bytes)
        .nth(1)
        .and_then(|l| l.ok())
        .and_then(|v| v["offset"].as_u64())
        .expect("offset of the second record");
    for offset in [second as usize + 3, second as usize + 20, last - 1] {
        on_every_storage(|kind, storage| {
            let mut bad = bytes.clone();
            bad[offset] ^= 0x10;
            storage.append("j", &bad).expect("seed file");
            let err = Journal::open(storage.clone(), "j", opts()).expect_err("corrupt");
            assert!(matches!(err, JournalError::Corrupt { .. }), "{kind}: {err}");
            assert!(err.offset().is_some_and(|o| o <= offset as u64));
            assert!(err.to_string().contains("offset"), "{err}");
            assert!(resume_journal(storage.clone(), "j", opts()).is_err());
            assert_eq!(read_all(&*storage, "j").expect("read"), bad, "untouched");
        });
    }
}

#[cfg(feature = "planted")]
#[test]
fn planted_j10_a_torn_tail_stays_and_history_is_lost() {
    let (bytes, last) = three_appends();
    let p = opts_with(Planted::only(BugId::J10));
    let s = Arc::new(MemStorage::with_file("j", &bytes[..last + 20]));
    let mut j = resume_journal(s.clone(), "j", p.clone()).expect("reopens");
    j.append(Origin::Main, rows(&["four"])).expect("append");
    // The production reader refuses the garbage now in the middle of the file ...
    assert!(Journal::open(s.clone(), "j", opts()).is_err());
    // ... and the legacy reader skips it, and the append after it with it.
    let legacy = Journal::open(s, "j", p).expect("legacy reader");
    assert_eq!(texts(legacy.fold()), ["one", "two"]);
}

/// The bytes of a journal of two appends followed by the first `tail` bytes of a third record.
fn two_appends_and_a_torn_tail(tail: usize) -> Vec<u8> {
    let (bytes, last) = three_appends();
    assert!(last + tail < bytes.len(), "a tail shorter than the record");
    bytes[..last + tail].to_vec()
}

/// Writes journal `j`, two appends and 4 bytes of a third record, to `storage`, and resumes it.
fn resumed_with_a_torn_tail(storage: &SharedStorage) -> Journal {
    storage
        .append("j", &two_appends_and_a_torn_tail(4))
        .expect("seed file");
    resume_journal(storage.clone(), "j", opts()).expect("resume")
}

#[test]
fn j10_a_writer_whose_torn_tail_another_handle_cut_keeps_writing() {
    // Issue 15 (seed 140881): two writers of one file both found the torn tail; one cut it, and
    // the other then refused every write ("length 1415 is below this writer's end 1419").
    on_every_storage(|kind, storage| {
        let mut first = resumed_with_a_torn_tail(&storage);
        let mut second = resume_journal(storage.clone(), "j", opts()).expect("resume");
        assert!(first.torn_tail().is_some() && second.torn_tail().is_some());
        second
            .append(Origin::Main, rows(&["by the second"]))
            .expect("the second cuts the tail and appends");
        drop(second);
        first
            .append(Origin::Main, rows(&["by the first"]))
            .unwrap_or_else(|e| panic!("{kind}: the first writer refused: {e}"));
        let reopened = Journal::open(storage.clone(), "j", opts()).expect("reopen");
        assert_eq!(
            texts(reopened.fold()),
            ["one", "two", "by the second", "by the first"],
            "{kind}"
        );
        assert!(reopened.torn_tail().is_none(), "{kind}: no garbage left");
    });
}

#[test]
fn j10_a_writer_whose_torn_tail_was_cut_and_nothing_written_keeps_writing() {
    on_every_storage(|kind, storage| {
        let mut first = resumed_with_a_torn_tail(&storage);
        let end = first.end_offset();
        storage
            .truncate("j", end)
            .expect("another handle cuts the tail");
        first
            .append(Origin::Main, rows(&["three"]))
            .unwrap_or_else(|e| panic!("{kind}: refused: {e}"));
        let reopened = Journal::open(storage.clone(), "j", opts()).expect("reopen");
        assert_eq!(texts(reopened.fold()), ["one", "two", "three"], "{kind}");
    });
}

#[test]
fn a_writer_whose_good_records_were_cut_still_refuses() {
    // The other side of the rule above: bytes of a good record are history, and a file cut below
    // them lost some; the writer must say so rather than write after the gap.
    on_every_storage(|kind, storage| {
        let mut first = resumed_with_a_torn_tail(&storage);
        let end = first.end_offset();
        storage.truncate("j", end - 1).expect("cut into a record");
        let err = first
            .append(Origin::Main, rows(&["three"]))
            .expect_err("history was lost");
        assert!(
            matches!(err, JournalError::Shrunk { expected, actual, .. } if expected == end && actual == end - 1),
            "{kind}: {err}"
        );
    });
}
