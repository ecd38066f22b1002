//! What the runs checker rules share about one played world, and how they read messages.

use crate::runs::observations::WorldRecord;
use crate::runs::scenario::RunsScenario;
use crate::runs::script::Scripts;
use crate::workload::StoreKind;
use history::runs::{content_text, RunEvent};
use model::runs::{ExpectedMessage, MessageKind};
use serde_json::Value;
use std::collections::BTreeMap;

pub struct Context<'a> {
    pub scenario: &'a RunsScenario,
    /// Every run's messages, expanded once.
    pub scripts: &'a Scripts,
    pub record: &'a WorldRecord,
    pub primary: StoreKind,
    /// Per thread key, per text: the id the message was emitted with (`None`: none, the views
    /// must fill uuid5). Nested, so that a check looks a message up by borrowed strings.
    pub emitted_ids: BTreeMap<String, BTreeMap<String, Option<String>>>,
}

impl Context<'_> {
    pub fn thread_id(&self, key: &str) -> &str {
        self.scenario
            .threads
            .get(key)
            .map(String::as_str)
            .unwrap_or("")
    }
}

pub fn short(text: &str) -> String {
    if text.chars().count() <= 40 {
        text.to_string()
    } else {
        format!("{}...", text.chars().take(40).collect::<String>())
    }
}

/// A rendered message dump as the model compares it.
pub fn of_rendered(m: &Value) -> ExpectedMessage {
    let text = content_text(m.get("content").unwrap_or(&Value::Null));
    let has_calls = m
        .get("tool_calls")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    let kind = match m.get("type").and_then(Value::as_str) {
        Some("human") => MessageKind::Human,
        Some("ai") if has_calls => MessageKind::AiToolCall,
        Some("ai") => MessageKind::Ai,
        Some("tool") => MessageKind::Tool,
        // An unknown type never matches an emission (none has this text).
        other => {
            return ExpectedMessage {
                run_id: String::new(),
                kind: MessageKind::Human,
                text: format!("<type {other:?}> {text}"),
            }
        }
    };
    ExpectedMessage {
        run_id: m
            .get("run_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        kind,
        text,
    }
}

/// A stored message row as the model compares it.
pub fn of_row(row: &RunEvent) -> ExpectedMessage {
    let text = content_text(row.content.get("content").unwrap_or(&Value::Null));
    match MessageKind::from_event_type(&row.event_type) {
        Some(kind) => ExpectedMessage {
            run_id: row.run_id.clone(),
            kind,
            text,
        },
        None => ExpectedMessage {
            run_id: row.run_id.clone(),
            kind: MessageKind::Human,
            text: format!("<event type {}> {text}", row.event_type),
        },
    }
}
