//! Run events (seed 003): the append-only run-event store and its three backends (memory,
//! SQLite, JSONL files), the run journal
//! that writes to it, the checkpointer and its summarization middleware, the `/history` and
//! `/messages` views, and feedback.
//!
//! The design in one paragraph: every message a run emits becomes a `message` row in the store,
//! numbered per thread at write time (`seq`). The store is the history; the checkpoint is working
//! state that summarization rewrites (R1, R11). Views read the store completely, in pages, with
//! one shared read path (R2, R7), and decorate copies, never the stored rows (R3), with stable
//! ids (R10) and the producing run (R6, R8). Both backends answer every operation identically
//! (R9). The journal flushes on every way a run can stop except a hard kill (R4); the store, not
//! the writer, numbers events (R5). At DeerFlow's width the store also deletes runs without ever
//! handing a seq out twice (R13, R15), writes run-scoped singletons once (`put_if_absent`, R14),
//! pages one run's messages with the thread's cursor semantics (R16), filters a run's events
//! before it limits them (R17), and names as a run's last answer only a visible final AI
//! message, never a tool-calling turn (R18). Deleting a thread removes every row of it, and a
//! thread left empty starts its numbering over at 1 (R23).
//!
//! ```
//! use history::runs::*;
//! use history::Planted;
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! #     let mut f = std::pin::pin!(f);
//! #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
//! # }
//! let store = MemoryRunEventStore::new(Planted::none());
//! let mut journal = RunJournal::new(&store, "t1", "run-1", None, RunJournalOptions::default());
//! block_on(journal.record(JournalEntry::message(&ChatMessage::human("hi"), 1))).unwrap();
//! block_on(journal.end()).unwrap();
//! let checkpoints = Checkpointer::new();
//! let history = thread_history(&store, &checkpoints, "t1", &ViewOptions::default())
//!     .unwrap()
//!     .unwrap();
//! assert_eq!(history.messages[0]["run_id"], "run-1");
//! assert_eq!(history.messages[0]["id"], message_id("t1", 1).as_str());
//! ```

// `run_store_methods!`, for the store's backends and wrappers below (a macro defined here is in
// scope in every module declared after it).
use crate::define_run_store_methods;
crate::run_store_ops!(define_run_store_methods {$});

mod caller_edits;
mod checkpoint;
pub mod current;
mod error;
mod event;
#[cfg(any(test, feature = "testing"))]
mod faulty;
mod feedback;
mod fence;
mod ids;
mod invariants;
mod journal;
mod journal_callbacks;
mod jsonl;
mod jsonl_deletion;
mod jsonl_line;
mod jsonl_load;
mod mapper;
mod memory;
mod message;
mod message_feedback;
mod ops;
mod paging;
mod query;
mod sqlite;
mod store;
mod summarization;
mod summarizer;
mod thread_deletion;
mod tokens;
mod trace_truncation;
mod views;
mod yield_now;

pub use caller_edits::{edit_callers_row, edit_nested, CALLER_EDIT_KEY};
pub use checkpoint::{Checkpoint, Checkpointer};
pub use error::RunStoreError;
pub use event::{
    Category, MessageCursor, NewRunEvent, RunEvent, AI_MESSAGE, AI_TOOL_CALL, HUMAN_MESSAGE,
    MESSAGE_EVENT_TYPES, RUN_END, RUN_ERROR, RUN_START, SEQ_MAX, TOOL_RESULT,
};
#[cfg(any(test, feature = "testing"))]
pub use faulty::{FaultSchedule, FaultyRunStore};
pub use feedback::{
    Feedback, FeedbackAggregate, FeedbackError, FeedbackInput, FeedbackStore, NewFeedback, Rating,
};
pub use fence::THREAD_FENCE;
pub use ids::message_id;
pub use journal::{JournalEntry, JournalError, JournalState, RunJournal, RunJournalOptions};
pub use journal_callbacks::{CallMessage, Invocation, ModelCall};
pub use jsonl::JsonlRunEventStore;
pub use jsonl_load::DroppedTail;
pub use mapper::FeedbackMapper;
pub use memory::MemoryRunEventStore;
pub use message::{content_text, ChatMessage, MessageError, MessageKind, ToolCall};
pub use message_feedback::{
    attach_feedback, thread_messages_with_feedback, AttachedFeedback, MessageWithFeedback,
};
pub use ops::{run_store_op, ContractErrors, OpKind, RunStoreOp, RUN_STORE_OPS};
pub use paging::read_all_messages;
pub use query::{task_id_of, EventFilter, UserScope, EVENTS_LIMIT_DEFAULT};
pub use sqlite::SqliteRunEventStore;
pub use store::{ForwardRunStore, RunEventStore};
pub use summarization::{
    orphaned_tool_results, safe_cut, SummarizationMiddleware, SummarizationOptions, SUMMARY_PREFIX,
};
pub use summarizer::{StubSummarizer, Summarizer};
pub use thread_deletion::{ThreadDeleted, ThreadRecords};
pub use tokens::{TokenCounter, MESSAGE_OVERHEAD_TOKENS};
pub use trace_truncation::{truncate_trace, CONTENT_TRUNCATED, ORIGINAL_BYTE_LENGTH};
#[cfg(feature = "planted")]
pub use views::legacy_fill_ids;
pub use views::{
    rendered_id, rendered_run_id, thread_history, thread_messages, MessageSource, MessageView,
    ThreadHistory, ViewOptions,
};
pub use yield_now::{poll_to_end, YieldNow};
