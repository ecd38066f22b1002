//! The invariant checkers of the journal workload: J1 to J13 and J15 to J18.
//!
//! Checkers only check. They rebuild, from the scenario alone and from the faults the world
//! injected, what every journal must hold (`model::journal::ModelHistory`, one per journal
//! file, one for the shared history), and compare it with what the operations returned, what
//! reopened journals showed and what the disk images hold. Where the model needs to know
//! whether an operation took effect, it asks the scenario: an operation with an injected fault
//! must fail and change nothing, any other must succeed; a replacement a crash interrupted never
//! happened.
//!
//! Violations come out in a fixed priority order ([`PRIORITY`]), most specific first, so a world
//! with one defect reports that defect's ID first even when its effects also break broader
//! invariants (a resume that forgot to abort a replacement also leaves the next append inside
//! it: that is J2 before J3). Differences no specific invariant explains come last.

use super::meaning::{
    compression, density_positions, insert_after, origin_name, rewind_rows, rewrite_row, row, rows,
    transformed, SESSION_JOURNAL,
};
use super::record::{
    Happened, MirrorSeen, Outcome, Seen, SessionRecord, SharedRestart, SoloRestart,
};
use super::scenario::{Action, JournalScenario, Op, SessionScript, SharedAction};
use super::world::WorldRecord;
use crate::crash::classify_image;
use crate::crash::invariants::{check_density_bounds, check_origins, check_swept};
use crate::outcome::Violation;
use history::journal::{dump_records, Origin, Row, Tokenizer};
use history::BugId;
use model::journal::{ModelHistory, ModelOp};
use std::collections::{BTreeMap, BTreeSet};

/// The order violations are reported in: the invariant most specific to a defect first.
pub const PRIORITY: [BugId; 17] = [
    BugId::J17,
    BugId::J13,
    BugId::J12,
    BugId::J10,
    BugId::J1,
    BugId::J2,
    BugId::J11,
    BugId::J16,
    BugId::J15,
    BugId::J3,
    BugId::J5,
    BugId::J6,
    BugId::J4,
    BugId::J8,
    BugId::J9,
    BugId::J7,
    BugId::J18,
];

/// Violations found so far, each with its rank.
#[derive(Default)]
struct Found {
    items: Vec<(usize, Violation)>,
}

impl Found {
    /// A violation of `id`'s own invariant.
    fn add(&mut self, id: BugId, message: String) {
        let rank = PRIORITY
            .iter()
            .position(|p| *p == id)
            .unwrap_or(PRIORITY.len());
        self.items.push((rank, Violation::safety(id, message)));
    }

    /// A difference no specific invariant explains, reported after every specific one under the
    /// ID whose area it is in.
    fn unexplained(&mut self, id: BugId, message: String) {
        self.items
            .push((PRIORITY.len(), Violation::safety(id, message)));
    }

    fn into_sorted(mut self) -> Vec<Violation> {
        self.items.sort_by_key(|(rank, _)| *rank);
        self.items.into_iter().map(|(_, v)| v).collect()
    }
}

/// Checks every session of a played scenario.
pub fn check(scenario: &JournalScenario, record: &WorldRecord) -> Vec<Violation> {
    let mut found = Found::default();
    for (s, (script, session)) in scenario.sessions.iter().zip(&record.sessions).enumerate() {
        SessionCheck::new(s, script).run(session, &mut found);
    }
    found.into_sorted()
}

/// The shared history as the model knows it.
struct SharedModel {
    truth: ModelHistory<Row>,
    /// The history before the last mutation that resolved: a mirror equal to this is behind.
    before: ModelHistory<Row>,
    attached: Vec<Origin>,
    /// Mirrors that missed a write because of an injected fault, until the next resync.
    stale: BTreeSet<Origin>,
}

impl SharedModel {
    fn of(&self, h: &ModelHistory<Row>, origin: &Origin) -> Vec<Row> {
        h.filtered(|r| r.origin == *origin)
    }
}

struct SessionCheck<'a> {
    s: usize,
    script: &'a SessionScript,
    /// Per journal file: its history after each change, in order.
    journals: BTreeMap<String, Vec<ModelHistory<Row>>>,
    /// Per journal file: whether the rows last seen equalled the model. A difference found later
    /// that was already there is not a new defect of what ran in between.
    in_sync: BTreeMap<String, bool>,
    /// The disk the last crash left, for the restart that follows it.
    crash_image: BTreeMap<String, Vec<u8>>,
    current: String,
    shared: Option<SharedModel>,
}

fn short(rows: &[Row]) -> String {
    let texts: Vec<String> = rows
        .iter()
        .take(6)
        .map(|r| {
            let t = r
                .blocks
                .first()
                .map(|b| match b {
                    history::journal::Block::Text { text } => text.clone(),
                    history::journal::Block::ToolCall { id, .. } => format!("call {id}"),
                    history::journal::Block::ToolResult { call_id, .. } => {
                        format!("result {call_id}")
                    }
                })
                .unwrap_or_default();
            let t: String = t.chars().take(24).collect();
            format!("{}:{t}", origin_name(&r.origin))
        })
        .collect();
    let more = if rows.len() > 6 { ", ..." } else { "" };
    format!("{} rows [{}{more}]", rows.len(), texts.join(", "))
}

impl<'a> SessionCheck<'a> {
    fn new(s: usize, script: &'a SessionScript) -> Self {
        let mut journals = BTreeMap::new();
        journals.insert(SESSION_JOURNAL.to_string(), vec![ModelHistory::new()]);
        let shared = (!script.subagents.is_empty()).then(|| SharedModel {
            truth: ModelHistory::new(),
            before: ModelHistory::new(),
            attached: script
                .mirrors
                .iter()
                .map(|m| super::meaning::origin_of(m))
                .collect(),
            stale: BTreeSet::new(),
        });
        SessionCheck {
            s,
            script,
            journals,
            in_sync: BTreeMap::new(),
            crash_image: BTreeMap::new(),
            current: SESSION_JOURNAL.to_string(),
            shared,
        }
    }

    fn latest(&self, journal: &str) -> ModelHistory<Row> {
        self.journals
            .get(journal)
            .and_then(|v| v.last())
            .cloned()
            .unwrap_or_default()
    }

    fn push(&mut self, journal: &str, h: ModelHistory<Row>) {
        self.journals
            .entry(journal.to_string())
            .or_default()
            .push(h);
    }

    /// Notes whether the rows seen of `journal` equal the model's latest history.
    fn seen(&mut self, journal: &str, rows: &[Row]) -> bool {
        let same = self.latest(journal).rows() == rows;
        self.in_sync.insert(journal.to_string(), same);
        same
    }

    fn was_in_sync(&self, journal: &str) -> bool {
        self.in_sync.get(journal).copied().unwrap_or(true)
    }

    fn run(mut self, record: &SessionRecord, found: &mut Found) {
        let s = self.s;
        for h in &record.happened {
            match h {
                Happened::Started {
                    incarnation,
                    dead,
                    scratch,
                    sweep_error,
                } => {
                    if let Some(e) = sweep_error {
                        found.add(
                            BugId::J18,
                            format!("session {s}: process p{incarnation} could not open its journal store: {e}"),
                        );
                    }
                    if let Err(v) = check_swept(dead, scratch) {
                        found.add(
                            BugId::J18,
                            format!("session {s}: process p{incarnation} started: {}", v.message),
                        );
                    }
                }
                Happened::Op { op, seen } => {
                    let script_op = &self.script.ops[*op];
                    self.op(*op, script_op, seen, found);
                }
                Happened::Interrupted { .. } => {}
                Happened::Crash { op, image, .. } => {
                    check_image(s, &format!("after the crash at op {op}"), image, found);
                    self.crash_image = image.clone();
                }
                Happened::Restart { solo, shared } => {
                    self.restart(solo, found);
                    if let Some(r) = shared {
                        self.shared_reopened(r, true, found);
                    }
                }
            }
        }
        check_image(s, "at the end", &record.final_image, found);
        if let Some((journal, written)) = &record.final_recording {
            let bytes = record
                .final_image
                .get(journal)
                .map_or(&[][..], Vec::as_slice);
            let facts = classify_image(bytes);
            if facts.last_seq < *written {
                found.add(
                    BugId::J10,
                    format!(
                        "session {s} at the end: the writer wrote {journal} up to record {written} but it reads back only to record {} ({facts:?})",
                        facts.last_seq
                    ),
                );
            }
        }
    }

    fn op(&mut self, k: usize, op: &Op, seen: &Seen, found: &mut Found) {
        let s = self.s;
        let at = format!("session {s} op {k} ({})", op.action.kind());
        match seen {
            Seen::Solo {
                journal,
                outcome,
                bytes_read,
                rows: shown,
            } => self.solo(&at, k, op, journal, outcome, *bytes_read, shown, found),
            Seen::Read {
                result,
                bytes_read,
                appended,
                writer,
            } => {
                if bytes_read > appended {
                    found.add(
                        BugId::J11,
                        format!("{at}: an incremental read touched {bytes_read} bytes; {appended} were appended since the previous read"),
                    );
                }
                match (result, writer) {
                    (Ok(read), Some(w)) if read != w => found.add(
                        BugId::J11,
                        format!(
                            "{at}: incremental statistics {read:?} differ from the writer's {w:?}"
                        ),
                    ),
                    (Ok(read), _) => {
                        let want = self.latest(&self.current.clone()).in_context.len() as u64;
                        if read.rows != want {
                            found.unexplained(
                                BugId::J11,
                                format!(
                                    "{at}: the reader counts {} rows, the model {want}",
                                    read.rows
                                ),
                            );
                        }
                    }
                    (Err(e), _) => {
                        found.unexplained(BugId::J11, format!("{at}: the read failed: {e}"))
                    }
                }
            }
            Seen::Estimate { counts } => {
                if let Action::Estimate { texts, .. } = &op.action {
                    let t = Tokenizer::o200k();
                    let alone: Vec<u64> = texts.iter().map(|p| t.count(&p.concat())).collect();
                    if *counts != alone {
                        found.add(
                            BugId::J17,
                            format!("{at}: counters fed concurrently counted {counts:?} tokens; each text alone has {alone:?}"),
                        );
                    }
                }
            }
            Seen::Send {
                rows,
                rows_visited,
                replacements,
                staged,
            } => {
                if *rows_visited > *rows as u64 {
                    found.add(
                        BugId::J13,
                        format!("{at}: deciding {replacements} truncations visited {rows_visited} rows of {rows}"),
                    );
                }
                if let Err(e) = staged {
                    found.unexplained(
                        BugId::J18,
                        format!("{at}: staging the request in scratch failed: {e}"),
                    );
                }
            }
            Seen::Copy {
                source,
                journal,
                checkpoint,
                result,
                open_txn,
                facts,
                rows: shown,
            } => {
                let state = self
                    .journals
                    .get(source)
                    .and_then(|v| v.get(*checkpoint))
                    .cloned();
                if let Err(e) = result {
                    found.unexplained(BugId::J2, format!("{at}: copying {source} failed: {e}"));
                    return;
                }
                if let Some(txn) = facts.open_txn {
                    let id = if open_txn.is_some() {
                        BugId::J2
                    } else {
                        BugId::J1
                    };
                    found.add(
                        id,
                        format!("{at}: the copy {journal} starts with transaction {txn} open (its writer sees {open_txn:?})"),
                    );
                }
                let state = state.unwrap_or_default();
                self.in_sync.insert(journal.clone(), *shown == state.rows());
                if *shown != state.rows() {
                    found.unexplained(
                        BugId::J2,
                        format!("{at}: the copy {journal} holds {}; the model at change {checkpoint} of {source} holds {}", short(shown), short(&state.rows())),
                    );
                }
                self.journals.insert(journal.clone(), vec![state]);
            }
            Seen::Switch {
                previous,
                to,
                loaded,
                result,
                recording,
                rows: shown,
                arrivals,
            } => {
                match result {
                    Err(_) if op.fail => {
                        if recording.as_deref() != Some(previous.as_str()) {
                            found.add(
                                BugId::J4,
                                format!("{at}: resuming {to} failed after publishing and the session's recording is {recording:?}, not the previous {previous}"),
                            );
                        }
                        return;
                    }
                    Err(e) => {
                        found.unexplained(BugId::J6, format!("{at}: resuming {to} failed: {e}"));
                        return;
                    }
                    Ok(()) if op.fail => found.unexplained(
                        BugId::J4,
                        format!(
                            "{at}: the switch to {to} succeeded although every append to it failed"
                        ),
                    ),
                    Ok(()) => {}
                }
                let state = self.latest(to);
                let base = match loaded {
                    Ok(rows) => rows.clone(),
                    Err(e) => {
                        found.unexplained(BugId::J6, format!("{at}: {to} does not open: {e}"));
                        state.rows()
                    }
                };
                if base != state.rows() && self.was_in_sync(to) {
                    found.unexplained(
                        BugId::J6,
                        format!(
                            "{at}: {to} opened as {}; the model {}",
                            short(&base),
                            short(&state.rows())
                        ),
                    );
                }
                classify_resume(&at, &base, arrivals, shown, found);
                let next = with_arrivals(&state, arrivals);
                self.push(to, next);
                self.seen(to, shown);
                self.current = to.clone();
            }
            Seen::ResumeAgain {
                result,
                bytes_before,
                bytes_after,
                rows_before,
                rows_after,
            } => {
                if let Err(e) = result {
                    found.unexplained(BugId::J5, format!("{at}: resuming again failed: {e}"));
                    return;
                }
                let changed_rows = rows_before.as_ref().is_some_and(|b| b != rows_after);
                if bytes_before != bytes_after || changed_rows {
                    let before = rows_before
                        .as_ref()
                        .map_or_else(|| "no recording".to_string(), |r| short(r));
                    found.add(
                        BugId::J5,
                        format!("{at}: resuming the recording again changed it: {before} to {}, {bytes_before} to {bytes_after} bytes", short(rows_after)),
                    );
                }
                let state = self.latest(&self.current.clone());
                let current = self.current.clone();
                self.push(&current, state);
                self.seen(&current, rows_after);
            }
            Seen::Shared {
                outcome,
                bytes_read,
                primary,
                mirrors,
            } => self.shared_op(&at, k, op, outcome, *bytes_read, primary, mirrors, found),
            Seen::AttachMirror { result, mirror } => {
                let Some(sm) = self.shared.as_mut() else {
                    return;
                };
                let Action::AttachMirror { origin } = &op.action else {
                    return;
                };
                let origin = super::meaning::origin_of(origin);
                if sm.attached.contains(&origin) {
                    return;
                }
                match (result, mirror) {
                    (Ok(()), Some(m)) => {
                        sm.attached.push(origin.clone());
                        let want = sm.of(&sm.truth, &origin);
                        if m.rows != want || m.durable.as_ref() != Ok(&want) {
                            found.add(
                                BugId::J7,
                                format!("{at}: the mirror of {} attached late holds {}; the history's rows of that origin are {}", origin_name(&origin), short(&m.rows), short(&want)),
                            );
                        }
                    }
                    (Ok(()), None) => sm.attached.push(origin),
                    (Err(e), _) => {
                        found.unexplained(BugId::J7, format!("{at}: attaching failed: {e}"))
                    }
                }
            }
            Seen::SharedResume(r) => self.shared_reopened(r, false, found),
            Seen::Dispose {
                fault_injected,
                result,
                scratch_left,
            } => match result {
                Ok(()) if *fault_injected => found.add(
                    BugId::J18,
                    format!("{at}: disposal met an injected failure and reported success"),
                ),
                Ok(()) if !scratch_left.is_empty() => found.add(
                    BugId::J18,
                    format!("{at}: disposal returned with scratch left: {scratch_left:?}"),
                ),
                Err(e) if !fault_injected => found.unexplained(
                    BugId::J18,
                    format!("{at}: disposal failed with no fault injected: {e}"),
                ),
                _ => {}
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn solo(
        &mut self,
        at: &str,
        k: usize,
        op: &Op,
        journal: &str,
        outcome: &Outcome,
        bytes_read: u64,
        shown: &[Row],
        found: &mut Found,
    ) {
        if bytes_read > 0 {
            found.add(
                BugId::J12,
                format!("{at}: the mutation read {bytes_read} bytes back from the journal"),
            );
        }
        let state = self.latest(journal);
        let ops = solo_model_ops(k, &op.action, &state);
        match outcome {
            Outcome::Written { records } => {
                if op.fail {
                    found.unexplained(
                        BugId::J10,
                        format!("{at}: the journal reported success although every append failed"),
                    );
                }
                let single = matches!(
                    op.action,
                    Action::Rewind { .. } | Action::Clear | Action::Compress { .. }
                );
                if single && *records != 1 {
                    found.add(
                        BugId::J15,
                        format!(
                            "{at}: a {} wrote {records} records; it must be one",
                            op.action.kind()
                        ),
                    );
                }
                let next = match &ops {
                    Some(ops) => apply_all(&state, ops).unwrap_or_else(|e| {
                        found.unexplained(
                            BugId::J10,
                            format!("{at}: the model refuses the operation: {e}"),
                        );
                        state.clone()
                    }),
                    None => {
                        found.unexplained(
                            BugId::J10,
                            format!("{at}: the journal wrote an operation that changes nothing"),
                        );
                        state.clone()
                    }
                };
                self.push(journal, next);
            }
            Outcome::Skipped if ops.is_some() => found.unexplained(
                BugId::J10,
                format!("{at}: the session skipped an operation that changes its history"),
            ),
            Outcome::Skipped => {}
            Outcome::Failed(e) if !op.fail => found.unexplained(
                BugId::J10,
                format!("{at}: failed with no fault injected: {e}"),
            ),
            Outcome::Failed(_) => {}
        }
        let want = self.latest(journal).rows();
        if !self.seen(journal, shown) {
            found.unexplained(
                BugId::J10,
                format!(
                    "{at}: the recording holds {}; the model {}",
                    short(shown),
                    short(&want)
                ),
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn shared_op(
        &mut self,
        at: &str,
        k: usize,
        op: &Op,
        outcome: &Outcome,
        bytes_read: u64,
        primary: &[Row],
        mirrors: &[MirrorSeen],
        found: &mut Found,
    ) {
        if bytes_read > 0 {
            found.add(
                BugId::J12,
                format!("{at}: the shared mutation read {bytes_read} bytes back from its journals"),
            );
        }
        let Action::Shared {
            origin,
            op: action,
            fail_mirror,
        } = &op.action
        else {
            return;
        };
        let Some(sm) = self.shared.as_mut() else {
            found.unexplained(
                BugId::J8,
                format!("{at}: the session has no shared history"),
            );
            return;
        };
        let origin = super::meaning::origin_of(origin);
        let expected = shared_model_op(k, &origin, action, &sm.truth);
        match outcome {
            Outcome::Written { .. } => match expected.map(|op| sm.truth.apply(&op)) {
                Some(Ok(next)) => {
                    sm.before = std::mem::replace(&mut sm.truth, next);
                    sm.stale.clear();
                    for m in mirrors {
                        check_mirror_at_resolve(at, sm, m, found);
                    }
                }
                Some(Err(e)) => found.unexplained(
                    BugId::J8,
                    format!("{at}: the model refuses the mutation: {e}"),
                ),
                None => found.unexplained(
                    BugId::J8,
                    format!("{at}: the history wrote a mutation that changes nothing"),
                ),
            },
            Outcome::Skipped if expected.is_some() => found.unexplained(
                BugId::J8,
                format!("{at}: the session skipped a mutation that changes the history"),
            ),
            Outcome::Skipped => {}
            Outcome::Failed(e) => match fail_mirror {
                None => found.unexplained(
                    BugId::J8,
                    format!("{at}: failed with no fault injected: {e}"),
                ),
                Some(m) => {
                    sm.stale.insert(super::meaning::origin_of(m));
                }
            },
        }
        if let Err(v) = check_origins(&sm.truth.rows(), primary) {
            found.add(BugId::J8, format!("{at}: {}", v.message));
        }
    }

    /// The shared history and its mirrors reopened: after a crash (`crashed`) or on purpose.
    fn shared_reopened(&mut self, r: &SharedRestart, crashed: bool, found: &mut Found) {
        let s = self.s;
        let at = if crashed {
            format!("session {s} after a crash")
        } else {
            format!("session {s} shared resume")
        };
        let Some(sm) = self.shared.as_mut() else {
            return;
        };
        for (origin, held) in &r.mirrors_before {
            if sm.stale.contains(origin) {
                continue;
            }
            let want = sm.of(&sm.truth, origin);
            if held.as_ref() == Ok(&want) {
                continue;
            }
            let behind = held.as_ref() == Ok(&sm.of(&sm.before, origin));
            let id = if behind { BugId::J9 } else { BugId::J7 };
            let held = held
                .as_ref()
                .map_or_else(|e| format!("an unreadable file ({e})"), |h| short(h));
            found.add(
                id,
                format!("{at}: before the resume the mirror of {} holds {held}; every mutation resolved before, which needs {}", origin_name(origin), short(&want)),
            );
        }
        if let Err(e) = &r.resumed {
            found.unexplained(
                BugId::J7,
                format!("{at}: resuming the shared history failed: {e}"),
            );
            return;
        }
        if let Err(v) = check_origins(&sm.truth.rows(), &r.primary) {
            found.add(BugId::J8, format!("{at}: {}", v.message));
        }
        for (origin, held) in &r.mirrors {
            let want = sm.of(&sm.truth, origin);
            if *held != want {
                found.add(
                    BugId::J7,
                    format!("{at}: the resumed mirror of {} holds {}; the history's rows of that origin are {}", origin_name(origin), short(held), short(&want)),
                );
            }
        }
        sm.stale.clear();
    }

    fn restart(&mut self, r: &SoloRestart, found: &mut Found) {
        let s = self.s;
        let at = format!("session {s} after a crash");
        let state = self.latest(&r.journal);
        let corrupt = r.facts_before.corrupt_at.is_some();
        // A difference the recording already had before the crash is not the crash's doing.
        let in_sync = self.was_in_sync(&r.journal);
        match &r.shown {
            Ok(shown) if *shown != state.rows() => {
                let message = format!(
                    "{at}: {} reopened as {}; the last durable history is {} (image: {:?})",
                    r.journal,
                    short(shown),
                    short(&state.rows()),
                    r.facts_before
                );
                let image = self
                    .crash_image
                    .get(&r.journal)
                    .map_or(&[][..], Vec::as_slice);
                if !in_sync {
                    found.unexplained(BugId::J10, message);
                } else if let Some(stray) = interleaved_replacement(image, true) {
                    // Rows written inside the replacement the crash left open show through it.
                    found.add(BugId::J3, format!("{message}: {stray}"));
                } else if r.facts_before.open_txn.is_some() && !corrupt {
                    found.add(BugId::J1, message);
                } else {
                    found.add(BugId::J10, message);
                }
            }
            Ok(_) => {}
            Err(e) => found.add(
                BugId::J10,
                format!(
                    "{at}: {} does not reopen: {e} (image: {:?})",
                    r.journal, r.facts_before
                ),
            ),
        }
        if let Err(e) = &r.resumed {
            let id = if r.facts_before.open_txn.is_some() {
                BugId::J2
            } else {
                BugId::J10
            };
            found.add(id, format!("{at}: resuming {} failed: {e}", r.journal));
            return;
        }
        if let Some(offset) = r.facts_after.corrupt_at {
            found.add(
                BugId::J10,
                format!("{at}: after the resume {} is corrupt at byte offset {offset}: a torn tail was not cut before writing", r.journal),
            );
        } else if r.writer_last_seq > r.facts_after.last_seq {
            found.add(
                BugId::J10,
                format!(
                    "{at}: the resumed writer wrote up to record {} but {} reads back only to record {} (a torn tail was not cut before writing)",
                    r.writer_last_seq, r.journal, r.facts_after.last_seq
                ),
            );
        } else if let Some(txn) = r.facts_after.open_txn {
            let id = if r.writer_open_txn.is_some() {
                BugId::J2
            } else {
                BugId::J1
            };
            found.add(
                id,
                format!("{at}: after the resume {} still has transaction {txn} open (the writer sees {:?})", r.journal, r.writer_open_txn),
            );
        }
        // The resume's own invariants hold against what it loaded.
        let loaded = r.shown.clone().unwrap_or_else(|_| state.rows());
        classify_resume(&at, &loaded, &r.arrivals, &r.rows_after, found);
        let next = with_arrivals(&state, &r.arrivals);
        let journal = r.journal.clone();
        self.push(&journal, next);
        self.seen(&journal, &r.rows_after);
    }
}

/// A mirror right after a mutation resolved: it must hold the mutation, durably.
fn check_mirror_at_resolve(at: &str, sm: &SharedModel, m: &MirrorSeen, found: &mut Found) {
    let want = sm.of(&sm.truth, &m.origin);
    if m.rows == want && m.durable.as_ref() == Ok(&want) {
        return;
    }
    let prev = sm.of(&sm.before, &m.origin);
    let behind = m.rows == prev || m.durable.as_ref() == Ok(&prev);
    let durable = m
        .durable
        .as_ref()
        .map_or_else(|e| format!("an unreadable file ({e})"), |d| short(d));
    if behind {
        found.add(
            BugId::J9,
            format!("{at}: the mutation resolved but the mirror of {} holds {} ({durable} durably): the history before it", origin_name(&m.origin), short(&m.rows)),
        );
    } else {
        found.add(
            BugId::J7,
            format!("{at}: the mirror of {} holds {} ({durable} durably); the history's rows of that origin are {}", origin_name(&m.origin), short(&m.rows), short(&want)),
        );
    }
}

/// A resumed recording must hold what it held, then what arrived while it loaded: nothing
/// recorded twice (J5), nothing that arrived lost (J6).
fn classify_resume(at: &str, before: &[Row], arrivals: &[Row], shown: &[Row], found: &mut Found) {
    let mut expected = before.to_vec();
    expected.extend_from_slice(arrivals);
    if shown == expected {
        return;
    }
    let doubled = !before.is_empty()
        && shown.len() >= 2 * before.len()
        && shown[..before.len()] == *before
        && shown[before.len()..2 * before.len()] == *before;
    if doubled {
        found.add(
            BugId::J5,
            format!(
                "{at}: the resumed recording holds its {} loaded rows twice ({})",
                before.len(),
                short(shown)
            ),
        );
    } else if !arrivals.is_empty() && (shown == before || !shown.ends_with(arrivals)) {
        found.add(
            BugId::J6,
            format!(
                "{at}: {} rows arrived while {} loaded; the resumed recording holds {}",
                arrivals.len(),
                before.len(),
                short(shown)
            ),
        );
    } else {
        found.unexplained(
            BugId::J6,
            format!(
                "{at}: the resumed recording holds {}; expected {}",
                short(shown),
                short(&expected)
            ),
        );
    }
}

fn with_arrivals(state: &ModelHistory<Row>, arrivals: &[Row]) -> ModelHistory<Row> {
    if arrivals.is_empty() {
        return state.clone();
    }
    state
        .apply(&ModelOp::Append(arrivals.to_vec()))
        .unwrap_or_else(|_| state.clone())
}

fn apply_all(
    state: &ModelHistory<Row>,
    ops: &[ModelOp<Row>],
) -> Result<ModelHistory<Row>, model::journal::ModelError> {
    let mut h = state.clone();
    for op in ops {
        h = h.apply(op)?;
    }
    Ok(h)
}

/// What a mutation of the recording does to the model, or `None` when it changes nothing (the
/// session skips it).
fn solo_model_ops(
    k: usize,
    action: &Action,
    state: &ModelHistory<Row>,
) -> Option<Vec<ModelOp<Row>>> {
    let main = Origin::Main;
    let ids: Vec<u64> = state.in_context.iter().map(|(id, _)| *id).collect();
    let n = ids.len();
    Some(match action {
        Action::Append { rows: specs } => vec![ModelOp::Append(rows(specs, &main))],
        Action::Replace {
            groups, arrivals, ..
        } => {
            let mut ops = vec![ModelOp::Replace(rows(&groups.concat(), &main))];
            // The other recorder's rows are written once the replacement is done.
            ops.extend(
                rows(arrivals, &main)
                    .into_iter()
                    .map(|r| ModelOp::Append(vec![r])),
            );
            ops
        }
        Action::Rewind { rows } => match rewind_rows(*rows, n) {
            0 => return None,
            cut => vec![ModelOp::SuffixCut(cut)],
        },
        Action::Clear => vec![ModelOp::Clear],
        Action::Compress { keep } => {
            let (summary, cut) = compression(&state.rows(), *keep, &main)?;
            vec![ModelOp::Compression { summary, rows: cut }]
        }
        Action::Density {
            remove,
            rewrite,
            rewrite_bytes,
        } => {
            let (removed, rewritten) = density_positions(remove, rewrite, n)?;
            vec![ModelOp::Density {
                removed: removed.iter().map(|p| ids[*p]).collect(),
                replacements: rewritten
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (ids[*p], rewrite_row(k, i, *rewrite_bytes)))
                    .collect(),
            }]
        }
        Action::Insert { after, row: spec } => vec![ModelOp::Insert {
            anchor: insert_after(*after, n).map(|p| ids[p]),
            row: row(spec, &main),
        }],
        _ => return None,
    })
}

/// What a shared mutation does to the shared history, or `None` when it changes nothing.
fn shared_model_op(
    k: usize,
    origin: &Origin,
    action: &SharedAction,
    truth: &ModelHistory<Row>,
) -> Option<ModelOp<Row>> {
    let n = truth.in_context.len();
    Some(match action {
        SharedAction::Append { rows: specs } => ModelOp::Append(rows(specs, origin)),
        SharedAction::Rewind { rows } => match rewind_rows(*rows, n) {
            0 => return None,
            cut => ModelOp::SuffixCut(cut),
        },
        SharedAction::Clear => ModelOp::Clear,
        SharedAction::Compress { keep } => {
            let (summary, cut) = compression(&truth.rows(), *keep, origin)?;
            ModelOp::Compression { summary, rows: cut }
        }
        SharedAction::Transform { at } => {
            if n == 0 {
                return None;
            }
            let (id, old) = &truth.in_context[*at as usize % n];
            ModelOp::Density {
                removed: Vec::new(),
                replacements: vec![(*id, transformed(old, k))],
            }
        }
        SharedAction::Restore { rows: specs } => ModelOp::Replace(rows(specs, origin)),
        SharedAction::Insert { after, row: spec } => ModelOp::Insert {
            anchor: insert_after(*after, n).map(|p| truth.in_context[p].0),
            row: row(spec, origin),
        },
    })
}

/// Checks of a disk image's journal files: no corruption before a tail (J10), bounded density
/// records (J16), no record inside a replacement that was then terminated (J3).
fn check_image(s: usize, when: &str, image: &BTreeMap<String, Vec<u8>>, found: &mut Found) {
    for (name, bytes) in image.iter().filter(|(n, _)| n.ends_with(".journal")) {
        let facts = classify_image(bytes);
        if let Some(offset) = facts.corrupt_at {
            found.add(
                BugId::J10,
                format!("session {s} {when}: {name} is corrupt at byte offset {offset} (a record before the tail does not decode)"),
            );
        }
        if let Err(v) = check_density_bounds(bytes) {
            found.add(
                BugId::J16,
                format!("session {s} {when}: {name}: {}", v.message),
            );
        }
        if let Some(what) = interleaved_replacement(bytes, false) {
            found.add(BugId::J3, format!("session {s} {when}: {name}: {what}"));
        }
    }
}

/// The first record that stands between a `replace_begin` and its terminator without belonging
/// to the transaction. A transaction never terminated (one a crash or a defective resume left
/// open) counts only with `open_too` and only while it is the last one: a resume that forgot to
/// abort it is judged by the resume's invariant, not here.
fn interleaved_replacement(bytes: &[u8], open_too: bool) -> Option<String> {
    let mut open: Option<(u64, Vec<String>)> = None;
    for v in dump_records(bytes).flatten() {
        let Some(kind) = v["kind"].as_str() else {
            continue;
        };
        let txn = v["txn"].as_u64();
        let seq = v["seq"].as_u64().unwrap_or(0);
        match (kind, &mut open) {
            ("replace_begin", _) => open = txn.map(|t| (t, Vec::new())),
            ("replace_rows", Some((t, _))) if txn == Some(*t) => {}
            ("replace_commit" | "replace_abort", Some((t, strays))) if txn == Some(*t) => {
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
    use history::journal::frame::encode_frame;
    use history::journal::{Record, RecordBody, Speaker};

    fn frames(bodies: Vec<RecordBody>) -> Vec<u8> {
        bodies
            .into_iter()
            .enumerate()
            .flat_map(|(i, body)| {
                encode_frame(&Record {
                    seq: i as u64 + 1,
                    origin: Origin::Main,
                    body,
                })
            })
            .collect()
    }

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

    #[test]
    fn resumes_that_record_twice_or_lose_arrivals_are_told_apart() {
        let r = |t: &str| Row::text(Speaker::Human, Origin::Main, t);
        let before = vec![r("a"), r("b")];
        let arrivals = vec![r("typed")];
        let mut f = Found::default();
        classify_resume(
            "x",
            &before,
            &arrivals,
            &[r("a"), r("b"), r("typed")],
            &mut f,
        );
        assert!(f.items.is_empty());
        classify_resume(
            "x",
            &before,
            &arrivals,
            &[r("a"), r("b"), r("a"), r("b"), r("typed")],
            &mut f,
        );
        classify_resume("x", &before, &arrivals, &before, &mut f);
        let ids: Vec<BugId> = f.into_sorted().into_iter().map(|v| v.id).collect();
        assert_eq!(ids, [BugId::J5, BugId::J6]);
    }

    #[test]
    fn priority_lists_every_checked_id_once() {
        let set: BTreeSet<BugId> = PRIORITY.iter().copied().collect();
        assert_eq!(set.len(), PRIORITY.len());
        assert!(!set.contains(&BugId::J14));
    }
}
