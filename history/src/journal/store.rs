//! The journal store of one process: its recorders (the main session's journal, one per
//! subagent) and its scratch area, and their disposal.
//!
//! Disposal finishes its work before it returns: every recorder writes what it was handed and
//! syncs, the scratch area is removed, and every failure is reported (J18). The legacy store
//! returned at once, swallowed recorder errors and removed scratch in the background, so a process
//! that exited right after disposal kept its scratch for ever.

use std::collections::BTreeMap;
use std::fmt;

use super::error::JournalError;
use super::options::JournalOptions;
use super::row::Origin;
use super::scratch::{ScratchArea, ScratchOptions, SweepReport};
use super::session::Recorder;
use super::storage::SharedStorage;
use super::writer::Journal;
use crate::BugId;

/// What a disposal did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisposeReport {
    pub recorders_closed: usize,
    pub scratch_files_removed: usize,
}

/// The failures of a disposal, all of them.
#[derive(Debug)]
pub struct DisposeError {
    pub failures: Vec<JournalError>,
}

impl fmt::Display for DisposeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "disposal failed {} time(s):", self.failures.len())?;
        for e in &self.failures {
            write!(f, " [{e}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for DisposeError {}

/// One process's journals and scratch.
#[derive(Debug)]
pub struct JournalStore {
    storage: SharedStorage,
    opts: JournalOptions,
    recorders: BTreeMap<String, Recorder>,
    scratch: ScratchArea,
}

impl JournalStore {
    /// Opens the store: creates the scratch area, sweeping the scratch of dead processes.
    pub fn open(
        storage: SharedStorage,
        opts: JournalOptions,
        scratch: &ScratchOptions,
        is_alive: &dyn Fn(&str) -> bool,
    ) -> Result<(JournalStore, SweepReport), JournalError> {
        let (area, swept) = ScratchArea::create(storage.clone(), scratch, is_alive)?;
        Ok((
            JournalStore {
                storage,
                opts,
                recorders: BTreeMap::new(),
                scratch: area,
            },
            swept,
        ))
    }

    /// Creates journal `name` and a recorder for it (`mirror_of`: a per-origin mirror).
    pub fn create_recorder(
        &mut self,
        name: &str,
        mirror_of: Option<Origin>,
    ) -> Result<&mut Recorder, JournalError> {
        if self.recorders.contains_key(name) {
            return Err(JournalError::AlreadyExists {
                file: name.to_string(),
            });
        }
        let j = Journal::create(self.storage.clone(), name, self.opts.clone(), mirror_of)?;
        Ok(self
            .recorders
            .entry(name.to_string())
            .or_insert(Recorder::new(j)))
    }

    pub fn scratch(&mut self) -> &mut ScratchArea {
        &mut self.scratch
    }

    /// Closes every recorder (pending appends written, synced) and removes the scratch area.
    /// Returns only when all of it is done; reports every failure.
    pub fn dispose(mut self) -> Result<DisposeReport, DisposeError> {
        let mut failures = Vec::new();
        let mut report = DisposeReport::default();
        for rec in self.recorders.values_mut() {
            let j = rec.journal_mut();
            match j.pump().and_then(|_| j.sync()) {
                Ok(()) => report.recorders_closed += 1,
                Err(e) => failures.push(e),
            }
        }
        // Every recorder was closed or failed, none skipped.
        debug_assert_eq!(
            report.recorders_closed + failures.len(),
            self.recorders.len()
        );
        if self.opts.planted.is(BugId::J18) {
            // planted J18: dispose did not wait: scratch removal was left to a background task
            // (which a process exiting next never ran) and recorder errors were swallowed.
            return Ok(report);
        }
        let before = self.scratch.files().count();
        let scratch_failures = self.scratch.remove_all();
        report.scratch_files_removed = before - self.scratch.files().count();
        // Post-condition: each scratch file was removed or its failure reported, not both.
        debug_assert_eq!(
            report.scratch_files_removed + scratch_failures.len(),
            before
        );
        failures.extend(scratch_failures);
        if failures.is_empty() {
            Ok(report)
        } else {
            Err(DisposeError { failures })
        }
    }
}
