//! Shrinking: a failing run minimised, step by step, while the same invariant still fails.
//!
//! Greedy, like proptest's and Hypothesis's shrinkers: take the first candidate simplification
//! (largest first) that still violates the target ID, repeat until none does or the time cap is
//! spent. The result is a scenario file `histsim scenarios` replays: under `scenarios/regressions/`
//! for a bug planted in histsim's components, under the user's `--regressions-dir` for a failure
//! of their own system (`--sut`). A broken world (a hang, a breach of a system under test) is never shrunk: it
//! violates no ID to keep (`histsim run` and `histsim shrink` say "broken world, not shrunk").

use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use crate::workload::{AnyScenario, WorldConfig};
use history::BugId;
use std::time::{Duration, Instant};

pub struct ShrinkOptions {
    pub target: BugId,
    /// The world every candidate plays in: store, planted bug, system under test.
    pub world: WorldConfig,
    pub time_cap: Duration,
}

pub struct Shrunk {
    pub scenario: AnyScenario,
    pub steps_before: usize,
    pub faults_before: usize,
    pub steps: usize,
    pub faults: usize,
    pub attempts: usize,
    pub elapsed: Duration,
    /// The cap ran out before no candidate was left.
    pub capped: bool,
}

/// Whether a candidate still violates the target, in a world that did not break: a candidate
/// whose world broke (a hang or a breach of a system under test) fails another way, and a
/// scenario file must reproduce the violation, not the breakdown.
fn still_fails(s: &AnyScenario, o: &ShrinkOptions) -> bool {
    let run = s.play(&o.world);
    run.failure.is_none() && run.violations.iter().any(|v| v.id == o.target)
}

/// Minimises `scenario` while it still violates `options.target`.
pub fn shrink(scenario: &AnyScenario, options: &ShrinkOptions) -> Shrunk {
    shrink_while(scenario, options.time_cap, |c| still_fails(c, options))
}

/// Minimises `scenario` while `keeps` holds for the candidate (a failure of some kind, or a
/// difference between two systems), for at most `time_cap`.
pub fn shrink_while(
    scenario: &AnyScenario,
    time_cap: Duration,
    mut keeps: impl FnMut(&AnyScenario) -> bool,
) -> Shrunk {
    let start = Instant::now();
    let before = scenario.size();
    let mut current = scenario.clone();
    let mut attempts = 0;
    let mut capped = false;
    'outer: loop {
        for candidate in current.workload().shrink_candidates(&current) {
            if start.elapsed() >= time_cap {
                capped = true;
                break 'outer;
            }
            attempts += 1;
            if keeps(&candidate) {
                current = candidate;
                continue 'outer;
            }
        }
        break;
    }
    let after = current.size();
    Shrunk {
        scenario: current,
        steps_before: before.steps,
        faults_before: before.faults,
        steps: after.steps,
        faults: after.faults,
        attempts,
        elapsed: start.elapsed(),
        capped,
    }
}

/// The scenario file of a shrunk failure.
pub fn regression_file(
    shrunk: &Shrunk,
    target: BugId,
    seed: u64,
    planted: Option<BugId>,
) -> ScenarioFile {
    let how = planted
        .map(|p| format!(" with --planted {p}"))
        .unwrap_or_default();
    shrunk.regression(
        target,
        &format!("seed {seed}"),
        &format!("Shrunk by histsim from seed {seed}{how}"),
        format!("shrunk from seed {seed}{how}"),
    )
}

impl Shrunk {
    /// The scenario file of this shrunk failure of `target`: `source` names what failed in the
    /// title (`seed 5`), `lead` opens the description, which goes on with the shrink's figures.
    pub fn regression(
        &self,
        target: BugId,
        source: &str,
        lead: &str,
        origin: String,
    ) -> ScenarioFile {
        ScenarioFile {
            format: SCENARIO_FORMAT,
            id: target,
            title: format!("Regression: {source} violates {target}"),
            description: format!(
                "{lead}: {} steps and {} faults down to {} steps and {} faults in {} attempts.",
                self.steps_before, self.faults_before, self.steps, self.faults, self.attempts
            ),
            origin: Some(origin),
            system: None,
            found_in: None,
            scenario: self.scenario.clone(),
        }
    }
}
