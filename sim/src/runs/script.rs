//! The messages a run emits, expanded from its [`RunSpec`]: LangChain-like message dumps with the
//! ids a model gives AI messages (`lc_run--...`), tool calls with their ids, and no id on human
//! and tool messages (the views fill those, R10).
//!
//! The world emits exactly these; the checkers read the same expansion as ground truth.

use super::scenario::{MessageSpec, RunSpec};
use history::runs::{ChatMessage, MessageKind as Shape, ToolCall};
use model::runs::MessageKind;
use serde_json::Value;

/// One message of a run, as the agent emits it.
#[derive(Clone, Debug, PartialEq)]
pub struct Emission {
    pub message: ChatMessage,
    pub kind: MessageKind,
    /// The message text: unique on its thread.
    pub text: String,
    /// Simulated milliseconds before it.
    pub after_ms: u32,
    /// The `metadata.caller` it is journaled with (only AI messages have one).
    pub caller: Option<Value>,
}

impl Emission {
    /// A final AI message (what users rate).
    pub fn is_final_ai(&self) -> bool {
        self.kind == MessageKind::Ai
    }

    /// Whether a middleware's own model call produced it (its caller says so): the world
    /// journals it like any AI message but keeps it out of the agent's state, where LangChain's
    /// middlewares never put their own calls' answers, and runs no summarization before it.
    pub fn by_middleware(&self) -> bool {
        self.caller.as_ref().is_some_and(is_middleware_caller)
    }
}

/// Whether a caller names a middleware: a string starting with `middleware:`, as DeerFlow's
/// journal tags a middleware's model calls (`middleware:title`, `middleware:summarize`). The
/// simulation's own reading, for what the world does with the message; the model states the
/// rule a reader applies apart (`model::runs::hidden_by_caller`).
pub(crate) fn is_middleware_caller(caller: &Value) -> bool {
    caller
        .as_str()
        .is_some_and(|c| c.starts_with("middleware:"))
}

/// The id the model gives the `n`-th message of a run, when it is an AI message.
pub(crate) fn ai_message_id(run_id: &str, n: usize) -> String {
    format!("lc_run--{run_id}-{n}")
}

fn tool_call_id(run_id: &str, n: usize, j: usize) -> String {
    format!("call_{run_id}_{n}_{j}")
}

fn ai(
    text: String,
    id: String,
    calls: Vec<ToolCall>,
    after_ms: u32,
    caller: Option<Value>,
) -> Emission {
    let kind = if calls.is_empty() {
        MessageKind::Ai
    } else {
        MessageKind::AiToolCall
    };
    Emission {
        message: ChatMessage {
            kind: Shape::Ai,
            content: Value::String(text.clone()),
            id: Some(id),
            tool_calls: calls,
            tool_call_id: None,
        },
        kind,
        text,
        after_ms,
        caller,
    }
}

fn tool(text: String, call_id: String, after_ms: u32) -> Emission {
    Emission {
        message: ChatMessage::tool(text.clone(), call_id),
        kind: MessageKind::Tool,
        text,
        after_ms,
        caller: None,
    }
}

/// Every run's messages, by run index, expanded once from the scenario and handed along: play
/// emits them, the checks look their texts and ids up. Cheap to clone (shared).
#[derive(Clone, Debug, Default)]
pub struct Scripts(std::rc::Rc<Vec<Vec<Emission>>>);

impl Scripts {
    /// Every run of `scenario` expanded.
    pub fn of(scenario: &super::scenario::RunsScenario) -> Scripts {
        Scripts(std::rc::Rc::new(scenario.runs.iter().map(expand).collect()))
    }

    /// The messages of the run at index `run`, in emission order.
    pub fn run(&self, run: usize) -> &[Emission] {
        &self.0[run]
    }
}

/// Every message of `run`, in emission order.
pub(crate) fn expand(run: &RunSpec) -> Vec<Emission> {
    let mut out: Vec<Emission> = Vec::new();
    for spec in &run.messages {
        match spec {
            MessageSpec::Human { text, after_ms } => out.push(Emission {
                message: ChatMessage::human(text.clone()),
                kind: MessageKind::Human,
                text: text.clone(),
                after_ms: *after_ms,
                caller: None,
            }),
            MessageSpec::Ai {
                text,
                after_ms,
                caller,
            } => {
                let n = out.len();
                out.push(ai(
                    text.clone(),
                    ai_message_id(&run.id, n),
                    Vec::new(),
                    *after_ms,
                    caller.clone(),
                ));
            }
            MessageSpec::ToolStep {
                text,
                calls,
                after_ms,
            } => {
                let n = out.len();
                let tool_calls: Vec<ToolCall> = calls
                    .iter()
                    .enumerate()
                    .map(|(j, c)| ToolCall {
                        id: tool_call_id(&run.id, n, j),
                        name: c.name.clone(),
                        args: serde_json::json!({ "step": n, "call": j }),
                    })
                    .collect();
                let ids: Vec<String> = tool_calls.iter().map(|c| c.id.clone()).collect();
                out.push(ai(
                    text.clone(),
                    ai_message_id(&run.id, n),
                    tool_calls,
                    *after_ms,
                    None,
                ));
                for (c, id) in calls.iter().zip(ids) {
                    out.push(tool(c.result.clone(), id, c.after_ms));
                }
            }
            MessageSpec::Bulk { messages } => push_bulk(&run.id, *messages, &mut out),
        }
    }
    out
}

/// A generated block of `messages` alternating tool calls and results, ending with an answer.
fn push_bulk(run_id: &str, messages: u32, out: &mut Vec<Emission>) {
    let count = messages as usize;
    let mut call = String::new();
    for i in 0..count {
        let n = out.len();
        // A pause now and then, so a long block spreads over simulated time.
        let after_ms = u32::from(i % 100 == 99);
        if i % 2 == 1 {
            out.push(tool(
                format!("{run_id}#{i} result"),
                std::mem::take(&mut call),
                after_ms,
            ));
        } else if i + 1 == count {
            out.push(ai(
                format!("{run_id}#{i} answer"),
                ai_message_id(run_id, n),
                Vec::new(),
                after_ms,
                None,
            ));
        } else {
            call = tool_call_id(run_id, n, 0);
            let calls = vec![ToolCall {
                id: call.clone(),
                name: "lookup".into(),
                args: serde_json::json!({ "step": n }),
            }];
            out.push(ai(
                format!("{run_id}#{i} call"),
                ai_message_id(run_id, n),
                calls,
                after_ms,
                None,
            ));
        }
    }
}

/// Messages `run` emits before it stops.
pub(crate) fn emitted_count(run: &RunSpec, total: usize) -> usize {
    match run.stop.after() {
        Some(after) => (after as usize).min(total),
        None => total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::scenario::ToolSpec;

    fn run(messages: Vec<MessageSpec>) -> RunSpec {
        RunSpec::plain("r", "t", messages)
    }

    #[test]
    fn tool_steps_expand_into_a_call_and_its_results() {
        let e = expand(&run(vec![
            MessageSpec::Human {
                text: "q".into(),
                after_ms: 0,
            },
            MessageSpec::ToolStep {
                text: "look".into(),
                calls: vec![
                    ToolSpec {
                        name: "a".into(),
                        result: "ra".into(),
                        after_ms: 0,
                    },
                    ToolSpec {
                        name: "b".into(),
                        result: "rb".into(),
                        after_ms: 2,
                    },
                ],
                after_ms: 1,
            },
            MessageSpec::Ai {
                text: "done".into(),
                after_ms: 0,
                caller: None,
            },
        ]));
        let kinds: Vec<MessageKind> = e.iter().map(|m| m.kind).collect();
        assert_eq!(
            kinds,
            [
                MessageKind::Human,
                MessageKind::AiToolCall,
                MessageKind::Tool,
                MessageKind::Tool,
                MessageKind::Ai
            ]
        );
        assert_eq!(e[1].message.event_type(), "ai_tool_call");
        assert_eq!(e[3].message.tool_call_id.as_deref(), Some("call_r_1_1"));
        assert_eq!(e[3].after_ms, 2);
        assert_eq!(e[4].message.id.as_deref(), Some("lc_run--r-4"));
        assert_eq!(e[0].message.id, None);
    }

    #[test]
    fn an_ai_messages_caller_is_kept_and_only_a_middlewares_marks_it() {
        let ai = |text: &str, caller: Value| MessageSpec::Ai {
            text: text.into(),
            after_ms: 0,
            caller: Some(caller),
        };
        let e = expand(&run(vec![
            ai("answer", serde_json::json!("Middleware:title")),
            ai("title", serde_json::json!("middleware:title")),
            ai("other", serde_json::json!(7)),
        ]));
        assert_eq!(e[1].caller, Some(serde_json::json!("middleware:title")));
        let by: Vec<bool> = e.iter().map(Emission::by_middleware).collect();
        assert_eq!(by, [false, true, false]);
        assert!(e.iter().all(Emission::is_final_ai));
    }

    #[test]
    fn bulk_blocks_pair_calls_and_results_and_end_odd_counts_with_an_answer() {
        for n in [1u32, 2, 7, 1001] {
            let e = expand(&run(vec![MessageSpec::Bulk { messages: n }]));
            assert_eq!(e.len(), n as usize);
            let texts: std::collections::BTreeSet<&str> =
                e.iter().map(|m| m.text.as_str()).collect();
            assert_eq!(texts.len(), e.len(), "texts are unique");
            if n % 2 == 1 {
                assert_eq!(e.last().map(|m| m.kind), Some(MessageKind::Ai));
            }
            for pair in e.chunks(2).filter(|c| c.len() == 2) {
                assert_eq!(
                    pair[1].message.tool_call_id.as_deref(),
                    Some(pair[0].message.tool_calls[0].id.as_str())
                );
            }
        }
    }
}
