//! Which callers' edits reached a store (R3's diagnosis): the rows whose stored content holds a
//! note a caller wrote into its own copy ([`history::runs::edit_callers_row`]) that the written
//! row lacks. The rows differ from the writes either way; the note says which caller's edit a
//! store let through (a reader's or a writer's), beside a legacy read's own edits.

use history::runs::{RunEvent, CALLER_EDIT_KEY};
use serde_json::Value;
use std::collections::BTreeMap;

/// The notes of callers' edits found in `dump` and not in `written` (row by row, in dump
/// order), each with the first row it is in: `""` when there are none, else
/// `"; callers' edits reached it: `NOTE` (row seq N of RUN), ..."`.
pub fn reached(dump: &[RunEvent], written: &[&RunEvent]) -> String {
    let mut first: BTreeMap<String, String> = BTreeMap::new();
    for (stored, w) in dump.iter().zip(written) {
        let (mut now, mut then) = (Vec::new(), Vec::new());
        notes(&stored.content, &mut now);
        notes(&w.content, &mut then);
        for note in now.into_iter().filter(|n| !then.contains(n)) {
            first
                .entry(note)
                .or_insert_with(|| format!("row seq {} of {}", stored.seq, stored.run_id));
        }
    }
    if first.is_empty() {
        return String::new();
    }
    let listed: Vec<String> = first
        .iter()
        .map(|(note, row)| format!("`{note}` ({row})"))
        .collect();
    format!("; callers' edits reached it: {}", listed.join(", "))
}

/// Every caller's note inside `v`.
fn notes(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(note)) = map.get(CALLER_EDIT_KEY) {
                out.push(note.clone());
            }
            map.values().for_each(|c| notes(c, out));
        }
        Value::Array(items) => items.iter().for_each(|c| notes(c, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::runs::{Category, NewRunEvent};
    use serde_json::json;

    fn row(seq: u64, content: Value) -> RunEvent {
        NewRunEvent {
            thread_id: "t".into(),
            run_id: "r".into(),
            user_id: None,
            event_type: "ai_tool_call".into(),
            category: Category::Message,
            content: content.into(),
            metadata: json!({}),
            created_at_ns: 0,
        }
        .with_seq(seq)
    }

    #[test]
    fn names_each_callers_edit_once_with_its_first_row() {
        let plain = json!({"tool_calls": [{"name": "f"}]});
        let by = |note: &str| json!({"tool_calls": [{"name": "f", CALLER_EDIT_KEY: note}]});
        let written = [row(1, plain.clone()), row(2, plain.clone()), row(3, plain)];
        let dump = [
            row(1, by("reader")),
            row(2, by("reader")),
            row(3, by("writer")),
        ];
        let w: Vec<&RunEvent> = written.iter().collect();
        assert_eq!(
            reached(&dump, &w),
            "; callers' edits reached it: `reader` (row seq 1 of r), `writer` (row seq 3 of r)"
        );
        assert_eq!(reached(&written, &w), "");
    }
}
