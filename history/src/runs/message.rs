//! The chat message: a LangChain-like message dump, as run events carry it in `content` and as
//! the checkpoint holds it.
//!
//! `{"type": "human"|"ai"|"tool", "content": ..., "id": null|"lc_run--...", "tool_calls": [...],
//! "tool_call_id": ...}`. Human and tool messages usually have no id (the history view fills one,
//! R10); AI messages carry the id the model produced.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::event::{AI_MESSAGE, AI_TOOL_CALL, HUMAN_MESSAGE, TOOL_RESULT};

/// Who produced a message (`type` in the dump).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    Human,
    Ai,
    Tool,
}

/// One tool call of an AI message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub args: Value,
}

/// A chat message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    #[serde(rename = "type")]
    pub kind: MessageKind,
    /// A string, or a list of content blocks (`{"type":"text","text":...}` and others).
    pub content: Value,
    #[serde(default)]
    pub id: Option<String>,
    /// AI messages only: the tools it calls. Their results follow as tool messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Tool messages only: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// Why a JSON value is not a chat message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a chat message: {0}")]
pub struct MessageError(pub String);

impl ChatMessage {
    /// A human message without an id.
    pub fn human(text: impl Into<String>) -> ChatMessage {
        ChatMessage {
            kind: MessageKind::Human,
            content: Value::String(text.into()),
            id: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// An AI message with text and the id the model gave it.
    pub fn ai(text: impl Into<String>, id: Option<String>) -> ChatMessage {
        ChatMessage {
            kind: MessageKind::Ai,
            content: Value::String(text.into()),
            id,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// An AI message that calls tools.
    pub fn ai_tool_calls(id: Option<String>, calls: Vec<ToolCall>) -> ChatMessage {
        ChatMessage {
            kind: MessageKind::Ai,
            content: Value::String(String::new()),
            id,
            tool_calls: calls,
            tool_call_id: None,
        }
    }

    /// A tool message answering the call `call_id`.
    pub fn tool(text: impl Into<String>, call_id: impl Into<String>) -> ChatMessage {
        ChatMessage {
            kind: MessageKind::Tool,
            content: Value::String(text.into()),
            id: None,
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }

    /// Parses a message dump; the error names what is wrong.
    pub fn from_content(content: &Value) -> Result<ChatMessage, MessageError> {
        serde_json::from_value(content.clone()).map_err(|e| MessageError(e.to_string()))
    }

    /// The message dump, as an event's `content` holds it.
    pub fn to_content(&self) -> Value {
        // A struct of strings, JSON values and vectors always serializes.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The event type a message of this shape is recorded under.
    pub fn event_type(&self) -> &'static str {
        match self.kind {
            MessageKind::Human => HUMAN_MESSAGE,
            MessageKind::Ai if !self.tool_calls.is_empty() => AI_TOOL_CALL,
            MessageKind::Ai => AI_MESSAGE,
            MessageKind::Tool => TOOL_RESULT,
        }
    }

    /// The plain text: a string content, or the `text` of each text block joined by newlines.
    pub fn text(&self) -> String {
        content_text(&self.content)
    }
}

/// The plain text of a message content value (see [`ChatMessage::text`]).
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            texts.join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_round_trip_and_pick_their_event_type() {
        let call = ToolCall {
            id: "c1".into(),
            name: "search".into(),
            args: json!({"q": "x"}),
        };
        let msgs = [
            ChatMessage::human("hello"),
            ChatMessage::ai_tool_calls(Some("lc_run--1".into()), vec![call]),
            ChatMessage::tool("found", "c1"),
            ChatMessage::ai("done", Some("lc_run--2".into())),
        ];
        let types: Vec<&str> = msgs.iter().map(ChatMessage::event_type).collect();
        assert_eq!(types, MESSAGE_TYPES_IN_ORDER);
        for m in &msgs {
            assert_eq!(ChatMessage::from_content(&m.to_content()).as_ref(), Ok(m));
        }
        assert_eq!(
            msgs[0].to_content(),
            json!({"type":"human","content":"hello","id":null})
        );
    }

    const MESSAGE_TYPES_IN_ORDER: [&str; 4] =
        [HUMAN_MESSAGE, AI_TOOL_CALL, TOOL_RESULT, AI_MESSAGE];

    #[test]
    fn bad_dumps_are_errors_not_panics() {
        assert!(ChatMessage::from_content(&json!({"type": "robot", "content": ""})).is_err());
        assert!(ChatMessage::from_content(&json!("text")).is_err());
        assert!(ChatMessage::from_content(&json!({"content": "no type"})).is_err());
    }

    #[test]
    fn text_joins_text_blocks() {
        let c = json!([{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]);
        assert_eq!(content_text(&c), "a\nb");
        assert_eq!(content_text(&json!(null)), "");
    }
}
