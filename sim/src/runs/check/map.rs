//! The runs generator's map: which event (category and type) is written for a thread owned by a
//! user or by nobody, and which `metadata.caller` an AI message carries; each combination a cell
//! with a coverage probe (`runs.map.<category>.<event_type>.<owner>`, `runs.map.caller.<kind>`).
//!
//! The probes classify the rows the stores acknowledged ([`WorldRecord::written`]), never the
//! scripts, so a cell counts only what reached a store. docs/catalog.md ("Generator maps") lists
//! the contract's events this workload does not write, and why.

use crate::coverage::Coverage;
use crate::runs::observations::WorldRecord;
use history::runs::{current, Category, AI_MESSAGE};
use serde_json::Value;

/// The events a generated run writes, as (category, event type).
pub const EVENTS: [(Category, &str); EVENT_COUNT] = [
    (Category::Message, history::runs::HUMAN_MESSAGE),
    (Category::Message, history::runs::AI_TOOL_CALL),
    (Category::Message, AI_MESSAGE),
    (Category::Message, history::runs::TOOL_RESULT),
    (Category::Trace, "llm_response"),
    (Category::Trace, "summarization"),
    (Category::Lifecycle, history::runs::RUN_START),
    (Category::Lifecycle, history::runs::RUN_END),
    (Category::Lifecycle, history::runs::RUN_ERROR),
    (Category::Outputs, current::RUN_DELIVERY),
    (Category::Subagent, current::SUBAGENT_START),
    (Category::Subagent, current::SUBAGENT_STEP),
    (Category::Subagent, current::SUBAGENT_END),
];

/// How many events [`EVENTS`] names.
const EVENT_COUNT: usize = 13;

macro_rules! events {
    ($(($c:literal, $t:literal)),+ $(,)?) => {
        [$([
            concat!("runs.map.", $c, ".", $t, ".owned"),
            concat!("runs.map.", $c, ".", $t, ".unowned"),
        ]),+]
    };
}

/// Per event of [`EVENTS`]: its probe for a thread a user owns, and for one nobody owns.
const EVENT_PROBES: [[&str; 2]; EVENT_COUNT] = events![
    ("message", "human_message"),
    ("message", "ai_tool_call"),
    ("message", "ai_message"),
    ("message", "tool_result"),
    ("trace", "llm_response"),
    ("trace", "summarization"),
    ("lifecycle", "run_start"),
    ("lifecycle", "run_end"),
    ("lifecycle", "run_error"),
    ("outputs", "run.delivery"),
    ("subagent", "subagent.start"),
    ("subagent", "subagent.step"),
    ("subagent", "subagent.end"),
];

/// The callers an AI message may carry.
const CALLER_PROBES: [&str; 5] = [
    "runs.map.caller.none",
    "runs.map.caller.agent",
    "runs.map.caller.middleware",
    "runs.map.caller.lookalike",
    "runs.map.caller.not_a_string",
];

/// How many cells the map has.
pub const CELL_COUNT: usize = 2 * EVENT_COUNT + CALLER_PROBES.len();

/// The probe of every cell.
pub const PROBES: [&str; CELL_COUNT] = cells();

const fn cells() -> [&'static str; CELL_COUNT] {
    let mut out = [""; CELL_COUNT];
    let mut i = 0;
    while i < EVENT_COUNT {
        out[2 * i] = EVENT_PROBES[i][0];
        out[2 * i + 1] = EVENT_PROBES[i][1];
        i += 1;
    }
    let mut j = 0;
    while j < CALLER_PROBES.len() {
        out[2 * EVENT_COUNT + j] = CALLER_PROBES[j];
        j += 1;
    }
    out
}

/// The caller cell of an AI message's `metadata.caller`.
fn caller_probe(metadata: &Value) -> &'static str {
    match metadata.get("caller") {
        None | Some(Value::Null) => CALLER_PROBES[0],
        Some(Value::String(c)) if c.starts_with(current::MIDDLEWARE_PREFIX) => CALLER_PROBES[2],
        Some(Value::String(c)) if c.to_ascii_lowercase().contains("middleware") => CALLER_PROBES[3],
        Some(Value::String(_)) => CALLER_PROBES[1],
        Some(_) => CALLER_PROBES[4],
    }
}

/// Fires the cell of every row a store acknowledged.
pub fn map_probes(record: &WorldRecord, cov: &mut Coverage) {
    for written in record.log.written() {
        let e = &written.event;
        let event = EVENTS
            .iter()
            .position(|(c, t)| *c == e.category && *t == e.event_type);
        if let Some(i) = event {
            cov.hit(EVENT_PROBES[i][usize::from(e.user_id.is_none())]);
        }
        if e.event_type == AI_MESSAGE {
            cov.hit(caller_probe(&e.metadata));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_names_follow_the_events() {
        for (i, (category, event_type)) in EVENTS.iter().enumerate() {
            let stem = format!("runs.map.{}.{event_type}", category.as_str());
            assert_eq!(EVENT_PROBES[i][0], format!("{stem}.owned"));
            assert_eq!(EVENT_PROBES[i][1], format!("{stem}.unowned"));
        }
    }

    #[test]
    fn callers_are_classified_by_the_contract_prefix() {
        let probe = |c: Value| caller_probe(&json!({ "caller": c }));
        assert_eq!(caller_probe(&json!({})), "runs.map.caller.none");
        assert_eq!(probe(json!("lead_agent")), "runs.map.caller.agent");
        assert_eq!(
            probe(json!("middleware:title")),
            "runs.map.caller.middleware"
        );
        assert_eq!(
            probe(json!("Middleware:title")),
            "runs.map.caller.lookalike"
        );
        assert_eq!(
            probe(json!(" middleware:title")),
            "runs.map.caller.lookalike"
        );
        assert_eq!(probe(json!(7)), "runs.map.caller.not_a_string");
    }
}
