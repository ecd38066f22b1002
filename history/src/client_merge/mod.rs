//! The web client's merge: the persisted messages of the history pages loaded so far, the live
//! stream of the current run and summarization's resets, merged into the one list the user
//! sees (catalog M1 to M6).
//!
//! A pure state machine: [`ClientMerge`] is told what reached the client (a page, a live frame,
//! an optimistic message, a thread switch) and answers [`ClientMerge::view`]. The list it shows
//! is the thread's persisted messages in seq order, each once, followed by the live tail whose
//! seq no loaded page has told yet, in run then step order. Nothing shown and persisted
//! disappears: a reset's or a reconnect's moved messages are rescued into an archive; copies
//! of one message (the optimistic one, an injected copy under a derived id) are shown once;
//! frames of another thread are never shown.

mod order;
mod state;

pub use state::ClientMerge;

/// Where a message stands in its thread's checkpoint: its run (the thread's runs in start
/// order) and its step within the run (the human message of a turn is step 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub run: u32,
    pub step: u32,
}

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Human,
    Ai,
    Tool,
}

/// A message of a loaded history page: persisted, so it has a seq.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistedMessage {
    pub id: String,
    pub seq: u64,
    pub role: Role,
    pub text: String,
    pub position: Position,
}

/// A message of the live stream (the checkpoint's state): not known to be persisted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveMessage {
    pub id: String,
    pub role: Role,
    pub text: String,
    pub position: Position,
    /// Never shown: a summary a reset puts at the head of the kept window.
    pub hidden: bool,
}

/// One frame of the live stream of a thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveFrame {
    /// A message, new or replacing the one of the same id (a streamed answer grows frame by
    /// frame).
    Message(LiveMessage),
    /// Summarization: the stream's state is removed, then the kept window and its summary.
    Reset {
        kept: Vec<LiveMessage>,
        summary: LiveMessage,
    },
    /// The stream reconnected: its state starts empty, the replay's frames follow.
    Reconnect,
}

/// Which history pages a `before_seq` cursor continues: the thread's, or one run's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PageScope {
    Thread,
    Run(u32),
}

/// One message of the merged list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    pub id: String,
    pub role: Role,
    pub text: String,
    /// Its seq, when a loaded page told it.
    pub seq: Option<u64>,
}

/// What a derived id marks: the copy of a user message the dynamic-context middleware injects
/// is written under the original's id followed by this.
pub const INJECTED_SUFFIX: &str = "::ctx";

/// The id of the message `id` is an injected copy of, if it is one.
pub fn injected_copy_of(id: &str) -> Option<&str> {
    id.strip_suffix(INJECTED_SUFFIX).filter(|o| !o.is_empty())
}

#[cfg(test)]
mod tests;
