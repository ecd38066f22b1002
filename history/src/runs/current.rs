//! The event names the current DeerFlow runtime writes (its run-event stream contract), beside
//! the seed-era names of `runs::event` (`human_message`, `ai_message`, `run_start`, ...),
//! which stores must keep answering for: rows written before the rename stay in the store.
//!
//! Each constant's doc names the category the contract files it under.

/// `trace`: the root chain started.
pub const RUN_START: &str = "run.start";
/// `outputs`: the root graph's output when the run ended normally.
pub const RUN_END: &str = "run.end";
/// `error`: the run or a chain failed.
pub const RUN_ERROR: &str = "run.error";
/// `outputs`: the terminal delivery receipt of a run, written once through
/// `put_if_absent` (a recovery path may retry it after a worker crash).
pub const RUN_DELIVERY: &str = "run.delivery";
/// `message`: the first persisted human input of a run.
pub const LLM_HUMAN_INPUT: &str = "llm.human.input";
/// `message`: an AI response (the canonical name of the seed's `ai_message`).
pub const LLM_AI_RESPONSE: &str = "llm.ai.response";
/// `message`: a tool's result.
pub const LLM_TOOL_RESULT: &str = "llm.tool.result";
/// `trace`: a model call failed.
pub const LLM_ERROR: &str = "llm.error";
/// `context`: which hidden memory context a run saw.
pub const CONTEXT_MEMORY: &str = "context:memory";
/// `subagent`: a subagent task started (`metadata.task_id` names it).
pub const SUBAGENT_START: &str = "subagent.start";
/// `subagent`: one persisted step of a subagent task.
pub const SUBAGENT_STEP: &str = "subagent.step";
/// `subagent`: a subagent task ended.
pub const SUBAGENT_END: &str = "subagent.end";
/// `workspace`: the files a run changed.
pub const WORKSPACE_CHANGES: &str = "workspace_changes";
/// `middleware`: the prefix of a middleware's audit event (`middleware:guardrail`, ...), and of
/// the `metadata.caller` of AI messages a middleware produced (not shown as the run's answer).
pub const MIDDLEWARE_PREFIX: &str = "middleware:";

/// The event types of an AI message a reader may show as a run's answer: the current name and
/// its read-only legacy alias `ai_message`.
pub const VISIBLE_AI_EVENT_TYPES: [&str; 2] = [LLM_AI_RESPONSE, super::event::AI_MESSAGE];

/// Whether a message row is an AI answer a reader shows: one of [`VISIBLE_AI_EVENT_TYPES`] whose
/// `metadata.caller` is not a string starting with [`MIDDLEWARE_PREFIX`] (case-sensitive; a
/// missing or non-string caller is visible). The one definition both backends' SQL and code
/// follow (`get_last_visible_ai_seq_by_run`).
pub fn is_visible_ai(event_type: &str, metadata: &serde_json::Value) -> bool {
    let by_middleware = metadata
        .get("caller")
        .and_then(|c| c.as_str())
        .is_some_and(|c| c.starts_with(MIDDLEWARE_PREFIX));
    VISIBLE_AI_EVENT_TYPES.contains(&event_type) && !by_middleware
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn middleware_callers_are_hidden_case_sensitively() {
        assert!(is_visible_ai(
            LLM_AI_RESPONSE,
            &json!({"caller": "lead_agent"})
        ));
        assert!(is_visible_ai("ai_message", &json!({})));
        assert!(is_visible_ai(LLM_AI_RESPONSE, &json!({"caller": 5})));
        assert!(is_visible_ai(
            LLM_AI_RESPONSE,
            &json!({"caller": "MIDDLEWARE:x"})
        ));
        assert!(!is_visible_ai(
            LLM_AI_RESPONSE,
            &json!({"caller": "middleware:title"})
        ));
        assert!(!is_visible_ai(LLM_TOOL_RESULT, &json!({})));
    }
}
