//! A live runs run's recording mapped onto the runs world's record
//! ([`crate::runs::observations::WorldRecord`]), so that the runs workload's own checks judge it.
//!
//! - Ground truth ([`TruthEvent`]): a run's `start`, each emitted message and its `stop` at the
//!   wall time its worker reported them; a run whose worker process was SIGKILLed before it
//!   stopped is `Killed` at the kill, as the world's worker crash kills every run on the host.
//! - Emitted events: every `emit` line, in the run's order.
//! - Written rows: each write call the store confirmed, with the seqs it gave; a call under
//!   way when its process was killed wrote its rows if the store holds them (found in the
//!   file: the commit happened, the confirmation died with the process), at the kill.
//! - Reads: each views read, both slots of the world's pair holding the one shared store's
//!   answer (R9, which compares two backends, has nothing to compare: live mode has one).
//! - Order: one total order by wall time. A read is placed at its end (every row it saw was
//!   committed, so emitted, before); a stop inside a read's span on the same thread is placed
//!   after the read (the read may have seen the run's rows before its last flush); writes keep
//!   their commit order (the table's ids), each placed no later than any write committed after
//!   it.

use super::line::{outcome_of, CallRows, WireEvent, WorkerLine};
use super::recording::{Proc, RunsRecording};
use super::stored::{key_of, StoredRows};
use crate::runs::observations::{Observation, ObservationLog, WorldRecord};
use crate::runs::record::*;
use crate::runs::scenario::RunsScenario;
use crate::runs::script::{expand, Emission};
use crate::trace::Trace;
use history::runs::RunEvent;
use model::runs::RunOutcome;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

/// What happened at one point of the total order.
enum Item {
    Truth(usize, TruthEvent),
    Rows(Vec<RunEvent>),
    Read(usize),
    Receipt(usize),
    Error(WriteError),
}

/// The recording as the world's record, and what the mapping itself counted.
pub struct Mapped {
    pub record: WorldRecord,
    /// Rows of a call under way at a kill that the store holds (committed, never confirmed).
    pub committed_unconfirmed: usize,
    /// Rows of such calls the store does not hold (the kill came before the commit).
    pub never_committed: usize,
    /// The write calls under way at a kill whose rows the store holds, and those whose rows
    /// it does not.
    pub calls_committed_unconfirmed: usize,
    pub calls_never_committed: usize,
}

/// The lines of every worker as timed items, the events each run emitted, and the write calls
/// under way when their process ended (process, run, rows).
struct FromLines {
    items: Vec<(u64, Item)>,
    emitted: Vec<Vec<EmittedEvent>>,
    in_flight: Vec<(Proc, usize, CallRows)>,
}

fn call_name(call: &str) -> &'static str {
    ["put_batch", "insert_numbered", "max_seq"]
        .into_iter()
        .find(|c| *c == call)
        .unwrap_or("write")
}

fn rows_of(rows: &CallRows, seqs: &[u64]) -> Vec<RunEvent> {
    match rows {
        CallRows::Batch { events } => (events.iter().zip(seqs))
            .map(|(e, seq)| e.clone().with_seq(*seq))
            .collect(),
        CallRows::Numbered { events } => events.clone(),
    }
}

impl FromLines {
    /// An `emit` line: the run's next emitted event, and a message of its script as truth.
    fn emitted_line(&mut self, run: usize, at: u64, event: &WireEvent, message: Option<&Emission>) {
        self.emitted[run].push(EmittedEvent {
            event_type: event.event_type.clone(),
            category: event.category,
            content: Arc::new(event.content.clone()),
            metadata: event.metadata.clone(),
            created_at_ns: event.created_at_ns,
        });
        if let Some(e) = message {
            let message = TruthEvent::Message {
                kind: e.kind,
                text: e.text.clone(),
            };
            self.items.push((at, Item::Truth(run, message)));
        }
    }
}

fn from_lines(scenario: &RunsScenario, recording: &RunsRecording) -> FromLines {
    let expanded: Vec<_> = scenario.runs.iter().map(expand).collect();
    let mut out = FromLines {
        items: Vec::new(),
        emitted: vec![Vec::new(); scenario.runs.len()],
        in_flight: Vec::new(),
    };
    let mut pending: BTreeMap<Proc, (usize, CallRows)> = BTreeMap::new();
    let run_id = |run: usize| scenario.runs.get(run).map(|r| r.id.clone());
    for (proc, line) in &recording.lines {
        let at = line.at_us();
        match line {
            WorkerLine::Ready { .. } => {}
            WorkerLine::Start { run, .. } => {
                out.items.push((at, Item::Truth(*run, TruthEvent::Start)))
            }
            WorkerLine::Emit {
                run,
                event,
                emission,
                ..
            } => {
                let message = emission.and_then(|i| expanded[*run].get(i));
                out.emitted_line(*run, at, event, message);
            }
            WorkerLine::Call { run, rows, .. } => {
                pending.insert(*proc, (*run, rows.clone()));
            }
            WorkerLine::Wrote { seqs, .. } => {
                if let Some((_, rows)) = pending.remove(proc) {
                    out.items.push((at, Item::Rows(rows_of(&rows, seqs))));
                }
            }
            WorkerLine::Failed {
                run,
                call,
                conflict,
                message,
                ..
            } => {
                if call != "max_seq" {
                    pending.remove(proc);
                }
                let error = WriteError {
                    op: 0,
                    at_us: at,
                    call: call_name(call),
                    run_id: run_id(*run),
                    stores: "the shared sqlite store".into(),
                    conflict: *conflict,
                    message: message.clone(),
                };
                out.items.push((at, Item::Error(error)));
            }
            WorkerLine::Stop { run, outcome, .. } => {
                let outcome = outcome_of(outcome).unwrap_or(RunOutcome::Killed);
                out.items
                    .push((at, Item::Truth(*run, TruthEvent::Stop(outcome))));
            }
        }
    }
    out.in_flight = (pending.into_iter())
        .map(|(proc, (run, rows))| (proc, run, rows))
        .collect();
    out
}

/// The rows of the calls each SIGKILL cut that the store holds (written at the kill), and the
/// runs it stopped (`Killed` at the kill, after those rows). Returns (rows found, rows not
/// found) and (calls found, calls not found).
fn kills(recording: &RunsRecording, stored: &StoredRows, lines: &mut FromLines) -> [usize; 4] {
    let mut held = held_unconfirmed(stored, &lines.items);
    let (mut found, mut missing) = (0, 0);
    let mut calls = [0, 0];
    for (proc, _, rows) in std::mem::take(&mut lines.in_flight) {
        let Some(at) = recording.killed(proc) else {
            continue;
        };
        let mut committed = Vec::new();
        for row in rows_of(&rows, &vec![0; rows_len(&rows)]) {
            let key = (
                row.thread_id.clone(),
                row.run_id.clone(),
                row.event_type.clone(),
                row.created_at_ns,
            );
            match held.get_mut(&key).and_then(VecDeque::pop_front) {
                Some(seq) => committed.push(RunEvent { seq, ..row }),
                None => missing += 1,
            }
        }
        found += committed.len();
        calls[usize::from(committed.is_empty())] += 1;
        if !committed.is_empty() {
            lines.items.push((at, Item::Rows(committed)));
        }
    }
    // The commits came before the kill: the kill's stops after them.
    for run in 0..lines.emitted.len() {
        let Some((proc, _)) = recording.started_on(run) else {
            continue;
        };
        if let (None, Some(at)) = (recording.stopped_at(run), recording.killed(proc)) {
            lines
                .items
                .push((at, Item::Truth(run, TruthEvent::Stop(RunOutcome::Killed))));
        }
    }
    [found, missing, calls[0], calls[1]]
}

/// A row as an unconfirmed call is matched to the store: (thread, run, event type, created).
type RowMatch = (String, String, String, i64);

/// The seqs of the rows the store holds that no confirmed write explains, by what they are.
fn held_unconfirmed(
    stored: &StoredRows,
    items: &[(u64, Item)],
) -> BTreeMap<RowMatch, VecDeque<u64>> {
    let confirmed: BTreeSet<(&str, u64)> = (items.iter())
        .filter_map(|(_, item)| match item {
            Item::Rows(rows) => Some(rows),
            _ => None,
        })
        .flatten()
        .map(|r| (r.thread_id.as_str(), r.seq))
        .collect();
    let mut held: BTreeMap<RowMatch, VecDeque<u64>> = BTreeMap::new();
    for r in stored.dump.iter().flatten() {
        if !confirmed.contains(&(r.thread_id.as_str(), r.seq)) {
            let key = (
                r.thread_id.clone(),
                r.run_id.clone(),
                r.event_type.clone(),
                r.created_at_ns,
            );
            held.entry(key).or_default().push_back(r.seq);
        }
    }
    held
}

fn rows_len(rows: &CallRows) -> usize {
    match rows {
        CallRows::Batch { events } => events.len(),
        CallRows::Numbered { events } => events.len(),
    }
}

/// Writes in commit order: each batch's time becomes the earliest time of any batch committed
/// at or after it (never later than its own confirmation, never before its commit).
fn commit_ordered(items: &mut [(u64, Item)], recording: &RunsRecording, stored: &StoredRows) {
    let mut writes: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, (_, item))| match item {
            Item::Rows(rows) => {
                let first = rows
                    .iter()
                    .filter_map(|r| stored.commit_order.get(&key_of(r)))
                    .min();
                first.map(|id| (*id, i))
            }
            Item::Receipt(k) => (recording.receipts[*k].created())
                .and_then(|row| stored.commit_order.get(&key_of(row)))
                .map(|id| (*id, i)),
            _ => None,
        })
        .collect();
    writes.sort_unstable();
    let mut earliest = u64::MAX;
    for (_, i) in writes.into_iter().rev() {
        earliest = earliest.min(items[i].0);
        items[i].0 = earliest;
    }
}

/// Reads at their end; a stop inside a read's span on the read's thread after it.
fn reads_placed(scenario: &RunsScenario, recording: &RunsRecording, items: &mut Vec<(u64, Item)>) {
    let spans: Vec<(&str, u64, u64)> = (recording.reads.iter())
        .map(|r| (r.thread.as_str(), r.started_us, r.ended_us))
        .collect();
    for (at, item) in items.iter_mut() {
        let Item::Truth(run, TruthEvent::Stop(_)) = item else {
            continue;
        };
        let thread = scenario.runs[*run].thread.as_str();
        if let Some((_, _, ended)) = spans
            .iter()
            .find(|(t, s, e)| *t == thread && *s < *at && *at <= *e)
        {
            *at = ended + 1;
        }
    }
    for (i, r) in recording.reads.iter().enumerate() {
        items.push((r.ended_us, Item::Read(i)));
    }
}

/// The recording of a live run of `scenario` as the runs world's record.
pub fn to_world(scenario: &RunsScenario, recording: &RunsRecording, stored: &StoredRows) -> Mapped {
    let mut lines = from_lines(scenario, recording);
    let [committed_unconfirmed, never_committed, calls_committed_unconfirmed, calls_never_committed] =
        kills(recording, stored, &mut lines);
    let mut items = std::mem::take(&mut lines.items);
    for (k, r) in recording.receipts.iter().enumerate() {
        items.push((r.at_us, Item::Receipt(k)));
    }
    commit_ordered(&mut items, recording, stored);
    reads_placed(scenario, recording, &mut items);
    // A stable sort: equal times keep the order they were recorded in.
    items.sort_by_key(|(at, _)| *at);
    let mut log = ObservationLog::new(scenario.runs.len());
    for (run, events) in lines.emitted.into_iter().enumerate() {
        log.extend(
            events
                .into_iter()
                .map(|event| Observation::Emitted { run, event }),
        );
    }
    let relative = |at: u64| at.saturating_sub(recording.started_us);
    for (op, (at, item)) in items.into_iter().enumerate() {
        let (op, at_us) = (op as u64, relative(at));
        match item {
            Item::Truth(run, event) => log.push(Observation::Truth { op, run, event }),
            Item::Rows(rows) => log.extend(
                rows.into_iter()
                    .map(|event| Observation::Written(Written { op, at_us, event })),
            ),
            Item::Read(i) => log.push(Observation::Read(read_of(&recording.reads[i], op, at_us))),
            Item::Receipt(k) => receipt_of(&mut log, &recording.receipts[k], op, at_us),
            Item::Error(e) => log.push(Observation::WriteError(WriteError { op, at_us, ..e })),
        }
    }
    log.extend(
        (0..scenario.runs.len())
            .filter(|r| recording.started_on(*r).is_some() && !recording.run_over(*r))
            .map(Observation::Stuck),
    );
    let record = record_of(log, stored);
    Mapped {
        record,
        committed_unconfirmed,
        never_committed,
        calls_committed_unconfirmed,
        calls_never_committed,
    }
}

/// A receipt the client wrote: its row as a written one (when this call wrote it), and the
/// receipt with the one store's answer in both slots.
fn receipt_of(log: &mut ObservationLog, r: &super::recording::ClientReceipt, op: u64, at_us: u64) {
    if let Some(row) = r.created() {
        let event = row.clone();
        log.push(Observation::Written(Written { op, at_us, event }));
    }
    log.push(Observation::Receipt(ReceiptRecord {
        op,
        at_us,
        run: r.run,
        event: r.event.clone(),
        answer: Both::new(r.answer.clone(), r.answer.clone()),
    }));
}

fn read_of(r: &super::recording::ClientRead, op: u64, at_us: u64) -> Read {
    Read {
        op,
        at_us,
        thread: r.thread.clone(),
        kind: r.kind.clone(),
    }
}

/// The record of `log`, the store's end state in both slots.
fn record_of(log: ObservationLog, stored: &StoredRows) -> WorldRecord {
    WorldRecord {
        log,
        feedback: Vec::new(),
        dumps: Both::new(stored.dump.clone(), stored.dump.clone()),
        event_counts: Some(Both::new(stored.counts.clone(), stored.counts.clone())),
        trace: Trace::new(false),
        failure: None,
        sim_elapsed_ms: 0,
        sut_log: None,
        answers: Default::default(),
        first_slot: "shared",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::runs::{Category, NewRunEvent};
    use serde_json::{json, Value};

    fn event(scenario: &RunsScenario, n: i64) -> NewRunEvent {
        let run = &scenario.runs[0];
        NewRunEvent {
            thread_id: scenario.threads[&run.thread].clone(),
            run_id: run.id.clone(),
            user_id: run.user.clone(),
            event_type: "trace".into(),
            category: Category::Trace,
            content: Arc::new(json!({ "n": n })),
            metadata: json!({}),
            created_at_ns: n,
        }
    }

    /// A worker killed inside a write call: the call's rows the file holds are written at the
    /// kill, the run is killed there, and a read after it comes after both.
    #[test]
    fn a_call_cut_by_a_kill_wrote_what_the_file_holds_and_its_run_is_killed() {
        let scenario = super::super::scenario::of_seed(3, 1, crate::workload::StoreKind::Sqlite)
            .unwrap()
            .scenario;
        let proc = Proc {
            worker: 0,
            generation: 0,
        };
        let (first, second) = (event(&scenario, 1), event(&scenario, 2));
        let wire = |e: &NewRunEvent| WireEvent {
            event_type: e.event_type.clone(),
            category: e.category,
            content: Value::clone(&e.content),
            metadata: e.metadata.clone(),
            created_at_ns: e.created_at_ns,
        };
        let emit = |e: &NewRunEvent, at_us| WorkerLine::Emit {
            run: 0,
            at_us,
            event: wire(e),
            emission: None,
        };
        let recording = RunsRecording {
            started_us: 10,
            lines: vec![
                (proc, WorkerLine::Start { run: 0, at_us: 11 }),
                (proc, emit(&first, 12)),
                (proc, emit(&second, 13)),
                (
                    proc,
                    WorkerLine::Call {
                        run: 0,
                        at_us: 14,
                        rows: CallRows::Batch {
                            events: vec![first.clone(), second.clone()],
                        },
                    },
                ),
            ],
            kills: vec![(proc, 20)],
            ..RunsRecording::default()
        };
        // The file holds the first row only (as if the batch had been cut; a whole batch is
        // one transaction, but the mapping must not invent the second).
        let held = first.clone().with_seq(1);
        let stored = StoredRows {
            dump: Ok(vec![held.clone()]),
            counts: Ok(Vec::new()),
            commit_order: [(key_of(&held), 1)].into_iter().collect(),
        };
        let mapped = to_world(&scenario, &recording, &stored);
        assert_eq!(
            (mapped.committed_unconfirmed, mapped.never_committed),
            (1, 1)
        );
        let written: Vec<&RunEvent> = mapped
            .record
            .log
            .written()
            .iter()
            .map(|w| &w.event)
            .collect();
        assert_eq!(written, vec![&held]);
        assert_eq!(mapped.record.log.emitted()[0].len(), 2);
        let stop =
            (mapped.record.log.truth().iter()).find(|(_, _, e)| matches!(e, TruthEvent::Stop(_)));
        let write_op = mapped.record.log.written()[0].op;
        assert!(
            matches!(stop, Some((op, 0, TruthEvent::Stop(RunOutcome::Killed))) if *op > write_op),
            "{:?}",
            mapped.record.log.truth()
        );
        assert!(mapped.record.log.stuck_runs().is_empty());
    }
}
