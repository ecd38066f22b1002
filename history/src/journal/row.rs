//! A history row: one message of a coding agent's conversation, as the journal stores it and as the
//! request spool reads it back, one at a time.

use serde::{Deserialize, Serialize};

/// Who produced a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speaker {
    Human,
    Ai,
    Tool,
}

/// One block of a row's content. Written as derived; read in one pass through its wire shape
/// (`Deserialize` is in `wire.rs`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Plain text.
    Text { text: String },
    /// An AI row's call of a tool. `arguments` is the JSON text the model produced.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    /// A tool row's answer to the call with id `call_id`.
    ToolResult {
        call_id: String,
        name: String,
        content: String,
    },
}

/// Where a row (and every journal record) came from: the main session or one subagent.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Main,
    Subagent(String),
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Row {
    pub speaker: Speaker,
    pub origin: Origin,
    pub blocks: Vec<Block>,
}

impl Row {
    /// A row of one text block.
    pub fn text(speaker: Speaker, origin: Origin, text: impl Into<String>) -> Row {
        Row {
            speaker,
            origin,
            blocks: vec![Block::Text { text: text.into() }],
        }
    }

    /// A tool's row of one result block: what call `call_id` of tool `name` gave back.
    pub fn tool_result(
        origin: Origin,
        call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Row {
        Row {
            speaker: Speaker::Tool,
            origin,
            blocks: vec![Block::ToolResult {
                call_id: call_id.into(),
                name: name.into(),
                content: content.into(),
            }],
        }
    }

    /// The UTF-8 size of every string in the row: what statistics call its bytes.
    pub fn content_bytes(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| match b {
                Block::Text { text } => text.len(),
                Block::ToolCall {
                    id,
                    name,
                    arguments,
                } => id.len() + name.len() + arguments.len(),
                Block::ToolResult {
                    call_id,
                    name,
                    content,
                } => call_id.len() + name.len() + content.len(),
            })
            .sum()
    }
}
