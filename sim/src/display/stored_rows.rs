//! The rows a display world's agents publish, built from the scenario and the emission's id and
//! time, and what the system's pure projector makes of the rows its store holds once the world
//! ended (`project`, docs/sut-protocol.md).

use super::record::Emitted;
use super::rows::{encode_row, RowEnvelope};
use super::scenario::{DisplayScenario, Step};
use super::state::Shared;
use history::display::Projection;
use std::collections::BTreeMap;

/// The row agents publish for `step`, emitted as `event_id` at `created_at_ns`.
pub(super) fn row_of(
    scenario: &DisplayScenario,
    step: &Step,
    event_id: &str,
    created_at_ns: i64,
) -> Vec<u8> {
    let agent = scenario.agents.get(&step.agent);
    let display_id = scenario
        .displays
        .get(&step.display)
        .map(String::as_str)
        .unwrap_or("");
    let env = RowEnvelope {
        agent_class: agent.map(|a| a.class.as_str()).unwrap_or(""),
        agent_id: agent.map(|a| a.id.as_str()).unwrap_or(""),
        thread_id: &scenario.thread_id,
        display_id,
        run_id: &step.run,
        event_id,
        created_at_ns,
    };
    encode_row(&env, &step.event, step.defect.as_ref())
}

/// Once the world has ended: the system's pure projector asked for the history of exactly the
/// rows the shared store holds (each stored step's first copy, in the order they were stored),
/// which must be the model's settled history. `None` for a system without `project`. The
/// exchange is traced at the world's last instant; histsim's own projector exchanges no line,
/// so an in-process trace is the same with or without this read.
pub(super) fn project_stored(shared: &Shared, at_us: u64) -> Option<Result<Projection, String>> {
    let scenario = &shared.scenario;
    let steps: BTreeMap<u32, &Step> = scenario.steps().map(|s| (s.id, s)).collect();
    let emissions = shared.emissions.borrow();
    let emitted: BTreeMap<u32, &Emitted> = emissions.iter().map(|e| (e.step, e)).collect();
    let mut stored: Vec<(u64, u32)> = shared
        .first_stored
        .borrow()
        .iter()
        .map(|(step, op)| (*op, *step))
        .collect();
    stored.sort_unstable();
    let rows: Vec<Vec<u8>> = stored
        .iter()
        .filter_map(|(_, step)| {
            let e = emitted.get(step)?;
            Some(row_of(
                scenario,
                steps.get(step)?,
                &e.event_id,
                e.created_at_ns,
            ))
        })
        .collect();
    let refs: Vec<&[u8]> = rows.iter().map(Vec::as_slice).collect();
    let mut system = shared.system.borrow_mut();
    let answer = system.project(&refs, &shared.primary);
    let mut trace = shared.trace.borrow_mut();
    for line in system.take_transcript() {
        trace.record_text(at_us, "sut ", &line);
    }
    match answer? {
        Ok(answer) => Some(answer),
        Err(breach) => {
            shared.breach.borrow_mut().get_or_insert(breach);
            None
        }
    }
}
