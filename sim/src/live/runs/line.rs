//! What a run worker process tells `histsim live --workload runs` on its stdout, one JSON line
//! an event: the one definition of that format, written by the worker and read by the recorder.
//! Times are microseconds since the Unix epoch (every process of a live run shares the clock).

use history::runs::{Category, NewRunEvent, RunEvent};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event a run handed its journal (the runs world's `EmittedEvent`, on the wire).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireEvent {
    pub event_type: String,
    pub category: Category,
    pub content: Value,
    pub metadata: Value,
    pub created_at_ns: i64,
}

/// The rows a store call was asked to write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallRows {
    /// `put_batch`: the store numbers them.
    Batch { events: Vec<NewRunEvent> },
    /// `insert_numbered`: the writer numbered them (the legacy writer, planted R5).
    Numbered { events: Vec<RunEvent> },
}

/// One line of a worker's stdout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "snake_case")]
pub enum WorkerLine {
    /// The store is open and the worker reads dispatches.
    Ready { at_us: u64 },
    /// It began run `run` (an index into the scenario's runs).
    Start { run: usize, at_us: u64 },
    /// The run handed its journal this event; `emission`: the index of the script's message
    /// it is (`runs::script::expand`), if it is one.
    Emit {
        run: usize,
        at_us: u64,
        event: WireEvent,
        emission: Option<usize>,
    },
    /// A write call of the run's journal is about to reach the store.
    Call {
        run: usize,
        at_us: u64,
        rows: CallRows,
    },
    /// The store accepted that call and gave the rows these seqs.
    Wrote {
        run: usize,
        at_us: u64,
        seqs: Vec<u64>,
    },
    /// The store answered the call (or a writer's `max_seq`) with an error.
    Failed {
        run: usize,
        at_us: u64,
        call: String,
        conflict: bool,
        message: String,
    },
    /// The run stopped: `ended`, `errored`, `cancelled` or `killed` (its journal dropped).
    Stop {
        run: usize,
        at_us: u64,
        outcome: String,
    },
}

impl WorkerLine {
    /// The line as the worker prints it.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A line read back; `None` for anything else (a line cut by a kill).
    pub fn parse(text: &str) -> Option<WorkerLine> {
        serde_json::from_str(text).ok()
    }

    /// When the worker wrote it.
    pub fn at_us(&self) -> u64 {
        match self {
            WorkerLine::Ready { at_us }
            | WorkerLine::Start { at_us, .. }
            | WorkerLine::Emit { at_us, .. }
            | WorkerLine::Call { at_us, .. }
            | WorkerLine::Wrote { at_us, .. }
            | WorkerLine::Failed { at_us, .. }
            | WorkerLine::Stop { at_us, .. } => *at_us,
        }
    }
}

/// Writes one line on the worker's stdout at once: a kill right after it leaves it whole.
pub fn say(line: &WorkerLine) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", line.to_text());
    let _ = out.flush();
}

/// The word a stop line uses for `outcome`, and back.
pub fn outcome_word(outcome: model::runs::RunOutcome) -> &'static str {
    use model::runs::RunOutcome;
    match outcome {
        RunOutcome::Ended => "ended",
        RunOutcome::Errored => "errored",
        RunOutcome::Cancelled => "cancelled",
        RunOutcome::Killed => "killed",
        RunOutcome::Running => "running",
    }
}

pub fn outcome_of(word: &str) -> Option<model::runs::RunOutcome> {
    use model::runs::RunOutcome;
    [
        RunOutcome::Ended,
        RunOutcome::Errored,
        RunOutcome::Cancelled,
        RunOutcome::Killed,
    ]
    .into_iter()
    .find(|o| outcome_word(*o) == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_written_and_a_cut_one_not_at_all() {
        let line = WorkerLine::Stop {
            run: 3,
            at_us: 17,
            outcome: "ended".into(),
        };
        let text = line.to_text();
        assert_eq!(WorkerLine::parse(&text), Some(line));
        assert_eq!(WorkerLine::parse(&text[..text.len() - 2]), None);
        for o in [
            model::runs::RunOutcome::Ended,
            model::runs::RunOutcome::Killed,
        ] {
            assert_eq!(outcome_of(outcome_word(o)), Some(o));
        }
    }
}
