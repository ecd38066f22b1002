//! The journal rules about crashes and the disk: what a journal reopens as after a crash (J1, J3,
//! J10), what its resume leaves (J1, J2, J10), and what every journal file on the disk holds (J10,
//! J16, J3).

use super::expect::{holds, short, with_arrivals, SessionCheck};
use super::op_rules::{classify_resume, open_txn_words};
use super::record::SoloRestart;
use super::step::Step;
use crate::journal::crash::classify_lines;
use crate::journal::crash::invariants::density_bounds_of;
use crate::outcome::Findings;
use history::journal::{dump_lines, DecodeError, DumpLine, RecordBody, Row};
use history::BugId;
use model::journal::ModelHistory;
use std::collections::BTreeMap;

/// J1, J2, J10: a journal reopened after a crash shows its last durable history, and its resume
/// leaves no transaction open and no torn tail.
pub fn restart(sc: &mut SessionCheck<'_>, at: &Step, r: &SoloRestart, found: &mut Findings) {
    let state = sc.latest_ref(&r.journal);
    reopened_as_durable(sc, at, r, state, found);
    if let Err(e) = &r.resumed {
        let id = if r.facts_before.open_txn.is_some() {
            BugId::J2
        } else {
            BugId::J10
        };
        found.add_at(
            id,
            at.answers(format!("error {e}"), format!("{} resumed", r.journal)),
            format!("{at}: resuming {} failed: {e}", r.journal),
        );
        return;
    }
    if let Some(offset) = r.facts_after.corrupt_at {
        found.add_at(
            BugId::J10,
            at.answers(
                format!("corrupt at byte offset {offset} after the resume"),
                "a torn tail cut before writing",
            ),
            format!("{at}: after the resume {} is corrupt at byte offset {offset}: a torn tail was not cut before writing", r.journal),
        );
    } else if r.writer_last_seq > r.facts_after.last_seq {
        found.add_at(
            BugId::J10,
            at.answers(
                format!("records up to {} read back", r.facts_after.last_seq),
                format!("records up to {}, as the writer wrote", r.writer_last_seq),
            ),
            format!(
                "{at}: the resumed writer wrote up to record {} but {} reads back only to record {} (a torn tail was not cut before writing)",
                r.writer_last_seq, r.journal, r.facts_after.last_seq
            ),
        );
    } else if let Some(txn) = r.facts_after.open_txn {
        // J21: the file held it behind the torn start of its abort (a crashed recovery's), and
        // this recovery left it open while its writer shows none.
        let id = if r.writer_open_txn.is_some() {
            BugId::J2
        } else if r.facts_before.torn_abort {
            BugId::J21
        } else {
            BugId::J1
        };
        found.add_at(
            id,
            at.answers(
                format!("transaction {txn} open after the resume"),
                "no transaction open",
            ),
            format!(
                "{at}: after the resume {} still has transaction {txn} open (the writer sees {})",
                r.journal,
                open_txn_words(r.writer_open_txn)
            ),
        );
    }
    // The resume's own invariants hold against what it loaded.
    let loaded = r.shown.clone().unwrap_or_else(|_| state.rows());
    classify_resume(at, &loaded, &r.arrivals, &r.rows_after, found);
    let next = with_arrivals(state, &r.arrivals);
    let journal = r.journal.clone();
    sc.push(&journal, next);
    sc.seen(&journal, &r.rows_after);
}

/// What the journal reopened as, against the last durable history (`state`).
fn reopened_as_durable(
    sc: &SessionCheck<'_>,
    at: &Step,
    r: &SoloRestart,
    state: &ModelHistory<Row>,
    found: &mut Findings,
) {
    let corrupt = r.facts_before.corrupt_at.is_some();
    // A difference the recording already had before the crash is not the crash's doing.
    let in_sync = sc.was_in_sync(&r.journal);
    match &r.shown {
        Ok(shown) if !holds(state, shown) => {
            let message = format!(
                "{at}: {} reopened as {}; the last durable history is {} (image: {})",
                r.journal,
                short(shown),
                short(&state.rows()),
                r.facts_before
            );
            let pointer = at.answers(
                format!("reopened as {}", short(shown)),
                short(&state.rows()),
            );
            let image = sc
                .crash_image
                .get(&r.journal)
                .map_or(&[][..], Vec::as_slice);
            if !in_sync {
                found.unexplained_at(BugId::J10, pointer, message);
            } else if let Some(stray) = interleaved_replacement(image, true) {
                // Rows written inside the replacement the crash left open show through it.
                found.add_at(BugId::J3, pointer, format!("{message}: {stray}"));
            } else if r.facts_before.open_txn.is_some() && !corrupt {
                found.add_at(BugId::J1, pointer, message);
            } else {
                found.add_at(BugId::J10, pointer, message);
            }
        }
        Ok(_) => {}
        Err(e) => {
            let synced = sc.crash_synced.get(&r.journal).copied().unwrap_or(0);
            let id = written_behind_a_hole(r.facts_before.corrupt_at, synced);
            found.add_at(
                id,
                at.answers(format!("error {e}"), short(&state.rows())),
                format!(
                    "{at}: {} does not reopen: {e} (image: {}, {synced} bytes synced)",
                    r.journal, r.facts_before
                ),
            )
        }
    }
}

/// J19 when bad bytes a complete record follows lie past what was synced at the crash (a record
/// landed while an earlier unsynced one did not), J10 otherwise.
fn written_behind_a_hole(corrupt_at: Option<u64>, synced: u64) -> BugId {
    match corrupt_at {
        Some(at) if at >= synced => BugId::J19,
        _ => BugId::J10,
    }
}

/// Checks of a disk image's journal files: no corruption before a tail (J10; J19 past what a
/// crash image had `synced`), bounded density records (J16), no record inside a replacement that
/// was then terminated (J3).
///
/// Whole-state rules: they judge the bytes every operation before left on the disk (at a crash,
/// or at the end), not an answer of one request, so their findings name the image instead.
pub fn check_image(
    s: usize,
    when: &str,
    image: &BTreeMap<String, Vec<u8>>,
    synced: Option<&BTreeMap<String, u64>>,
    found: &mut Findings,
) {
    for (name, bytes) in image.iter().filter(|(n, _)| n.ends_with(".journal")) {
        // Decoded once, read three ways.
        let lines = dump_lines(bytes);
        let facts = classify_lines(&lines);
        if let Some(offset) = facts.corrupt_at {
            let id = match synced {
                Some(synced) => {
                    written_behind_a_hole(Some(offset), synced.get(name).copied().unwrap_or(0))
                }
                None => BugId::J10,
            };
            found.add_whole_state(
                id,
                format!("the bytes of {name} {when}"),
                format!("session {s} {when}: {name} is corrupt at byte offset {offset} (a record before the tail does not decode)"),
            );
        }
        if let Err(v) = density_bounds_of(&lines) {
            found.add_whole_state(
                BugId::J16,
                format!("the bytes of {name} {when}"),
                format!("session {s} {when}: {name}: {}", v.message),
            );
        }
        if let Some(what) = interleaved_in(&lines, false) {
            found.add_whole_state(
                BugId::J3,
                format!("the bytes of {name} {when}"),
                format!("session {s} {when}: {name}: {what}"),
            );
        }
    }
}

/// The first record that stands between a `replace_begin` and its terminator without belonging
/// to the transaction. A transaction never terminated (one a crash or a defective resume left
/// open) counts only with `open_too` and only while it is the last one: a resume that forgot to
/// abort it is judged by the resume's invariant, not here.
pub fn interleaved_replacement(bytes: &[u8], open_too: bool) -> Option<String> {
    interleaved_in(&dump_lines(bytes), open_too)
}

/// `interleaved_replacement` over a journal image already dumped (`dump_lines`).
fn interleaved_in(lines: &[Result<DumpLine, DecodeError>], open_too: bool) -> Option<String> {
    let mut open: Option<(u64, Vec<String>)> = None;
    for line in lines.iter().flatten() {
        let DumpLine::Record { record, .. } = line else {
            continue;
        };
        let (kind, seq) = (record.body.kind(), record.seq);
        match (&record.body, &mut open) {
            (RecordBody::ReplaceBegin { txn }, _) => open = Some((*txn, Vec::new())),
            (RecordBody::ReplaceRows { txn, .. }, Some((t, _))) if txn == t => {}
            (
                RecordBody::ReplaceCommit { txn } | RecordBody::ReplaceAbort { txn },
                Some((t, strays)),
            ) if txn == t => {
                if let Some(first) = strays.first() {
                    return Some(format!(
                        "{first} landed inside replacement {t}, which then ended with a {kind}"
                    ));
                }
                open = None;
            }
            (_, Some((_, strays))) => strays.push(format!("a {kind} record (seq {seq})")),
            _ => {}
        }
    }
    match open {
        Some((t, strays)) if open_too => strays
            .first()
            .map(|first| format!("{first} landed inside replacement {t}, left open")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::journal::frame::encode_main_journal as frames;
    use history::journal::{Origin, RecordBody, Speaker};

    #[test]
    fn only_a_terminated_replacement_with_a_stray_record_is_interleaved() {
        let row = Row::text(Speaker::Human, Origin::Main, "x");
        let append = RecordBody::Append {
            rows: vec![row.clone()],
        };
        let interleaved = frames(vec![
            RecordBody::ReplaceBegin { txn: 1 },
            append.clone(),
            RecordBody::ReplaceCommit { txn: 1 },
        ]);
        assert!(interleaved_replacement(&interleaved, false).is_some());
        let left_open = frames(vec![RecordBody::ReplaceBegin { txn: 1 }, append.clone()]);
        assert!(interleaved_replacement(&left_open, false).is_none());
        assert!(interleaved_replacement(&left_open, true).is_some());
        let abandoned = frames(vec![
            RecordBody::ReplaceBegin { txn: 1 },
            append,
            RecordBody::ReplaceBegin { txn: 3 },
            RecordBody::ReplaceCommit { txn: 3 },
        ]);
        assert!(interleaved_replacement(&abandoned, true).is_none());
    }
}
