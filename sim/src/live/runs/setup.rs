//! What a live runs run is asked to do: the seed's cut scenario, the fault plan, the pace, the
//! run's directory and the worker processes' command.

use super::scenario::LiveRunsScenario;
use crate::live::plan::LivePlan;
use history::Planted;
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct RunsSetup {
    pub seed: u64,
    pub live: LiveRunsScenario,
    pub plan: LivePlan,
    pub workers: u8,
    pub planted: Planted,
    /// The run's directory: the shared store, the scenario the workers read, their logs.
    pub dir: PathBuf,
    /// Wall microseconds one scenario millisecond takes (the scenario's simulated length
    /// stretched over the plan's publishing window).
    pub us_per_ms: f64,
    /// The scenario's length in the simulation, in simulated milliseconds.
    pub sim_ms: u64,
    /// Wall microseconds a worker waits before each message of a run, beside its scripted
    /// delay (the scenario's messages spread over the publishing window).
    pub message_gap_us: u64,
}

impl RunsSetup {
    pub fn store(&self) -> PathBuf {
        self.dir.join("runs.sqlite")
    }

    pub fn scenario_file(&self) -> PathBuf {
        self.dir.join("scenario.json")
    }

    /// `histsim live-runs-worker ...` for worker `k`.
    pub fn worker_args(&self, k: u8) -> Vec<String> {
        let mut args = vec![
            "live-runs-worker".to_string(),
            format!("--index={k}"),
            format!("--scenario={}", self.scenario_file().display()),
            format!("--store={}", self.store().display()),
            format!("--us-per-ms={}", self.us_per_ms),
            format!("--message-gap-us={}", self.message_gap_us),
        ];
        if let Some(bug) = self.planted.active() {
            args.push(format!("--planted={bug}"));
        }
        args
    }
}
