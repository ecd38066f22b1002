//! A caller's edits of the events it handled: a reader that edits nested content of the rows a
//! read handed it, and a writer that edits the content of an event after it was written. A store
//! keeps its own copy of what was written and hands out copies, so neither edit may reach the
//! stored rows (R3).
//!
//! The legacy stores that broke this (planted R3): an in-memory store that handed readers its
//! own nested objects (deer-flow#5405) or kept the writer's content object (adk-python#7213).
//! Rust's shared content is copied on write, so the legacy path is modelled as what such a
//! store let happen: the caller's edit reaching the stored row as well.

use super::event::{MessageCursor, RunEvent};
use super::{RunEventStore, RunStoreError};
#[cfg(feature = "planted")]
use crate::planted::BugId;
use crate::planted::Planted;
use serde_json::Value;
use std::sync::Arc;

/// The key a caller's edit writes into a nested object of an event's content.
pub const CALLER_EDIT_KEY: &str = "caller_edit";

/// Writes `CALLER_EDIT_KEY: note` into the first object nested inside `content` (depth first,
/// the top level itself excluded): what a caller that edits nested content changes. `false`
/// when the content holds no nested object (nothing edited).
pub fn edit_nested(content: &mut Value, note: &str) -> bool {
    let children: Vec<&mut Value> = match content {
        Value::Object(map) => map.values_mut().collect(),
        Value::Array(items) => items.iter_mut().collect(),
        _ => return false,
    };
    for child in children {
        if let Value::Object(map) = child {
            map.insert(CALLER_EDIT_KEY.to_string(), Value::String(note.to_string()));
            return true;
        }
        if edit_nested(child, note) {
            return true;
        }
    }
    false
}

/// The caller edits its own `row` (one a read answered, or one it wrote) with [`edit_nested`]:
/// on its copy only, the store untouched. Under planted R3, the legacy memory store shared the
/// row's objects with the caller, so the edit reaches the stored row too (a store that can
/// only hand out copies, such as SQL, is untouched either way). Returns whether the caller's
/// copy changed.
pub fn edit_callers_row<S: RunEventStore + ?Sized>(
    store: &S,
    planted: Planted,
    row: &mut RunEvent,
    note: &str,
) -> Result<bool, RunStoreError> {
    let mut content = Value::clone(&row.content);
    if !edit_nested(&mut content, note) {
        return Ok(false);
    }
    row.content = Arc::new(content);
    #[cfg(feature = "planted")]
    if planted.is(BugId::R3) {
        // planted R3: the stored row's objects were the caller's.
        let (run_id, seq) = (row.run_id.clone(), row.seq);
        let cursor = MessageCursor::Both {
            before: seq + 1,
            after: seq.saturating_sub(1),
        };
        store.legacy_edit_messages(&row.thread_id, 1, cursor, &mut |stored| {
            if stored.seq == seq && stored.run_id == run_id {
                edit_nested(Arc::make_mut(&mut stored.content), note);
            }
        })?;
    }
    #[cfg(not(feature = "planted"))]
    let _ = (store, planted, MessageCursor::None);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::event::{human_message, NewRunEvent};
    use crate::runs::MemoryRunEventStore;
    use serde_json::json;

    /// An AI tool call of run `r` on thread `t` carrying `content`: the store tests' row with
    /// another type and content.
    fn write(store: &MemoryRunEventStore, content: Value) -> RunEvent {
        store
            .put(NewRunEvent {
                event_type: "ai_tool_call".into(),
                content: content.into(),
                created_at_ns: 0,
                ..human_message("t", "r")
            })
            .unwrap()
    }

    #[test]
    fn the_edit_goes_into_the_first_nested_object() {
        let mut v = json!({"content": "hi", "tool_calls": [{"name": "f", "args": {}}]});
        assert!(edit_nested(&mut v, "reader"));
        assert_eq!(v["tool_calls"][0][CALLER_EDIT_KEY], "reader");
        let mut flat = json!({"type": "human", "content": "hi"});
        assert!(!edit_nested(&mut flat, "reader"));
        assert_eq!(flat, json!({"type": "human", "content": "hi"}));
    }

    #[test]
    fn a_callers_edit_leaves_the_store_alone() {
        let store = MemoryRunEventStore::new(Planted::none());
        let content = json!({"type": "ai", "tool_calls": [{"name": "f", "args": {"q": 1}}]});
        let mut written = write(&store, content.clone());
        assert!(edit_callers_row(&store, Planted::none(), &mut written, "writer").unwrap());
        assert_eq!(written.content["tool_calls"][0][CALLER_EDIT_KEY], "writer");
        let stored = store.list_messages("t", 10, MessageCursor::None).unwrap();
        assert_eq!(*stored[0].content, content);
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_r3_lets_the_edit_reach_the_memory_store() {
        let store = MemoryRunEventStore::new(Planted::none());
        let content = json!({"type": "ai", "tool_calls": [{"name": "f", "args": {"q": 1}}]});
        let mut read = write(&store, content);
        let planted = Planted::only(BugId::R3);
        assert!(edit_callers_row(&store, planted, &mut read, "reader").unwrap());
        let stored = store.list_messages("t", 10, MessageCursor::None).unwrap();
        assert_eq!(stored[0].content, read.content);
    }
}
