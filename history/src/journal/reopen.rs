//! Starting a writer on a journal that already exists: resume, clone and checkpoint fork.
//!
//! All three can meet a replacement left open (a crash during it, or a copy taken while it ran).
//! Each writes the `replace_abort` first, before anything else touches the journal (J2): the
//! legacy resume did not, and the next replacement's `replace_begin` landed inside the old
//! transaction, which made the journal unreadable.

use super::error::JournalError;
use super::options::JournalOptions;
use super::row::Origin;
use super::scan::ScannedRecord;
use super::storage::SharedStorage;
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
    // planted J2: resume, clone and fork started writing with the old transaction still open.
    let closed = if j.options().planted.is(BugId::J2) {
        None
    } else {
        let origin = j.fold().mirror_of().cloned().unwrap_or(Origin::Main);
        j.close_open_transaction(origin)?
    };
    if closed.is_none() {
        // The bytes this writer starts from may never have been synced (the last process died
        // after a failed sync, or before one): make them durable before anything is built on
        // them, so a crash later cannot fall back below the history this writer shows. (A
        // closed transaction was synced with its abort.)
        j.sync()?;
    }
    Ok(closed)
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
        super::storage::read_exact_at(&**storage, src, at, &mut buf[..n])
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
