//! A live runs run from start to verdict: run it, read the shared store back, map the recording
//! onto the runs world's record and judge it with the runs workload's own checks
//! ([`crate::runs::check::check`]).

use super::recording::RunsRecording;
use super::run::run;
use super::setup::RunsSetup;
use super::stored::{read_back, StoredRows};
use super::to_world::{to_world, Mapped};
use crate::live::run::Ended;
use crate::outcome::{Violation, ViolationKind};

/// What a live runs run found.
pub struct RunsOutcome {
    pub setup: RunsSetup,
    pub recording: RunsRecording,
    pub stored: StoredRows,
    pub mapped: Mapped,
    pub violations: Vec<Violation>,
}

impl RunsOutcome {
    pub fn unsafe_run(&self) -> bool {
        (self.violations.iter()).any(|v| v.kind == ViolationKind::Safety)
    }
}

/// Runs `setup` and judges what it recorded.
pub fn live_run(setup: RunsSetup) -> Result<RunsOutcome, Ended> {
    let recording = run(setup.clone())?;
    let scenario = &setup.live.scenario;
    let thread_ids: Vec<String> = scenario.threads.values().cloned().collect();
    let stored = read_back(setup.store_kind, &setup.store(), setup.planted, &thread_ids)
        .map_err(Ended::Broken)?;
    let mapped = to_world(scenario, &recording, &stored);
    // The runs workload's own verdicts, R4's liveness included (a run whose worker never
    // reported its end is stuck, as in the world).
    let scripts = crate::runs::script::Scripts::of(scenario);
    let violations =
        crate::runs::check::check(scenario, &scripts, &mapped.record, setup.store_kind);
    Ok(RunsOutcome {
        setup,
        recording,
        stored,
        mapped,
        violations,
    })
}
