//! One run event: the row the run-event store keeps, and the row a writer hands it.
//!
//! Every run of an agent on a thread emits events (messages, traces, lifecycle marks, middleware
//! notes). The store numbers them per thread with `seq` when it writes them; that number is the
//! only order a reader may rely on (seed 003; R5).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::RunStoreError;

/// Message event type: a human turn.
pub const HUMAN_MESSAGE: &str = "human_message";
/// Message event type: an AI turn that calls tools (its results follow as `tool_result`).
pub const AI_TOOL_CALL: &str = "ai_tool_call";
/// Message event type: the lead agent's final AI text of a step.
pub const AI_MESSAGE: &str = "ai_message";
/// Message event type: one tool's answer to an AI tool call.
pub const TOOL_RESULT: &str = "tool_result";
/// Lifecycle event type written when a run starts.
pub const RUN_START: &str = "run_start";
/// Lifecycle event type written when a run ends normally.
pub const RUN_END: &str = "run_end";
/// Lifecycle event type written when a run fails.
pub const RUN_ERROR: &str = "run_error";

/// The largest `seq` a store accepts: SQLite stores it as a signed 64-bit integer, and every
/// backend must accept exactly the same writes (R9).
pub const SEQ_MAX: u64 = i64::MAX as u64;

/// The four message event types, in the seed's order.
pub const MESSAGE_EVENT_TYPES: [&str; 4] = [HUMAN_MESSAGE, AI_TOOL_CALL, AI_MESSAGE, TOOL_RESULT];

/// The family of an event. Only `Message` rows make up a conversation.
///
/// The seed's four (`message`, `trace`, `lifecycle`, `middleware`) and the five the current
/// DeerFlow store writes besides them (its run-event stream contract): `outputs` (the root
/// graph's output, `run.end`, and run receipts such as `run.delivery`), `error` (`run.error`),
/// `context` (`context:memory`), `subagent` (`subagent.start|step|end`) and `workspace`
/// (`workspace_changes`). New variants are appended: the declaration order is part of what a
/// seed generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Message,
    Trace,
    Lifecycle,
    Middleware,
    Outputs,
    Error,
    Context,
    Subagent,
    Workspace,
}

impl Category {
    /// Every category, in declaration order.
    pub const ALL: [Category; 9] = [
        Category::Message,
        Category::Trace,
        Category::Lifecycle,
        Category::Middleware,
        Category::Outputs,
        Category::Error,
        Category::Context,
        Category::Subagent,
        Category::Workspace,
    ];

    /// The spelling stored in the `category` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Message => "message",
            Category::Trace => "trace",
            Category::Lifecycle => "lifecycle",
            Category::Middleware => "middleware",
            Category::Outputs => "outputs",
            Category::Error => "error",
            Category::Context => "context",
            Category::Subagent => "subagent",
            Category::Workspace => "workspace",
        }
    }

    /// Parses a stored spelling; `None` for anything else.
    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// An event as a writer hands it to the store: everything but `seq`, which the store assigns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewRunEvent {
    pub thread_id: String,
    pub run_id: String,
    /// The user the run acted for. Legacy rows have none; every read must still return them (R9).
    pub user_id: Option<String>,
    pub event_type: String,
    pub category: Category,
    /// For messages: a LangChain-like message dump, see [`super::ChatMessage`]. Shared, not
    /// copied: a write handed to two stores, or a memory store's read, counts a reference
    /// instead of copying the tree (a long thread's read is a thousand of them). It is still a
    /// value to its holders: a change goes through [`Arc::make_mut`], which copies it first
    /// when anyone else holds it, so a read can never change what a store keeps (R3).
    pub content: Arc<Value>,
    pub metadata: Value,
    /// Creation time in nanoseconds, supplied by the caller (no wall clock in this crate).
    pub created_at_ns: i64,
}

impl NewRunEvent {
    /// Checks what both backends require before they write anything, so that they reject the same
    /// events with the same error.
    pub fn validate(&self) -> Result<(), RunStoreError> {
        let bad = |field: &'static str, reason: &str| RunStoreError::InvalidEvent {
            field,
            reason: reason.to_string(),
        };
        if self.thread_id.is_empty() {
            return Err(bad("thread_id", "empty"));
        }
        if self.run_id.is_empty() {
            return Err(bad("run_id", "empty"));
        }
        if self.event_type.is_empty() {
            return Err(bad("event_type", "empty"));
        }
        Ok(())
    }

    /// [`NewRunEvent::validate`] plus the range of an explicit `seq` (1..=[`SEQ_MAX`]).
    pub fn validate_numbered(event: &RunEvent) -> Result<(), RunStoreError> {
        if event.seq == 0 || event.seq > SEQ_MAX {
            return Err(RunStoreError::InvalidEvent {
                field: "seq",
                reason: format!("{} is outside 1..={SEQ_MAX}", event.seq),
            });
        }
        event.without_seq().validate()
    }

    /// The stored row this event becomes once the store has numbered it.
    pub fn with_seq(self, seq: u64) -> RunEvent {
        RunEvent {
            thread_id: self.thread_id,
            run_id: self.run_id,
            user_id: self.user_id,
            event_type: self.event_type,
            category: self.category,
            content: self.content,
            metadata: self.metadata,
            seq,
            created_at_ns: self.created_at_ns,
        }
    }
}

/// Fails (before anything is written) when a thread would run past [`SEQ_MAX`].
pub(crate) fn check_room(
    events: &[NewRunEvent],
    mut max_seq: impl FnMut(&str) -> Result<u64, RunStoreError>,
) -> Result<(), RunStoreError> {
    let mut per_thread: BTreeMap<&str, u64> = BTreeMap::new();
    for e in events {
        *per_thread.entry(&e.thread_id).or_default() += 1;
    }
    for (thread, n) in per_thread {
        if max_seq(thread)?.saturating_add(n) > SEQ_MAX {
            return Err(RunStoreError::InvalidEvent {
                field: "seq",
                reason: format!("thread `{thread}` has no room for {n} more events"),
            });
        }
    }
    Ok(())
}

/// A stored event. Reads hand out owned copies: changing one never changes the store (R3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEvent {
    pub thread_id: String,
    pub run_id: String,
    pub user_id: Option<String>,
    pub event_type: String,
    pub category: Category,
    /// Shared as [`NewRunEvent::content`] is.
    pub content: Arc<Value>,
    pub metadata: Value,
    /// Per thread, unique and strictly increasing in write order, starting at 1.
    pub seq: u64,
    pub created_at_ns: i64,
}

impl RunEvent {
    /// The event without its number (to write it again elsewhere).
    pub fn without_seq(&self) -> NewRunEvent {
        NewRunEvent {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            user_id: self.user_id.clone(),
            event_type: self.event_type.clone(),
            category: self.category,
            content: self.content.clone(),
            metadata: self.metadata.clone(),
            created_at_ns: self.created_at_ns,
        }
    }
}

/// Where a `list_messages` page starts. Every backend implements exactly these semantics (R9);
/// results are always in ascending `seq` order and hold at most `limit` message rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageCursor {
    /// The LATEST `limit` messages (not the first ones: a single call is never a full read, R2).
    None,
    /// The last `limit` messages with `seq < before`.
    Before(u64),
    /// The first `limit` messages with `seq > after`: the forward paging cursor.
    After(u64),
    /// The first `limit` messages with `after < seq < before`, i.e. forward paging inside the
    /// window. Chosen to agree with `After` when `before` is past the end.
    Both { before: u64, after: u64 },
}

impl MessageCursor {
    /// The cursor of a page's exclusive bounds, each `None` when not set (the wire's `before`
    /// and `after`).
    pub fn from_bounds(before: Option<u64>, after: Option<u64>) -> MessageCursor {
        match (before, after) {
            (None, None) => MessageCursor::None,
            (Some(before), None) => MessageCursor::Before(before),
            (None, Some(after)) => MessageCursor::After(after),
            (Some(before), Some(after)) => MessageCursor::Both { before, after },
        }
    }
}

/// A human message of `run` on `thread`: the row the store's unit tests write.
#[cfg(test)]
pub(crate) fn human_message(thread: &str, run: &str) -> NewRunEvent {
    NewRunEvent {
        thread_id: thread.into(),
        run_id: run.into(),
        user_id: None,
        event_type: HUMAN_MESSAGE.into(),
        category: Category::Message,
        content: serde_json::json!({"type": "human", "content": "m"}).into(),
        metadata: serde_json::json!({}),
        created_at_ns: 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_round_trip_their_spelling() {
        for c in Category::ALL {
            assert_eq!(Category::parse(c.as_str()), Some(c));
        }
        assert_eq!(Category::parse("Message"), None);
    }

    #[test]
    fn validation_names_the_empty_field() {
        assert!(human_message("t", "r").validate().is_ok());
        let mut e = human_message("t", "r");
        e.run_id.clear();
        match e.validate() {
            Err(RunStoreError::InvalidEvent { field, .. }) => assert_eq!(field, "run_id"),
            other => panic!("expected InvalidEvent, got {other:?}"),
        }
    }

    #[test]
    fn seq_round_trip_keeps_every_field() {
        let stored = human_message("t", "r").with_seq(3);
        assert_eq!(stored.seq, 3);
        assert_eq!(stored.without_seq(), human_message("t", "r"));
    }
}
