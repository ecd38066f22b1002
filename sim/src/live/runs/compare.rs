//! `histsim live --workload runs --compare-sim`: the same seeds live and in the simulation,
//! what both record side by side (docs/live.md keeps a table). Both sides are the runs world's
//! record (the live one mapped from the recording), so each figure is counted by one function
//! of the record for both; the live side alone has wall times and write calls cut by kills.

use super::outcome::{live_run, RunsOutcome};
use super::setup::RunsSetup;
use crate::live::seed_table::{compare_seeds, SeedRow};
use crate::runs::observations::WorldRecord;
use crate::runs::record::TruthEvent;
use crate::runs::scenario::RunsScenario;
use crate::verdict::Verdict;
use crate::workload::WorldConfig;
use history::runs::current::RUN_DELIVERY;
use model::runs::RunOutcome;
use std::collections::BTreeSet;
use std::ops::Range;

/// What one side of a seed recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunsFigures {
    /// Write calls the store accepted (each numbered its rows at one point of the order).
    pub write_calls: usize,
    /// Write calls the store refused (the journal keeps the rows and tries again).
    pub write_errors: usize,
    /// Runs killed before they stopped (live: by a SIGKILL of their worker; simulated: by a
    /// worker crash or a scripted kill).
    pub runs_killed: usize,
    /// Events the killed runs emitted that the store does not hold (accepted: R4's prefix),
    /// the client's receipts of them apart.
    pub events_lost: usize,
    /// Rows the store holds at the end.
    pub rows_read_back: usize,
    /// Reads the checks judged.
    pub reads_checked: usize,
    /// Milliseconds from the client's last op until every run had stopped (live: wall time;
    /// simulated: simulated time).
    pub quiet_after_ms: Option<u64>,
}

/// The figures of a world's record of `scenario` (simulated or mapped from a live run).
pub fn figures(scenario: &RunsScenario, record: &WorldRecord) -> RunsFigures {
    let log = &record.log;
    let killed: Vec<usize> = (log.truth().iter())
        .filter(|(_, _, e)| *e == TruthEvent::Stop(RunOutcome::Killed))
        .map(|(_, run, _)| *run)
        .collect();
    let lost = (killed.iter())
        .map(|run| {
            let id = &scenario.runs[*run].id;
            // The run's journal's rows (a delivery receipt is the client's).
            let stored = (log.written().iter())
                .filter(|w| &w.event.run_id == id && w.event.event_type != RUN_DELIVERY)
                .count();
            log.emitted()[*run].len().saturating_sub(stored)
        })
        .sum();
    let calls: BTreeSet<u64> = log.written().iter().map(|w| w.op).collect();
    RunsFigures {
        write_calls: calls.len(),
        write_errors: log.write_errors().len(),
        runs_killed: killed.len(),
        events_lost: lost,
        rows_read_back: record.dumps.memory.as_ref().map_or(0, Vec::len),
        reads_checked: log.reads().len(),
        quiet_after_ms: log.stopped_after_ms(),
    }
}

/// The simulation's figures for the seed's scenario with the generator's own faults.
pub fn simulated(setup: &RunsSetup) -> RunsFigures {
    let scenario = &setup.live.simulated;
    let scripts = crate::runs::script::Scripts::of(scenario);
    let config = WorldConfig::new(setup.store_kind, history::Planted::none());
    let record = crate::runs::play::world::play(scenario, &scripts, &config);
    figures(scenario, &record)
}

/// The live run's figures; the time to quiet from its recording.
pub fn live(o: &RunsOutcome) -> RunsFigures {
    let mut f = figures(&o.setup.live.scenario, &o.mapped.record);
    f.quiet_after_ms = o.recording.quiet_after_us().map(|us| us / 1000);
    f
}

/// The table's header lines.
pub const HEADER: [&str; 2] = [
    "| seed | runs | write calls accepted (refused), live / sim | calls cut by a kill: committed, not | runs killed, live / sim | events lost and accepted, live / sim | rows read back, live / sim | reads checked, live / sim | reads retried (live) | quiet after the last op (ms), live / sim |",
    "|---|---|---|---|---|---|---|---|---|---|",
];

/// One table row.
pub fn row(seed: u64, o: &RunsOutcome, live: &RunsFigures, sim: &RunsFigures) -> String {
    let ms = |c: Option<u64>| c.map_or("-".to_string(), |ms| ms.to_string());
    format!(
        "| {seed} | {} | {} ({}) / {} ({}) | {}, {} | {} / {} | {} / {} | {} / {} | {} / {} | {} | {} / {} |",
        o.setup.live.scenario.runs.len(),
        live.write_calls,
        live.write_errors,
        sim.write_calls,
        sim.write_errors,
        o.mapped.calls_committed_unconfirmed,
        o.mapped.calls_never_committed,
        live.runs_killed,
        sim.runs_killed,
        live.events_lost,
        sim.events_lost,
        live.rows_read_back,
        sim.rows_read_back,
        live.reads_checked,
        sim.reads_checked,
        o.recording.reads_retried,
        ms(live.quiet_after_ms),
        ms(sim.quiet_after_ms),
    )
}

/// Runs every seed live and in the simulation and prints the table.
pub fn cmd(seeds: Range<u64>, setup: impl Fn(u64) -> Result<RunsSetup, String>) -> Verdict {
    let dir = |s: &RunsSetup| s.dir.clone();
    compare_seeds(&HEADER, seeds, setup, dir, |seed, setup| {
        let sim = simulated(&setup);
        let dir = setup.dir.clone();
        let outcome = live_run(setup)?;
        let found = if outcome.unsafe_run() {
            Verdict::Violation
        } else {
            Verdict::Liveness
        };
        Ok(SeedRow {
            row: row(seed, &outcome, &live(&outcome), &sim),
            violation: (outcome.violations.first())
                .map(|v| (format!("{v} (run directory {})", dir.display()), found)),
        })
    })
}
