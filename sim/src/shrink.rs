//! Shrinking: a failing run minimised while the same invariant still fails.
//!
//! Like proptest's and Hypothesis's shrinkers: cuts (a run, a block of operations, a fault, a
//! plainer step) are tried the largest first and kept when the candidate still violates the
//! target ID, and every integer of the scenario (a message count, a page's limit, a latency, a
//! fault's time) is bisected toward its smallest failing value ([`search`] says in what order,
//! so that a slow system's budget goes to the moves that remove most). The result is a scenario
//! file `histsim scenarios` replays: under `scenarios/regressions/` for a bug planted in
//! histsim's components, under the user's `--regressions-dir` for a failure of their own system
//! (`--sut`). A broken world (a hang, a breach of a system under test) is never shrunk: it
//! violates no ID to keep (`histsim run` and `histsim shrink` say "broken world, not shrunk").

pub(crate) mod catalog;
mod search;

pub use search::Budget;

use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use crate::workload::{AnyScenario, WorldConfig};
use history::BugId;
use search::Search;
use std::time::Duration;

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
    shrink_within(scenario, Budget::time(options.time_cap), |c| {
        still_fails(c, options)
    })
}

/// Minimises `scenario` while it still violates `target` in `world`, within `budget`.
pub fn shrink_failure(
    scenario: &AnyScenario,
    target: BugId,
    world: &WorldConfig,
    budget: Budget,
) -> Shrunk {
    let options = ShrinkOptions {
        target,
        world: world.clone(),
        time_cap: budget.time_cap,
    };
    shrink_within(scenario, budget, |c| still_fails(c, &options))
}

/// Minimises `scenario` while `keeps` holds for the candidate (a failure of some kind, or a
/// difference between two systems), for at most `time_cap`.
pub(crate) fn shrink_while(
    scenario: &AnyScenario,
    time_cap: Duration,
    keeps: impl FnMut(&AnyScenario) -> bool,
) -> Shrunk {
    shrink_within(scenario, Budget::time(time_cap), keeps)
}

/// Minimises `scenario` while `keeps` holds for the candidate, within `budget`.
pub fn shrink_within(
    scenario: &AnyScenario,
    budget: Budget,
    keeps: impl FnMut(&AnyScenario) -> bool,
) -> Shrunk {
    let before = scenario.size();
    let mut search = Search::new(scenario, budget, keeps);
    search.run();
    let after = search.current.size();
    Shrunk {
        elapsed: search.elapsed(),
        steps_before: before.steps,
        faults_before: before.faults,
        steps: after.steps,
        faults: after.faults,
        attempts: search.attempts,
        capped: search.capped,
        scenario: search.current,
    }
}

/// The scenario file of a shrunk failure.
pub(crate) fn regression_file(
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
