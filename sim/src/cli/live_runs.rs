//! `histsim live --workload runs`: a seed's runs scenario played by worker processes writing
//! one shared SQLite file (docs/live.md), and the hidden `histsim live-runs-worker`, one worker
//! process of such a run.

use super::live_verdict::{
    child_served, ended_early, keep_directory_unless_clean, new_run_directory, print_violations,
};
use crate::live::plan::LivePlan;
use crate::live::regression as live_regression;
use crate::live::runs::outcome::{live_run, RunsOutcome};
use crate::live::runs::regression::runs_scenario;
use crate::live::runs::setup::RunsSetup;
use crate::live::runs::worker::{serve, WorkerSetup};
use crate::live::runs::{report::report, scenario};
use crate::verdict::Verdict;
use crate::workload::{StoreKind, WorldConfig};
use history::{BugId, Planted};
use std::path::PathBuf;

/// What `histsim live --workload runs` was asked.
pub(crate) struct RunsOptions {
    pub seconds: u64,
    pub seed: u64,
    pub workers: u8,
    pub store: StoreKind,
    pub planted: Option<BugId>,
    pub regressions_dir: PathBuf,
}

pub(crate) fn cmd(options: RunsOptions) -> Verdict {
    if let Some(id) = options.planted.filter(|id| id.family() != 'R') {
        return Verdict::usage(&format!(
            "--planted {id}: the runs workload covers the R IDs"
        ));
    }
    let setup = match setup(&options) {
        Ok(s) => s,
        Err(e) => return Verdict::usage(&e),
    };
    let scenario = &setup.live.scenario;
    println!(
        "live runs seed {}: {} store, {} workers, {} runs on {} threads, {} client ops, {} faults, {:.0} us a scenario ms ({} simulated ms), {} ms before each message, run directory {}",
        setup.seed,
        setup.store_kind.as_str(),
        setup.workers,
        scenario.runs.len(),
        scenario.threads.len(),
        scenario.ops.len(),
        setup.plan.faults.len(),
        setup.us_per_ms,
        setup.sim_ms,
        setup.message_gap_us / 1000,
        setup.dir.display()
    );
    match live_run(setup) {
        Ok(outcome) => verdict_of(&outcome, &options),
        Err(ended) => ended_early(ended),
    }
}

/// Prints the report and the violations; a failing run's scenario file is written and played.
fn verdict_of(outcome: &RunsOutcome, options: &RunsOptions) -> Verdict {
    print!("{}", report(outcome));
    print_violations(
        &outcome.violations,
        "the live run as a scenario",
        || live_regression::write(runs_scenario(outcome), &options.regressions_dir),
        |path| {
            let setup = &outcome.setup;
            live_regression::replay_in_simulation(path, setup.store_kind, setup.planted)
        },
    );
    let verdict = if outcome.unsafe_run() {
        Verdict::Violation
    } else if !outcome.violations.is_empty() {
        Verdict::Liveness
    } else {
        Verdict::Clean
    };
    keep_directory_unless_clean(verdict, &outcome.setup.dir)
}

/// The seed's cut scenario, its fault plan, the pace and a fresh run directory.
pub(crate) fn setup(options: &RunsOptions) -> Result<RunsSetup, String> {
    let live = scenario::of_seed(options.seed, options.workers, options.store)?;
    // The scenario's length in the simulation sets the pace: it is stretched over the plan's
    // publishing window (two thirds of `--seconds`).
    let simulated = crate::runs::play::world::play(
        &live.scenario,
        &crate::runs::script::Scripts::of(&live.scenario),
        &WorldConfig::new(StoreKind::Sqlite, Planted::none()),
    );
    let sim_ms = simulated.sim_elapsed_ms.max(1);
    let plan = LivePlan::of_seed(options.seed, options.seconds, options.workers, false);
    let us_per_ms = (plan.publish_ms as f64 * 1000.0 / sim_ms as f64).clamp(50.0, 50_000.0);
    // The simulation's runs emit most messages in one instant: a gap before each message
    // spreads them over the window as if the runs played one after another (at most 200 ms).
    let messages: usize = live.scenario.runs.iter().map(|r| r.message_count()).sum();
    let message_gap_us = (plan.publish_ms * 1000 / messages.max(1) as u64).min(200_000);
    let dir = new_run_directory("histsim-live-runs-")?;
    Ok(RunsSetup {
        seed: options.seed,
        live,
        plan,
        workers: options.workers,
        planted: Planted::from_option(options.planted),
        store_kind: options.store,
        dir,
        us_per_ms,
        sim_ms,
        message_gap_us,
    })
}

#[derive(clap::Args)]
pub(crate) struct LiveRunsWorkerArgs {
    #[arg(long)]
    index: u8,
    #[arg(long)]
    scenario: PathBuf,
    #[arg(long)]
    store: PathBuf,
    #[arg(long)]
    us_per_ms: f64,
    #[arg(long, default_value_t = 0)]
    message_gap_us: u64,
    #[arg(long)]
    planted: Option<BugId>,
    #[arg(long, value_enum, default_value = "sqlite")]
    store_kind: StoreKind,
}

pub(crate) fn worker_cmd(args: LiveRunsWorkerArgs) -> Verdict {
    let setup = WorkerSetup {
        index: args.index,
        scenario: args.scenario,
        store: args.store,
        store_kind: args.store_kind,
        planted: Planted::from_option(args.planted),
        us_per_ms: args.us_per_ms,
        message_gap_us: args.message_gap_us,
    };
    child_served(&format!("worker-{}", args.index), serve(setup))
}
