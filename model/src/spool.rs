//! The request-body oracle (catalog J14): provider request bodies built in memory from the whole
//! row array, with `#[derive(Serialize)]` structs serialized once by `serde_json`.
//!
//! The system under test streams the same bodies row by row into a spool file (its OpenAI chat
//! and Anthropic messages writers). This module restates both shapes in the plainest way
//! (whole-array passes instead of streaming state): tool ids are numbered by scanning all earlier
//! calls, cache markers go on the last two entries of the list of non-empty rows, messages are
//! merged by looking at the last message built. For every history the streamed spool must equal
//! these bytes; `sim`'s spool checker compares them.
//!
//! The model has its own row, block and head types (written from the providers' shapes, not from
//! the `history` crate), so it can be independent of the code it judges: the simulator converts.

use serde::Serialize;
use serde_json::value::RawValue;
use std::fmt;

/// Who wrote a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speaker {
    Human,
    Ai,
    Tool,
}

/// One block of a row's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// Plain text.
    Text { text: String },
    /// An AI row's call of a tool; `arguments` is the JSON text the model produced.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    /// A tool row's answer to the call with raw id `call_id`.
    ToolResult {
        call_id: String,
        name: String,
        content: String,
    },
}

/// One history row as a request body sees it (who spoke, and what).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub speaker: Speaker,
    pub blocks: Vec<Block>,
}

/// The wire shape of a request body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// OpenAI chat completions: tool calls on assistant messages, one `tool` message per tool
    /// result, ids mapped to `call_<n>`.
    OpenAiChat,
    /// Anthropic messages: consecutive rows of one role merged, `tool_use`/`tool_result` blocks
    /// with ids mapped to `toolu_<n>`, `cache_control` on the last block of the last two
    /// non-empty rows.
    AnthropicMessages,
}

impl Shape {
    /// The prefix of mapped tool-call ids.
    fn tool_id_prefix(self) -> &'static str {
        match self {
            Shape::OpenAiChat => "call_",
            Shape::AnthropicMessages => "toolu_",
        }
    }
}

/// The request fields that are not rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub model: String,
    /// A leading `system` message (OpenAI) or the `system` field (Anthropic).
    pub system: Option<String>,
    /// Only the Anthropic shape sends it.
    pub max_tokens: u32,
    pub stream: bool,
}

/// A block its row's speaker may not send. Its text is the one the streaming builders use for
/// the same mistake, so a checker can compare the two refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    pub row_index: u64,
    pub block_index: usize,
    pub speaker: Speaker,
    /// `text`, `tool_call` or `tool_result`.
    pub block: &'static str,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "row {} block {}: a {:?} row cannot hold a {} block",
            self.row_index, self.block_index, self.speaker, self.block
        )
    }
}

impl std::error::Error for ShapeError {}

/// The body of `head` and `rows` in `shape`, in memory.
pub fn body(shape: Shape, head: &Head, rows: &[Row]) -> Result<Vec<u8>, ShapeError> {
    validate(rows)?;
    let rows: Vec<&Row> = rows.iter().filter(|r| !r.blocks.is_empty()).collect();
    let ids = number_tool_ids(&rows, shape.tool_id_prefix());
    let bytes = match shape {
        Shape::OpenAiChat => serde_json::to_vec(&openai(head, &rows, &ids)),
        Shape::AnthropicMessages => serde_json::to_vec(&anthropic(head, &rows, &ids)),
    };
    Ok(bytes.expect("derived structs of strings always serialize"))
}

/// Speaker rules, stated as the table of what each speaker may hold.
fn validate(rows: &[Row]) -> Result<(), ShapeError> {
    for (row_index, row) in rows.iter().enumerate() {
        for (block_index, block) in row.blocks.iter().enumerate() {
            let (kind, allowed) = match block {
                Block::Text { .. } => ("text", row.speaker != Speaker::Tool),
                Block::ToolCall { .. } => ("tool_call", row.speaker == Speaker::Ai),
                Block::ToolResult { .. } => ("tool_result", row.speaker == Speaker::Tool),
            };
            if !allowed {
                return Err(ShapeError {
                    row_index: row_index as u64,
                    block_index,
                    speaker: row.speaker,
                    block: kind,
                });
            }
        }
    }
    Ok(())
}

/// The mapped id of every call and result block, in block order over all rows. Calls and orphan
/// results take the next number; a result takes the number of the oldest earlier call with its raw
/// id that no earlier result took.
fn number_tool_ids(rows: &[&Row], prefix: &str) -> Vec<String> {
    // (raw id, number, answered) of every call so far.
    let mut calls: Vec<(&str, u64, bool)> = Vec::new();
    let mut next = 0u64;
    let mut out = Vec::new();
    for block in rows.iter().flat_map(|r| r.blocks.iter()) {
        let number = match block {
            Block::Text { .. } => continue,
            Block::ToolCall { id, .. } => {
                calls.push((id, next, false));
                next += 1;
                next - 1
            }
            Block::ToolResult { call_id, .. } => {
                match calls
                    .iter_mut()
                    .find(|(raw, _, answered)| *raw == call_id.as_str() && !*answered)
                {
                    Some(call) => {
                        call.2 = true;
                        call.1
                    }
                    None => {
                        next += 1;
                        next - 1
                    }
                }
            }
        };
        out.push(format!("{prefix}{number}"));
    }
    out
}

#[derive(Serialize)]
struct OpenAiBody<'a> {
    model: &'a str,
    messages: Vec<OpenAiMessage<'a>>,
    stream: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum OpenAiMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: String,
    },
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<OpenAiCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct OpenAiCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiFunction<'a>,
}

#[derive(Serialize)]
struct OpenAiFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

fn texts(row: &Row) -> Vec<&str> {
    row.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn openai<'a>(head: &'a Head, rows: &[&'a Row], ids: &'a [String]) -> OpenAiBody<'a> {
    let mut messages = Vec::new();
    if let Some(system) = &head.system {
        messages.push(OpenAiMessage::System { content: system });
    }
    let mut ids = ids.iter();
    for row in rows {
        let text = texts(row);
        match row.speaker {
            Speaker::Human => messages.push(OpenAiMessage::User {
                content: text.join("\n"),
            }),
            Speaker::Ai => {
                let mut tool_calls = Vec::new();
                for block in &row.blocks {
                    if let Block::ToolCall {
                        name, arguments, ..
                    } = block
                    {
                        tool_calls.push(OpenAiCall {
                            id: ids.next().expect("one mapped id per call"),
                            kind: "function",
                            function: OpenAiFunction { name, arguments },
                        });
                    }
                }
                messages.push(OpenAiMessage::Assistant {
                    content: (!text.is_empty()).then(|| text.join("\n")),
                    tool_calls,
                });
            }
            Speaker::Tool => {
                for block in &row.blocks {
                    if let Block::ToolResult { content, .. } = block {
                        messages.push(OpenAiMessage::Tool {
                            tool_call_id: ids.next().expect("one mapped id per result"),
                            content,
                        });
                    }
                }
            }
        }
    }
    OpenAiBody {
        model: &head.model,
        messages,
        stream: head.stream,
    }
}

#[derive(Serialize)]
struct AnthropicBody<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    messages: Vec<AnthropicMessage<'a>>,
    stream: bool,
}

#[derive(Serialize)]
struct AnthropicMessage<'a> {
    role: &'static str,
    content: Vec<AnthropicBlock<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum AnthropicBlock<'a> {
    Text {
        #[serde(rename = "type")]
        kind: &'static str,
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        #[serde(rename = "type")]
        kind: &'static str,
        id: &'a str,
        name: &'a str,
        input: Box<RawValue>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        #[serde(rename = "type")]
        kind: &'static str,
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

#[derive(Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

impl AnthropicBlock<'_> {
    fn mark(&mut self) {
        let (AnthropicBlock::Text { cache_control, .. }
        | AnthropicBlock::ToolUse { cache_control, .. }
        | AnthropicBlock::ToolResult { cache_control, .. }) = self;
        *cache_control = Some(CacheControl { kind: "ephemeral" });
    }
}

/// `input` must be an object: blank arguments are `{}`, one JSON object is kept as written (without
/// surrounding whitespace), anything else is wrapped as `{"raw_arguments": <text>}`.
fn tool_input(arguments: &str) -> Box<RawValue> {
    #[derive(Serialize)]
    struct Wrapped<'a> {
        raw_arguments: &'a str,
    }
    if arguments.trim().is_empty() {
        return RawValue::from_string("{}".to_string()).expect("{} is JSON");
    }
    match serde_json::from_str::<Box<RawValue>>(arguments) {
        Ok(raw) if raw.get().starts_with('{') => raw,
        _ => serde_json::value::to_raw_value(&Wrapped {
            raw_arguments: arguments,
        })
        .expect("a struct of one string serializes"),
    }
}

fn anthropic<'a>(head: &'a Head, rows: &[&'a Row], ids: &'a [String]) -> AnthropicBody<'a> {
    let mut ids = ids.iter();
    let marked_from = rows.len().saturating_sub(2);
    let mut messages: Vec<AnthropicMessage<'a>> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let mut blocks: Vec<AnthropicBlock<'a>> = row
            .blocks
            .iter()
            .map(|block| match block {
                Block::Text { text } => AnthropicBlock::Text {
                    kind: "text",
                    text,
                    cache_control: None,
                },
                Block::ToolCall {
                    name, arguments, ..
                } => AnthropicBlock::ToolUse {
                    kind: "tool_use",
                    id: ids.next().expect("one mapped id per call"),
                    name,
                    input: tool_input(arguments),
                    cache_control: None,
                },
                Block::ToolResult { content, .. } => AnthropicBlock::ToolResult {
                    kind: "tool_result",
                    tool_use_id: ids.next().expect("one mapped id per result"),
                    content,
                    cache_control: None,
                },
            })
            .collect();
        if i >= marked_from {
            if let Some(last) = blocks.last_mut() {
                last.mark();
            }
        }
        let role = if row.speaker == Speaker::Ai {
            "assistant"
        } else {
            "user"
        };
        match messages.last_mut() {
            Some(m) if m.role == role => m.content.append(&mut blocks),
            _ => messages.push(AnthropicMessage {
                role,
                content: blocks,
            }),
        }
    }
    AnthropicBody {
        model: &head.model,
        max_tokens: head.max_tokens,
        system: head.system.as_deref(),
        messages,
        stream: head.stream,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(speaker: Speaker, blocks: Vec<Block>) -> Row {
        Row { speaker, blocks }
    }

    fn head() -> Head {
        Head {
            model: "test-model".into(),
            system: None,
            max_tokens: 4096,
            stream: true,
        }
    }

    fn call(id: &str, arguments: &str) -> Block {
        Block::ToolCall {
            id: id.into(),
            name: "grep".into(),
            arguments: arguments.into(),
        }
    }

    fn result(id: &str, content: &str) -> Block {
        Block::ToolResult {
            call_id: id.into(),
            name: "grep".into(),
            content: content.into(),
        }
    }

    fn text(t: &str) -> Block {
        Block::Text { text: t.into() }
    }

    fn tool_round() -> Vec<Row> {
        vec![
            row(Speaker::Human, vec![text("find"), text("it")]),
            row(Speaker::Ai, vec![call("x", " {\"q\": 1} ")]),
            row(Speaker::Tool, vec![result("x", "found")]),
            row(Speaker::Ai, vec![text("done")]),
        ]
    }

    fn check(shape: Shape, head: &Head, rows: &[Row], expect: &str) {
        let got = body(shape, head, rows).expect("valid rows build");
        assert_eq!(String::from_utf8(got).expect("bodies are UTF-8"), expect);
    }

    #[test]
    fn openai_maps_calls_results_and_joined_text() {
        let head = Head {
            model: "m".into(),
            system: Some("sys".into()),
            ..head()
        };
        check(
            Shape::OpenAiChat,
            &head,
            &tool_round(),
            concat!(
                r#"{"model":"m","messages":[{"role":"system","content":"sys"},"#,
                r#"{"role":"user","content":"find\nit"},"#,
                r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"grep","arguments":" {\"q\": 1} "}}]},"#,
                r#"{"role":"tool","tool_call_id":"call_0","content":"found"},"#,
                r#"{"role":"assistant","content":"done"}],"stream":true}"#
            ),
        );
    }

    #[test]
    fn anthropic_merges_roles_and_marks_the_last_two_rows() {
        let mut rows = tool_round();
        rows.insert(3, row(Speaker::Human, vec![text("thanks")]));
        rows.push(row(Speaker::Tool, vec![]));
        check(
            Shape::AnthropicMessages,
            &Head {
                model: "m".into(),
                max_tokens: 9,
                ..head()
            },
            &rows,
            concat!(
                r#"{"model":"m","max_tokens":9,"messages":["#,
                r#"{"role":"user","content":[{"type":"text","text":"find"},{"type":"text","text":"it"}]},"#,
                r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_0","name":"grep","input":{"q": 1}}]},"#,
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_0","content":"found"},"#,
                r#"{"type":"text","text":"thanks","cache_control":{"type":"ephemeral"}}]},"#,
                r#"{"role":"assistant","content":[{"type":"text","text":"done","cache_control":{"type":"ephemeral"}}]}],"stream":true}"#
            ),
        );
    }

    #[test]
    fn tool_ids_follow_calls_and_orphans_in_order() {
        let rows = [
            row(Speaker::Ai, vec![call("a", ""), call("a", "[1]")]),
            row(
                Speaker::Tool,
                vec![result("z", "orphan"), result("a", "first")],
            ),
            row(Speaker::Tool, vec![result("a", "second")]),
        ];
        let refs: Vec<&Row> = rows.iter().collect();
        assert_eq!(
            number_tool_ids(&refs, "call_"),
            ["call_0", "call_1", "call_2", "call_0", "call_1"]
        );
        let got = body(Shape::AnthropicMessages, &head(), &rows).expect("valid rows build");
        let got = String::from_utf8(got).expect("bodies are UTF-8");
        assert!(got.contains(r#""input":{}"#), "{got}");
        assert!(got.contains(r#""input":{"raw_arguments":"[1]"}"#), "{got}");
    }

    #[test]
    fn misplaced_blocks_are_named() {
        let rows = [
            row(Speaker::Human, vec![]),
            row(Speaker::Tool, vec![text("t")]),
        ];
        let err = body(Shape::OpenAiChat, &head(), &rows).expect_err("a tool row cannot hold text");
        assert_eq!(
            err.to_string(),
            "row 1 block 0: a Tool row cannot hold a text block"
        );
    }
}
