//! The journal writer: one per journal file, holding the folded state so a mutation never reads
//! the file back (J12).
//!
//! Every mutation is validated against the fold before a byte is written, written as one frame
//! per record, synced, and only then applied to the fold and acknowledged: a mutation resolves
//! when its record is durable. A failed write is cut back off the file so the next record does not
//! land after a fragment; when even that fails, or a sync fails (after which the kernel may have
//! dropped the dirty pages), the writer refuses further writes until the journal is resumed.
//!
//! A torn tail found at open is cut before the first append (J10). Opening writes nothing: a
//! journal opened only to be read, or one whose tail is not torn, is left byte for byte as found.

use super::density::density_records;
use super::error::JournalError;
use super::fold::Fold;
use super::frame::encode_frame;
use super::inbox::Inbox;
use super::options::JournalOptions;
use super::record::{DensityReplacement, Record, RecordBody, RowId};
use super::row::{Origin, Row};
use super::scan::{scan_into_fold, ScannedRecord, TornTail};
use super::storage::{length_not_below, SharedStorage};
use crate::BugId;

/// What a mutation wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteReceipt {
    pub first_seq: u64,
    pub last_seq: u64,
    pub records: usize,
    /// The file offset after the last record written.
    pub end_offset: u64,
}

/// The writer of one journal file.
#[derive(Debug)]
pub struct Journal {
    storage: SharedStorage,
    name: String,
    opts: JournalOptions,
    fold: Fold,
    /// Offset after the last record this writer knows of.
    end: u64,
    /// A half-written frame found at open, cut before the next write.
    torn_tail: Option<TornTail>,
    poisoned: Option<String>,
    inbox: Inbox,
    bytes_read: u64,
    /// Whether a record was appended since the last sync: the next record waits for a sync
    /// (J19).
    unsynced: bool,
}

impl Journal {
    /// Creates a new journal whose first record is a start record (`mirror_of` names the origin
    /// filter of a mirror journal), synced.
    pub fn create(
        storage: SharedStorage,
        name: &str,
        opts: JournalOptions,
        mirror_of: Option<Origin>,
    ) -> Result<Journal, JournalError> {
        let len = storage
            .len(name)
            .map_err(|e| JournalError::io(name, "stat", e))?;
        if len.is_some_and(|l| l > 0) {
            return Err(JournalError::AlreadyExists {
                file: name.to_string(),
            });
        }
        let mut j = Journal::empty(storage, name, opts);
        let origin = mirror_of.clone().unwrap_or(Origin::Main);
        j.write(origin, vec![RecordBody::Start { mirror_of }], true)?;
        // Post-condition: the start record is record 1, and durable.
        debug_assert!(j.fold().last_seq() == 1 && !j.unsynced);
        Ok(j)
    }

    /// Opens an existing journal and folds it. Writes nothing.
    pub fn open(
        storage: SharedStorage,
        name: &str,
        opts: JournalOptions,
    ) -> Result<Journal, JournalError> {
        Journal::open_observed(storage, name, opts, &mut |_| Ok(()))
    }

    /// [`Journal::open`], calling `observe` after each record is folded (resume uses this to
    /// take arrivals between load steps).
    pub(crate) fn open_observed(
        storage: SharedStorage,
        name: &str,
        opts: JournalOptions,
        observe: &mut dyn FnMut(&ScannedRecord) -> Result<(), JournalError>,
    ) -> Result<Journal, JournalError> {
        let len = storage
            .len(name)
            .map_err(|e| JournalError::io(name, "stat", e))?
            .ok_or_else(|| JournalError::NotFound {
                file: name.to_string(),
            })?;
        let mut j = Journal::empty(storage, name, opts);
        j.catch_up_to(len, observe)?;
        Ok(j)
    }

    fn empty(storage: SharedStorage, name: &str, opts: JournalOptions) -> Journal {
        Journal {
            fold: Fold::new(&opts.tokenizer, opts.planted),
            storage,
            name: name.to_string(),
            opts,
            end: 0,
            torn_tail: None,
            poisoned: None,
            inbox: Inbox::default(),
            bytes_read: 0,
            unsynced: false,
        }
    }

    /// Folds `[end, len)`: records another handle appended, or the whole file at open.
    fn catch_up_to(
        &mut self,
        len: u64,
        observe: &mut dyn FnMut(&ScannedRecord) -> Result<(), JournalError>,
    ) -> Result<(), JournalError> {
        let out = scan_into_fold(
            &*self.storage,
            &self.name,
            self.end,
            len,
            self.opts.scan(),
            &mut self.fold,
            observe,
        )?;
        self.bytes_read += out.bytes_read;
        // Post-condition of the scan: it read on from where the good records ended.
        debug_assert!(out.valid_end >= self.end && out.valid_end <= len);
        self.end = out.valid_end;
        self.torn_tail = out.torn_tail;
        if self.opts.planted.is(BugId::J10) {
            if let Some(t) = self.torn_tail.take() {
                // planted J10: the torn tail stayed in the file; the next append went after it.
                self.end = t.offset + t.bytes;
            }
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn storage(&self) -> &SharedStorage {
        &self.storage
    }

    pub fn options(&self) -> &JournalOptions {
        &self.opts
    }

    /// The folded history.
    pub fn fold(&self) -> &Fold {
        &self.fold
    }

    /// The in-context rows, cloned.
    pub fn rows(&self) -> Vec<Row> {
        self.fold.rows()
    }

    /// The offset after the last good record (the file's length once a torn tail is cut).
    pub fn end_offset(&self) -> u64 {
        self.end
    }

    /// The half-written frame found at open and not yet cut.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.torn_tail.as_ref()
    }

    /// A replacement left open in the file (by a crash, or a copied journal).
    pub fn open_txn(&self) -> Option<u64> {
        self.fold.open_txn()
    }

    /// Bytes this writer has read from its file, at open and when catching up.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Why this writer refuses writes, if it does (see the module doc).
    pub fn poisoned(&self) -> Option<&str> {
        self.poisoned.as_deref()
    }

    /// A handle for other producers to queue appends.
    pub fn inbox(&self) -> Inbox {
        self.inbox.clone()
    }

    /// Writes every queued append, in order, then syncs. Returns how many were written.
    pub fn pump(&mut self) -> Result<usize, JournalError> {
        let mut written = 0;
        while let Some((origin, rows)) = self.inbox.pop() {
            let body = RecordBody::Append { rows };
            if let Err(e) = self.write(origin.clone(), vec![body.clone()], false) {
                if let RecordBody::Append { rows } = body {
                    self.inbox.push_front((origin, rows));
                }
                return Err(e);
            }
            written += 1;
        }
        if written > 0 {
            self.sync()?;
        }
        // Post-condition: whatever was written is durable.
        debug_assert!(written == 0 || !self.unsynced);
        Ok(written)
    }

    /// Appends rows at the end, as one record.
    pub fn append(&mut self, origin: Origin, rows: Vec<Row>) -> Result<WriteReceipt, JournalError> {
        if rows.is_empty() {
            return Err(JournalError::Argument("append of no rows".into()));
        }
        self.pump()?;
        let receipt = self.write(origin, vec![RecordBody::Append { rows }], true)?;
        // Post-condition: an append is one record, written and synced.
        debug_assert!(receipt.records == 1 && receipt.first_seq == receipt.last_seq);
        debug_assert!(!self.unsynced);
        Ok(receipt)
    }

    /// Removes the last `rows` in-context rows (a rewind), as one record (J15).
    pub fn suffix_cut(&mut self, origin: Origin, rows: u64) -> Result<WriteReceipt, JournalError> {
        self.pump()?;
        let bodies = if self.opts.planted.is(BugId::J15) {
            // planted J15: a rewind was written as one single-row cut per row.
            (0..rows)
                .map(|_| RecordBody::SuffixCut { rows: 1 })
                .collect()
        } else {
            vec![RecordBody::SuffixCut { rows }]
        };
        self.write_one_record(origin, bodies)
    }

    /// Removes every in-context row, as one record (J15).
    pub fn clear(&mut self, origin: Origin) -> Result<WriteReceipt, JournalError> {
        self.pump()?;
        let n = self.fold.in_context().len() as u64;
        let bodies = if self.opts.planted.is(BugId::J15) && n > 0 {
            // planted J15: a clear was written as one single-row cut per row.
            (0..n).map(|_| RecordBody::SuffixCut { rows: 1 }).collect()
        } else {
            vec![RecordBody::Clear]
        };
        let receipt = self.write_one_record(origin, bodies)?;
        // Post-condition: nothing is left in context. J15's cuts were counted before the write
        // caught up with other handles' rows, and J1's legacy transactions fold records late.
        let planted = self.opts.planted;
        debug_assert!(
            self.fold.in_context().is_empty() || planted.is(BugId::J15) || planted.is(BugId::J1)
        );
        Ok(receipt)
    }

    /// Replaces the first `compressed_rows` in-context rows with `summary`, as one record (J15).
    pub fn compress(
        &mut self,
        origin: Origin,
        summary: Row,
        compressed_rows: u64,
    ) -> Result<WriteReceipt, JournalError> {
        self.pump()?;
        // What the post-condition compares with, copied in debug builds only.
        let expected = cfg!(debug_assertions).then(|| summary.clone());
        let bodies = if self.opts.planted.is(BugId::J15) {
            // planted J15: a compression was a clear, then an append of the summary and the rows
            // it kept.
            let mut rows = vec![summary];
            let kept = self.fold.in_context().iter().skip(compressed_rows as usize);
            rows.extend(kept.map(|e| (*e.row).clone()));
            vec![RecordBody::Clear, RecordBody::Append { rows }]
        } else {
            vec![RecordBody::Compression {
                summary,
                compressed_rows,
            }]
        };
        let receipt = self.write_one_record(origin, bodies)?;
        // Post-condition: the summary is the first row in context (J1 folds a transaction's
        // records late).
        debug_assert!(
            self.opts.planted.is(BugId::J1)
                || expected.is_none_or(|s| self
                    .fold
                    .in_context()
                    .first()
                    .is_some_and(|e| *e.row == s))
        );
        Ok(receipt)
    }

    /// Removes and rewrites rows, in records of at most 64 rows or 64 KiB (J16).
    pub fn density_mutation(
        &mut self,
        origin: Origin,
        removed: &[RowId],
        replacements: &[DensityReplacement],
    ) -> Result<WriteReceipt, JournalError> {
        self.pump()?;
        let bodies = if self.opts.planted.is(BugId::J16) {
            // planted J16: the whole change went into one record, however large.
            vec![RecordBody::DensityMutation {
                removed: removed.to_vec(),
                replacements: replacements.to_vec(),
            }]
        } else {
            density_records(removed, replacements)
        };
        if bodies.is_empty() {
            return Err(JournalError::Argument("density mutation of no rows".into()));
        }
        let records = bodies.len();
        let receipt = self.write(origin, bodies, true)?;
        // Post-condition: every record went in, synced, numbered one after another.
        debug_assert!(receipt.records == records && !self.unsynced);
        debug_assert_eq!(receipt.last_seq + 1 - receipt.first_seq, records as u64);
        Ok(receipt)
    }

    /// Inserts `row` right after the in-context row `anchor` (at the start when `None`).
    pub fn insert_after(
        &mut self,
        origin: Origin,
        anchor: Option<RowId>,
        row: Row,
    ) -> Result<WriteReceipt, JournalError> {
        self.pump()?;
        let receipt = self.write(
            origin,
            vec![RecordBody::SyntheticInsert { anchor, row }],
            true,
        )?;
        // Post-condition: an insert is one record, synced.
        debug_assert!(receipt.records == 1 && !self.unsynced);
        Ok(receipt)
    }

    /// Writes a `replace_abort` for a replacement left open in the file, and syncs. Resume,
    /// clone and fork call this before anything else (J2). Returns the aborted transaction.
    pub fn close_open_transaction(&mut self, origin: Origin) -> Result<Option<u64>, JournalError> {
        let Some(txn) = self.fold.open_txn() else {
            return Ok(None);
        };
        self.write(origin, vec![RecordBody::ReplaceAbort { txn }], true)?;
        // Post-condition: the abort closed the transaction.
        debug_assert_ne!(self.fold.open_txn(), Some(txn));
        Ok(Some(txn))
    }

    /// planted J21: drops the open replacement from this writer's fold without writing its
    /// abort (the file still holds it unterminated).
    pub(crate) fn forget_open_txn(&mut self) {
        self.fold.forget_open_txn();
    }

    /// Makes every write durable.
    pub fn sync(&mut self) -> Result<(), JournalError> {
        self.check_writable()?;
        if let Err(e) = self.storage.sync(&self.name) {
            self.poisoned = Some(format!("sync failed: {e}"));
            return Err(JournalError::io(&self.name, "sync", e));
        }
        self.unsynced = false;
        Ok(())
    }

    /// A record is appended only behind durable ones (J19): a file system may persist the
    /// unsynced writes of a file in any order, and a record that lands while an earlier one does
    /// not leaves a hole the scanner must call corruption, so the journal would not reopen.
    fn barrier(&mut self) -> Result<(), JournalError> {
        // planted J19: the legacy writer appended a transaction's records (and queued appends)
        // back to back and synced once at the end.
        if self.unsynced && !self.opts.planted.is(BugId::J19) {
            self.sync()?;
        }
        // Post-condition: nothing unsynced lies before the next record (but with J19 planted).
        debug_assert!(!self.unsynced || self.opts.planted.is(BugId::J19));
        Ok(())
    }

    fn check_writable(&self) -> Result<(), JournalError> {
        match &self.poisoned {
            Some(reason) => Err(JournalError::Poisoned {
                file: self.name.clone(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Folds the file again from its start, keeping this writer's inbox. A session calls it on
    /// a writer it puts back after another handle (a failed resume of the same file) may have
    /// written to the file: an abort, a cut tail, a cut-back fragment. A writer that cannot read
    /// its file back is poisoned: it must not write from a state it could not check.
    pub(crate) fn reload(&mut self) {
        let len = match self.storage.len(&self.name) {
            Ok(Some(len)) => len,
            Ok(None) => return self.poison("the file is gone".into()),
            Err(e) => return self.poison(format!("stat failed ({e})")),
        };
        self.fold = Fold::new(&self.opts.tokenizer, self.opts.planted);
        self.end = 0;
        self.torn_tail = None;
        if let Err(e) = self.catch_up_to(len, &mut |_| Ok(())) {
            self.poison(format!("reading it back failed ({e})"));
        }
        // Post-condition: a writer that read its file back ends within it.
        debug_assert!(self.poisoned.is_some() || self.end <= len);
    }

    fn poison(&mut self, reason: String) {
        if self.poisoned.is_none() {
            self.poisoned = Some(reason);
        }
        debug_assert!(
            self.check_writable().is_err(),
            "a poisoned writer refuses writes"
        );
    }

    /// Brings the fold up to the file (another handle may have appended) and cuts a torn tail.
    fn prepare_write(&mut self) -> Result<(), JournalError> {
        self.check_writable()?;
        // Only the good records are history: a torn tail past them is garbage that any writer of
        // this file may cut. Another handle on the same file (a resume that failed after cutting
        // the tail, and put this writer back) can leave the file anywhere from `end` on, so only a
        // file shorter than the good records has lost history (issue 15: a writer that remembered
        // a tail someone else had cut refused every later write).
        let actual = length_not_below(&*self.storage, &self.name, self.end)?;
        let with_tail = self.end + self.torn_tail.as_ref().map_or(0, |t| t.bytes);
        if actual == self.end {
            // The tail was cut by another handle: nothing to read, nothing to cut.
            self.torn_tail = None;
        } else if actual != with_tail {
            // Records another handle appended (after cutting the tail, or a part of it).
            self.catch_up_to(actual, &mut |_| Ok(()))?;
        }
        if let Some(t) = &self.torn_tail {
            self.storage
                .truncate(&self.name, t.offset)
                .map_err(|e| JournalError::io(&self.name, "truncate torn tail", e))?;
            self.torn_tail = None;
            // The cut is synced before a record is written over it (J19): otherwise sectors of
            // the old tail could persist among the new record's and read as corruption.
            self.unsynced = true;
        }
        // Post-condition: the next record goes right after the good ones, behind no torn tail.
        debug_assert!(self.torn_tail.is_none());
        Ok(())
    }

    /// Writes and syncs a mutation that is one record (J15): a rewind, a clear, a compression.
    fn write_one_record(
        &mut self,
        origin: Origin,
        bodies: Vec<RecordBody>,
    ) -> Result<WriteReceipt, JournalError> {
        let receipt = self.write(origin, bodies, true)?;
        // Post-condition: the mutation is one record (J15).
        debug_assert!(receipt.records == 1 || self.opts.planted.is(BugId::J15));
        Ok(receipt)
    }

    /// Writes `bodies` as consecutive records, one frame per storage append, then syncs when
    /// asked. A failed append is cut back off; records written before it stay written.
    pub(crate) fn write(
        &mut self,
        origin: Origin,
        bodies: Vec<RecordBody>,
        sync: bool,
    ) -> Result<WriteReceipt, JournalError> {
        assert!(!bodies.is_empty(), "a write of no records");
        self.prepare_write()?;
        let first_seq = self.fold.last_seq() + 1;
        let records = bodies.len();
        for body in bodies {
            let record = Record {
                seq: self.fold.last_seq() + 1,
                origin: origin.clone(),
                body,
            };
            self.fold
                .validate(&record)
                .map_err(|problem| JournalError::Invalid {
                    file: self.name.clone(),
                    offset: self.end,
                    seq: record.seq,
                    problem,
                })?;
            let frame = encode_frame(&record);
            self.barrier()?;
            if let Err(e) = self.storage.append(&self.name, &frame) {
                if let Err(cut) = self.storage.truncate(&self.name, self.end) {
                    self.poisoned =
                        Some(format!("append failed ({e}) and cut-back failed ({cut})"));
                }
                return Err(JournalError::io(&self.name, "append", e));
            }
            self.end += frame.len() as u64;
            self.unsynced = true;
            self.fold
                .apply(&record)
                .expect("validated just before the write");
            debug_assert_eq!(self.fold.last_seq(), record.seq);
        }
        // Post-condition: the records took consecutive seqs, one each.
        debug_assert_eq!(self.fold.last_seq() + 1 - first_seq, records as u64);
        if sync {
            self.sync()?;
        }
        Ok(WriteReceipt {
            first_seq,
            last_seq: self.fold.last_seq(),
            records,
            end_offset: self.end,
        })
    }
}
