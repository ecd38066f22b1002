//! Shrinking: a failing run minimised, step by step, while the same invariant still fails.
//!
//! Greedy, like proptest's and Hypothesis's shrinkers: take the first candidate simplification
//! (largest first) that still violates the target ID, repeat until none does or the time cap is
//! spent. The result is a scenario file under `scenarios/regressions/` that `histsim scenarios`
//! replays.

use crate::display::{self, DisplayScenario, StoreKind, WorldConfig};
use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use history::{BugId, Planted};
use std::time::{Duration, Instant};

pub struct ShrinkOptions {
    pub target: BugId,
    pub planted: Option<BugId>,
    pub store: StoreKind,
    pub time_cap: Duration,
}

pub struct Shrunk {
    pub scenario: DisplayScenario,
    pub steps_before: usize,
    pub faults_before: usize,
    pub steps: usize,
    pub faults: usize,
    pub attempts: usize,
    pub elapsed: Duration,
    /// The cap ran out before no candidate was left.
    pub capped: bool,
}

fn still_fails(s: &DisplayScenario, o: &ShrinkOptions) -> bool {
    let run = display::run_scenario(
        s,
        &WorldConfig {
            store: o.store,
            planted: Planted::from_option(o.planted),
            keep_trace: false,
        },
    );
    run.violations.iter().any(|v| v.id == o.target)
}

/// Minimises `scenario` while it still violates `options.target`.
pub fn shrink_display(scenario: &DisplayScenario, options: &ShrinkOptions) -> Shrunk {
    let start = Instant::now();
    let (steps_before, faults_before) = display::shrink::size(scenario);
    let mut current = scenario.clone();
    let mut attempts = 0;
    let mut capped = false;
    'outer: loop {
        for candidate in display::shrink::candidates(&current) {
            if start.elapsed() >= options.time_cap {
                capped = true;
                break 'outer;
            }
            attempts += 1;
            if still_fails(&candidate, options) {
                current = candidate;
                continue 'outer;
            }
        }
        break;
    }
    let (steps, faults) = display::shrink::size(&current);
    Shrunk {
        scenario: current,
        steps_before,
        faults_before,
        steps,
        faults,
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
    ScenarioFile {
        format: SCENARIO_FORMAT,
        id: target,
        title: format!("Regression: seed {seed} violates {target}"),
        description: format!(
            "Shrunk by histsim from seed {seed}{how}: {} steps and {} faults down to {} steps and {} faults in {} attempts.",
            shrunk.steps_before, shrunk.faults_before, shrunk.steps, shrunk.faults, shrunk.attempts
        ),
        origin: Some(format!("shrunk from seed {seed}{how}")),
        display: Some(shrunk.scenario.clone()),
    }
}
