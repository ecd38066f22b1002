//! Shrinking: a failing run minimised, step by step, while the same invariant still fails.
//!
//! Greedy, like proptest's and Hypothesis's shrinkers: take the first candidate simplification
//! (largest first) that still violates the target ID, repeat until none does or the time cap is
//! spent. The result is a scenario file under `scenarios/regressions/` that `histsim scenarios`
//! replays.

use crate::display::{self, DisplayScenario, StoreKind, WorldConfig};
use crate::journal::{self, JournalScenario};
use crate::runs::{self, RunsScenario};
use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use crate::spool::{self, SpoolScenario};
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
    Journal(JournalScenario),
    Spool(SpoolScenario),
}

impl Scenario {
    fn size(&self) -> (usize, usize) {
        match self {
            Scenario::Display(d) => display::shrink::size(d),
            Scenario::Runs(r) => runs::shrink::size(r),
            Scenario::Journal(j) => journal::shrink::size(j),
            Scenario::Spool(s) => spool::shrink::size(s),
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
            Scenario::Journal(j) => journal::shrink::candidates(j)
                .into_iter()
                .map(Scenario::Journal)
                .collect(),
            Scenario::Spool(s) => spool::shrink::candidates(s)
                .into_iter()
                .map(Scenario::Spool)
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
    let planted = Planted::from_option(o.planted);
    let violations = match s {
        Scenario::Display(d) => {
            let config = WorldConfig {
                store: o.store,
                planted,
                keep_trace: false,
            };
            display::run_scenario(d, &config).violations
        }
        Scenario::Runs(r) => {
            let config = WorldConfig {
                store: o.store,
                planted,
                keep_trace: false,
            };
            runs::run_scenario(r, &config).violations
        }
        Scenario::Journal(j) => {
            let config = journal::WorldConfig {
                planted,
                keep_trace: false,
            };
            journal::run_scenario(j, &config).violations
        }
        Scenario::Spool(sp) => {
            let config = spool::WorldConfig {
                planted,
                keep_trace: false,
            };
            spool::run_scenario(sp, &config).violations
        }
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
            _ => None,
        },
        runs: match &shrunk.scenario {
            Scenario::Runs(r) => Some(r.clone()),
            _ => None,
        },
        journal: match &shrunk.scenario {
            Scenario::Journal(j) => Some(j.clone()),
            _ => None,
        },
        spool: match &shrunk.scenario {
            Scenario::Spool(s) => Some(s.clone()),
            _ => None,
        },
    }
}
