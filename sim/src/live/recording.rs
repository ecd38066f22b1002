//! What a live run records, each entry with its wall time (microseconds since the Unix epoch):
//! every publish, every line a replica reported, every fault, every read. The judge reads
//! nothing else (and the rows the shared store holds at the end).

use super::line::ReplicaLine;
use super::plan::LiveFault;
use super::read::ReadAnswer;
use crate::display::record::Emitted;

/// One event the agents published.
#[derive(Clone, Debug)]
pub struct Published {
    pub emitted: Emitted,
    pub at_us: u64,
    /// The client library refused it (never sent).
    pub refused: Option<String>,
}

/// A fault as it was injected: when it started and when it healed (the replica or the server
/// confirmed up again).
#[derive(Clone, Debug)]
pub struct InjectedFault {
    pub fault: LiveFault,
    pub from_us: u64,
    pub healed_us: u64,
    /// Why it could not be injected or healed, if so.
    pub trouble: Option<String>,
}

/// One read of the history through a replica.
#[derive(Clone, Debug)]
pub struct LiveRead {
    pub replica: u8,
    /// The turn whose request this was; `None` for the background client and the final polls.
    pub turn: Option<u32>,
    pub started_us: u64,
    /// The answer, or why there was none (the replica was down or paused).
    pub answer: Result<ReadAnswer, String>,
    /// Part of the last round of polls after quiescence.
    pub settled: bool,
}

/// Everything a live run recorded.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    pub started_us: u64,
    pub published: Vec<Published>,
    /// Every line each replica reported, in the order it reported them.
    pub lines: Vec<(u8, ReplicaLine)>,
    /// Lines of a replica's stdout that were not in the format (counted, never guessed at).
    pub unreadable_lines: u64,
    pub faults: Vec<InjectedFault>,
    pub reads: Vec<LiveRead>,
    /// Milliseconds from the end of publishing (every fault healed) until every replica
    /// answered the model's history; `None` when that did not happen within the bound.
    pub converged_after_ms: Option<u64>,
    /// How many wall microseconds one simulated millisecond of the scenario took.
    pub us_per_scenario_ms: f64,
}

impl Recording {
    /// Records a replica's line.
    pub fn replica_said(&mut self, replica: u8, text: &str) {
        match ReplicaLine::parse(text) {
            Some(line) => self.lines.push((replica, line)),
            None => self.unreadable_lines += 1,
        }
    }
}
