//! What a played display world leaves for the checkers: the emission log (ground truth, with
//! each event's id and created_at), every answer, and which deliveries landed when.

use crate::trace::Trace;
use history::display::Projection;
use std::collections::BTreeMap;

/// One event as the agents emitted it: the ground truth the model reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    pub step: u32,
    pub event_id: String,
    pub created_at_ns: i64,
}

/// A delivery a replica's persister handed its store, answered with an error (the whole
/// batch's `err`, or the row's `failed`).
#[derive(Clone, Debug)]
pub struct AppendError {
    /// Position in the world's total order of store operations.
    pub op: u64,
    /// Simulated time of the delivery, as the trace stamps its `persist` line.
    pub at_us: u64,
    pub replica: u8,
    pub step: u32,
    /// Which copy of the step's delivery (a duplicate is a later copy).
    pub copy: u8,
    pub message: String,
}

/// One answer of a replica.
#[derive(Clone, Debug)]
pub struct Read {
    /// The turn whose request this answered; `None` for the polls after the faults healed.
    pub turn: Option<u32>,
    /// Part of the last round of polls: the settled history.
    pub settled: bool,
    /// Position in the world's total order of store operations (appends and reads).
    pub op: u64,
    pub replica: u8,
    pub at_us: u64,
    /// The history, or the error the replica answered with (the HTTP 500).
    pub result: Result<Projection, String>,
}

/// What a played world leaves for the checkers.
pub struct WorldRecord {
    pub emissions: Vec<Emitted>,
    /// For every step that reached the store: the position (in the order of store operations) of
    /// its first stored copy. The simulation's own record of which deliveries landed when.
    pub first_stored: BTreeMap<u32, u64>,
    /// Per replica: the position of the first copy of each step its own persister received.
    pub first_received: BTreeMap<(u8, u32), u64>,
    /// Every delivery a replica's store answered with an error (P15).
    pub append_errors: Vec<AppendError>,
    pub reads: Vec<Read>,
    pub trace: Trace,
    /// Set when the world did not finish (a hang, a host error).
    pub failure: Option<String>,
    pub sim_elapsed_ms: u64,
    /// Faults the bus actually injected.
    pub coverage: crate::coverage::Coverage,
    /// Simulated milliseconds from healing (every run emitted) until every replica answered the
    /// model's history; `None` if that did not happen within the bound.
    pub converged_after_ms: Option<u64>,
    /// What a system under test in a child process wrote to its stderr.
    pub sut_log: Option<String>,
    /// What it answered, op by op ([`crate::sut::tally`]); empty in process.
    pub answers: crate::coverage::Coverage,
    /// The known differences the system declared (docs/display-projection.md).
    pub declared: model::display::Declared,
    /// Once the world ended: what the system's pure projector (`project`) made of exactly the
    /// rows the store holds; `None` for a system without `project`, or a world that broke.
    pub projected: Option<Result<Projection, String>>,
}

impl WorldRecord {
    /// The record of answers judged apart from a simulated world (a live run's recording):
    /// the reads, the refused deliveries and when the replicas converged, nothing else.
    pub fn of_answers(
        reads: Vec<Read>,
        append_errors: Vec<AppendError>,
        converged_after_ms: Option<u64>,
    ) -> Self {
        WorldRecord {
            reads,
            append_errors,
            converged_after_ms,
            failure: None,
            ..WorldRecord::broken(String::new(), 0)
        }
    }

    /// The record of a world that did not finish: nothing but why.
    pub fn broken(failure: String, sim_elapsed_ms: u64) -> Self {
        WorldRecord {
            emissions: Vec::new(),
            first_stored: BTreeMap::new(),
            first_received: BTreeMap::new(),
            append_errors: Vec::new(),
            reads: Vec::new(),
            trace: Trace::new(false),
            failure: Some(failure),
            sim_elapsed_ms,
            coverage: Default::default(),
            converged_after_ms: None,
            sut_log: None,
            answers: Default::default(),
            declared: Default::default(),
            projected: None,
        }
    }
}
