//! Shrinking: a failing run minimised, step by step, while the same invariant still fails.
//!
//! Greedy, like proptest's and Hypothesis's shrinkers: take the first candidate simplification
//! (largest first) that still violates the target ID, repeat until none does or the time cap is
//! spent. The result is a scenario file under `scenarios/regressions/` that `histsim scenarios`
//! replays.

use crate::display::{self, DisplayScenario, StoreKind, WorldConfig};
use crate::runs::{self, RunsScenario};
use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use history::{BugId, Planted};
use std::time::{Duration, Instant};

pub struct ShrinkOptions {
    pub target: BugId,
    pub planted: Option<BugId>,
    pub store: StoreKind,
    pub time_cap: Duration,
}

/// A scenario of any workload.
#[derive(Clone, Debug, PartialEq)]
pub enum Scenario {
    Display(DisplayScenario),
    Runs(RunsScenario),
}

impl Scenario {
    fn size(&self) -> (usize, usize) {
        match self {
            Scenario::Display(d) => display::shrink::size(d),
            Scenario::Runs(r) => runs::shrink::size(r),
        }
    }

    fn candidates(&self) -> Vec<Scenario> {
        match self {
            Scenario::Display(d) => display::shrink::candidates(d)
                .into_iter()
                .map(Scenario::Display)
                .collect(),
            Scenario::Runs(r) => runs::shrink::candidates(r)
                .into_iter()
                .map(Scenario::Runs)
                .collect(),
        }
    }
}

pub struct Shrunk {
    pub scenario: Scenario,
    pub steps_before: usize,
    pub faults_before: usize,
    pub steps: usize,
    pub faults: usize,
    pub attempts: usize,
    pub elapsed: Duration,
    /// The cap ran out before no candidate was left.
    pub capped: bool,
}

fn still_fails(s: &Scenario, o: &ShrinkOptions) -> bool {
    let config = WorldConfig {
        store: o.store,
        planted: Planted::from_option(o.planted),
        keep_trace: false,
    };
    let violations = match s {
        Scenario::Display(d) => display::run_scenario(d, &config).violations,
        Scenario::Runs(r) => runs::run_scenario(r, &config).violations,
    };
    violations.iter().any(|v| v.id == o.target)
}

/// Minimises a display scenario while it still violates `options.target`.
pub fn shrink_display(scenario: &DisplayScenario, options: &ShrinkOptions) -> Shrunk {
    shrink(&Scenario::Display(scenario.clone()), options)
}

/// Minimises `scenario` while it still violates `options.target`.
pub fn shrink(scenario: &Scenario, options: &ShrinkOptions) -> Shrunk {
    let start = Instant::now();
    let (steps_before, faults_before) = scenario.size();
    let mut current = scenario.clone();
    let mut attempts = 0;
    let mut capped = false;
    'outer: loop {
        for candidate in current.candidates() {
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
    let (steps, faults) = current.size();
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
        display: match &shrunk.scenario {
            Scenario::Display(d) => Some(d.clone()),
            Scenario::Runs(_) => None,
        },
        runs: match &shrunk.scenario {
            Scenario::Runs(r) => Some(r.clone()),
            Scenario::Display(_) => None,
        },
    }
}
