//! What a played runs world leaves for the checkers: the ground truth, every accepted write,
//! every answer of both backends, every rating and summarized checkpoint.

use crate::workload::StoreKind;
use history::runs::{
    Category, ChatMessage, EventFilter, Feedback, MessageCursor, MessageView, NewRunEvent,
    RunEvent, ThreadDeleted, ThreadHistory,
};
use model::runs::{MessageKind, RunOutcome};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What each backend answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Both<T> {
    pub memory: T,
    pub sqlite: T,
    /// Whether the two are equal, compared once when they came: the world traces it, and the
    /// checkers that compare the stores read it instead of comparing long answers again.
    agree: bool,
}

impl<T: PartialEq> Both<T> {
    pub fn new(memory: T, sqlite: T) -> Both<T> {
        let agree = memory == sqlite;
        Both {
            memory,
            sqlite,
            agree,
        }
    }
}

impl<T> Both<T> {
    /// Whether both backends gave the same answer.
    pub fn agree(&self) -> bool {
        self.agree
    }

    /// The two answers, each with its store's name: `first_slot` (`memory` or `jsonl`, the
    /// world's `first_slot`) and `sqlite`.
    pub fn named(&self, first_slot: &'static str) -> [(&'static str, &T); 2] {
        [(first_slot, &self.memory), ("sqlite", &self.sqlite)]
    }

    /// The answer of the backend the client uses.
    pub fn primary(&self, kind: StoreKind) -> &T {
        match kind {
            StoreKind::Memory | StoreKind::Jsonl => &self.memory,
            StoreKind::Sqlite => &self.sqlite,
        }
    }
}

/// An answer, or the error it failed with.
pub type Answer<T> = Result<T, String>;

/// How the text of a fence's refusal starts (`thread deleted: ...`, R28): histsim's stores say
/// so, and the world spells a system's `thread_deleted` refusal the same way.
pub(crate) const FENCE_REFUSED: &str = "thread deleted: ";

/// A write (or a writer's read) the two stores of the pair answered differently.
#[derive(Clone, Debug)]
pub struct WriteDisagreement {
    /// The last operation the world began when the write was made (a journal's write belongs
    /// to no request of the client's).
    pub op: u64,
    /// Simulated time of the write, as the trace stamps its `backends disagree` line.
    pub at_us: u64,
    /// The store call, with its thread where it has one (`max_seq(t0)`).
    pub call: String,
    /// The first store of the pair (`memory` or `jsonl`) and each store's answer, in words.
    pub first_slot: &'static str,
    pub first: String,
    pub sqlite: String,
}

/// A call of the journals' side that a store answered with an error.
#[derive(Clone, Debug)]
pub struct WriteError {
    /// The last operation the world began when the call was made (a journal's write belongs
    /// to no request of the client's), as [`WriteDisagreement::op`].
    pub op: u64,
    /// Simulated time of the call: the worker's `flush failed` trace line, when the store the
    /// journal writes to failed it, is stamped alike.
    pub at_us: u64,
    /// The store op (`put_batch`, `insert_numbered`, ...).
    pub call: &'static str,
    /// The run whose rows the call wrote (`None` for a read of a thread, `max_seq`).
    pub run_id: Option<String>,
    /// The stores that answered this error: `the memory store`, `the sqlite store`, or
    /// `the memory and sqlite stores` when both answered it alike.
    pub stores: String,
    /// A seq conflict: the refusal the contract requires of `insert_numbered` when a racing
    /// writer took the seq (R5's unique guard), never a defect in itself.
    pub conflict: bool,
    pub message: String,
}

/// One read of the client.
#[derive(Clone, Debug)]
pub struct Read {
    /// Position in the world's total order of operations (truth events, writes, reads).
    pub op: u64,
    pub at_us: u64,
    /// Thread key.
    pub thread: String,
    pub kind: ReadKind,
}

/// A read's kind; its name (`strum`'s snake_case of the variant) is what the probes of reads
/// answered count it under.
#[derive(Clone, Debug, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum ReadKind {
    /// `/history`, `/messages` and `count_messages`, in one instant.
    Views {
        count: Both<Answer<u64>>,
        history: Both<Answer<Option<ThreadHistory>>>,
        messages: Both<Answer<Vec<MessageView>>>,
    },
    /// One raw page.
    Page {
        limit: usize,
        cursor: MessageCursor,
        rows: Both<Answer<Vec<RunEvent>>>,
    },
    /// Every message by paging (the client's own loop over the store's cursors), and the count.
    Paginate {
        limit: usize,
        backward: bool,
        count: Both<Answer<u64>>,
        rows: Both<Answer<Vec<RunEvent>>>,
    },
    /// `list_events` of one run (by index).
    Events {
        run: usize,
        rows: Both<Answer<Vec<RunEvent>>>,
    },
    /// Every message of one run (by index) by paging `list_messages_by_run`: the pages.
    RunMessages {
        run: usize,
        limit: usize,
        backward: bool,
        pages: Both<Answer<Vec<Vec<RunEvent>>>>,
    },
    /// One run's (by index) events through `filter` (`after_seq` unset: the client pages from
    /// the start with `after_seq` cursors, `filter.limit` a page): the pages.
    FilteredEvents {
        run: usize,
        filter: EventFilter,
        pages: Both<Answer<Vec<Vec<RunEvent>>>>,
    },
    /// The thread's message rows read whole, and their count, in one user's scope (`None`:
    /// every user's).
    UserMessages {
        user: Option<String>,
        rows: Both<Answer<Vec<RunEvent>>>,
        count: Both<Answer<u64>>,
    },
    /// `get_last_visible_ai_seq_by_run` for `run_ids`, and the thread's message rows read in
    /// the same instant.
    LastAnswers {
        run_ids: BTreeSet<String>,
        answer: Both<Answer<BTreeMap<String, u64>>>,
        messages: Both<Answer<Vec<RunEvent>>>,
    },
    /// The thread's message rows read whole, and their count, in the default scope (`user_id`
    /// AUTO) of a request acting for run `run` (by index): its user is the current one
    /// (`None`: a legacy run's request, no user in the context, which must be refused).
    DefaultScopeMessages {
        run: usize,
        user: Option<String>,
        rows: Both<Answer<Vec<RunEvent>>>,
        count: Both<Answer<u64>>,
    },
}

/// What a deletion (a run's or a thread's) answered and what the client read of its target
/// right after it, on each backend.
#[derive(Clone, Debug)]
pub struct DeletionAnswers {
    /// How many rows each backend said it deleted.
    pub deleted: Both<Answer<u64>>,
    pub max_seq_after: Both<Answer<u64>>,
    pub events_after: Both<Answer<Vec<RunEvent>>>,
    pub messages_after: Both<Answer<Vec<RunEvent>>>,
}

/// One `delete_by_run` the client made, and what it read around it.
#[derive(Clone, Debug)]
pub struct DeletionRecord {
    /// Position in the world's order of operations: rows of the run written before it are gone.
    pub op: u64,
    /// Simulated time of the deletion, as the trace stamps its line.
    pub at_us: u64,
    /// The run (by index) and its id.
    pub run: usize,
    pub run_id: String,
    pub thread_id: String,
    pub max_seq_before: Both<Answer<u64>>,
    /// The deletion's answer and the reads right after it (`list_events` and
    /// `list_messages_by_run` of the run).
    pub answers: DeletionAnswers,
}

/// One write of a run's event the client made, and what each backend answered (`T`: what a
/// stored write gives back).
#[derive(Clone, Debug)]
pub struct WriteRecord<T> {
    pub op: u64,
    /// Simulated time of the call, as the trace stamps its line.
    pub at_us: u64,
    /// The run (by index).
    pub run: usize,
    /// What the client asked to write.
    pub event: NewRunEvent,
    pub answer: Both<Answer<T>>,
}

/// One `put_if_absent` of a run's receipt; each backend answers the record it holds and whether
/// this call wrote it.
pub(crate) type ReceiptRecord = WriteRecord<(RunEvent, bool)>;

/// One late write (`Op::LateWrite`): a run's batch, admitted before its thread's deletion and
/// committed after it; each backend answers the seqs it gave the rows, or its refusal (R28: a
/// refusal, `thread_deleted`).
pub(crate) type LateWriteRecord = WriteRecord<Vec<u64>>;

/// One rating the client made.
#[derive(Clone, Debug)]
pub struct RatingRecord {
    pub op: u64,
    /// Simulated time of the rating, as the trace stamps its line.
    pub at_us: u64,
    /// Thread key.
    pub thread: String,
    /// `None`: an anonymous rating.
    pub user: Option<String>,
    pub up: bool,
    /// The rated message's text (unique on its thread).
    pub text: String,
    /// Where the client got the rated message from.
    pub source: RatedFrom,
    /// The run the client's mapper chose (the rating went there; `None`: it was dropped).
    pub client: Option<String>,
    /// The run a mapper refreshed at this instant chooses.
    pub fresh: Option<String>,
}

/// Where a rendered message came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RatedFrom {
    /// A view of the event store: it carries its run_id.
    View,
    /// The live stream of a run the client saw end: no run_id yet, an id the mapper must know
    /// once it refreshed at that run's end.
    Stream,
    /// The checkpoint, which /history falls back to while the store has no message of the
    /// thread: no run_id, and the mapper may not know it.
    Checkpoint,
}

/// A checkpoint the summarization middleware produced.
#[derive(Clone, Debug)]
pub struct SummaryRecord {
    pub op: u64,
    /// Simulated time of the summary, as the trace stamps its line.
    pub at_us: u64,
    pub run: usize,
    /// The state the middleware was handed before the model call: what R20's model starts from.
    pub before: Vec<ChatMessage>,
    /// The state it left.
    pub messages: Vec<ChatMessage>,
}

/// What happened to a run, in the world's order of operations.
#[derive(Clone, Debug, PartialEq)]
pub enum TruthEvent {
    Start,
    Message {
        kind: MessageKind,
        text: String,
    },
    Stop(RunOutcome),
    /// The client deleted the (stopped) run's rows.
    Deleted,
    /// The client deleted every row of the run's thread (every run of it had stopped).
    ThreadDeleted,
}

/// One event a run handed its journal.
#[derive(Clone, Debug, PartialEq)]
pub struct EmittedEvent {
    pub event_type: String,
    pub category: Category,
    /// The journal entry's own content, shared.
    pub content: Arc<Value>,
    pub metadata: Value,
    pub created_at_ns: i64,
}

/// One row the primary store accepted, with its seq, and when.
#[derive(Clone, Debug)]
pub struct Written {
    pub op: u64,
    /// Simulated time of the write, as the trace stamps its line.
    pub at_us: u64,
    pub event: RunEvent,
}

/// A crash of the store's host that the world performed: the `sqlite` store of the pair (or
/// the `jsonl` one) was killed and opened again on its data.
#[derive(Clone, Debug)]
pub struct StoreRestart {
    /// Position in the world's order of operations: acknowledgements before it must survive.
    pub op: u64,
    pub at_us: u64,
    /// Which store: `sqlite` or `jsonl`.
    pub slot: &'static str,
}

/// One deletion of a thread through the API (`DELETE /threads/{id}`: run events, feedback,
/// checkpoints), and what the API answered of the thread right after. Its store part is also a
/// [`ThreadDeletionRecord`] (at the same op) when it reached the store.
#[derive(Clone, Debug)]
pub struct EverywhereDeletionRecord {
    pub op: u64,
    pub at_us: u64,
    pub thread: String,
    pub thread_id: String,
    /// What the deletion said it removed, through each backend.
    pub deleted: Both<Answer<ThreadDeleted>>,
    /// `/history` right after, on each backend.
    pub history_after: Both<Answer<Option<ThreadHistory>>>,
    /// Every feedback row of the thread right after.
    pub feedback_after: Vec<Feedback>,
    /// Whether the checkpointer still held a checkpoint of the thread right after.
    pub checkpoint_after: bool,
}

/// One `delete_by_thread` the client made, and what it read right after.
#[derive(Clone, Debug)]
pub struct ThreadDeletionRecord {
    /// Position in the world's order of operations: every row of the thread written before it
    /// is gone, and the rows written after it are the thread's new era.
    pub op: u64,
    /// Simulated time of the deletion, as the trace stamps its line.
    pub at_us: u64,
    pub thread: String,
    pub thread_id: String,
    /// The deletion's answer and the reads right after it (the thread's message rows read
    /// whole, `list_events` of every run of the thread one after another).
    pub answers: DeletionAnswers,
    pub count_after: Both<Answer<u64>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_knows_whether_its_answers_agree() {
        let same: Both<Answer<u64>> = Both::new(Ok(3), Ok(3));
        assert!(same.agree());
        assert!(!Both::new(Ok(3), Err("down".to_string())).agree());
        assert!(!Both::new(vec![1, 2], vec![1]).agree());
    }
}

/// One table read ([`super::table_reads`]) asked once the world ended, and what both stores
/// answered.
#[derive(Clone, Debug)]
pub struct TableReadRecord {
    /// Its index among the scenario's table reads.
    pub step: usize,
    pub op: &'static str,
    pub thread_id: String,
    /// The run it asked about (empty for a read that takes none).
    pub run_id: String,
    pub answers: Both<Answer<Value>>,
}
