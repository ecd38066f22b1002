//! The journal's production storage under crash states, ALICE's way (Pillai et al., OSDI 2014).
//!
//! The crash workload ([`super::workload`]) runs once on [`FsStorage`] over a real temporary
//! directory, then a torn write's recovery and a clone made and removed; every file-system call the storage makes is heard beside the call and logged in
//! order ([`log`]), with the moments its `sync` returned. Then, after each call, every state a
//! POSIX file system may leave at a power cut ([`states`]: unsynced data lost or torn at
//! sectors, directory entries unsynced since their directory's last `fsync` there or not) is
//! written to a fresh real directory and checked ([`check`]): the storage kept what its returned
//! syncs promised (J22), then the same checks as every simulated-disk state (reopen within the
//! model, resume, clone and fork leave no replacement open, write again, reopen).
//!
//! The simulated disk implements the durability contract itself; this explorer judges what the
//! production storage actually asks of the file system, so a sync it forgets shows.

mod check;
pub(crate) mod log;
pub(crate) mod states;

use std::collections::BTreeMap;
use std::sync::Arc;

use history::journal::{clone_journal, resume_journal, FsStorage, JournalOptions, SharedStorage};

use super::check::JOURNAL;
use super::explore::{run_one, run_ops, window_of, workload_failed, Span};
use super::{CrashOptions, CrashReport};
use crate::disk::CrashPoint;
use log::{FsOp, Recorded, Recorder};
use states::Tracker;

/// What the recorded exploration found.
#[derive(Clone, Debug, Default)]
pub struct RecordedReport {
    /// Mutations, points, states checked and failed, failures (as the simulated-disk explorer's).
    pub crash: CrashReport,
    /// File-system calls logged, by kind (`write`, `fdatasync`, `fsync(dir)` ...).
    pub calls: BTreeMap<&'static str, u64>,
    /// Points whose space was over the cap, so thinned.
    pub capped_points: u64,
}

impl RecordedReport {
    /// One line for the command line.
    pub fn summary(&self) -> String {
        let c = &self.crash;
        let calls: Vec<String> = self.calls.iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!(
            "recorded: {} mutations, {} file-system calls ({}), {} crash points, {} states a \
             POSIX file system may leave, {} checked ({} points capped), {} failed{}",
            c.mutations,
            c.disk_events,
            calls.join(", "),
            c.points,
            c.space,
            c.states_checked,
            self.capped_points,
            c.states_failed,
            c.failed_by_id_words()
        )
    }
}

/// Runs the crash workload (`opts.ops` mutations) on a recorded [`FsStorage`] in a temporary
/// directory, then checks at most `opts.cap_per_point` states after each of its calls.
pub fn explore_recorded(opts: &CrashOptions) -> RecordedReport {
    let mut report = RecordedReport::default();
    let jopts = JournalOptions::planted(opts.planted);
    let (log, spans, model) = match run_recorded(opts, &jopts) {
        Ok(run) => run,
        Err((bug_id, description)) => {
            let crash = std::mem::take(&mut report.crash);
            report.crash = workload_failed(crash, opts, bug_id, description);
            return report;
        }
    };
    report.crash.mutations = spans.len();
    for op in log.iter().filter(|op| op.is_call()) {
        *report.calls.entry(op.kind()).or_insert(0) += 1;
    }
    report.crash.disk_events = log.iter().filter(|op| op.is_call()).count();
    let run = check::Run {
        log: &log,
        model: &model,
        jopts: &jopts,
        opts,
    };
    let mut tracker = Tracker::default();
    let mut at = 0;
    // A point is the instant before the next call: every entry up to it (returned syncs
    // included) happened.
    loop {
        while at < log.len() && !log[at].is_call() {
            tracker.apply(&log[at]);
            at += 1;
        }
        let point = CrashPoint {
            event: at,
            cut_bytes: None,
            lose_unsynced: false,
        };
        let (window, op_index) = window_of(&spans, point);
        run.check_point(&mut report, &tracker, window, op_index, at);
        if at == log.len() {
            break;
        }
        tracker.apply(&log[at]);
        at += 1;
    }
    report
}

type RecordedRun = (
    Vec<FsOp>,
    Vec<Span>,
    model::journal::CrashModel<history::journal::Row>,
);

/// The workload on a recorded [`FsStorage`] (with the planted bug) in a fresh temporary directory.
fn run_recorded(
    opts: &CrashOptions,
    jopts: &JournalOptions,
) -> Result<RecordedRun, (history::BugId, String)> {
    let dir = tempfile::Builder::new()
        .prefix("histsim-recorded-")
        .tempdir()
        .map_err(|e| (history::BugId::J22, format!("no temporary directory: {e}")))?;
    let recorder = Arc::new(Recorder::default());
    let fs = FsStorage::new(dir.path())
        .map_err(|e| (history::BugId::J22, format!("no storage: {e}")))?
        .with_planted(opts.planted);
    let storage: SharedStorage = Arc::new(Recorded::new(fs, recorder.clone()));
    let position = || recorder.len();
    let (mut model, mut spans) = run_ops(storage.clone(), opts.ops, 0, jopts, &position)?;
    let span = after_mutations(&storage, jopts, opts.ops, &mut model, &position)?;
    spans.push(span);
    Ok((recorder.entries(), spans, model))
}

/// A copy of the recording a recorded run makes and removes.
const COPY: &str = "copy.journal";

/// After the mutations, the other calls a journal makes: the start of a record a killed writer
/// left torn, the resume and one more mutation (which cuts the tail first: ftruncate), a clone
/// of the recording (a new file) and its removal (unlink). Returns the mutation's span.
fn after_mutations(
    storage: &SharedStorage,
    jopts: &JournalOptions,
    i: usize,
    model: &mut model::journal::CrashModel<history::journal::Row>,
    position: &dyn Fn() -> usize,
) -> Result<Span, (history::BugId, String)> {
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        (
            history::BugId::J10,
            format!("{what} after the mutations failed: {e}"),
        )
    };
    let torn = [0x40, 0, 0, 0, 0x5a, 0x5a, 0x5a];
    storage
        .append(JOURNAL, &torn)
        .map_err(|e| failed("the torn write", &e))?;
    let mut resumed = resume_journal(storage.clone(), JOURNAL, jopts.clone())
        .map_err(|e| failed("the resume", &e))?;
    let span = run_one(&mut resumed, i, i, model, position)?;
    drop(resumed);
    let copy = clone_journal(storage.clone(), JOURNAL, COPY, jopts.clone())
        .map_err(|e| failed("the clone", &e))?;
    drop(copy);
    storage
        .remove(COPY)
        .map_err(|e| failed("removing the clone", &e))?;
    Ok(span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::{BugId, Planted};

    fn recorded(planted: Planted) -> RecordedReport {
        explore_recorded(&CrashOptions {
            planted,
            ..CrashOptions::default()
        })
    }

    #[test]
    fn the_production_storage_survives_every_recorded_crash_state() {
        let report = recorded(Planted::none());
        let c = &report.crash;
        assert!(c.mutations >= 6, "{}", report.summary());
        assert!(c.states_checked > 40, "{}", report.summary());
        assert!(
            report.calls.contains_key("fsync(dir)"),
            "{}",
            report.summary()
        );
        assert_eq!(c.states_failed, 0, "{:#?}", c.failures);
    }

    #[test]
    fn a_dropped_directory_sync_is_found_as_j22() {
        let report = recorded(Planted::only(BugId::J22));
        let c = &report.crash;
        assert!(c.names(BugId::J22), "{}", report.summary());
        assert!(
            c.failures.iter().all(|f| f.bug_id == BugId::J22),
            "{:#?}",
            c.failures
        );
        assert_eq!(report.calls.get("fsync(dir)"), None, "{}", report.summary());
    }
}
