//! What the run journal hears from the agent framework beside the events it is handed: the
//! input of every model call of the run (the agent's own and each middleware's), from which it
//! records the run's human input, and the start and end of every invocation of the run (the
//! root graph's and every nested one's: tool nodes, middleware, subgraphs), from which it
//! records the run's lifecycle.
//!
//! A model call's messages are the model-side view of the conversation, not what the user
//! wrote: hidden messages (`hide_from_ui`, an injected reminder) sit among them, a middleware's
//! own call (a title, a summary) carries its own prompt as a human message, and an
//! input-sanitization middleware may hand the model a rewritten copy of the user's text, the
//! original kept aside. The journal records the user's turn as the user sent it (R25): from the
//! agent's calls only, the latest human message that is not hidden, in its original form, once
//! per turn.
//!
//! A run has one start and one end (R26): its root invocation's. A nested invocation ends (or
//! fails, when the run errors or is cancelled inside it) before the root does, and writes no
//! lifecycle event.

use std::sync::Arc;

use serde_json::{json, Value};

use super::event::{Category, RUN_END, RUN_ERROR, RUN_START};
use super::journal::{JournalEntry, JournalError, RunJournal};
use super::message::{ChatMessage, MessageKind};
use super::store::RunEventStore;
use crate::planted::BugId;

/// One message of a model call's input.
#[derive(Clone, Debug, PartialEq)]
pub struct CallMessage {
    /// The message as the model receives it.
    pub message: ChatMessage,
    /// Kept from the user's view (`hide_from_ui`): injected context, never the user's turn.
    pub hide_from_ui: bool,
    /// The user's message as sent, when a middleware handed the model a rewritten copy.
    pub original: Option<ChatMessage>,
}

impl CallMessage {
    /// A message the model receives as it is.
    pub fn plain(message: ChatMessage) -> CallMessage {
        CallMessage {
            message,
            hide_from_ui: false,
            original: None,
        }
    }
}

/// The input of one model call of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelCall {
    /// Who makes the call: `None` for the agent itself, else the middleware's caller tag
    /// (`middleware:title`).
    pub caller: Option<String>,
    pub messages: Vec<CallMessage>,
}

impl ModelCall {
    /// The user's turn this call answers: the latest human message that is not hidden, as the
    /// user sent it; none for a middleware's own call.
    fn user_turn(&self) -> Option<&ChatMessage> {
        if self.caller.is_some() {
            return None;
        }
        let latest = self
            .messages
            .iter()
            .rev()
            .find(|m| m.message.kind == MessageKind::Human && !m.hide_from_ui)?;
        Some(latest.original.as_ref().unwrap_or(&latest.message))
    }

    /// planted R25: the legacy journal took the first human message of any call, hidden or a
    /// middleware's prompt, in the form the model received it.
    fn first_human_legacy(&self) -> Option<&ChatMessage> {
        self.messages
            .iter()
            .map(|m| &m.message)
            .find(|m| m.kind == MessageKind::Human)
    }
}

/// One invocation of the run's graph: the root, or a nested one inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    pub id: String,
    /// The invocation it runs inside; `None` for the run's root.
    pub parent: Option<String>,
}

impl Invocation {
    /// The run's root invocation.
    pub fn root(id: impl Into<String>) -> Invocation {
        Invocation {
            id: id.into(),
            parent: None,
        }
    }

    fn is_root(&self) -> bool {
        self.parent.is_none()
    }
}

impl<S: RunEventStore> RunJournal<S> {
    /// An invocation starts: the root's start is the run's (`run_start`, with `content`).
    pub async fn on_chain_start(
        &mut self,
        invocation: &Invocation,
        content: Value,
        created_at_ns: i64,
    ) -> Result<(), JournalError> {
        self.record_run_mark(invocation, RUN_START, content, created_at_ns)
            .await
    }

    /// An invocation ends: the root's end is the run's (`run_end`).
    pub async fn on_chain_end(
        &mut self,
        invocation: &Invocation,
        created_at_ns: i64,
    ) -> Result<(), JournalError> {
        self.record_run_mark(invocation, RUN_END, json!({}), created_at_ns)
            .await
    }

    /// An invocation fails: the root's failure is the run's (`run_error`, naming `error`).
    pub async fn on_chain_error(
        &mut self,
        invocation: &Invocation,
        error: &str,
        created_at_ns: i64,
    ) -> Result<(), JournalError> {
        let content = json!({ "error": error });
        self.record_run_mark(invocation, RUN_ERROR, content, created_at_ns)
            .await
    }

    /// The start, end or failure of an invocation: the root's is the run's, recorded as the
    /// lifecycle entry `event_type`.
    async fn record_run_mark(
        &mut self,
        invocation: &Invocation,
        event_type: &'static str,
        content: Value,
        created_at_ns: i64,
    ) -> Result<(), JournalError> {
        // planted R26: the legacy journal wrote a run end or error for every chain that ended
        // or failed (a run start only for the root).
        let every_chain = event_type != RUN_START && self.options.planted.is(BugId::R26);
        if !invocation.is_root() && !every_chain {
            return Ok(());
        }
        let entry = JournalEntry::other(Category::Lifecycle, event_type, content, created_at_ns);
        self.record(entry).await
    }

    /// A model call of the run starts: records the user's turn it answers, unless it is the
    /// turn recorded last.
    pub async fn on_model_start(
        &mut self,
        call: &ModelCall,
        created_at_ns: i64,
    ) -> Result<(), JournalError> {
        let turn = if self.options.planted.is(BugId::R25) {
            call.first_human_legacy()
        } else {
            call.user_turn()
        };
        let Some(turn) = turn else {
            return Ok(());
        };
        let entry = JournalEntry::message(turn, created_at_ns);
        if self.last_input.as_deref() == Some(&*entry.content) {
            return Ok(());
        }
        self.last_input = Some(Arc::clone(&entry.content));
        self.record(entry).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planted::Planted;
    use crate::runs::{MemoryRunEventStore, RunJournalOptions};

    use crate::runs::poll_to_end as block_on;

    fn human(text: &str) -> ChatMessage {
        ChatMessage::human(text)
    }

    fn stored_humans(store: &MemoryRunEventStore) -> Vec<String> {
        let rows = store.dump().unwrap();
        rows.iter()
            .filter(|e| e.event_type == "human_message")
            .map(|e| e.content["content"].as_str().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn the_users_turn_is_recorded_once_as_sent() {
        let store = MemoryRunEventStore::new(Planted::none());
        let mut j = RunJournal::new(&store, "t", "r", None, RunJournalOptions::default());
        let title = ModelCall {
            caller: Some("middleware:title".into()),
            messages: vec![CallMessage::plain(human("write a title"))],
        };
        let agent = ModelCall {
            caller: None,
            messages: vec![
                CallMessage::plain(human("an earlier turn")),
                CallMessage {
                    message: human("remember the rules"),
                    hide_from_ui: true,
                    original: None,
                },
                CallMessage {
                    message: human("<input>hello</input>"),
                    hide_from_ui: false,
                    original: Some(human("hello")),
                },
            ],
        };
        block_on(j.on_model_start(&title, 1)).unwrap();
        block_on(j.on_model_start(&agent, 2)).unwrap();
        block_on(j.on_model_start(&agent, 3)).unwrap();
        block_on(j.end()).unwrap();
        assert_eq!(stored_humans(&store), ["hello"]);
    }

    #[test]
    fn only_the_root_invocation_starts_and_ends_the_run() {
        let store = MemoryRunEventStore::new(Planted::none());
        let mut j = RunJournal::new(&store, "t", "r", None, RunJournalOptions::default());
        let root = Invocation::root("r");
        let tool = Invocation {
            id: "tools".into(),
            parent: Some("r".into()),
        };
        block_on(j.on_chain_start(&root, json!({}), 1)).unwrap();
        block_on(j.on_chain_start(&tool, json!({}), 2)).unwrap();
        block_on(j.on_chain_end(&tool, 3)).unwrap();
        block_on(j.on_chain_start(&tool, json!({}), 4)).unwrap();
        block_on(j.on_chain_error(&tool, "boom", 5)).unwrap();
        block_on(j.on_chain_error(&root, "boom", 6)).unwrap();
        block_on(j.error()).unwrap();
        let types = crate::runs::store::dumped(&store, |e| e.event_type);
        assert_eq!(types, [RUN_START, RUN_ERROR]);
    }
}
