//! The OpenAI chat body, written one row at a time.
//!
//! ```text
//! {"model":M,"messages":[SYSTEM?, MESSAGE...],"stream":B}
//! ```
//!
//! - the system prompt, if any: `{"role":"system","content":S}`;
//! - a human row: `{"role":"user","content":T}`, T its text blocks joined with `\n`;
//! - an AI row: `{"role":"assistant","content":T|null,"tool_calls":[CALL...]}`, content null
//!   when the row has no text, `tool_calls` left out when it has no calls, and
//!   CALL = `{"id":"call_<n>","type":"function","function":{"name":N,"arguments":A}}`;
//! - a tool row: one `{"role":"tool","tool_call_id":"call_<n>","content":C}` per tool result.
//!
//! Ids are mapped by [`ToolIdMapper`]. The builder holds one row at a time.

use std::io::Write;

use crate::journal::{Block, Row, Speaker};

use super::ids::ToolIdMapper;
use super::json::JsonOut;
use super::reader::RowReader;
use super::{RequestHead, RowSource, Shape, SpoolError};

const PREFIX: &str = "call_";

/// Writes the whole body of `head` and the reader's rows into `out`.
pub(crate) fn write_body<S: RowSource + ?Sized, W: Write>(
    head: &RequestHead,
    rows: &mut RowReader<'_, S>,
    out: &mut JsonOut<W>,
) -> Result<(), SpoolError> {
    debug_assert_eq!(PREFIX, Shape::OpenAiChat.tool_id_prefix());
    out.raw("{\"model\":")?;
    out.string(&head.model)?;
    out.raw(",\"messages\":[")?;
    let mut first = true;
    if let Some(system) = &head.system {
        out.raw("{\"role\":\"system\",\"content\":")?;
        out.string(system)?;
        out.raw("}")?;
        first = false;
    }
    let mut ids = ToolIdMapper::new();
    while let Some(row) = rows.next(out.written_bytes())? {
        match row.speaker {
            Speaker::Human => {
                separate(out, &mut first)?;
                out.raw("{\"role\":\"user\",\"content\":")?;
                joined_text(out, &row)?;
                out.raw("}")?;
            }
            Speaker::Ai => {
                separate(out, &mut first)?;
                assistant(out, &row, &mut ids)?;
            }
            Speaker::Tool => {
                for block in &row.blocks {
                    // check_row let only tool results into a tool row.
                    if let Block::ToolResult {
                        call_id, content, ..
                    } = block
                    {
                        separate(out, &mut first)?;
                        out.raw("{\"role\":\"tool\",\"tool_call_id\":")?;
                        out.string_with_number(PREFIX, ids.result(call_id))?;
                        out.raw(",\"content\":")?;
                        out.string(content)?;
                        out.raw("}")?;
                    }
                }
            }
        }
        rows.release(row);
    }
    out.raw("],\"stream\":")?;
    out.raw(if head.stream { "true" } else { "false" })?;
    out.raw("}")
}

/// An assistant message: the row's text, then its tool calls.
fn assistant<W: Write>(
    out: &mut JsonOut<W>,
    row: &Row,
    ids: &mut ToolIdMapper,
) -> Result<(), SpoolError> {
    out.raw("{\"role\":\"assistant\",\"content\":")?;
    if row.blocks.iter().any(|b| matches!(b, Block::Text { .. })) {
        joined_text(out, row)?;
    } else {
        out.raw("null")?;
    }
    let mut first_call = true;
    for block in &row.blocks {
        if let Block::ToolCall {
            id,
            name,
            arguments,
        } = block
        {
            out.raw(if first_call { ",\"tool_calls\":[" } else { "," })?;
            first_call = false;
            out.raw("{\"id\":")?;
            out.string_with_number(PREFIX, ids.call(id))?;
            out.raw(",\"type\":\"function\",\"function\":{\"name\":")?;
            out.string(name)?;
            out.raw(",\"arguments\":")?;
            out.string(arguments)?;
            out.raw("}}")?;
        }
    }
    if !first_call {
        out.raw("]")?;
    }
    out.raw("}")
}

/// The row's text blocks as one string, joined with `\n`, escaped block by block.
fn joined_text<W: Write>(out: &mut JsonOut<W>, row: &Row) -> Result<(), SpoolError> {
    out.string_open()?;
    let mut first = true;
    for block in &row.blocks {
        if let Block::Text { text } = block {
            if !first {
                out.string_part("\n")?;
            }
            first = false;
            out.string_part(text)?;
        }
    }
    out.string_close()
}

fn separate<W: Write>(out: &mut JsonOut<W>, first: &mut bool) -> Result<(), SpoolError> {
    if !*first {
        out.raw(",")?;
    }
    *first = false;
    Ok(())
}
