//! Checking one crash state: reopen, resume (and clone, fork), write again, reopen again.
//!
//! The checker judges a failure's catalog ID from what the crash image shows, read with the
//! production scanner and no planted bug: an open transaction at the end (J1 when the history is
//! a mix, J2 when it survives a resume), a crash inside an operation that wrote several records
//! (J15), bytes lost or misread around a torn tail (J10).

use std::collections::BTreeMap;
use std::sync::Arc;

use history::journal::frame::HEADER_BYTES;
use history::journal::reopen::abort_frame_bytes;
use history::journal::storage::read_all;
use history::journal::{
    clone_journal, dump_lines, fork_journal, resume_journal, DecodeError, DumpLine, Journal,
    JournalError, JournalOptions, Origin, RecordBody, Row, SharedStorage, Speaker,
};
use history::BugId;
use model::journal::{CrashModel, ModelHistory, ModelOp};

use super::view::{describe, model_view};
use crate::disk::states::Image;
use crate::disk::{SimDisk, SimDiskOptions};

/// What the production scanner sees in one journal image.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageFacts {
    /// Good records.
    pub records: usize,
    /// A replacement begun and not terminated by the end of the good records.
    pub open_txn: Option<u64>,
    /// Bytes after the good records (a torn tail).
    pub torn_tail: bool,
    /// The torn tail declares, in its length field, the frame of the open replacement's abort:
    /// the start of the abort a recovery was writing when it crashed.
    pub torn_abort: bool,
    /// The offset of corruption before the tail.
    pub corrupt_at: Option<u64>,
    /// The sequence number of the last good record.
    pub last_seq: u64,
}

/// The facts as a message shows them: `5 good records up to seq 5, transaction 4 open, a torn
/// tail, corrupt at byte 302`.
impl std::fmt::Display for ImageFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} good records up to seq {}",
            self.records, self.last_seq
        )?;
        if let Some(txn) = self.open_txn {
            write!(f, ", transaction {txn} open")?;
        }
        if self.torn_abort {
            f.write_str(", a torn tail (its abort's start)")?;
        } else if self.torn_tail {
            f.write_str(", a torn tail")?;
        }
        if let Some(offset) = self.corrupt_at {
            write!(f, ", corrupt at byte {offset}")?;
        }
        Ok(())
    }
}

/// Reads the facts of a journal image.
pub fn classify_image(bytes: &[u8]) -> ImageFacts {
    let lines = dump_lines(bytes);
    let mut facts = classify_lines(&lines);
    facts.torn_abort = torn_abort(bytes, &lines, &facts);
    facts
}

/// Whether the torn tail's length field (when it landed) is that of the frame of the open
/// replacement's abort, as the next record, by the origin a recovery writes it with.
fn torn_abort(bytes: &[u8], lines: &[Result<DumpLine, DecodeError>], facts: &ImageFacts) -> bool {
    let Some(txn) = facts.open_txn else {
        return false;
    };
    let mut origin = Origin::Main;
    let mut tail = None;
    for line in lines.iter().flatten() {
        match line {
            DumpLine::Record { record, .. } => {
                if let RecordBody::Start { mirror_of: Some(m) } = &record.body {
                    origin = m.clone();
                }
            }
            DumpLine::TornTail { offset, .. } => tail = Some(*offset as usize),
        }
    }
    let Some(field) = tail.and_then(|at| bytes.get(at..at + 4)) else {
        return false;
    };
    let declared = u64::from(u32::from_le_bytes([field[0], field[1], field[2], field[3]]));
    declared + HEADER_BYTES as u64 == abort_frame_bytes(facts.last_seq + 1, origin, txn)
}

/// The facts of a journal image already dumped (`dump_lines`), for a checker that reads the
/// same image several ways and decodes it once.
pub fn classify_lines(lines: &[Result<DumpLine, DecodeError>]) -> ImageFacts {
    let mut facts = ImageFacts::default();
    for line in lines {
        match line {
            Ok(DumpLine::TornTail { .. }) => facts.torn_tail = true,
            Ok(DumpLine::Record { record, .. }) => {
                facts.records += 1;
                facts.last_seq = record.seq;
                match record.body {
                    RecordBody::ReplaceBegin { txn } => facts.open_txn = Some(txn),
                    RecordBody::ReplaceCommit { txn } | RecordBody::ReplaceAbort { txn }
                        if facts.open_txn == Some(txn) =>
                    {
                        facts.open_txn = None
                    }
                    _ => {}
                }
            }
            Err(e) => facts.corrupt_at = Some(e.offset),
        }
    }
    facts
}

/// Whether a crash state is worth recovering and crashing again: its journal holds an open
/// replacement or a torn tail. Higher is more worth it.
pub(crate) fn interest(image: &Image) -> u8 {
    let facts = classify_image(image.get(JOURNAL).map_or(&[][..], Vec::as_slice));
    u8::from(facts.open_txn.is_some()) + u8::from(facts.torn_tail)
}

/// Keeps at most `cap` states of `point`, the most interesting first (then the first found).
pub(crate) fn keep_start(
    kept: &mut BTreeMap<usize, Vec<(u8, Image)>>,
    cap: usize,
    point: usize,
    image: Image,
) {
    let score = interest(&image);
    if score == 0 || cap == 0 {
        return;
    }
    let list = kept.entry(point).or_default();
    let at = list
        .iter()
        .position(|(s, _)| *s < score)
        .unwrap_or(list.len());
    if at < cap {
        list.insert(at, (score, image));
        list.truncate(cap);
    }
}

/// Where a crash state sits in the workload.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    /// The model state that was durable.
    pub durable: usize,
    /// The newest model state issued.
    pub issued: usize,
    /// Whether the operation in progress wrote several records outside a transaction.
    pub in_non_atomic_op: bool,
}

/// The file names a check uses.
pub(crate) const JOURNAL: &str = "session.journal";
const CLONE: &str = "clone.journal";
const FORK: &str = "fork.journal";

/// Checks one crash image; returns the broken invariant's ID and what happened.
///
/// `synced` is the journal's length that was durable and unchanged at the crash: bad bytes past it
/// that a reopen calls corruption are a record that landed behind a lost one (J19).
pub(crate) fn check_state(
    image: BTreeMap<String, Vec<u8>>,
    window: Window,
    synced: u64,
    model: &CrashModel<Row>,
    opts: &JournalOptions,
) -> Result<(), (BugId, String)> {
    let facts = classify_image(image.get(JOURNAL).map_or(&[][..], Vec::as_slice));
    let exists = image.contains_key(JOURNAL);
    let disk: SharedStorage = Arc::new(SimDisk::from_image(image, SimDiskOptions::default()));
    check_on(&disk, exists, &facts, window, synced, model, opts)
}

/// [`check_state`] on a storage that already holds the crash image (`exists`: whether it has the
/// journal; `facts`: what its journal shows).
pub(crate) fn check_on(
    disk: &SharedStorage,
    exists: bool,
    facts: &ImageFacts,
    window: Window,
    synced: u64,
    model: &CrashModel<Row>,
    opts: &JournalOptions,
) -> Result<(), (BugId, String)> {
    let matched = reopen_within_the_model(disk, exists, facts, window, model, opts)
        .map_err(|(id, message)| match facts.corrupt_at {
            Some(at) if at >= synced => (
                BugId::J19,
                format!("bytes written after the last sync ({synced}) do not decode at {at}, and a record header follows them: {message}"),
            ),
            _ => (id, message),
        })?;
    // A recovery that fails is J2 when it had a transaction to close, J10 otherwise.
    let recovery_id = if facts.open_txn.is_some() {
        BugId::J2
    } else {
        BugId::J10
    };
    let j = recover(disk, exists, facts, recovery_id, opts)?;
    let after_id = if facts.torn_tail {
        BugId::J10
    } else {
        recovery_id
    };
    write_again(disk, j, model.state(matched), after_id, recovery_id, opts)
}

/// Step 1, reopen: the history must be one the model allows. Returns the model state it matched.
fn reopen_within_the_model(
    disk: &SharedStorage,
    exists: bool,
    facts: &ImageFacts,
    window: Window,
    model: &CrashModel<Row>,
    opts: &JournalOptions,
) -> Result<usize, (BugId, String)> {
    let shown = if exists {
        let j = Journal::open(disk.clone(), JOURNAL, opts.clone()).map_err(|e| {
            (
                BugId::J10,
                format!("the crash image does not reopen: {e} (image: {facts})"),
            )
        })?;
        model_view(j.fold())
    } else {
        ModelHistory::new()
    };
    model
        .matching(window.durable, window.issued, &shown)
        .ok_or_else(|| {
            let id = if facts.open_txn.is_some() {
                BugId::J1
            } else if window.in_non_atomic_op {
                BugId::J15
            } else {
                BugId::J10
            };
            let message = format!(
                "reopened as {} but the model allows states {}..={} ({}); image: {facts}",
                describe(&shown),
                window.durable,
                window.issued,
                describe(model.state(window.durable)),
            );
            (id, message)
        })
}

/// Step 2, resume (or recreate) the journal: resume, clone and fork close any open transaction before
/// they write.
fn recover(
    disk: &SharedStorage,
    exists: bool,
    facts: &ImageFacts,
    recovery_id: BugId,
    opts: &JournalOptions,
) -> Result<Journal, (BugId, String)> {
    let j = if exists {
        resume_journal(disk.clone(), JOURNAL, opts.clone())
            .map_err(|e| (recovery_id, format!("resume failed: {e}")))?
    } else {
        Journal::create(disk.clone(), JOURNAL, opts.clone(), None)
            .map_err(|e| (BugId::J10, format!("recreating the journal failed: {e}")))?
    };
    if let Some(txn) = j.open_txn() {
        return Err((BugId::J2, format!("resume left transaction {txn} open")));
    }
    forgotten(disk, facts)?;
    if exists {
        check_copies(disk, facts.last_seq, opts)?;
    }
    Ok(j)
}

/// J21: a recovery that met an open replacement behind the torn start of its abort (a crashed
/// recovery's) must still terminate it in the file, whatever its writer shows.
fn forgotten(disk: &SharedStorage, before: &ImageFacts) -> Result<(), (BugId, String)> {
    if !before.torn_abort {
        return Ok(());
    }
    let after = classify_image(&read_all(&**disk, JOURNAL).unwrap_or_default());
    match after.open_txn {
        Some(txn) => Err((
            BugId::J21,
            format!(
                "the crash image held transaction {txn} open behind the torn start of its abort \
                 (image: {before}); after the resume the file still holds it open (now: {after}) \
                 while the writer shows none"
            ),
        )),
        None => Ok(()),
    }
}

/// Step 3, write again, then reopen: exactly the recovered history plus the new writes.
fn write_again(
    disk: &SharedStorage,
    mut j: Journal,
    recovered: &ModelHistory<Row>,
    after_id: BugId,
    recovery_id: BugId,
    opts: &JournalOptions,
) -> Result<(), (BugId, String)> {
    let post_replace = vec![Row::text(Speaker::Ai, Origin::Main, "after the crash")];
    let post_append = vec![Row::text(Speaker::Human, Origin::Main, "and on")];
    j.replace_all(Origin::Main, post_replace.clone())
        .and_then(|_| j.append(Origin::Main, post_append.clone()))
        .map_err(|e| (recovery_id, format!("writing after recovery failed: {e}")))?;
    let expected = recovered
        .apply(&ModelOp::Replace(post_replace))
        .and_then(|h| h.apply(&ModelOp::Append(post_append)))
        .map_err(|e| {
            (
                BugId::J10,
                format!("model refused the post-crash writes: {e}"),
            )
        })?;
    let reopened = Journal::open(disk.clone(), JOURNAL, opts.clone()).map_err(|e| {
        (
            after_id,
            format!("the journal written after recovery does not reopen: {e}"),
        )
    })?;
    let again = model_view(reopened.fold());
    if again != expected || again != model_view(j.fold()) {
        return Err((
            after_id,
            format!(
                "after recovery and two writes the journal reopened as {}, expected {}",
                describe(&again),
                describe(&expected)
            ),
        ));
    }
    Ok(())
}

/// Clone and checkpoint fork of the crash image must leave no transaction open either.
fn check_copies(
    disk: &SharedStorage,
    last_seq: u64,
    opts: &JournalOptions,
) -> Result<(), (BugId, String)> {
    let storage = disk.clone();
    let copied = |r: Result<Journal, JournalError>, what: &str| match r {
        Ok(j) => match j.open_txn() {
            Some(txn) => Err((BugId::J2, format!("{what} left transaction {txn} open"))),
            None => Ok(()),
        },
        Err(e) => Err((BugId::J2, format!("{what} failed: {e}"))),
    };
    copied(
        clone_journal(storage.clone(), JOURNAL, CLONE, opts.clone()),
        "clone",
    )?;
    if last_seq >= 2 {
        copied(
            fork_journal(storage, JOURNAL, FORK, last_seq - 1, opts.clone()),
            "fork",
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::journal::MemStorage;

    #[test]
    fn facts_see_an_open_transaction_and_a_torn_tail() {
        let s = Arc::new(MemStorage::new());
        let mut j =
            Journal::create(s.clone(), "j", JournalOptions::default(), None).expect("create");
        let mut g = j.begin_replace(Origin::Main).expect("begin");
        g.push_rows(vec![Row::text(Speaker::Ai, Origin::Main, "x")])
            .expect("rows");
        std::mem::forget(g);
        let mut bytes = s.bytes("j");
        let facts = classify_image(&bytes);
        assert_eq!(facts.open_txn, Some(2));
        assert!(!facts.torn_tail);
        bytes.extend_from_slice(&[1, 2, 3]);
        assert!(classify_image(&bytes).torn_tail);
    }
}
