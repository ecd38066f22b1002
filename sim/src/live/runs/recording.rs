//! What a live runs run records, each entry with its wall time (microseconds since the Unix
//! epoch): every line each worker reported, every dispatch, every read of the views and its
//! answer, every kill and pause. The mapping onto the runs world's record reads nothing else
//! (and the rows the shared store holds at the end).

use super::line::WorkerLine;
use crate::live::recording::InjectedFault;
use crate::runs::record::{Answer, ReadKind};
use history::runs::{NewRunEvent, RunEvent};

/// One dispatch of a run to its worker: `Err` when the worker was down.
#[derive(Clone, Debug)]
pub struct Dispatch {
    pub run: usize,
    pub worker: u8,
    pub at_us: u64,
    pub sent: Result<(), String>,
}

/// One read of the client's from the shared store, as the runs world's client reads it (the
/// views, a page, paging, a run's events, ...), both slots of the world's pair holding the
/// one store's answers, over the wall time it took.
#[derive(Clone, Debug)]
pub struct ClientRead {
    /// The thread key it read.
    pub thread: String,
    pub started_us: u64,
    pub ended_us: u64,
    pub kind: ReadKind,
}

/// One delivery receipt the client wrote (`put_if_absent`) on the shared store.
#[derive(Clone, Debug)]
pub struct ClientReceipt {
    pub at_us: u64,
    /// The run (by index).
    pub run: usize,
    pub event: NewRunEvent,
    /// The record the store holds and whether this call wrote it.
    pub answer: Answer<(RunEvent, bool)>,
}

impl ClientReceipt {
    /// The row this call wrote, if it did.
    pub fn created(&self) -> Option<&RunEvent> {
        match &self.answer {
            Ok((row, true)) => Some(row),
            _ => None,
        }
    }
}

/// One worker process: the worker's index and how many times it was started before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Proc {
    pub worker: u8,
    pub generation: u32,
}

/// Everything a live runs run recorded.
#[derive(Clone, Debug, Default)]
pub struct RunsRecording {
    pub started_us: u64,
    /// Every line each worker process reported, in the order each reported.
    pub lines: Vec<(Proc, WorkerLine)>,
    /// Lines that were not in the format (a line cut by a kill), counted.
    pub unreadable_lines: u64,
    pub dispatches: Vec<Dispatch>,
    pub reads: Vec<ClientRead>,
    pub receipts: Vec<ClientReceipt>,
    /// Reads tried again because a write landed during them.
    pub reads_retried: u64,
    /// Reads given up (a write landed during every attempt): counted, never judged.
    pub reads_never_still: u64,
    /// The scenario's reads and receipts not made: the JSONL store's one process is its
    /// writer, so the client reads it only once that process is stopped. Counted, never
    /// judged.
    pub reads_not_made: u64,
    pub faults: Vec<InjectedFault>,
    /// Each SIGKILL of a worker process, with the wall time just before the signal.
    pub kills: Vec<(Proc, u64)>,
    /// Waits for a run that gave up (the run had not stopped within the bound).
    pub waits_given_up: Vec<usize>,
    /// Wall microseconds one scenario millisecond took.
    pub us_per_ms: f64,
    /// When the client's last op was done.
    pub ops_done_us: u64,
}

impl RunsRecording {
    pub fn worker_said(&mut self, proc: Proc, text: &str) {
        match WorkerLine::parse(text) {
            Some(line) => self.lines.push((proc, line)),
            None => self.unreadable_lines += 1,
        }
    }

    /// The process that began `run` (its `start` line), and when, if one did.
    pub fn started_on(&self, run: usize) -> Option<(Proc, u64)> {
        self.lines.iter().find_map(|(p, line)| match line {
            WorkerLine::Start { run: r, at_us } if *r == run => Some((*p, *at_us)),
            _ => None,
        })
    }

    /// When `run` stopped by its own stop line, if it did.
    pub fn stopped_at(&self, run: usize) -> Option<u64> {
        self.lines.iter().find_map(|(_, line)| match line {
            WorkerLine::Stop { run: r, at_us, .. } if *r == run => Some(*at_us),
            _ => None,
        })
    }

    /// When process `proc` was killed, if it was.
    pub fn killed(&self, proc: Proc) -> Option<u64> {
        (self.kills.iter())
            .find(|(p, _)| *p == proc)
            .map(|(_, at)| *at)
    }

    /// The first kill of any process of `worker` at or after `since_us`.
    pub fn killed_after(&self, worker: u8, since_us: u64) -> Option<u64> {
        (self.kills.iter())
            .filter(|(p, at)| p.worker == worker && *at >= since_us)
            .map(|(_, at)| *at)
            .min()
    }

    /// Wall microseconds from the client's last op until every run that started had stopped
    /// (its stop line or its worker's kill); `None` when one never did.
    pub fn quiet_after_us(&self) -> Option<u64> {
        let mut last = self.ops_done_us;
        for run in (0..self.dispatches.len()).map(|i| self.dispatches[i].run) {
            let Some((proc, _)) = self.started_on(run) else {
                continue;
            };
            let over = self.stopped_at(run).or_else(|| self.killed(proc))?;
            last = last.max(over);
        }
        Some(last - self.ops_done_us)
    }

    /// Whether `run` is over: it stopped, its worker was killed while it ran, or its dispatch
    /// failed or never began before its worker was killed.
    pub fn run_over(&self, run: usize) -> bool {
        if let Some((proc, _)) = self.started_on(run) {
            return self.stopped_at(run).is_some() || self.killed(proc).is_some();
        }
        match self.dispatches.iter().rev().find(|d| d.run == run) {
            None => true,
            Some(d) => d.sent.is_err() || self.killed_after(d.worker, d.at_us).is_some(),
        }
    }
}
