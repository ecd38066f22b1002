//! The rule about a restart that met a silent corruption (J10, J20).
//!
//! What the model accepts, from the crash's fault plan alone: the damaged record is
//! unrecoverable, and since a complete record follows it (the injector picks only such records)
//! it cannot be a torn tail. So a reopen must fail with an error naming that record's offset and
//! leave the file as it was, and the resume must fail too: the recording is lost to the session
//! from there (an accepted loss under J10, whose invariant is that the loss is reported). Any
//! history shown instead is a violation: one holding a row no model state has is the damaged
//! record read as another one (J20), one without is the record silently dropped (J10).

use super::expect::{short, SessionCheck};
use super::record::CorruptedRestart;
use super::step::Step;
use crate::outcome::Findings;
use history::BugId;

/// Checks what the restart after crash `op` made of the corrupted recording.
pub fn corrupted_restart(
    sc: &SessionCheck<'_>,
    step: &Step,
    op: usize,
    r: &CorruptedRestart,
    found: &mut Findings,
) {
    let inj = &r.injected;
    let at = landed(sc.s, op, inj);
    let step = step.clone().saying(at.clone());
    let reported = format!(
        "an error naming the record at byte offset {}",
        inj.frame_start
    );
    match &r.shown {
        Err((_, Some(offset))) if *offset == inj.frame_start => {}
        Err((e, _)) => found.add_at(
            BugId::J10,
            step.answers(format!("error {e}"), reported),
            format!(
                "{at}: reopening failed with `{e}`, which does not name the damaged record at {}",
                inj.frame_start
            ),
        ),
        Ok(rows) => {
            let known = sc.latest_ref(&inj.file).rows();
            let id = if rows.iter().any(|row| !known.contains(row)) {
                BugId::J20
            } else {
                BugId::J10
            };
            found.add_at(
                id,
                step.answers(format!("reopened as {}", short(rows)), reported),
                format!(
                    "{at}: reopening showed {} rows ({}) instead of reporting the record; the last durable history is {}",
                    rows.len(),
                    short(rows),
                    short(&known)
                ),
            );
        }
    }
    if r.shown.is_err() && r.resumed.is_ok() {
        found.add_at(
            BugId::J10,
            step.answers(
                "resumed",
                "an error: the recording is lost from the damaged record",
            ),
            format!("{at}: the reopen reported it, but resuming the recording succeeded"),
        );
    }
    if r.shown.is_err() && r.bytes_before != r.bytes_after {
        found.add_at(
            BugId::J10,
            step.answers(
                format!("{} bytes after the reopen and resume", r.bytes_after.len()),
                format!("{} bytes, the file as it was", r.bytes_before.len()),
            ),
            format!(
                "{at}: the failed reopen and resume changed the file ({} bytes, then {})",
                r.bytes_before.len(),
                r.bytes_after.len()
            ),
        );
    }
}

/// Where the corruption landed, as every finding about it opens.
fn landed(s: usize, op: usize, inj: &crate::disk::corrupt::Injected) -> String {
    format!(
        "session {s} after the crash at op {op}: a {} at byte {} of {} ({} record at {}..{}{})",
        inj.corruption.kind(),
        inj.byte,
        inj.file,
        inj.record_kind,
        inj.frame_start,
        inj.frame_end,
        if inj.parsable {
            ", the payload still parses"
        } else {
            ""
        }
    )
}
