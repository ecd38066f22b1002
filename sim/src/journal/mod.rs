//! The journal workload (seed 004): coding-agent sessions recording to file-backed history
//! journals on simulated disks, with host crashes and resumes, checked against the reference
//! model of the journal (`model::journal`).
//!
//! Seed -> [`generate`] -> [`JournalScenario`] -> [`world::play`] (hosts running [`process`]es
//! that play [`ops`]) -> [`check::check_keeping`].
//! [`meaning`] says what an operation means against a list of rows, once for the world and the
//! checker; [`record`] is what the world saw.
//!
//! Every planted journal bug (J1 to J13, J15 to J22) is reachable here. The exhaustive
//! crash-point exploration of one journal is [`crate::journal::crash`] (`histsim crash`).

pub(crate) mod check;
mod corrupt_rules;
mod corrupted;
pub mod crash;
mod crash_disk;
mod crash_rules;
mod expect;
mod fault_plan;
pub(crate) mod generate;
mod map;
pub(crate) mod meaning;
mod mutation_outcome;
mod op_rules;
mod ops;
pub(crate) mod options;
pub(crate) mod picture;
pub(crate) mod probes;
mod process;
pub(crate) mod record;
mod recorded_storage;
mod recovery_crash;
pub(crate) mod scenario;
mod shared_rules;
pub(crate) mod shrink;
mod state;
mod step;
mod validate;
pub(crate) mod world;

pub use crate::workload::WorldConfig;
pub use options::JournalSimOptions;
pub use scenario::JournalScenario;

use crate::workload::{FuzzTuning, Workload, WorkloadRun};
use history::BugId;
use std::fmt::Write as _;

/// Plays `scenario` and checks every invariant.
pub fn run_scenario(scenario: &JournalScenario, config: &WorldConfig) -> WorkloadRun {
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
    let mut models = picture::ModelsAtRestarts::new();
    let keep_models = config.keep_trace.then_some(&mut models);
    let mut violations = check::check_keeping(scenario, &record, keep_models);
    let mut coverage = record.coverage.clone();
    probes::probes(scenario, &record, &mut coverage);
    recorded_storage::check(
        scenario.recorded_storage_ops,
        config.planted,
        &mut violations,
        &mut coverage,
    );
    let details = config.keep_trace.then(|| describe(&record));
    WorkloadRun {
        left_out: Default::default(),
        answers: Default::default(),
        sut_log: None,
        violations,
        failure,
        steps: record.ops_run,
        sim_elapsed_ms: record.sim_elapsed_ms,
        converged_after_ms: None,
        coverage,
        details,
        picture: config.keep_trace.then(|| picture::facts(&record, &models)),
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
                record::Happened::Corrupted { op, restart } => format!(
                    "restart after the crash at op {op} met a {} in its {} record at {}: shown {:?}",
                    restart.injected.corruption.kind(),
                    restart.injected.record_kind,
                    restart.injected.frame_start,
                    restart.shown.as_ref().map(Vec::len)
                ),
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
        Seen::Solo(o) => format!("{:?}, {} rows", o.outcome, o.rows.len()),
        Seen::Shared(o) => format!("{:?}, {} shared rows", o.outcome, o.primary.len()),
        other => {
            let text = format!("{other:?}");
            text.chars().take(160).collect()
        }
    }
}

/// The journal workload in the registry.
pub(crate) struct JournalWorkload;

impl Workload for JournalWorkload {
    const NAME: &'static str = "journal";
    const ABOUT: &'static str =
        "Sessions recording to history journals on crashing hosts' disks (J IDs but J14)";
    /// About 5 ms a play at 40 steps. Edit room cost here: 235 exec/s with it against 451
    /// without, and fewer edges. The entropic schedule off: 1,215 exec/s against 918 from an
    /// empty corpus in 60 s, with the same coverage.
    const FUZZ: FuzzTuning = FuzzTuning {
        steps_bound: 40,
        entropic: false,
        ..FuzzTuning::DEFAULT
    };
    /// The o200k vocabulary: its folds count every row's tokens.
    const LOAD_SHARED_TABLES: Option<fn()> = Some(|| {
        let _ = history::journal::Tokenizer::o200k();
    });

    fn covers(id: BugId) -> bool {
        id.family() == 'J' && id != BugId::J14
    }
    crate::workload_items::workload_items!(JournalSimOptions, JournalScenario);
}
