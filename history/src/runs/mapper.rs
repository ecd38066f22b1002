//! The client-side lookup from a rendered message to the run that produced it: what a rating
//! targets.
//!
//! The correct design reads `run_id` from the rendered message itself (both views put it on every
//! message). Messages rendered straight from a live stream carry no `run_id` yet; for those the
//! mapper looks the message id up in a table it rebuilds from `/messages` when a run ends (R8).
//! It never guesses: an unknown message maps to no run. The legacy design paired the N-th AI
//! message on screen with the N-th `ai_message` row of a separate fetch (R6).

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::RunStoreError;
use super::event::AI_MESSAGE;
use super::store::RunEventStore;
use super::views::{rendered_id, rendered_run_id, thread_messages, ViewOptions};
use crate::planted::BugId;

/// The mapper of one thread.
#[derive(Clone, Debug)]
pub struct FeedbackMapper {
    thread_id: String,
    options: ViewOptions,
    run_by_message_id: BTreeMap<String, String>,
    /// Legacy (R6): the run of the N-th `ai_message` row.
    runs_by_ai_index: Vec<String>,
}

impl FeedbackMapper {
    /// An empty mapper; call [`FeedbackMapper::refresh`] before the first lookup of a message
    /// without `run_id`. `options` are the view options it reads `/messages` with (and its
    /// legacy switches: R6, R8).
    pub fn new(thread_id: impl Into<String>, options: ViewOptions) -> FeedbackMapper {
        FeedbackMapper {
            thread_id: thread_id.into(),
            options,
            run_by_message_id: BTreeMap::new(),
            runs_by_ai_index: Vec::new(),
        }
    }

    /// Rebuilds the tables from the thread's messages.
    pub fn refresh<S: RunEventStore + ?Sized>(&mut self, store: &S) -> Result<(), RunStoreError> {
        let views = thread_messages(store, &self.thread_id, &self.options)?;
        self.run_by_message_id = views
            .iter()
            .filter_map(|v| rendered_id(&v.message).map(|id| (id.to_string(), v.run_id.clone())))
            .collect();
        self.runs_by_ai_index = views
            .iter()
            .filter(|v| v.event_type == AI_MESSAGE)
            .map(|v| v.run_id.clone())
            .collect();
        Ok(())
    }

    /// Call when a run of the thread has ended: refreshes the tables.
    pub fn on_run_end<S: RunEventStore + ?Sized>(
        &mut self,
        store: &S,
    ) -> Result<(), RunStoreError> {
        if self.options.planted.is(BugId::R8) {
            return Ok(()); // planted R8: the legacy client kept the previous mapping (stale).
        }
        self.refresh(store)
    }

    /// The run that produced `rendered[index]`, the message at that position of what the client
    /// shows. `None` when the message is unknown (never a guess).
    pub fn run_for(&self, rendered: &[Value], index: usize) -> Option<String> {
        let message = rendered.get(index)?;
        if self.options.planted.is(BugId::R6) {
            // planted R6: the legacy client counted AI messages on screen (tool-call turns and
            // all) and used that count to index the run ids of a separate ai_message-only list.
            let is_ai = |m: &Value| m.get("type").and_then(Value::as_str) == Some("ai");
            let ai_index = rendered[..index].iter().filter(|m| is_ai(m)).count();
            return self.runs_by_ai_index.get(ai_index).cloned();
        }
        if let Some(run) = rendered_run_id(message) {
            return Some(run.to_string());
        }
        rendered_id(message).and_then(|id| self.run_by_message_id.get(id).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Category, ChatMessage, MemoryRunEventStore, NewRunEvent};
    use crate::Planted;
    use serde_json::json;

    #[test]
    fn rendered_run_ids_win_and_stream_ids_need_a_refresh() {
        let store = MemoryRunEventStore::new(Planted::none());
        let ai = ChatMessage::ai("answer", Some("lc_run--7".into()));
        store
            .put_batch(vec![NewRunEvent {
                thread_id: "t".into(),
                run_id: "r2".into(),
                user_id: None,
                event_type: ai.event_type().into(),
                category: Category::Message,
                content: ai.to_content().into(),
                metadata: json!({}),
                created_at_ns: 0,
            }])
            .unwrap();
        let mut mapper = FeedbackMapper::new("t", ViewOptions::default());
        let rendered = vec![json!({"type": "ai", "run_id": "r1"}), ai.to_content()];
        assert_eq!(mapper.run_for(&rendered, 0).as_deref(), Some("r1"));
        assert_eq!(mapper.run_for(&rendered, 1), None);
        assert_eq!(mapper.run_for(&rendered, 2), None);
        mapper.on_run_end(&store).unwrap();
        assert_eq!(mapper.run_for(&rendered, 1).as_deref(), Some("r2"));
    }
}
