//! What a run of a runs scenario is made from and makes: a plain run, which generators and
//! tests refine field by field, and how many messages a run emits.

use super::scenario::{MessageSpec, RunSpec, Stop};

impl RunSpec {
    /// A run of `thread` by worker 0, for no user, that emits `messages` and ends: no
    /// summarization, tasks, model input or nested parts. Generators and tests set what differs.
    pub fn plain(
        id: impl Into<String>,
        thread: impl Into<String>,
        messages: Vec<MessageSpec>,
    ) -> RunSpec {
        RunSpec {
            id: id.into(),
            thread: thread.into(),
            worker: 0,
            user: None,
            summarize: None,
            stop: Stop::End,
            messages,
            tasks: Vec::new(),
            model_input: Default::default(),
            nested: Vec::new(),
        }
    }

    /// How many messages the run emits when it runs to its end (a tool step is its call and
    /// one result per call; a `bulk` block its count).
    pub fn message_count(&self) -> usize {
        self.messages
            .iter()
            .map(|m| match m {
                MessageSpec::Human { .. } | MessageSpec::Ai { .. } => 1,
                MessageSpec::ToolStep { calls, .. } => 1 + calls.len(),
                MessageSpec::Bulk { messages } => *messages as usize,
            })
            .sum()
    }
}

impl MessageSpec {
    /// The simulated milliseconds before the message itself, not its tool results' (a `bulk`
    /// block has no pause).
    pub fn pause_ms(&self) -> u32 {
        match self {
            MessageSpec::Human { after_ms, .. }
            | MessageSpec::Ai { after_ms, .. }
            | MessageSpec::ToolStep { after_ms, .. } => *after_ms,
            MessageSpec::Bulk { .. } => 0,
        }
    }
}
