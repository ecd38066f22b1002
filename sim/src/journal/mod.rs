//! The journal workload (seed 004): coding-agent sessions recording to file-backed history
//! journals on simulated disks, with host crashes and resumes, checked against the reference
//! model of the journal (`model::journal`).
//!
//! Seed -> [`generate`] -> [`JournalScenario`] -> [`world::play`] (hosts running [`process`]es
//! that play [`ops`]) -> [`check::check`].
//! [`meaning`] says what an operation means against a list of rows, once for the world and the
//! checker; [`record`] is what the world saw.
//!
//! Every planted journal bug (J1 to J13, J15 to J18) is reachable here. The exhaustive
//! crash-point exploration of one journal is [`crate::crash`] (`histsim crash`).

pub mod check;
pub mod generate;
pub mod meaning;
mod ops;
pub mod options;
pub mod probes;
mod process;
pub mod record;
pub mod scenario;
pub mod shrink;
pub mod world;

pub use options::JournalSimOptions;
pub use scenario::JournalScenario;
pub use world::WorldConfig;

use crate::coverage::Coverage;
use crate::outcome::Violation;
use crate::trace::Trace;
use std::fmt::Write as _;

/// What one played journal scenario produced.
pub struct JournalRun {
    pub violations: Vec<Violation>,
    /// The world did not finish (a hang, a host error): neither safe nor unsafe, broken.
    pub failure: Option<String>,
    pub trace: Trace,
    /// Operations that ran to their end.
    pub ops: usize,
    pub sim_elapsed_ms: u64,
    pub coverage: Coverage,
    /// With `keep_trace`: every session's final recording, as text, for people.
    pub details: Option<String>,
}

/// Plays `scenario` and checks every invariant.
pub fn run_scenario(scenario: &JournalScenario, config: &WorldConfig) -> JournalRun {
    let record = world::play(scenario, config);
    let unfinished: Vec<usize> = record
        .sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.finished)
        .map(|(i, _)| i)
        .collect();
    let failure = record.failure.clone().or_else(|| {
        (!unfinished.is_empty())
            .then(|| format!("sessions {unfinished:?} did not finish their scripts"))
    });
    // What the world saw before it broke down is still checked: a planted bug can make the code
    // under test panic later, and the violation it caused first is the finding.
    let violations = check::check(scenario, &record);
    let mut coverage = record.coverage.clone();
    probes::probes(scenario, &record, &mut coverage);
    let details = config.keep_trace.then(|| describe(&record));
    JournalRun {
        violations,
        failure,
        ops: record.ops_run,
        sim_elapsed_ms: record.sim_elapsed_ms,
        coverage,
        details,
        trace: record.trace,
    }
}

/// Every session's operations and their outcomes, one a line, for `histsim replay --trace`.
fn describe(record: &world::WorldRecord) -> String {
    let mut out = String::new();
    for (s, session) in record.sessions.iter().enumerate() {
        let _ = writeln!(out, "  session {s}:");
        for h in &session.happened {
            let line = match h {
                record::Happened::Started { incarnation, .. } => {
                    format!("process p{incarnation} started")
                }
                record::Happened::Op { op, seen } => format!("op {op}: {}", brief(seen)),
                record::Happened::Interrupted { op } => format!("op {op} interrupted"),
                record::Happened::Crash { op, during, .. } => {
                    format!("crash at op {op} (during {during:?})")
                }
                record::Happened::Restart { solo, .. } => format!(
                    "restart: {} shown {:?}, resumed {:?}, {} rows after",
                    solo.journal,
                    solo.shown.as_ref().map(Vec::len),
                    solo.resumed,
                    solo.rows_after.len()
                ),
            };
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

fn brief(seen: &record::Seen) -> String {
    use record::Seen;
    match seen {
        Seen::Solo { outcome, rows, .. } => format!("{outcome:?}, {} rows", rows.len()),
        Seen::Shared {
            outcome, primary, ..
        } => format!("{outcome:?}, {} shared rows", primary.len()),
        other => {
            let text = format!("{other:?}");
            text.chars().take(160).collect()
        }
    }
}
