//! A shared history: one primary journal whose rows come from several origins (the main session
//! and its subagents), fanned out to per-origin mirror journals.
//!
//! A mutation is written to the primary, synced, then translated ([`super::mirror`]) and written
//! to every mirror, each synced, and only then resolves: when it returns, every mirror holds it
//! durably (J9). If a mirror write fails, the mutation is rolled back: the primary goes back to
//! the rows it had, each under its own origin (J8), and every mirror is brought back in line with
//! the primary; a mirror that cannot be is resynced before the next mutation. The rollback's
//! snapshot comes from the fold the writer already holds, never from reading the journal again
//! (J12). A resumed mirror keeps the origin filter its start record names (J7).

use std::collections::{BTreeMap, BTreeSet};

use super::error::JournalError;
use super::mirror::{apply_write, translate, SharedOp};
use super::options::JournalOptions;
use super::record::{DensityReplacement, RowId};
use super::reopen::resume_journal;
use super::row::{Origin, Row};
use super::session::Recorder;
use super::storage::SharedStorage;
use super::writer::{Journal, WriteReceipt};
use crate::BugId;

/// How to undo a mutation whose fan-out failed.
#[derive(Clone, Debug)]
enum Rollback {
    /// Cut the rows an append added.
    CutAppended(u64),
    /// Append again the rows a rewind cut (each keeps its origin).
    Reappend(Vec<Row>),
    /// Put these rows back (each keeps its origin).
    Restore(Vec<Row>),
}

/// The primary journal and its per-origin mirrors.
#[derive(Debug)]
pub struct SharedHistory {
    storage: SharedStorage,
    opts: JournalOptions,
    primary: Journal,
    mirrors: BTreeMap<Origin, Recorder>,
    /// Mirrors that missed a write and are resynced before the next mutation.
    stale: BTreeSet<Origin>,
    /// planted J9: mirror writes handed over but not yet written.
    deferred: Vec<(Origin, Origin, SharedOp)>,
}

impl SharedHistory {
    /// A new shared history with primary journal `name` and no mirrors.
    pub fn create(
        storage: SharedStorage,
        name: &str,
        opts: JournalOptions,
    ) -> Result<SharedHistory, JournalError> {
        let primary = Journal::create(storage.clone(), name, opts.clone(), None)?;
        Ok(SharedHistory::with_primary(storage, opts, primary))
    }

    fn with_primary(storage: SharedStorage, opts: JournalOptions, primary: Journal) -> Self {
        SharedHistory {
            storage,
            opts,
            primary,
            mirrors: BTreeMap::new(),
            stale: BTreeSet::new(),
            deferred: Vec::new(),
        }
    }

    /// Resumes a shared history and its mirrors; each mirror keeps its origin filter and is
    /// brought in line with the primary (a crash may have come between the two writes).
    pub fn resume(
        storage: SharedStorage,
        primary: &str,
        mirrors: &[&str],
        opts: JournalOptions,
    ) -> Result<SharedHistory, JournalError> {
        let p = resume_journal(storage.clone(), primary, opts.clone())?;
        let mut shared = SharedHistory::with_primary(storage.clone(), opts.clone(), p);
        for name in mirrors {
            let j = resume_journal(storage.clone(), name, opts.clone())?;
            let Some(origin) = j.fold().mirror_of().cloned() else {
                return Err(JournalError::Argument(format!(
                    "{name} is not a mirror journal (its start record names no origin)"
                )));
            };
            let filter = if opts.planted.is(BugId::J7) {
                // planted J7: a resumed recorder lost its origin filter.
                None
            } else {
                Some(origin.clone())
            };
            shared
                .mirrors
                .insert(origin.clone(), Recorder::with_filter(j, filter));
            shared.stale.insert(origin);
        }
        shared.resync_stale()?;
        Ok(shared)
    }

    /// Attaches a mirror for `origin` in new journal `name`; it starts with the rows of `origin`.
    pub fn attach_mirror(&mut self, origin: Origin, name: &str) -> Result<(), JournalError> {
        if self.mirrors.contains_key(&origin) {
            return Err(JournalError::Argument(format!(
                "a mirror for {origin:?} is attached already"
            )));
        }
        let j = Journal::create(
            self.storage.clone(),
            name,
            self.opts.clone(),
            Some(origin.clone()),
        )?;
        let mut rec = Recorder::new(j);
        let rows = rec.accepted(self.primary.rows());
        if !rows.is_empty() {
            rec.journal_mut().append(origin.clone(), rows)?;
        }
        self.mirrors.insert(origin, rec);
        Ok(())
    }

    pub fn primary(&self) -> &Journal {
        &self.primary
    }

    /// The mirror of `origin`.
    pub fn mirror(&self, origin: &Origin) -> Option<&Recorder> {
        self.mirrors.get(origin)
    }

    /// Every mirror, by origin.
    pub fn mirrors(&self) -> impl Iterator<Item = (&Origin, &Recorder)> {
        self.mirrors.iter()
    }

    pub fn append(&mut self, origin: Origin, rows: Vec<Row>) -> Result<WriteReceipt, JournalError> {
        self.mutate(origin, SharedOp::Append(rows))
    }

    pub fn insert_after(
        &mut self,
        origin: Origin,
        anchor: Option<RowId>,
        row: Row,
    ) -> Result<WriteReceipt, JournalError> {
        self.mutate(origin, SharedOp::Insert { anchor, row })
    }

    /// Removes the last `rows` rows (whatever their origins); each mirror loses only its own.
    pub fn rewind(&mut self, origin: Origin, rows: u64) -> Result<WriteReceipt, JournalError> {
        self.mutate(origin, SharedOp::Rewind(rows))
    }

    /// Removes the last row.
    pub fn pop(&mut self, origin: Origin) -> Result<WriteReceipt, JournalError> {
        self.rewind(origin, 1)
    }

    pub fn clear(&mut self, origin: Origin) -> Result<WriteReceipt, JournalError> {
        self.mutate(origin, SharedOp::Clear)
    }

    pub fn compress(
        &mut self,
        origin: Origin,
        summary: Row,
        rows: u64,
    ) -> Result<WriteReceipt, JournalError> {
        self.mutate(origin, SharedOp::Compress { summary, rows })
    }

    /// Rewrites row `id` in place (a row transform). The row keeps its origin.
    pub fn transform(
        &mut self,
        origin: Origin,
        id: RowId,
        row: Row,
    ) -> Result<WriteReceipt, JournalError> {
        self.density(origin, Vec::new(), vec![DensityReplacement { id, row }])
    }

    /// Removes and rewrites rows; a rewritten row must keep its origin.
    pub fn density(
        &mut self,
        origin: Origin,
        removed: Vec<RowId>,
        replacements: Vec<DensityReplacement>,
    ) -> Result<WriteReceipt, JournalError> {
        for r in &replacements {
            let current = self.primary.fold().position(r.id);
            if let Some(p) = current {
                let was = &self.primary.fold().in_context()[p].row.origin;
                if *was != r.row.origin {
                    return Err(JournalError::Argument(format!(
                        "row {} of {was:?} cannot become a row of {:?}",
                        r.id.0, r.row.origin
                    )));
                }
            }
        }
        self.mutate(
            origin,
            SharedOp::Density {
                removed,
                replacements,
            },
        )
    }

    /// Replaces the history with `rows` (a restore), in one transaction per journal.
    pub fn restore(
        &mut self,
        origin: Origin,
        rows: Vec<Row>,
    ) -> Result<WriteReceipt, JournalError> {
        self.mutate(origin, SharedOp::Restore(rows))
    }

    /// Writes mirror work handed over and not yet written (only planted J9 leaves any).
    pub fn settle(&mut self) -> Result<(), JournalError> {
        while !self.deferred.is_empty() {
            let (target, origin, write) = self.deferred.remove(0);
            if let Some(m) = self.mirrors.get_mut(&target) {
                apply_write(m.journal_mut(), origin, write)?;
            }
        }
        // Post-condition: no mirror work is left handed over and unwritten (J9).
        debug_assert!(self.deferred.is_empty());
        Ok(())
    }

    fn mutate(&mut self, origin: Origin, op: SharedOp) -> Result<WriteReceipt, JournalError> {
        self.settle()?;
        self.resync_stale()?;
        let rollback = self.capture_rollback(&op)?;
        let writes: Vec<(Origin, SharedOp)> = self
            .mirrors
            .iter()
            .filter_map(|(o, m)| translate(&op, self.primary.fold(), m).map(|w| (o.clone(), w)))
            .collect();
        let seq_before = self.primary.fold().last_seq();
        let receipt = match apply_write(&mut self.primary, origin.clone(), op) {
            Ok(r) => r,
            // Some records of a multi-record mutation landed: undo them too.
            Err(e) if self.primary.fold().last_seq() > seq_before => {
                return Err(self.roll_back(origin, rollback, e));
            }
            Err(e) => return Err(e),
        };
        if self.opts.planted.is(BugId::J9) {
            // planted J9: the mutation resolved once the mirrors were handed their writes, before
            // any mirror had written (let alone synced) them.
            let handed = writes.into_iter().map(|(t, w)| (t, origin.clone(), w));
            self.deferred.extend(handed);
            return Ok(receipt);
        }
        for (target, write) in writes {
            let mirror = self.mirrors.get_mut(&target).expect("translated from it");
            if let Err(e) = apply_write(mirror.journal_mut(), origin.clone(), write) {
                self.stale.insert(target);
                return Err(self.roll_back(origin, rollback, e));
            }
        }
        // Post-condition: the mutation is the primary's newest records, and every mirror wrote
        // its part before it resolved (J9).
        debug_assert!(
            seq_before < receipt.first_seq && receipt.last_seq <= self.primary.fold().last_seq()
        );
        debug_assert!(self.deferred.is_empty() && self.stale.is_empty());
        Ok(receipt)
    }

    fn capture_rollback(&self, op: &SharedOp) -> Result<Rollback, JournalError> {
        if self.opts.planted.is(BugId::J12) {
            // planted J12: every mutation re-folded the whole journal from byte 0 to capture the
            // rows and their origins for a rollback.
            let refold =
                Journal::open(self.storage.clone(), self.primary.name(), self.opts.clone())?;
            return Ok(Rollback::Restore(refold.rows()));
        }
        // Appends and rewinds, the per-turn mutations, capture only what they touch.
        Ok(match op {
            SharedOp::Append(rows) => Rollback::CutAppended(rows.len() as u64),
            SharedOp::Rewind(n) => {
                let ctx = self.primary.fold().in_context();
                let from = ctx.len().saturating_sub(*n as usize);
                Rollback::Reappend(ctx[from..].iter().map(|e| (*e.row).clone()).collect())
            }
            _ => Rollback::Restore(self.primary.rows()),
        })
    }

    /// Undoes a mutation whose fan-out failed; returns the error to report.
    fn roll_back(
        &mut self,
        origin: Origin,
        rollback: Rollback,
        cause: JournalError,
    ) -> JournalError {
        let planted_j8 = self.opts.planted.is(BugId::J8);
        let restore_origins = |rows: &mut Vec<Row>| {
            if planted_j8 {
                // planted J8: the rollback put the rows back under the mutation's origin.
                for r in rows.iter_mut() {
                    r.origin = origin.clone();
                }
            }
        };
        let undone = match rollback {
            Rollback::CutAppended(n) => self.primary.suffix_cut(origin.clone(), n).map(|_| ()),
            Rollback::Reappend(mut rows) => {
                restore_origins(&mut rows);
                if rows.is_empty() {
                    Ok(())
                } else {
                    self.primary.append(origin.clone(), rows).map(|_| ())
                }
            }
            Rollback::Restore(mut rows) => {
                restore_origins(&mut rows);
                self.primary.replace_all(origin.clone(), rows).map(|_| ())
            }
        };
        if let Err(e) = undone {
            return JournalError::Argument(format!(
                "{cause}; and the rollback of the primary failed: {e}"
            ));
        }
        self.stale.extend(self.mirrors.keys().cloned());
        // Mirrors that cannot be brought back stay stale and are retried next time.
        let _ = self.resync_stale();
        cause
    }

    /// Brings every stale mirror in line with the primary.
    fn resync_stale(&mut self) -> Result<(), JournalError> {
        let stale: Vec<Origin> = self.stale.iter().cloned().collect();
        for origin in stale {
            let Some(m) = self.mirrors.get_mut(&origin) else {
                self.stale.remove(&origin);
                continue;
            };
            if m.journal().poisoned().is_some() {
                // A failed sync leaves the file's state unknown: read it again.
                let name = m.journal().name().to_string();
                let fresh = resume_journal(self.storage.clone(), &name, self.opts.clone())?;
                m.set_journal(fresh);
            }
            let target = m.accepted(self.primary.rows());
            if m.journal().rows() != target {
                m.journal_mut().replace_all(origin.clone(), target)?;
            }
            self.stale.remove(&origin);
        }
        // Post-condition: every mirror is back in line with the primary.
        debug_assert!(self.stale.is_empty());
        Ok(())
    }
}
