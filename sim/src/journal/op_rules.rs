//! The journal rules about one operation of a session's own recording: J10 to J13, J15, J17, J18
//! and the resume invariants J4 to J6.

use super::expect::{apply_all, holds, short, solo_model_ops, with_arrivals, OpSeen, SessionCheck};
use super::mutation_outcome::{judge_unwritten, model_after_write};
use super::record::{
    CopySeen, DisposeSeen, Outcome, ReadSeen, ResumeAgainSeen, SendSeen, SharedSeen, SoloSeen,
    SwitchSeen,
};
use super::scenario::Action;
use super::step::Step;
use crate::outcome::Findings;
use history::journal::{Row, Statistics, Tokenizer};
use history::BugId;

/// J12: a mutation reads nothing back from its journal.
pub fn mutations_read_nothing_back(
    _: &mut SessionCheck<'_>,
    o: &OpSeen<'_, SoloSeen>,
    found: &mut Findings,
) {
    read_nothing_back(o.at, o.seen.bytes_read, "mutation", "the journal", found);
}

/// J12: a shared mutation reads nothing back from its journals.
pub fn shared_mutations_read_nothing_back(
    _: &mut SessionCheck<'_>,
    o: &OpSeen<'_, SharedSeen>,
    found: &mut Findings,
) {
    let bytes_read = o.seen.bytes_read;
    read_nothing_back(o.at, bytes_read, "shared mutation", "its journals", found);
}

/// J12: the `what` (`at`) read `bytes_read` bytes back from `from`, where it must read none.
fn read_nothing_back(at: &Step, bytes_read: u64, what: &str, from: &str, found: &mut Findings) {
    if bytes_read > 0 {
        found.add_at(
            BugId::J12,
            at.answers(format!("{bytes_read} bytes read back"), "no byte read back"),
            format!("{at}: the {what} read {bytes_read} bytes back from {from}"),
        );
    }
}

/// J15: a rewind, a clear or a compression is one record.
pub fn single_record_mutations(
    _: &mut SessionCheck<'_>,
    o: &OpSeen<'_, SoloSeen>,
    found: &mut Findings,
) {
    let Outcome::Written { records } = &o.seen.outcome else {
        return;
    };
    let single = matches!(
        o.op.action,
        Action::Rewind { .. } | Action::Clear | Action::Compress { .. }
    );
    if single && *records != 1 {
        found.add_at(
            BugId::J15,
            o.at.answers(format!("{records} records written"), "1 record written"),
            format!(
                "{}: a {} wrote {records} records; it must be one",
                o.at,
                o.op.action.kind()
            ),
        );
    }
}

/// J10: a mutation of the recording succeeds unless a fault was injected, changes the history as
/// the model says, and leaves the recording equal to the model.
pub fn recording_follows_the_model(
    sc: &mut SessionCheck<'_>,
    o: &OpSeen<'_, SoloSeen>,
    found: &mut Findings,
) {
    let SoloSeen {
        journal,
        outcome,
        rows: shown,
        ..
    } = o.seen;
    let (at, k, op) = (o.at, o.k, o.op);
    let state = sc.latest_ref(journal);
    let ops = solo_model_ops(k, &op.action, state);
    if let Outcome::Written { .. } = outcome {
        if op.fail {
            found.unexplained_at(
                BugId::J10,
                at.answers("written", "an error: every append failed"),
                format!("{at}: the journal reported success although every append failed"),
            );
        }
        let applied = ops.as_ref().map(|ops| apply_all(state, ops));
        let next = model_after_write(BugId::J10, at, applied, found);
        let next = next.unwrap_or_else(|| state.clone());
        sc.push(journal, next);
    } else {
        judge_unwritten(BugId::J10, at, outcome, ops.is_some(), op.fail, found);
    }
    recording_as_the_model(sc, at, journal, shown, found);
}

/// J10: after an operation (`at`), the recording `journal` holds what the model says.
fn recording_as_the_model(
    sc: &mut SessionCheck<'_>,
    at: &Step,
    journal: &str,
    shown: &[Row],
    found: &mut Findings,
) {
    if !sc.seen(journal, shown) {
        let want = sc.latest_ref(journal).rows();
        found.unexplained_at(
            BugId::J10,
            at.answers(short(shown), short(&want)),
            format!(
                "{at}: the recording holds {}; the model {}",
                short(shown),
                short(&want)
            ),
        );
    }
}

/// J11: an incremental read touches only the bytes appended since the previous one and counts
/// what the writer counts.
pub fn incremental_reads_touch_only_what_was_appended(
    sc: &mut SessionCheck<'_>,
    o: &OpSeen<'_, ReadSeen>,
    found: &mut Findings,
) {
    let (at, r) = (o.at, o.seen);
    let (bytes_read, appended) = (r.bytes_read, r.appended);
    if bytes_read > appended {
        found.add_at(
            BugId::J11,
            at.answers(
                format!("{bytes_read} bytes read"),
                format!("{appended} bytes read, as many as were appended"),
            ),
            format!("{at}: an incremental read touched {bytes_read} bytes; {appended} were appended since the previous read"),
        );
    }
    match (&r.result, &r.writer) {
        (Ok(read), Some(w)) if read != w => found.add_at(
            BugId::J11,
            at.answers(
                statistics(read),
                format!("{}, as the writer counts", statistics(w)),
            ),
            format!(
                "{at}: incremental statistics {} differ from the writer's {}",
                statistics(read),
                statistics(w)
            ),
        ),
        (Ok(read), _) => {
            let want = sc.latest_ref(&sc.current).in_context.len() as u64;
            if read.rows != want {
                found.unexplained_at(
                    BugId::J11,
                    at.answers(format!("{} rows", read.rows), format!("{want} rows")),
                    format!(
                        "{at}: the reader counts {} rows, the model {want}",
                        read.rows
                    ),
                );
            }
        }
        (Err(e), _) => found.unexplained_at(
            BugId::J11,
            at.answers(format!("error {e}"), "the reader's statistics"),
            format!("{at}: the read failed: {e}"),
        ),
    }
}

/// J17: counters fed concurrently count what each text alone counts.
pub fn token_counters_are_independent(
    _: &mut SessionCheck<'_>,
    o: &OpSeen<'_, [u64]>,
    found: &mut Findings,
) {
    let (at, counts) = (o.at, o.seen);
    if let Action::Estimate { texts, .. } = &o.op.action {
        let t = Tokenizer::o200k();
        let alone: Vec<u64> = texts.iter().map(|p| t.count(&p.concat())).collect();
        if counts != alone {
            found.add_at(
                BugId::J17,
                at.answers(
                    format!("{} tokens", numbers(counts)),
                    format!("{} tokens", numbers(&alone)),
                ),
                format!(
                    "{at}: counters fed concurrently counted {} tokens; each text alone has {}",
                    numbers(counts),
                    numbers(&alone)
                ),
            );
        }
    }
}

/// J13: deciding the truncations of a request visits each row at most once.
pub fn truncation_visits_each_row_once(
    _: &mut SessionCheck<'_>,
    o: &OpSeen<'_, SendSeen>,
    found: &mut Findings,
) {
    let (at, r) = (o.at, o.seen);
    let (rows, rows_visited, replacements) = (r.rows, r.rows_visited, r.replacements);
    if rows_visited > rows as u64 {
        found.add_at(
            BugId::J13,
            at.answers(
                format!("{rows_visited} rows visited"),
                format!("at most {rows} rows visited, each once"),
            ),
            format!(
                "{at}: deciding {replacements} truncations visited {rows_visited} rows of {rows}"
            ),
        );
    }
    if let Err(e) = &r.staged {
        found.unexplained_at(
            BugId::J18,
            at.answers(format!("error {e}"), "the request staged in scratch"),
            format!("{at}: staging the request in scratch failed: {e}"),
        );
    }
}

/// J2 (J1): a copy starts with no transaction open and holds the source's history at the copy
/// point.
pub fn copies_start_outside_transactions(
    sc: &mut SessionCheck<'_>,
    o: &OpSeen<'_, CopySeen>,
    found: &mut Findings,
) {
    let CopySeen {
        source,
        journal,
        checkpoint,
        result,
        open_txn,
        facts,
        rows: shown,
    } = o.seen;
    let at = o.at;
    let state = sc
        .journals
        .get(source)
        .and_then(|v| v.get(*checkpoint))
        .cloned();
    if let Err(e) = result {
        found.unexplained_at(
            BugId::J2,
            at.answers(format!("error {e}"), format!("a copy of {source}")),
            format!("{at}: copying {source} failed: {e}"),
        );
        return;
    }
    if let Some(txn) = facts.open_txn {
        let id = if open_txn.is_some() {
            BugId::J2
        } else {
            BugId::J1
        };
        found.add_at(
            id,
            at.answers(
                format!("{journal} starts with transaction {txn} open"),
                format!("{journal} starts with no transaction open"),
            ),
            format!(
                "{at}: the copy {journal} starts with transaction {txn} open (its writer sees {})",
                open_txn_words(*open_txn)
            ),
        );
    }
    let state = state.unwrap_or_default();
    sc.in_sync.insert(journal.clone(), *shown == state.rows());
    if *shown != state.rows() {
        found.unexplained_at(
            BugId::J2,
            at.answers(short(shown), short(&state.rows())),
            format!("{at}: the copy {journal} holds {}; the model at change {checkpoint} of {source} holds {}", short(shown), short(&state.rows())),
        );
    }
    sc.journals.insert(journal.clone(), vec![state]);
}

/// J4 (J6, J5): a failed switch leaves the previous recording; a resumed journal holds its
/// history and what arrived while it loaded.
pub fn switching_keeps_the_recording(
    sc: &mut SessionCheck<'_>,
    o: &OpSeen<'_, SwitchSeen>,
    found: &mut Findings,
) {
    let SwitchSeen {
        previous,
        to,
        loaded,
        result,
        recording,
        rows: shown,
        arrivals,
    } = o.seen;
    let at = o.at;
    if !switch_went_through(
        at,
        o.op.fail,
        (previous, to),
        result,
        recording.as_deref(),
        found,
    ) {
        return;
    }
    let state = sc.latest_ref(to);
    let base = match loaded {
        Ok(rows) => rows.clone(),
        Err(e) => {
            found.unexplained_at(
                BugId::J6,
                at.answers(format!("error {e}"), short(&state.rows())),
                format!("{at}: {to} does not open: {e}"),
            );
            state.rows()
        }
    };
    if !holds(state, &base) && sc.was_in_sync(to) {
        found.unexplained_at(
            BugId::J6,
            at.answers(short(&base), short(&state.rows())),
            format!(
                "{at}: {to} opened as {}; the model {}",
                short(&base),
                short(&state.rows())
            ),
        );
    }
    classify_resume(at, &base, arrivals, shown, found);
    let next = with_arrivals(state, arrivals);
    sc.push(to, next);
    sc.seen(to, shown);
    sc.current = to.clone();
}

/// J4 (J6): how a switch (`at`) to `to` from `previous` ended: a switch with every append
/// failing (`fail`) fails and keeps the previous recording, any other resumes. `true` when it
/// resumed, so that what it resumed is judged next.
fn switch_went_through(
    at: &Step,
    fail: bool,
    (previous, to): (&String, &String),
    result: &Result<(), String>,
    recording: Option<&str>,
    found: &mut Findings,
) -> bool {
    match result {
        Err(_) if fail => {
            if recording != Some(previous.as_str()) {
                found.add_at(
                    BugId::J4,
                    at.answers(
                        format!("recording {}", recording.unwrap_or("none")),
                        format!("recording {previous}, as before the failed switch"),
                    ),
                    format!(
                        "{at}: resuming {to} failed after publishing and the session's recording is {}, not the previous {previous}",
                        recording.unwrap_or("none")
                    ),
                );
            }
            return false;
        }
        Err(e) => {
            found.unexplained_at(
                BugId::J6,
                at.answers(format!("error {e}"), format!("{to} resumed")),
                format!("{at}: resuming {to} failed: {e}"),
            );
            return false;
        }
        Ok(()) if fail => found.unexplained_at(
            BugId::J4,
            at.answers("resumed", "an error: every append to it failed"),
            format!("{at}: the switch to {to} succeeded although every append to it failed"),
        ),
        Ok(()) => {}
    }
    true
}

/// J5: resuming the recording again changes nothing.
pub fn resuming_again_changes_nothing(
    sc: &mut SessionCheck<'_>,
    o: &OpSeen<'_, ResumeAgainSeen>,
    found: &mut Findings,
) {
    let ResumeAgainSeen {
        result,
        bytes_before,
        bytes_after,
        rows_before,
        rows_after,
    } = o.seen;
    let at = o.at;
    if let Err(e) = result {
        found.unexplained_at(
            BugId::J5,
            at.answers(format!("error {e}"), "resumed, unchanged"),
            format!("{at}: resuming again failed: {e}"),
        );
        return;
    }
    let changed_rows = rows_before.as_ref().is_some_and(|b| b != rows_after);
    if bytes_before != bytes_after || changed_rows {
        let before = rows_before
            .as_ref()
            .map_or_else(|| "no recording".to_string(), |r| short(r));
        found.add_at(
            BugId::J5,
            at.answers(
                format!("{}, {bytes_after} bytes", short(rows_after)),
                format!("{before}, {bytes_before} bytes, unchanged"),
            ),
            format!("{at}: resuming the recording again changed it: {before} to {}, {bytes_before} to {bytes_after} bytes", short(rows_after)),
        );
    }
    let state = sc.latest_ref(&sc.current).clone();
    let current = sc.current.clone();
    sc.push(&current, state);
    sc.seen(&current, rows_after);
}

/// J18: disposal reports an injected failure and leaves no scratch behind.
pub fn disposal_reports_its_failures(
    _: &mut SessionCheck<'_>,
    o: &OpSeen<'_, DisposeSeen>,
    found: &mut Findings,
) {
    let DisposeSeen {
        fault_injected,
        result,
        scratch_left,
    } = o.seen;
    let at = o.at;
    match result {
        Ok(()) if *fault_injected => found.add_at(
            BugId::J18,
            at.answers("success", "the injected failure reported"),
            format!("{at}: disposal met an injected failure and reported success"),
        ),
        Ok(()) if !scratch_left.is_empty() => found.add_at(
            BugId::J18,
            at.answers(
                format!("success, scratch left: {}", scratch_left.join(", ")),
                "no scratch left",
            ),
            format!(
                "{at}: disposal returned with scratch left: {}",
                scratch_left.join(", ")
            ),
        ),
        Err(e) if !fault_injected => found.unexplained_at(
            BugId::J18,
            at.answers(format!("error {e}"), "success: no fault was injected"),
            format!("{at}: disposal failed with no fault injected: {e}"),
        ),
        _ => {}
    };
}

/// A resumed recording must hold what it held, then what arrived while it loaded: nothing
/// recorded twice (J5), nothing that arrived lost (J6).
pub fn classify_resume(
    at: &Step,
    before: &[Row],
    arrivals: &[Row],
    shown: &[Row],
    found: &mut Findings,
) {
    let mut expected = before.to_vec();
    expected.extend_from_slice(arrivals);
    if shown == expected {
        return;
    }
    let doubled = !before.is_empty()
        && shown.len() >= 2 * before.len()
        && shown[..before.len()] == *before
        && shown[before.len()..2 * before.len()] == *before;
    let pointer = at.answers(short(shown), short(&expected));
    if doubled {
        found.add_at(
            BugId::J5,
            pointer,
            format!(
                "{at}: the resumed recording holds its {} loaded rows twice ({})",
                before.len(),
                short(shown)
            ),
        );
    } else if !arrivals.is_empty() && (shown == before || !shown.ends_with(arrivals)) {
        found.add_at(
            BugId::J6,
            pointer,
            format!(
                "{at}: {} rows arrived while {} loaded; the resumed recording holds {}",
                arrivals.len(),
                before.len(),
                short(shown)
            ),
        );
    } else {
        found.unexplained_at(
            BugId::J6,
            pointer,
            format!(
                "{at}: the resumed recording holds {}; expected {}",
                short(shown),
                short(&expected)
            ),
        );
    }
}

/// A writer's open transaction in words: `transaction 3 open`, or `no transaction open`.
pub fn open_txn_words(txn: Option<u64>) -> String {
    txn.map_or_else(
        || "no transaction open".to_string(),
        |t| format!("transaction {t} open"),
    )
}

/// A read's statistics: `2 rows, 28 bytes, 10 tokens`.
fn statistics(s: &Statistics) -> String {
    format!("{} rows, {} bytes, {} tokens", s.rows, s.bytes, s.tokens)
}

/// Counts as a comma list.
fn numbers(counts: &[u64]) -> String {
    let words: Vec<String> = counts.iter().map(u64::to_string).collect();
    words.join(", ")
}

#[cfg(test)]
mod tests {
    use super::super::check::ATTRIBUTION;
    use super::*;
    use history::journal::{Origin, Speaker};

    #[test]
    fn resumes_that_record_twice_or_lose_arrivals_are_told_apart() {
        let r = |t: &str| Row::text(Speaker::Human, Origin::Main, t);
        let before = vec![r("a"), r("b")];
        let arrivals = vec![r("typed")];
        let mut f = Findings::new(&ATTRIBUTION);
        let x = Step::op(0, 1, "switch", 10);
        classify_resume(
            &x,
            &before,
            &arrivals,
            &[r("a"), r("b"), r("typed")],
            &mut f,
        );
        assert!(f.is_empty());
        classify_resume(
            &x,
            &before,
            &arrivals,
            &[r("a"), r("b"), r("a"), r("b"), r("typed")],
            &mut f,
        );
        classify_resume(&x, &before, &arrivals, &before, &mut f);
        let ids: Vec<BugId> = f.into_violations().into_iter().map(|v| v.id).collect();
        assert_eq!(ids, [BugId::J5, BugId::J6]);
    }
}
