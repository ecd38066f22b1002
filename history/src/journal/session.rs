//! The live session and its recording: which journal the session's turns go to, and resume.
//!
//! Resume (`--continue`) loads a journal, closes a replacement left open (J2), publishes it as the
//! session's recording, then records the rows that arrived while it loaded. Reading of the seed:
//! - rows that arrive during the load (a message typed while a long journal loads) are kept, after
//!   the loaded rows (J6), not replaced by the loaded transcript;
//! - a resume writes nothing it does not have to: resuming the same journal twice leaves the same
//!   fold and the same file size (J5); the loaded rows are already in the file;
//! - when anything fails after the new recording is published, the previous recording is put back,
//!   so the session always has one (J4).

use super::error::JournalError;
use super::options::JournalOptions;
use super::reopen::close_for_writer;
use super::row::{Origin, Row};
use super::storage::SharedStorage;
use super::writer::Journal;
use crate::BugId;

/// A journal being recorded to, with the origin filter of a per-origin mirror (none for the
/// session's primary recording).
#[derive(Debug)]
pub struct Recorder {
    journal: Journal,
    filter: Option<Origin>,
}

impl Recorder {
    /// A recorder over `journal`, filtered by the origin its start record names.
    pub fn new(journal: Journal) -> Recorder {
        let filter = journal.fold().mirror_of().cloned();
        Recorder { journal, filter }
    }

    /// A recorder whose filter was decided elsewhere (planted legacy paths use this).
    pub(crate) fn with_filter(journal: Journal, filter: Option<Origin>) -> Recorder {
        Recorder { journal, filter }
    }

    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    pub fn journal_mut(&mut self) -> &mut Journal {
        &mut self.journal
    }

    /// Replaces the journal (a resumed copy of the same file), keeping the filter.
    pub(crate) fn set_journal(&mut self, journal: Journal) {
        self.journal = journal;
    }

    /// The origin this recorder keeps (`None`: every origin).
    pub fn filter(&self) -> Option<&Origin> {
        self.filter.as_ref()
    }

    /// Whether a row of this origin belongs in this recording.
    pub fn accepts(&self, origin: &Origin) -> bool {
        self.filter.as_ref().is_none_or(|f| f == origin)
    }

    /// The rows of `rows` that belong in this recording, in their order.
    pub fn accepted(&self, rows: Vec<Row>) -> Vec<Row> {
        rows.into_iter()
            .filter(|r| self.accepts(&r.origin))
            .collect()
    }
}

/// How far a resume's load has come, handed to the arrivals callback between load steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadProgress {
    pub records_loaded: u64,
    /// Whether this is the call after the last record.
    pub done: bool,
}

/// What a resume did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeReport {
    pub rows_loaded: usize,
    pub records_loaded: u64,
    /// The replacement that was left open and is now aborted.
    pub aborted_txn: Option<u64>,
    /// Rows that arrived during the load and were recorded after the loaded rows.
    pub arrivals_recorded: usize,
}

/// A session: its storage and its current recording.
#[derive(Debug)]
pub struct Session {
    storage: SharedStorage,
    opts: JournalOptions,
    recording: Option<Recorder>,
}

impl Session {
    /// A session with no recording yet.
    pub fn new(storage: SharedStorage, opts: JournalOptions) -> Session {
        Session {
            storage,
            opts,
            recording: None,
        }
    }

    /// Starts recording to a new journal `name`.
    pub fn start(&mut self, name: &str) -> Result<(), JournalError> {
        let j = Journal::create(self.storage.clone(), name, self.opts.clone(), None)?;
        // Post-condition: a new recording starts empty.
        debug_assert!(j.fold().in_context().is_empty());
        self.recording = Some(Recorder::new(j));
        Ok(())
    }

    /// The current recording.
    pub fn recording(&self) -> Option<&Recorder> {
        self.recording.as_ref()
    }

    pub fn recording_mut(&mut self) -> Option<&mut Recorder> {
        self.recording.as_mut()
    }

    /// Records rows in the current recording.
    pub fn record(&mut self, rows: Vec<Row>) -> Result<(), JournalError> {
        let Some(rec) = self.recording.as_mut() else {
            return Err(JournalError::Argument(
                "the session has no recording".into(),
            ));
        };
        rec.journal.append(Origin::Main, rows).map(|_| ())
    }

    /// Resumes journal `name` as this session's recording. `arrivals` is called after every
    /// `load_step_records` records and once at the end; the rows it returns arrived meanwhile.
    ///
    /// When it fails, the session keeps the recording it had (J4), and when that recording is
    /// the same file, folds it again: the failed writer may have changed the file before failing
    /// (closed a transaction, cut a torn tail, cut back a failed append), and a writer that kept
    /// its stale end refused every later write (issue 15). If even that read fails, the writer is
    /// poisoned with the reason, and the next resume clears it.
    pub fn resume(
        &mut self,
        name: &str,
        arrivals: &mut dyn FnMut(LoadProgress) -> Vec<Row>,
    ) -> Result<ResumeReport, JournalError> {
        let result = self.resume_unchecked(name, arrivals);
        if result.is_err() {
            if let Some(rec) = self.recording.as_mut() {
                if rec.journal.name() == name {
                    rec.journal.reload();
                }
            }
        }
        result
    }

    fn resume_unchecked(
        &mut self,
        name: &str,
        arrivals: &mut dyn FnMut(LoadProgress) -> Vec<Row>,
    ) -> Result<ResumeReport, JournalError> {
        let step = self.opts.load_step_records.max(1) as u64;
        let mut arrived: Vec<Row> = Vec::new();
        let mut loaded = 0u64;
        let mut j =
            Journal::open_observed(self.storage.clone(), name, self.opts.clone(), &mut |_| {
                loaded += 1;
                if loaded.checked_rem(step) == Some(0) {
                    arrived.extend(arrivals(LoadProgress {
                        records_loaded: loaded,
                        done: false,
                    }));
                }
                Ok(())
            })?;
        arrived.extend(arrivals(LoadProgress {
            records_loaded: loaded,
            done: true,
        }));
        let aborted_txn = close_for_writer(&mut j)?;
        let rows_loaded = j.fold().in_context().len();

        let previous = self.recording.replace(Recorder::new(j));
        match self.record_after_publish(arrived) {
            Ok(arrivals_recorded) => Ok(ResumeReport {
                rows_loaded,
                records_loaded: loaded,
                aborted_txn,
                arrivals_recorded,
            }),
            Err(e) => {
                if self.opts.planted.is(BugId::J4) {
                    // planted J4: a failure after publishing left the session with no recording.
                    self.recording = None;
                } else {
                    self.recording = previous;
                }
                Err(e)
            }
        }
    }

    /// The writes a resume makes once its recording is published.
    fn record_after_publish(&mut self, arrived: Vec<Row>) -> Result<usize, JournalError> {
        let planted = self.opts.planted;
        let rec = self.recording.as_mut().expect("published just before");
        if planted.is(BugId::J5) {
            // planted J5: every resume recorded the loaded rows again.
            let rows = rec.journal.rows();
            if !rows.is_empty() {
                rec.journal.append(Origin::Main, rows)?;
            }
        }
        if planted.is(BugId::J6) {
            // planted J6: the loaded transcript replaced the rows that arrived while it loaded.
            return Ok(0);
        }
        let n = arrived.len();
        if n > 0 {
            rec.journal.append(Origin::Main, arrived)?;
        }
        Ok(n)
    }
}
