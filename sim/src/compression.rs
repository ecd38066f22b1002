//! The summarization middleware's compression of a history's rows, as the simulation means it:
//! what the journal workload's sessions and the spool workload's histories both compress with,
//! and what their checks expect a compression to have written.

use history::journal::{Block, Origin, Row, Speaker};
use history::runs::{safe_cut, ChatMessage, StubSummarizer, Summarizer, ToolCall, SUMMARY_PREFIX};

/// A row as the summarization middleware sees it.
fn message(row: &Row) -> ChatMessage {
    let text: Vec<&str> = row
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    match row.speaker {
        Speaker::Human => ChatMessage::human(text.join("\n")),
        Speaker::Ai => {
            let calls: Vec<ToolCall> = row
                .blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolCall { id, name, .. } => Some(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        args: serde_json::Value::Null,
                    }),
                    _ => None,
                })
                .collect();
            if calls.is_empty() {
                ChatMessage::ai(text.join("\n"), None)
            } else {
                let mut m = ChatMessage::ai_tool_calls(None, calls);
                m.content = serde_json::Value::String(text.join("\n"));
                m
            }
        }
        Speaker::Tool => {
            let (content, call) = row
                .blocks
                .iter()
                .find_map(|b| match b {
                    Block::ToolResult {
                        call_id, content, ..
                    } => Some((content.clone(), call_id.clone())),
                    _ => None,
                })
                .unwrap_or_default();
            ChatMessage::tool(content, call)
        }
    }
}

/// The summarization middleware's compression of `rows` keeping the last `keep` (more when a
/// tool call and its results straddle the cut): the summary row (of `origin`) and how many rows
/// it replaces. `None` when nothing would be summarized.
pub fn compression(rows: &[Row], keep: u64, origin: &Origin) -> Option<(Row, u64)> {
    let messages: Vec<ChatMessage> = rows.iter().map(message).collect();
    let target = rows
        .len()
        .saturating_sub(keep.min(rows.len() as u64) as usize);
    let cut = safe_cut(&messages, target);
    if cut == 0 {
        return None;
    }
    let summary = format!(
        "{SUMMARY_PREFIX}{}",
        StubSummarizer::default().summarize(&messages[..cut])
    );
    Some((
        Row::text(Speaker::Human, origin.clone(), summary),
        cut as u64,
    ))
}
