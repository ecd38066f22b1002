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

    /// What a mapper refreshed from `store` at this instant maps `rendered[index]` to: the same
    /// answer as [`FeedbackMapper::new`], [`FeedbackMapper::refresh`] and
    /// [`FeedbackMapper::run_for`], but the store is read only when the lookup needs the tables.
    /// A message that carries its `run_id` maps to it whatever the tables hold (except under the
    /// legacy R6 design, which never reads `run_id`); a full read of a long thread for it was
    /// most of what a rating cost.
    pub fn fresh_run_for<S: RunEventStore + ?Sized>(
        thread_id: &str,
        options: ViewOptions,
        store: &S,
        rendered: &[Value],
        index: usize,
    ) -> Result<Option<String>, RunStoreError> {
        let Some(message) = rendered.get(index) else {
            return Ok(None);
        };
        if let Some(run) = carried_run(&options, message) {
            return Ok(Some(run.to_string()));
        }
        let mut mapper = FeedbackMapper::new(thread_id, options);
        mapper.refresh(store)?;
        Ok(mapper.run_for(rendered, index))
    }

    /// The run that produced `rendered[index]`, the message at that position of what the client
    /// shows. `None` when the message is unknown (never a guess).
    pub fn run_for(&self, rendered: &[Value], index: usize) -> Option<String> {
        let message = rendered.get(index)?;
        if let Some(run) = carried_run(&self.options, message) {
            return Some(run.to_string());
        }
        if self.options.planted.is(BugId::R6) {
            // planted R6: the legacy client counted AI messages on screen (tool-call turns and
            // all) and used that count to index the run ids of a separate ai_message-only list.
            let is_ai = |m: &Value| m.get("type").and_then(Value::as_str) == Some("ai");
            let ai_index = rendered[..index].iter().filter(|m| is_ai(m)).count();
            return self.runs_by_ai_index.get(ai_index).cloned();
        }
        rendered_id(message).and_then(|id| self.run_by_message_id.get(id).cloned())
    }
}

/// The run a rendered message names itself, which wins over the tables; `None` under the
/// legacy R6 design, which never reads it.
fn carried_run<'m>(options: &ViewOptions, message: &'m Value) -> Option<&'m str> {
    if options.planted.is(BugId::R6) {
        return None;
    }
    rendered_run_id(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Category, ChatMessage, MemoryRunEventStore, NewRunEvent};
    use crate::Planted;
    use serde_json::json;

    /// The row of `message`, emitted by `run` on thread `t`.
    fn message_row(run: &str, message: &ChatMessage) -> NewRunEvent {
        NewRunEvent {
            thread_id: "t".into(),
            run_id: run.into(),
            user_id: None,
            event_type: message.event_type().into(),
            category: Category::Message,
            content: message.to_content().into(),
            metadata: json!({}),
            created_at_ns: 0,
        }
    }

    #[test]
    fn rendered_run_ids_win_and_stream_ids_need_a_refresh() {
        let store = MemoryRunEventStore::new(Planted::none());
        let ai = ChatMessage::ai("answer", Some("lc_run--7".into()));
        store.put_batch(vec![message_row("r2", &ai)]).unwrap();
        let mut mapper = FeedbackMapper::new("t", ViewOptions::default());
        let rendered = vec![json!({"type": "ai", "run_id": "r1"}), ai.to_content()];
        assert_eq!(mapper.run_for(&rendered, 0).as_deref(), Some("r1"));
        assert_eq!(mapper.run_for(&rendered, 1), None);
        assert_eq!(mapper.run_for(&rendered, 2), None);
        mapper.on_run_end(&store).unwrap();
        assert_eq!(mapper.run_for(&rendered, 1).as_deref(), Some("r2"));
    }

    /// A thread of two runs, each a question and an answer, and what a client shows of it: the
    /// view's messages (with `run_id`), the same messages streamed live (without), a message no
    /// run emitted, and one that names a run the thread never had.
    fn two_runs_and_what_a_client_shows(planted: Planted) -> (MemoryRunEventStore, Vec<Value>) {
        let store = MemoryRunEventStore::new(planted);
        let messages = [
            ("r1", ChatMessage::human("q1")),
            ("r1", ChatMessage::ai("a1", Some("lc_run--1".into()))),
            ("r2", ChatMessage::human("q2")),
            ("r2", ChatMessage::ai("a2", Some("lc_run--2".into()))),
        ];
        for (run, m) in &messages {
            store.put_batch(vec![message_row(run, m)]).unwrap();
        }
        let options = ViewOptions {
            planted,
            ..ViewOptions::default()
        };
        let mut shown = thread_messages(&store, "t", &options)
            .unwrap()
            .into_iter()
            .map(|v| v.message)
            .collect::<Vec<_>>();
        shown.extend(messages.iter().map(|(_, m)| m.to_content()));
        shown.push(json!({"type": "ai", "id": "never-stored", "content": "?"}));
        shown.push(json!({"type": "ai", "run_id": "r9", "content": "a9"}));
        (store, shown)
    }

    fn fresh_equals_a_refreshed_mapper(planted: Planted) {
        let (store, shown) = two_runs_and_what_a_client_shows(planted);
        let options = ViewOptions {
            planted,
            ..ViewOptions::default()
        };
        let mut refreshed = FeedbackMapper::new("t", options);
        refreshed.refresh(&store).unwrap();
        let mut mapped = 0;
        for index in 0..=shown.len() {
            let fresh = FeedbackMapper::fresh_run_for("t", options, &store, &shown, index);
            let want = refreshed.run_for(&shown, index);
            mapped += usize::from(want.is_some());
            assert_eq!(fresh, Ok(want), "message {index} of {shown:?}");
        }
        assert!(mapped >= 4, "the table maps the stored messages: {mapped}");
    }

    #[test]
    fn a_fresh_lookup_is_a_refreshed_mappers_answer() {
        fresh_equals_a_refreshed_mapper(Planted::none());
    }

    #[cfg(feature = "planted")]
    #[test]
    fn a_fresh_lookup_is_a_refreshed_mappers_answer_under_legacy_r6() {
        // The legacy design counts AI messages and never reads `run_id`: it needs the tables.
        fresh_equals_a_refreshed_mapper(Planted::only(BugId::R6));
    }
}
