//! `/messages` with feedback attached, as the published DeerFlow messages endpoint does: each
//! run's feedback goes on that run's LAST AI message and nowhere else; every other message, and
//! the last AI message of a run nobody (in scope) rated, carries none.
//!
//! Which rows are AI messages: the seed-era `ai_message` and the current `llm.ai.response` (the
//! two event types upstream's `get_last_visible_ai_seq_by_run` accepts). Whatever their
//! `metadata.caller`: upstream's `/messages` attaches a run's feedback to its last AI row even
//! when a middleware wrote it (only its `/messages/page`, which this crate does not model,
//! skips middleware rows and attaches through `get_last_visible_ai_seq_by_run`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::error::RunStoreError;
use super::event::AI_MESSAGE;
use super::feedback::{FeedbackStore, Rating};
use super::store::RunEventStore;
use super::views::{thread_messages, MessageView, ViewOptions};

/// The current DeerFlow event type of an AI response.
const LLM_AI_RESPONSE: &str = "llm.ai.response";

/// The feedback a message carries: upstream's `{feedback_id, rating, comment}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachedFeedback {
    pub feedback_id: u64,
    pub rating: Rating,
    pub comment: Option<String>,
}

/// One row of `/messages` with the feedback attached to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageWithFeedback {
    pub view: MessageView,
    pub feedback: Option<AttachedFeedback>,
}

fn is_ai_response(view: &MessageView) -> bool {
    view.event_type == AI_MESSAGE || view.event_type == LLM_AI_RESPONSE
}

/// The index of each run's last AI message among `views`.
fn last_ai_per_run(views: &[MessageView]) -> BTreeMap<&str, usize> {
    let mut last = BTreeMap::new();
    for (i, view) in views.iter().enumerate() {
        if is_ai_response(view) {
            last.insert(view.run_id.as_str(), i);
        }
    }
    last
}

/// Attaches feedback to message views: each run's feedback (grouped as
/// [`FeedbackStore::list_by_run_ids`] groups it, under `user`'s scope) on its last AI message.
/// The feedback store is not read when no message is an AI message.
pub fn attach_feedback(
    views: Vec<MessageView>,
    feedback: &FeedbackStore,
    thread_id: &str,
    user: Option<&str>,
) -> Vec<MessageWithFeedback> {
    let last = last_ai_per_run(&views);
    let by_run = if last.is_empty() {
        BTreeMap::new()
    } else {
        let runs: BTreeSet<String> = last.keys().map(|r| r.to_string()).collect();
        feedback.list_by_run_ids(thread_id, &runs, user)
    };
    let carriers: BTreeSet<usize> = last.into_values().collect();
    views
        .into_iter()
        .enumerate()
        .map(|(i, view)| {
            let attached = carriers
                .contains(&i)
                .then(|| by_run.get(&view.run_id))
                .flatten()
                .map(|fb| AttachedFeedback {
                    feedback_id: fb.feedback_id,
                    rating: fb.rating,
                    comment: fb.comment.clone(),
                });
            MessageWithFeedback {
                view,
                feedback: attached,
            }
        })
        .collect()
}

/// `/messages` ([`thread_messages`]) with feedback attached ([`attach_feedback`]).
pub fn thread_messages_with_feedback<S: RunEventStore + ?Sized>(
    store: &S,
    feedback: &FeedbackStore,
    thread_id: &str,
    user: Option<&str>,
    options: &ViewOptions,
) -> Result<Vec<MessageWithFeedback>, RunStoreError> {
    let views = thread_messages(store, thread_id, options)?;
    Ok(attach_feedback(views, feedback, thread_id, user))
}
