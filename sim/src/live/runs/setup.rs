//! What a live runs run is asked to do: the seed's cut scenario, the fault plan, the pace, the
//! run's directory and the worker processes' command.

use super::scenario::LiveRunsScenario;
use crate::live::plan::LivePlan;
use crate::workload::StoreKind;
use history::Planted;
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct RunsSetup {
    pub seed: u64,
    pub live: LiveRunsScenario,
    pub plan: LivePlan,
    pub workers: u8,
    pub planted: Planted,
    /// The shared store: `Sqlite` (one file, several writer processes) or `Jsonl` (one
    /// directory, one writer process: the store's index lives in the process that opened it).
    pub store_kind: StoreKind,
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
    /// The shared store: the SQLite file, or the JSONL store's directory.
    pub fn store(&self) -> PathBuf {
        match self.store_kind {
            StoreKind::Jsonl => self.dir.join("runs-jsonl"),
            _ => self.dir.join("runs.sqlite"),
        }
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
            format!("--store-kind={}", self.store_kind.as_str()),
        ];
        if let Some(bug) = self.planted.active() {
            args.push(format!("--planted={bug}"));
        }
        args
    }
}
