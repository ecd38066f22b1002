//! Checking one recorded crash state: the promises of returned syncs (J22), then the state
//! written to a real directory and run through the crash checks every state gets.

use std::sync::Arc;

use history::journal::{FsStorage, JournalOptions, Row, SharedStorage};
use history::BugId;
use model::journal::CrashModel;

use super::log::FsOp;
use super::states::Tracker;
use super::RecordedReport;
use crate::disk::states::Image;
use crate::journal::crash::check::{check_on, classify_image, Window, JOURNAL};
use crate::journal::crash::explore::record;
use crate::journal::crash::{CrashFailure, CrashOptions};

/// The recorded run every state of it is checked against.
pub(super) struct Run<'a> {
    pub log: &'a [FsOp],
    pub model: &'a CrashModel<Row>,
    pub jopts: &'a JournalOptions,
    pub opts: &'a CrashOptions,
}

impl Run<'_> {
    /// Checks the states a power cut may leave once entries `..at` of the log happened.
    pub fn check_point(
        &self,
        report: &mut RecordedReport,
        tracker: &Tracker,
        window: Window,
        op_index: Option<usize>,
        at: usize,
    ) {
        let space = tracker.space();
        let chosen = space.chosen(self.opts.cap_per_point);
        report.crash.points += 1;
        report.crash.space = report.crash.space.saturating_add(space.count());
        if (chosen.len() as u128) < space.count() {
            report.capped_points += 1;
        }
        for n in chosen {
            report.crash.states_checked += 1;
            let image = space.image(n);
            if let Err((bug_id, description)) = self.check_state(tracker, image, window) {
                let calls = self.log[..at].iter().filter(|op| op.is_call()).count();
                let last = self.log[..at].iter().rev().find(|op| op.is_call());
                let failure = CrashFailure {
                    bug_id,
                    write_index: calls,
                    cut_at: None,
                    lose_unsynced: false,
                    op_index,
                    depth: 1,
                    description: format!(
                        "after call {calls} ({}), state {n}: {description}",
                        last.map_or("none", FsOp::kind)
                    ),
                };
                record(&mut report.crash, self.opts, failure);
            }
        }
    }

    fn check_state(
        &self,
        tracker: &Tracker,
        image: Image,
        window: Window,
    ) -> Result<(), (BugId, String)> {
        kept_promises(tracker, &image)?;
        let dir = tempfile::Builder::new()
            .prefix("histsim-crash-state-")
            .tempdir()
            .map_err(|e| (BugId::J22, format!("no temporary directory: {e}")))?;
        materialize(dir.path(), &image)
            .map_err(|e| (BugId::J22, format!("writing the state failed: {e}")))?;
        let storage = FsStorage::new(dir.path())
            .map_err(|e| (BugId::J22, format!("no storage on the state: {e}")))?;
        let storage: SharedStorage = Arc::new(storage);
        let facts = classify_image(image.get(JOURNAL).map_or(&[][..], Vec::as_slice));
        let exists = image.contains_key(JOURNAL);
        let synced = tracker.stable_len(JOURNAL);
        check_on(
            &storage, exists, &facts, window, synced, self.model, self.jopts,
        )
    }
}

/// J22: every byte a returned `Storage::sync` promised is in the state, under its name.
fn kept_promises(tracker: &Tracker, image: &Image) -> Result<(), (BugId, String)> {
    for (name, promised) in tracker.promised() {
        let shown = match image.get(name) {
            None => "the file is gone".to_string(),
            Some(bytes) if bytes.starts_with(promised) => continue,
            Some(bytes) => format!("the file holds {} bytes", bytes.len()),
        };
        return Err((
            BugId::J22,
            format!(
                "`{name}`: a returned sync promised its {} bytes, but a power cut may leave a \
                 state where {shown}",
                promised.len()
            ),
        ));
    }
    Ok(())
}

/// Writes `image` into `dir`, one file a name (directories made as needed).
fn materialize(dir: &std::path::Path, image: &Image) -> std::io::Result<()> {
    for (name, bytes) in image {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(())
}
