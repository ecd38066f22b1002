//! Starting a writer on a journal that already exists: resume, clone and checkpoint fork.
//!
//! All three can meet a replacement left open (a crash during it, or a copy taken while it ran).
//! Each writes the `replace_abort` first, before anything else touches the journal (J2): the
//! legacy resume did not, and the next replacement's `replace_begin` landed inside the old
//! transaction, which made the journal unreadable.

use super::error::JournalError;
use super::frame::{encode_frame, HEADER_BYTES};
use super::options::JournalOptions;
use super::record::{Record, RecordBody};
use super::row::Origin;
use super::scan::ScannedRecord;
use super::storage::{read_exact_at, SharedStorage};
use super::writer::Journal;
use crate::BugId;

/// Bytes copied per storage call by clone and fork.
const COPY_CHUNK_BYTES: usize = 256 * 1024;

/// Opens an existing journal to write to it again (the resume of a session).
pub fn resume_journal(
    storage: SharedStorage,
    name: &str,
    opts: JournalOptions,
) -> Result<Journal, JournalError> {
    let mut j = Journal::open(storage, name, opts)?;
    close_for_writer(&mut j)?;
    Ok(j)
}

/// Copies the good records of `src` to the new journal `dst` and opens it to write.
pub fn clone_journal(
    storage: SharedStorage,
    src: &str,
    dst: &str,
    opts: JournalOptions,
) -> Result<Journal, JournalError> {
    let source = Journal::open(storage.clone(), src, opts.clone())?;
    copy_prefix(&storage, src, dst, source.end_offset())?;
    let mut j = Journal::open(storage, dst, opts)?;
    close_for_writer(&mut j)?;
    // Post-condition: the copy holds the source's records, an abort perhaps after them.
    debug_assert!(j.fold().last_seq() >= source.fold().last_seq());
    Ok(j)
}

/// Copies the records of `src` up to and including sequence `checkpoint_seq` to the new journal
/// `dst` (a checkpoint fork) and opens it to write.
pub fn fork_journal(
    storage: SharedStorage,
    src: &str,
    dst: &str,
    checkpoint_seq: u64,
    opts: JournalOptions,
) -> Result<Journal, JournalError> {
    let mut cut = None;
    let source = Journal::open_observed(storage.clone(), src, opts.clone(), &mut |rec| {
        if rec.record.seq == checkpoint_seq {
            cut = Some(end_of(rec));
        }
        Ok(())
    })?;
    let Some(cut) = cut else {
        return Err(JournalError::Argument(format!(
            "{src} has no record {checkpoint_seq} to fork at (last is {})",
            source.fold().last_seq()
        )));
    };
    copy_prefix(&storage, src, dst, cut)?;
    let mut j = Journal::open(storage, dst, opts)?;
    close_for_writer(&mut j)?;
    Ok(j)
}

fn end_of(rec: &ScannedRecord) -> u64 {
    rec.offset + rec.frame_bytes
}

/// Closes a replacement the journal was left with, before its new writer does anything.
/// Returns the aborted transaction.
pub(crate) fn close_for_writer(j: &mut Journal) -> Result<Option<u64>, JournalError> {
    // The bytes this writer starts from may never have been synced (the last process was killed
    // with them in the page cache, or died after a failed sync): make them durable before
    // anything is built on them. An abort appended behind unsynced bytes could persist while
    // they do not, a hole no reader gets past (J19; found by crashing a recovery after a process
    // kill), and a crash later must not fall back below the history this writer shows.
    j.sync()?;
    // planted J2: resume, clone and fork started writing with the old transaction still open.
    if j.options().planted.is(BugId::J2) {
        return Ok(None);
    }
    if j.options().planted.is(BugId::J21) && torn_abort_behind_open_txn(j) {
        // planted J21: the legacy recovery took a torn record of an abort's length behind an
        // open replacement for the abort its crashed predecessor was writing, and went on as if
        // the replacement were closed: it wrote no abort, and the file kept it open.
        j.forget_open_txn();
        return Ok(None);
    }
    let origin = j.fold().mirror_of().cloned().unwrap_or(Origin::Main);
    let aborted = j.close_open_transaction(origin)?;
    // Post-condition: the new writer starts with no transaction open (J2).
    debug_assert_eq!(j.open_txn(), None);
    Ok(aborted)
}

/// The bytes of the frame of `txn`'s abort as record `seq` by `origin`.
pub fn abort_frame_bytes(seq: u64, origin: Origin, txn: u64) -> u64 {
    let body = RecordBody::ReplaceAbort { txn };
    encode_frame(&Record { seq, origin, body }).len() as u64
}

/// planted J21: whether the torn tail behind an open replacement declares (in its length field)
/// the frame of the abort this recovery would write.
fn torn_abort_behind_open_txn(j: &Journal) -> bool {
    let (Some(txn), Some(tail)) = (j.open_txn(), j.torn_tail()) else {
        return false;
    };
    let mut len = [0u8; 4];
    if tail.bytes < 4 || read_exact_at(&**j.storage(), j.name(), tail.offset, &mut len).is_err() {
        return false;
    }
    let origin = j.fold().mirror_of().cloned().unwrap_or(Origin::Main);
    let declared = u64::from(u32::from_le_bytes(len)) + HEADER_BYTES as u64;
    declared == abort_frame_bytes(j.fold().last_seq() + 1, origin, txn)
}

/// Copies bytes `[0, len)` of `src` into the new file `dst`, synced.
fn copy_prefix(
    storage: &SharedStorage,
    src: &str,
    dst: &str,
    len: u64,
) -> Result<(), JournalError> {
    let existing = storage
        .len(dst)
        .map_err(|e| JournalError::io(dst, "stat", e))?;
    if existing.is_some() {
        return Err(JournalError::AlreadyExists {
            file: dst.to_string(),
        });
    }
    let mut buf = vec![0u8; COPY_CHUNK_BYTES];
    let mut at = 0u64;
    storage
        .append(dst, &[])
        .map_err(|e| JournalError::io(dst, "create", e))?;
    while at < len {
        let n = (len - at).min(COPY_CHUNK_BYTES as u64) as usize;
        read_exact_at(&**storage, src, at, &mut buf[..n])
            .map_err(|e| JournalError::io(src, "read", e))?;
        storage
            .append(dst, &buf[..n])
            .map_err(|e| JournalError::io(dst, "append", e))?;
        at += n as u64;
    }
    storage
        .sync(dst)
        .map_err(|e| JournalError::io(dst, "sync", e))
}
