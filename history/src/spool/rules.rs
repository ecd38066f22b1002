//! Which blocks each speaker may send, and how a tool call's arguments become an Anthropic `input`.
//!
//! Shared by both streaming builders. The oracle (`model::spool`) states the same rules again in
//! its own code, so a mistake here shows up as a byte difference rather than being copied into the
//! expectation.
//!
//! - a human row holds text blocks only;
//! - an AI row holds text and tool-call blocks;
//! - a tool row holds tool-result blocks only;
//! - a row with no blocks is sent as nothing: it carries nothing a provider could use, and both
//!   providers reject empty content lists.

use serde_json::value::RawValue;

use crate::journal::{Block, Row, Speaker};

use super::SpoolError;

/// The block kind as the errors name it.
pub fn block_kind(block: &Block) -> &'static str {
    match block {
        Block::Text { .. } => "text",
        Block::ToolCall { .. } => "tool_call",
        Block::ToolResult { .. } => "tool_result",
    }
}

/// Checks that every block of `row` (the row at `row_index` of the source) fits its speaker.
pub fn check_row(row_index: u64, row: &Row) -> Result<(), SpoolError> {
    for (block_index, block) in row.blocks.iter().enumerate() {
        let allowed = matches!(
            (row.speaker, block),
            (Speaker::Human, Block::Text { .. })
                | (Speaker::Ai, Block::Text { .. })
                | (Speaker::Ai, Block::ToolCall { .. })
                | (Speaker::Tool, Block::ToolResult { .. })
        );
        if !allowed {
            return Err(SpoolError::Shape {
                row_index,
                block_index,
                speaker: row.speaker,
                block: block_kind(block),
            });
        }
    }
    Ok(())
}

/// How a tool call's `arguments` text goes into an Anthropic `tool_use.input`, which must be a
/// JSON object.
#[derive(Debug, PartialEq, Eq)]
pub enum ToolInput<'a> {
    /// Arguments that are blank: `{}` (models send "" for calls without parameters).
    Empty,
    /// Arguments that are one JSON object: its text, verbatim without surrounding whitespace.
    Object(&'a str),
    /// Anything else (invalid JSON, an array, a number): `{"raw_arguments":"<the text>"}`, so the
    /// body stays valid JSON and the model still sees what it produced.
    Raw(&'a str),
}

/// Classifies a tool call's arguments text.
pub fn tool_input(arguments: &str) -> ToolInput<'_> {
    if arguments.trim().is_empty() {
        return ToolInput::Empty;
    }
    match serde_json::from_str::<&RawValue>(arguments) {
        Ok(raw) if raw.get().starts_with('{') => ToolInput::Object(raw.get()),
        _ => ToolInput::Raw(arguments),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Origin;

    #[test]
    fn rows_must_hold_blocks_their_speaker_may_send() {
        let call = Block::ToolCall {
            id: "a".into(),
            name: "n".into(),
            arguments: "{}".into(),
        };
        let result = Block::ToolResult {
            call_id: "a".into(),
            name: "n".into(),
            content: "c".into(),
        };
        let text = Block::Text { text: "t".into() };
        let row = |speaker, blocks| Row {
            speaker,
            origin: Origin::Main,
            blocks,
        };
        assert!(check_row(0, &row(Speaker::Ai, vec![text.clone(), call.clone()])).is_ok());
        assert!(check_row(0, &row(Speaker::Tool, vec![result.clone()])).is_ok());
        assert!(check_row(0, &row(Speaker::Human, vec![])).is_ok());
        let err = check_row(4, &row(Speaker::Human, vec![text.clone(), result]))
            .expect_err("a human row cannot hold a tool result");
        assert_eq!(
            err.to_string(),
            "row 4 block 1: a Human row cannot hold a tool_result block"
        );
        assert!(check_row(0, &row(Speaker::Tool, vec![text])).is_err());
        assert!(check_row(0, &row(Speaker::Human, vec![call])).is_err());
    }

    #[test]
    fn tool_inputs_are_objects_whatever_the_arguments() {
        assert_eq!(tool_input(""), ToolInput::Empty);
        assert_eq!(tool_input(" \n"), ToolInput::Empty);
        assert_eq!(
            tool_input(" {\"a\": [1]} "),
            ToolInput::Object("{\"a\": [1]}")
        );
        assert_eq!(tool_input("[1]"), ToolInput::Raw("[1]"));
        assert_eq!(tool_input("{\"a\":"), ToolInput::Raw("{\"a\":"));
        assert_eq!(tool_input("{} {}"), ToolInput::Raw("{} {}"));
    }
}
