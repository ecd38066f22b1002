//! The two read views of a thread: `thread_history` (the newest checkpoint, its messages replaced
//! by the event store's) and `thread_messages` (the message rows). Both read every message with
//! the same filter and paging (R1, R2, R7), fill missing ids with stable uuid5 ids on COPIES
//! (R3, R10), and put the producing `run_id` on every message (R6).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::checkpoint::Checkpointer;
use super::error::RunStoreError;
use super::event::{MessageCursor, RunEvent};
use super::ids::{legacy_unstable_id, message_id};
use super::paging::read_all_messages;
use super::store::RunEventStore;
use crate::planted::{BugId, Planted};

/// Options of the views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewOptions {
    /// Message rows per `list_messages` page (the seed's helper uses 500). At least 1.
    pub page_size_events: usize,
    /// Legacy switches: R1, R2, R3, R7, R10, R31.
    pub planted: Planted,
}

impl Default for ViewOptions {
    fn default() -> ViewOptions {
        ViewOptions {
            page_size_events: 500,
            planted: Planted::none(),
        }
    }
}

/// Where `thread_history` took its messages from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageSource {
    /// The run-event store (the normal case).
    EventStore,
    /// The checkpoint, because the store has no message for the thread (threads older than the
    /// store).
    Checkpoint,
}

/// What `/history` returns: the newest checkpoint's fields, messages from the event store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadHistory {
    pub thread_id: String,
    pub title: Option<String>,
    pub extra: BTreeMap<String, Value>,
    /// Message dumps in seq order, each with `id` and `run_id` filled.
    pub messages: Vec<Value>,
    pub source: MessageSource,
}

/// One row of `/messages`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageView {
    pub seq: u64,
    pub run_id: String,
    pub user_id: Option<String>,
    pub event_type: String,
    pub created_at_ns: i64,
    /// The message dump with `id` and `run_id` filled: equal to the matching
    /// [`ThreadHistory::messages`] entry.
    pub message: Value,
}

/// The id stored in a message dump, if any.
pub fn rendered_id(message: &Value) -> Option<&str> {
    message.get("id").and_then(Value::as_str)
}

/// The run that produced a rendered message, if the dump says.
pub fn rendered_run_id(message: &Value) -> Option<&str> {
    message.get("run_id").and_then(Value::as_str)
}

/// Fills `id` (when missing or null) and `run_id` into a message dump. Non-object contents have
/// nowhere to put them and stay as they are.
fn fill_ids(content: &mut Value, id: impl FnOnce() -> String, run_id: &str) {
    if let Value::Object(map) = content {
        if map.get("id").is_none_or(Value::is_null) {
            map.insert("id".into(), Value::String(id()));
        }
        map.insert("run_id".into(), Value::String(run_id.to_string()));
    }
}

/// The legacy helper of planted R3: writes the message's id (and run id) into a row it was
/// handed, as the seed's read helper did into the store's live rows.
#[cfg(feature = "planted")]
pub fn legacy_fill_ids(row: &mut RunEvent) {
    let (thread_id, seq) = (row.thread_id.clone(), row.seq);
    fill_ids(
        Arc::make_mut(&mut row.content),
        || message_id(&thread_id, seq),
        &row.run_id,
    );
}

/// Reads every message row of the thread for a view.
fn read_rows<S: RunEventStore + ?Sized>(
    store: &S,
    thread_id: &str,
    options: &ViewOptions,
) -> Result<Vec<RunEvent>, RunStoreError> {
    #[cfg(feature = "planted")]
    if options.planted.is(BugId::R3) {
        // planted R3: the legacy helper wrote ids into the rows the store handed out (live
        // references in the memory store), so reads changed the store.
        return super::paging::read_all_messages_live(
            store,
            thread_id,
            options.page_size_events,
            &mut legacy_fill_ids,
        );
    }
    read_all_messages(store, thread_id, options.page_size_events)
}

/// Copies rows into views, ids filled on the copies.
fn render(rows: Vec<RunEvent>, options: &ViewOptions) -> Vec<MessageView> {
    let n = rows.len();
    let newest_run = rows.last().map(|r| r.run_id.clone()).unwrap_or_default();
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let mut message = Arc::unwrap_or_clone(row.content);
            if options.planted.is(BugId::R10) {
                // planted R10: ids not derived from the row, so they change between reads.
                let legacy = legacy_unstable_id(&row.thread_id, n - i);
                fill_ids(&mut message, || legacy, &row.run_id);
            }
            let run_id = if options.planted.is(BugId::R31) {
                // planted R31: the legacy view labelled every message with the thread's
                // current run (its newest row's), not the run that produced the message.
                &newest_run
            } else {
                &row.run_id
            };
            fill_ids(&mut message, || message_id(&row.thread_id, row.seq), run_id);
            MessageView {
                seq: row.seq,
                run_id: row.run_id,
                user_id: row.user_id,
                event_type: row.event_type,
                created_at_ns: row.created_at_ns,
                message,
            }
        })
        .collect()
}

/// `/history`: the newest checkpoint with its messages replaced by every message event of the
/// thread. `None` when the thread has neither a checkpoint nor a message.
pub fn thread_history<S: RunEventStore + ?Sized>(
    store: &S,
    checkpointer: &Checkpointer,
    thread_id: &str,
    options: &ViewOptions,
) -> Result<Option<ThreadHistory>, RunStoreError> {
    let checkpoint = checkpointer.latest(thread_id);
    let from_checkpoint = |cp: &super::checkpoint::Checkpoint| {
        let messages = cp.messages.iter().map(|m| m.to_content()).collect();
        (messages, MessageSource::Checkpoint)
    };
    let (messages, source) = if options.planted.is(BugId::R1) {
        // planted R1: the legacy /history returned the checkpoint's (summarized) messages.
        match &checkpoint {
            Some(cp) => from_checkpoint(cp),
            None => return Ok(None),
        }
    } else if store.count_messages(thread_id)? == 0 {
        match &checkpoint {
            Some(cp) => from_checkpoint(cp),
            None => return Ok(None),
        }
    } else {
        let rows = if options.planted.is(BugId::R2) {
            // planted R2: one list_messages(limit=1000) without a cursor: the LATEST 1000.
            store.list_messages(thread_id, 1000, MessageCursor::None)?
        } else {
            read_rows(store, thread_id, options)?
        };
        let views = render(rows, options);
        (
            views.into_iter().map(|v| v.message).collect(),
            MessageSource::EventStore,
        )
    };
    let (title, extra) = checkpoint.map_or((None, BTreeMap::new()), |cp| (cp.title, cp.extra));
    Ok(Some(ThreadHistory {
        thread_id: thread_id.to_string(),
        title,
        extra,
        messages,
        source,
    }))
}

/// `/messages`: every message row of the thread, the same rows and ids as [`thread_history`].
pub fn thread_messages<S: RunEventStore + ?Sized>(
    store: &S,
    thread_id: &str,
    options: &ViewOptions,
) -> Result<Vec<MessageView>, RunStoreError> {
    let rows = if options.planted.is(BugId::R7) {
        // planted R7: the legacy /messages capped its single read at 200 (the latest 200).
        store.list_messages(thread_id, 200, MessageCursor::None)?
    } else {
        read_rows(store, thread_id, options)?
    };
    Ok(render(rows, options))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{
        ChatMessage, Checkpoint, MemoryRunEventStore, NewRunEvent, SqliteRunEventStore,
    };
    use serde_json::json;

    fn put(store: &dyn RunEventStore, run: &str, m: &ChatMessage) {
        store
            .put_batch(vec![NewRunEvent {
                thread_id: "t".into(),
                run_id: run.into(),
                user_id: None,
                event_type: m.event_type().into(),
                category: crate::runs::Category::Message,
                content: m.to_content().into(),
                metadata: json!({}),
                created_at_ns: 0,
            }])
            .unwrap();
    }

    #[test]
    fn history_takes_messages_from_the_store_and_fields_from_the_checkpoint() {
        let store = MemoryRunEventStore::new(Planted::none());
        let cps = Checkpointer::new();
        let opts = ViewOptions::default();
        assert_eq!(thread_history(&store, &cps, "t", &opts).unwrap(), None);
        cps.put(
            "t",
            Checkpoint {
                messages: vec![ChatMessage::human("only in checkpoint")],
                title: Some("title".into()),
                extra: BTreeMap::new(),
            },
        );
        let h = thread_history(&store, &cps, "t", &opts).unwrap().unwrap();
        assert_eq!(h.source, MessageSource::Checkpoint);
        put(&store, "r1", &ChatMessage::human("hi"));
        put(
            &store,
            "r1",
            &ChatMessage::ai("hello", Some("lc_run--x".into())),
        );
        let h = thread_history(&store, &cps, "t", &opts).unwrap().unwrap();
        assert_eq!(h.title.as_deref(), Some("title"));
        assert_eq!(h.source, MessageSource::EventStore);
        assert_eq!(
            h.messages,
            vec![
                json!({"type":"human","content":"hi","id": message_id("t", 1),"run_id":"r1"}),
                json!({"type":"ai","content":"hello","id":"lc_run--x","run_id":"r1"}),
            ]
        );
        let views = thread_messages(&store, "t", &opts).unwrap();
        let from_views: Vec<Value> = views.into_iter().map(|v| v.message).collect();
        assert_eq!(from_views, h.messages);
    }

    #[test]
    fn both_backends_render_the_same() {
        let mem = MemoryRunEventStore::new(Planted::none());
        let sql = SqliteRunEventStore::open_in_memory(Planted::none()).unwrap();
        for s in [&mem as &dyn RunEventStore, &sql] {
            for i in 0..7 {
                put(s, "r", &ChatMessage::human(format!("m{i}")));
            }
        }
        let opts = ViewOptions {
            page_size_events: 3,
            planted: Planted::none(),
        };
        assert_eq!(
            thread_messages(&mem, "t", &opts).unwrap(),
            thread_messages(&sql, "t", &opts).unwrap()
        );
    }
}
