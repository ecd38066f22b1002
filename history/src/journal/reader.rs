//! An incremental reader: statistics, context ranges and the last row of a journal that another
//! handle keeps appending to, each read costing what was appended since the last one (J11).
//!
//! The reader keeps a fold and the offset it has folded up to. A read asks the storage for the
//! file's length and folds only the new bytes. A half-written frame at the end is left for the
//! next read (the writer may still be writing it, or it is a torn tail the writer will cut).

use std::ops::Range;
use std::sync::Arc;

use super::error::JournalError;
use super::fold::{Entry, Fold, Statistics};
use super::options::JournalOptions;
use super::row::Row;
use super::scan::scan_into_fold;
use super::storage::{length_not_below, SharedStorage};
use crate::BugId;

/// A reader of one journal file.
#[derive(Debug)]
pub struct JournalReader {
    storage: SharedStorage,
    name: String,
    opts: JournalOptions,
    fold: Fold,
    offset: u64,
    bytes_read: u64,
}

impl JournalReader {
    /// A reader that has read nothing yet.
    pub fn new(storage: SharedStorage, name: &str, opts: JournalOptions) -> JournalReader {
        JournalReader {
            fold: Fold::new(&opts.tokenizer, opts.planted),
            storage,
            name: name.to_string(),
            opts,
            offset: 0,
            bytes_read: 0,
        }
    }

    /// Folds what was appended since the last read. Returns the bytes this call read.
    pub fn refresh(&mut self) -> Result<u64, JournalError> {
        let (offset_before, read_before) = (self.offset, self.bytes_read);
        if self.opts.planted.is(BugId::J11) {
            // planted J11: every read rescanned the journal from byte 0.
            self.fold = Fold::new(&self.opts.tokenizer, self.opts.planted);
            self.offset = 0;
        }
        let len = length_not_below(&*self.storage, &self.name, self.offset)?;
        let out = scan_into_fold(
            &*self.storage,
            &self.name,
            self.offset,
            len,
            self.opts.scan(),
            &mut self.fold,
            &mut |_| Ok(()),
        )?;
        // Post-condition: the read went on from where the last one stopped, within the file, and
        // read no more bytes than the file holds past that point (J11).
        debug_assert!(out.valid_end >= self.offset && out.valid_end <= len);
        debug_assert!(out.bytes_read <= len - self.offset);
        self.offset = out.valid_end;
        self.bytes_read += out.bytes_read;
        // Post-condition: a reader never goes back (J11 starts over, from byte 0), and its
        // count of bytes read only grows.
        debug_assert!(self.offset >= offset_before || self.opts.planted.is(BugId::J11));
        debug_assert_eq!(self.bytes_read, read_before + out.bytes_read);
        Ok(out.bytes_read)
    }

    /// Statistics of the in-context rows, as of now.
    pub fn statistics(&mut self) -> Result<Statistics, JournalError> {
        self.refresh()?;
        Ok(self.fold.statistics())
    }

    /// In-context rows `range` (clamped to what exists), as of now.
    pub fn context_range(&mut self, range: Range<usize>) -> Result<Vec<Arc<Row>>, JournalError> {
        self.refresh()?;
        let rows = self.fold.in_context();
        let end = range.end.min(rows.len());
        let start = range.start.min(end);
        debug_assert!(start <= end && end <= rows.len());
        // Post-condition: no more rows than the range asked for, each from inside it.
        debug_assert!(end - start <= range.len() && (start == end || start >= range.start));
        Ok(rows[start..end].iter().map(|e| e.row.clone()).collect())
    }

    /// The last in-context row, as of now.
    pub fn last_entry(&mut self) -> Result<Option<Entry>, JournalError> {
        self.refresh()?;
        Ok(self.fold.in_context().last().cloned())
    }

    /// The fold as of the last read.
    pub fn fold(&self) -> &Fold {
        &self.fold
    }

    /// The offset folded up to.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes read from storage over this reader's life.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }
}
