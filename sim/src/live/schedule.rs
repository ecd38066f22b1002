//! When each step of the scenario is published, on the scenario's own clock (milliseconds), and
//! the rows it publishes: what a run of the simulation would emit, on a compressed real pace.

use crate::display::rows::{encode_row, RowEnvelope};
use crate::display::scenario::{DisplayScenario, Step};

/// Seconds since the Unix epoch at scenario time zero: `created_at` values come from the
/// scenario's clock, not the wall clock, so ties stay ties and the model sees the same order.
const EPOCH_SECS: i64 = 1_700_000_000;
/// Scenario milliseconds a request takes before its run starts.
const REQUEST_MS: u64 = 10;
/// After a turn that waits for the primary's stop, the scenario milliseconds given to it.
const STOP_WAIT_MS: u64 = 50;

/// One step to publish.
pub struct Scheduled<'a> {
    pub turn: u32,
    pub at_scenario_ms: u64,
    pub step: &'a Step,
}

/// Every step with its scenario time, and the turns' start times; then the scenario's length.
pub fn schedule(scenario: &DisplayScenario) -> (Vec<Scheduled<'_>>, Vec<u64>, u64) {
    let (mut steps, mut turns, mut t) = (Vec::new(), Vec::new(), 0u64);
    for (k, turn) in scenario.turns.iter().enumerate() {
        turns.push(t);
        t += REQUEST_MS;
        for step in &turn.steps {
            t += u64::from(step.after_ms);
            steps.push(Scheduled {
                turn: k as u32,
                at_scenario_ms: t,
                step,
            });
        }
        t += turn.wait_ms.map_or(STOP_WAIT_MS, u64::from);
    }
    (steps, turns, t.max(1))
}

/// The id of the `counter`-th published event (an ObjectId's shape).
pub fn event_id(counter: u64) -> String {
    format!("{EPOCH_SECS:08x}{counter:016x}")
}

/// `created_at` of an event published at `scenario_ms`.
pub fn created_at_ns(scenario_ms: u64) -> i64 {
    EPOCH_SECS * 1_000_000_000 + (scenario_ms as i64) * 1_000_000
}

/// The row the agents publish for `step`.
pub fn row(scenario: &DisplayScenario, step: &Step, event_id: &str, created_at_ns: i64) -> Vec<u8> {
    let agent = scenario.agents.get(&step.agent);
    let env = RowEnvelope {
        agent_class: agent.map(|a| a.class.as_str()).unwrap_or(""),
        agent_id: agent.map(|a| a.id.as_str()).unwrap_or(""),
        thread_id: &scenario.thread_id,
        display_id: scenario
            .displays
            .get(&step.display)
            .map(String::as_str)
            .unwrap_or(""),
        run_id: &step.run,
        event_id,
        created_at_ns,
    };
    encode_row(&env, &step.event, step.defect.as_ref())
}
