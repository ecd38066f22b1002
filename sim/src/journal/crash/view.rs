//! The system's folded state in the model's terms, so the two can be compared with `==`.

use history::journal::{Entry, Fold, Row};
use model::journal::ModelHistory;

/// A fold as a model history: in-context rows and transcript with their ids.
pub fn model_view(fold: &Fold) -> ModelHistory<Row> {
    let pairs = |entries: &[Entry]| -> Vec<(u64, Row)> {
        entries.iter().map(|e| (e.id.0, (*e.row).clone())).collect()
    };
    ModelHistory {
        in_context: pairs(fold.in_context()),
        transcript: pairs(fold.transcript()),
        next_id: fold.next_row_id().0,
    }
}

/// A short description of a history for failure messages: in-context row texts.
pub fn describe(h: &ModelHistory<Row>) -> String {
    let texts: Vec<String> = h
        .in_context
        .iter()
        .map(|(id, r)| format!("{id}:{}", first_text(r)))
        .collect();
    format!("[{}] (next id {})", texts.join(", "), h.next_id)
}

fn first_text(r: &Row) -> String {
    r.blocks
        .first()
        .map(|b| match b {
            history::journal::Block::Text { text } => text.clone(),
            history::journal::Block::ToolCall { name, .. } => format!("call {name}"),
            history::journal::Block::ToolResult { name, .. } => format!("result {name}"),
        })
        .unwrap_or_default()
}
