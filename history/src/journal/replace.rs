//! A general replacement in progress: `replace_begin`, rows, then `replace_commit` or
//! `replace_abort`.
//!
//! The guard borrows the writer mutably, so no other record can land between the begin and the
//! terminator (J3); appends other producers queue in the inbox wait until the guard is done.
//! Dropping an unfinished guard writes a `replace_abort` (not synced: if that write is lost, the
//! transaction is still invisible to every reader and the next resume aborts it).

use super::density::row_groups;
use super::error::JournalError;
use super::record::RecordBody;
use super::row::{Origin, Row};
use super::writer::{Journal, WriteReceipt};
use crate::BugId;

impl Journal {
    /// Replaces the in-context history with `rows` in one transaction.
    pub fn replace_all(
        &mut self,
        origin: Origin,
        rows: Vec<Row>,
    ) -> Result<WriteReceipt, JournalError> {
        let mut guard = self.begin_replace(origin)?;
        guard.push_rows(rows)?;
        guard.commit()
    }

    /// Opens a replacement. Until the guard commits or aborts, nothing else can write to this
    /// journal: the guard holds the writer, and queued appends wait (J3).
    pub fn begin_replace(&mut self, origin: Origin) -> Result<ReplaceGuard<'_>, JournalError> {
        self.pump()?;
        let txn = self.fold().last_seq() + 1;
        self.write(
            origin.clone(),
            vec![RecordBody::ReplaceBegin { txn }],
            false,
        )?;
        // Post-condition: the transaction is named by its begin record, the last one written.
        debug_assert_eq!(self.fold().last_seq(), txn);
        Ok(ReplaceGuard::new(self, origin, txn))
    }
}

/// An open replacement on a journal.
#[derive(Debug)]
pub struct ReplaceGuard<'a> {
    journal: &'a mut Journal,
    origin: Origin,
    txn: u64,
    finished: bool,
}

impl<'a> ReplaceGuard<'a> {
    pub(crate) fn new(journal: &'a mut Journal, origin: Origin, txn: u64) -> ReplaceGuard<'a> {
        let mut guard = ReplaceGuard {
            journal,
            origin,
            txn,
            finished: false,
        };
        guard.legacy_yield();
        guard
    }

    /// The transaction id (the sequence number of its begin record).
    pub fn txn(&self) -> u64 {
        self.txn
    }

    /// Adds rows to the replacement, in records of at most 64 rows or 64 KiB.
    pub fn push_rows(&mut self, rows: Vec<Row>) -> Result<(), JournalError> {
        // Pre-condition: the transaction is still open (J1's legacy fold tracks none).
        debug_assert!(
            self.journal.fold().open_txn() == Some(self.txn)
                || self.journal.options().planted.is(BugId::J1)
        );
        for rows in row_groups(rows) {
            let body = RecordBody::ReplaceRows {
                txn: self.txn,
                rows,
            };
            self.journal.write(self.origin.clone(), vec![body], false)?;
            self.legacy_yield();
        }
        Ok(())
    }

    /// Makes the replacement the in-context history, durably.
    pub fn commit(mut self) -> Result<WriteReceipt, JournalError> {
        let body = RecordBody::ReplaceCommit { txn: self.txn };
        let receipt = self.journal.write(self.origin.clone(), vec![body], true)?;
        // Post-condition: the commit closed this transaction (a legacy J1 fold keeps none).
        debug_assert_ne!(self.journal.fold().open_txn(), Some(self.txn));
        self.finished = true;
        self.drain_after();
        Ok(receipt)
    }

    /// Discards the replacement, durably.
    pub fn abort(mut self) -> Result<(), JournalError> {
        let body = RecordBody::ReplaceAbort { txn: self.txn };
        self.journal.write(self.origin.clone(), vec![body], true)?;
        debug_assert_ne!(self.journal.fold().open_txn(), Some(self.txn));
        self.finished = true;
        self.drain_after();
        Ok(())
    }

    /// Writes the appends that queued while the replacement ran. The replacement is durable
    /// whatever happens here: an append that cannot be written stays queued and is retried by
    /// the next mutation, which reports the failure.
    fn drain_after(&mut self) {
        let _ = self.journal.pump();
    }

    /// planted J3: the legacy replacement awaited between its records, and appends queued by
    /// other turns and recorders were written there, inside the transaction.
    fn legacy_yield(&mut self) {
        if self.journal.options().planted.is(BugId::J3) {
            // The legacy code ignored a failing interleaved append here as well.
            let _ = self.journal.pump();
        }
    }
}

impl Drop for ReplaceGuard<'_> {
    fn drop(&mut self) {
        if !self.finished {
            let body = RecordBody::ReplaceAbort { txn: self.txn };
            // Best effort: an unterminated replacement is invisible anyway (see the module doc).
            let _ = self.journal.write(self.origin.clone(), vec![body], false);
        }
    }
}
