//! The Anthropic messages body, written one row at a time with a three-row window.
//!
//! ```text
//! {"model":M,"max_tokens":N,"system":S?,"messages":[MESSAGE...],"stream":B}
//! ```
//!
//! - a human or tool row is `user`, an AI row `assistant`; consecutive rows of one role are merged
//!   into one message (the provider requires user and assistant to alternate), so a message is
//!   `{"role":R,"content":[BLOCK...]}` with the blocks of all its rows in order;
//! - text: `{"type":"text","text":T}`;
//! - tool call: `{"type":"tool_use","id":"toolu_<n>","name":N,"input":I}`, I from
//!   the arguments (the arguments object verbatim, `{}` when blank, else `{"raw_arguments":A}`);
//! - tool result: `{"type":"tool_result","tool_use_id":"toolu_<n>","content":C}`;
//! - the last block of each of the last two non-empty rows ends with
//!   `,"cache_control":{"type":"ephemeral"}`.
//!
//! Whether a row is among the last two is known only once two more non-empty rows (or the end)
//! have been read, so the builder holds at most three rows: the one being decided and two after
//! it. That is the whole lookahead; nothing else is held.

use std::collections::VecDeque;
use std::io::Write;

use crate::journal::{Block, Row, Speaker};

use super::ids::ToolIdMapper;
use super::json::JsonOut;
use super::reader::RowReader;
use super::report::WINDOW_ROWS_MAX;
use super::rules::{tool_input, ToolInput};
use super::{RequestHead, RowSource, Shape, SpoolError};

const PREFIX: &str = "toolu_";
/// Rows that get a cache marker.
const MARKED_ROWS: usize = 2;
const CACHE_CONTROL: &str = ",\"cache_control\":{\"type\":\"ephemeral\"}";

/// Writes the whole body of `head` and the reader's rows into `out`.
pub(crate) fn write_body<S: RowSource + ?Sized, W: Write>(
    head: &RequestHead,
    rows: &mut RowReader<'_, S>,
    out: &mut JsonOut<W>,
) -> Result<(), SpoolError> {
    debug_assert_eq!(PREFIX, Shape::AnthropicMessages.tool_id_prefix());
    debug_assert_eq!(MARKED_ROWS as u64 + 1, WINDOW_ROWS_MAX);
    out.raw("{\"model\":")?;
    out.string(&head.model)?;
    out.raw(",\"max_tokens\":")?;
    out.number(u64::from(head.max_tokens))?;
    if let Some(system) = &head.system {
        out.raw(",\"system\":")?;
        out.string(system)?;
    }
    out.raw(",\"messages\":[")?;
    let mut messages = Messages {
        open_role: None,
        ids: ToolIdMapper::new(),
    };
    let mut window: VecDeque<Row> = VecDeque::with_capacity(MARKED_ROWS + 1);
    while let Some(row) = rows.next(out.written_bytes())? {
        window.push_back(row);
        if window.len() > MARKED_ROWS {
            let decided = window
                .pop_front()
                .expect("invariant: the window holds more than MARKED_ROWS rows");
            messages.row(out, &decided, false)?;
            rows.release(decided);
        }
        assert!(window.len() <= MARKED_ROWS);
    }
    // The rows left are the last non-empty ones: all get the marker.
    while let Some(last) = window.pop_front() {
        messages.row(out, &last, true)?;
        rows.release(last);
    }
    messages.close(out)?;
    out.raw("],\"stream\":")?;
    out.raw(if head.stream { "true" } else { "false" })?;
    out.raw("}")
}

/// The message being written: rows of the same role go into the open one.
struct Messages {
    open_role: Option<&'static str>,
    ids: ToolIdMapper,
}

impl Messages {
    fn row<W: Write>(
        &mut self,
        out: &mut JsonOut<W>,
        row: &Row,
        marked: bool,
    ) -> Result<(), SpoolError> {
        assert!(
            !row.blocks.is_empty(),
            "the reader skips rows with no blocks"
        );
        let role = match row.speaker {
            Speaker::Ai => "assistant",
            Speaker::Human | Speaker::Tool => "user",
        };
        match self.open_role {
            Some(open) if open == role => out.raw(",")?,
            open => {
                if open.is_some() {
                    out.raw("]},")?;
                }
                out.raw("{\"role\":\"")?;
                out.raw(role)?;
                out.raw("\",\"content\":[")?;
                self.open_role = Some(role);
            }
        }
        let last = row.blocks.len() - 1;
        for (i, block) in row.blocks.iter().enumerate() {
            if i > 0 {
                out.raw(",")?;
            }
            self.block(out, block)?;
            if marked && i == last {
                out.raw(CACHE_CONTROL)?;
            }
            out.raw("}")?;
        }
        Ok(())
    }

    /// A block without its closing brace (the cache marker may follow).
    fn block<W: Write>(&mut self, out: &mut JsonOut<W>, block: &Block) -> Result<(), SpoolError> {
        match block {
            Block::Text { text } => {
                out.raw("{\"type\":\"text\",\"text\":")?;
                out.string(text)
            }
            Block::ToolCall {
                id,
                name,
                arguments,
            } => {
                out.raw("{\"type\":\"tool_use\",\"id\":")?;
                out.string_with_number(PREFIX, self.ids.call(id))?;
                out.raw(",\"name\":")?;
                out.string(name)?;
                out.raw(",\"input\":")?;
                match tool_input(arguments) {
                    ToolInput::Empty => out.raw("{}"),
                    ToolInput::Object(object) => out.raw(object),
                    ToolInput::Raw(text) => {
                        out.raw("{\"raw_arguments\":")?;
                        out.string(text)?;
                        out.raw("}")
                    }
                }
            }
            Block::ToolResult {
                call_id, content, ..
            } => {
                out.raw("{\"type\":\"tool_result\",\"tool_use_id\":")?;
                out.string_with_number(PREFIX, self.ids.result(call_id))?;
                out.raw(",\"content\":")?;
                out.string(content)
            }
        }
    }

    fn close<W: Write>(&mut self, out: &mut JsonOut<W>) -> Result<(), SpoolError> {
        if self.open_role.take().is_some() {
            out.raw("]}")?;
        }
        Ok(())
    }
}
