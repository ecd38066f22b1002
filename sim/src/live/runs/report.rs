//! The report of a live runs run: calls, kills, events stored, reads checked, accepted losses
//! and what the scenario left out.

use super::line::WorkerLine;
use super::outcome::RunsOutcome;
use crate::live::plan::LiveFault;
use crate::runs::record::ReadKind;
use std::fmt::Write as _;

/// Counts of the lines every worker reported.
fn calls(o: &RunsOutcome) -> (usize, usize, usize, usize) {
    let (mut emitted, mut calls, mut wrote, mut failed) = (0, 0, 0, 0);
    for (_, line) in &o.recording.lines {
        match line {
            WorkerLine::Emit { .. } => emitted += 1,
            WorkerLine::Call { .. } => calls += 1,
            WorkerLine::Wrote { .. } => wrote += 1,
            WorkerLine::Failed { .. } => failed += 1,
            _ => {}
        }
    }
    (emitted, calls, wrote, failed)
}

/// The report's lines about the client's reads.
fn reads(out: &mut String, o: &RunsOutcome) {
    let rec = &o.recording;
    let views = (rec.reads.iter())
        .filter(|r| matches!(r.kind, ReadKind::Views { .. }))
        .count();
    let _ = writeln!(
        out,
        "reads checked: {} reads ({} of the views: count_messages, /history, /messages; the rest pages, paging, events, filtered and user-scoped reads) and the final dump and counts, by the runs workload's checks ({} tried again after a write landed during them, {} given up)",
        rec.reads.len(),
        views,
        rec.reads_retried,
        rec.reads_never_still
    );
    if rec.reads_not_made > 0 {
        let _ = writeln!(
            out,
            "reads and receipts not made: {} of the scenario's during the run (the JSONL store's one process is its writer; the client reads every thread once it stopped)",
            rec.reads_not_made
        );
    }
}

pub fn report(o: &RunsOutcome) -> String {
    let mut out = String::new();
    let rec = &o.recording;
    let (emitted, calls, wrote, failed) = calls(o);
    let dispatched = rec.dispatches.iter().filter(|d| d.sent.is_ok()).count();
    let _ = writeln!(
        out,
        "calls: {dispatched} runs dispatched ({} refused: worker down), {emitted} events handed to journals, {calls} write calls ({wrote} confirmed, {failed} failed), {} lines unreadable",
        rec.dispatches.len() - dispatched,
        rec.unreadable_lines
    );
    let pauses = (rec.faults.iter())
        .filter(|f| matches!(f.fault, LiveFault::Pause { .. }))
        .count();
    let figures = super::compare::figures(&o.setup.live.scenario, &o.mapped.record);
    let (killed_runs, lost) = (figures.runs_killed, figures.events_lost);
    let _ = writeln!(
        out,
        "kills: {} SIGKILLs of a worker (restarted), {pauses} SIGSTOP/SIGCONT pauses; {killed_runs} runs killed; rows of a call cut by a kill: {} committed unconfirmed, {} never committed",
        rec.kills.len(),
        o.mapped.committed_unconfirmed,
        o.mapped.never_committed
    );
    for f in rec.faults.iter().filter(|f| f.trouble.is_some()) {
        let _ = writeln!(
            out,
            "  fault trouble: {} at {} us: {}",
            f.fault.name(),
            f.from_us.saturating_sub(rec.started_us),
            f.trouble.as_deref().unwrap_or("")
        );
    }
    let stored = o.stored.dump.as_ref().map_or(0, Vec::len);
    let _ = writeln!(
        out,
        "events stored: {stored} rows read back from the shared {} store, {} rows written by confirmed or committed calls",
        o.setup.store_kind.as_str(),
        o.mapped.record.log.written().len()
    );
    reads(&mut out, o);
    let _ = writeln!(out, "accepted losses: {lost} events of {killed_runs} killed runs never stored (a killed run keeps a prefix, R4)");
    if !rec.waits_given_up.is_empty() {
        let _ = writeln!(
            out,
            "waits given up: {} runs did not stop within the bound",
            rec.waits_given_up.len()
        );
    }
    let left: Vec<String> = (o.setup.live.left_out.iter())
        .map(|(what, n)| format!("{what} x{n}"))
        .collect();
    let _ = writeln!(
        out,
        "left out of the scenario (not played live): {}",
        if left.is_empty() {
            "nothing".into()
        } else {
            left.join(", ")
        }
    );
    let _ = writeln!(
        out,
        "not compared: R9 (one shared store, no second backend)"
    );
    out
}
