//! The runs workload (seed 003): lead agents running multi-run threads through run journals into
//! the run-event store, summarization rewriting their checkpoints, workers killed, cancelled and
//! failing, readers paginating both views, and users rating old and new answers, checked against
//! [`model::runs`] and across both store backends.
//!
//! Three phases: seed -> [`generate`] -> [`RunsScenario`] -> [`play::world::play`] ->
//! [`check::check`] against the model of the [`check::truth`] the workers emitted.

pub mod check;
pub mod feedback_record;
pub(crate) mod generate;
pub(crate) mod long_traces;
mod message_validation;
pub(crate) mod model_input;
pub(crate) mod nested;
pub mod observations;
mod op_targets;
mod op_validation;
pub(crate) mod options;
pub mod play;
pub mod record;
mod run_spec;
pub mod scenario;
pub mod script;
pub(crate) mod shrink;
pub(crate) mod store_differences;
pub(crate) mod table_read_steps;
pub mod table_reads;
pub(crate) mod tasks;

use check::probes;
use observations::WorldRecord;
pub use options::RunsOptions;
pub use scenario::RunsScenario;

use crate::sut::serve::StartServed;
use crate::workload::{FuzzTuning, StoreKind, Workload, WorkloadRun, WorldConfig};
use history::BugId;
use std::fmt::Write as _;

/// Plays `scenario` and checks every invariant.
pub fn run_scenario(scenario: &RunsScenario, config: &WorldConfig) -> WorkloadRun {
    let scripts = script::Scripts::of(scenario);
    let record = play::world::play(scenario, &scripts, config);
    let mut violations = check::check(scenario, &scripts, &record, config.store);
    if let Some(sut) = &config.sut {
        check::wording::name_the_system(&mut violations, &sut.command);
    }
    let details = config
        .keep_trace
        .then(|| describe(scenario, &record, config.store));
    let picture = config
        .keep_trace
        .then(|| check::picture::facts(scenario, &record, config.store));
    let mut coverage = crate::coverage::Coverage::default();
    check::probes::probes(scenario, &record, &mut coverage);
    WorkloadRun {
        sut_log: record.sut_log,
        left_out: record.log.left_out().clone(),
        answers: record.answers,
        coverage,
        violations,
        failure: record.failure,
        steps: record.log.emitted().iter().map(Vec::len).sum(),
        sim_elapsed_ms: record.sim_elapsed_ms,
        converged_after_ms: record.log.stopped_after_ms(),
        trace: record.trace,
        details,
        picture,
    }
}

/// At most this many messages of a history are shown, from each end.
const SHOWN_EACH_END: usize = 12;

fn show(out: &mut String, lines: &[String]) {
    let n = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if n > 2 * SHOWN_EACH_END && i == SHOWN_EACH_END {
            let _ = writeln!(out, "    ... {} more", n - 2 * SHOWN_EACH_END);
        }
        if n <= 2 * SHOWN_EACH_END || !(SHOWN_EACH_END..n - SHOWN_EACH_END).contains(&i) {
            let _ = writeln!(out, "    {line}");
        }
    }
}

/// Every /history answer of the primary store, every summarized checkpoint, and the model's
/// history of each thread, for `histsim replay --trace`.
fn describe(scenario: &RunsScenario, record: &WorldRecord, primary: StoreKind) -> String {
    let mut out = String::new();
    for (read, history, _) in record.log.views_reads() {
        let _ = writeln!(out, "  /history of {} at {}us:", read.thread, read.at_us);
        match history.primary(primary) {
            Ok(Some(h)) => {
                let lines: Vec<String> = h
                    .messages
                    .iter()
                    .map(|m| {
                        format!(
                            "{:<5} {:<8} {}",
                            m.get("type").and_then(|v| v.as_str()).unwrap_or("?"),
                            m.get("run_id").and_then(|v| v.as_str()).unwrap_or("-"),
                            history::runs::content_text(
                                m.get("content").unwrap_or(&serde_json::Value::Null)
                            )
                        )
                    })
                    .collect();
                show(&mut out, &lines);
            }
            Ok(None) => {
                let _ = writeln!(out, "    (no thread)");
            }
            Err(e) => {
                let _ = writeln!(out, "    error {e}");
            }
        }
    }
    for s in record.log.summaries() {
        let _ = writeln!(
            out,
            "  checkpoint summarized by {}:",
            scenario.runs[s.run].id
        );
        let lines: Vec<String> = s
            .messages
            .iter()
            .map(|m| format!("{:?} {}", m.kind, m.text()))
            .collect();
        show(&mut out, &lines);
    }
    let mut snapshots = check::truth::Snapshots::new(scenario, record.log.truth());
    let truth = snapshots.at_end();
    for (key, tid) in &scenario.threads {
        let _ = writeln!(out, "  the model's history of {key}:");
        let lines: Vec<String> = truth
            .expected_history(tid)
            .iter()
            .map(|m| {
                let outcome = truth.outcome(tid, &m.run_id);
                format!(
                    "{:<12} {:<8} {} (run {})",
                    m.kind.event_type(),
                    m.run_id,
                    m.text,
                    outcome.map_or_else(|| "unknown".to_string(), |o| o.to_string())
                )
            })
            .collect();
        show(&mut out, &lines);
    }
    out
}

/// The runs workload in the registry.
pub struct RunsWorkload;

impl Workload for RunsWorkload {
    const NAME: &'static str = "runs";
    const ABOUT: &'static str =
        "Run journals, the run-event stores, summarization, the views and feedback (R IDs)";
    const HAS_LIVENESS_PHASE: bool = true;
    const SUT_OPS: &'static [&'static str] = &play::system::RUNS_OPS;
    const SERVE: Option<StartServed> = Some(crate::sut::serve_runs::start);
    /// The only workload with a JSONL store: it plays the pair's first slot.
    const STORES: &'static [StoreKind] = &[StoreKind::Memory, StoreKind::Sqlite, StoreKind::Jsonl];
    /// About 20 ms a play at 30 steps. Room of 2: a thread of 1,001 messages (R2) is 20 steps
    /// of the bound, and the generator always adds two runs or more around it, which edits can
    /// remove (60 s from an empty corpus then played more inputs and reached 17,804 edges
    /// against 16,737). The target spends its time in SQLite and files and keeps the entropic
    /// schedule: its deepest bug (R2) was found in fewer samples with it.
    const FUZZ: FuzzTuning = FuzzTuning {
        steps_bound: 30,
        edit_room: 2,
        entropic: true,
    };
    /// The o200k vocabulary: the summarization budget counts the messages' tokens.
    const LOAD_SHARED_TABLES: Option<fn()> = Some(|| {
        let _ = history::runs::TokenCounter::o200k();
    });

    fn covers(id: BugId) -> bool {
        id.family() == 'R'
    }
    crate::workload_items::workload_items!(RunsOptions, RunsScenario);
    fn play_cost(scenario: &RunsScenario) -> usize {
        shrink::play_cost(scenario)
    }
}
