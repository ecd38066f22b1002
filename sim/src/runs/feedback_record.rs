//! What the client did with the feedback store and what it answered, in op order: the ratings
//! stored, the withdrawals and every read beyond a rating (R21, R22).

use history::runs::{Feedback, FeedbackAggregate, MessageWithFeedback};
use std::collections::{BTreeMap, BTreeSet};

/// One call on the feedback store, in the world's order of operations.
#[derive(Clone, Debug)]
pub enum FeedbackEntry {
    /// A rating stored: `submit` for a user, `create` without one; the id the store gave it,
    /// or why it refused.
    Rated {
        op: u64,
        /// Simulated time of the call, as the trace stamps its line.
        at_us: u64,
        thread_id: String,
        run_id: String,
        user: Option<String>,
        value: i8,
        answer: Result<u64, String>,
    },
    /// `delete` by id in `user`'s scope (`None`: every user's); whether the store deleted a row.
    Deleted {
        op: u64,
        at_us: u64,
        feedback_id: u64,
        user: Option<String>,
        deleted: bool,
    },
    /// `delete_by_run` of a user's rating; whether the store deleted a row.
    DeletedByRun {
        op: u64,
        at_us: u64,
        thread_id: String,
        run_id: String,
        user: String,
        deleted: bool,
    },
    Read(Box<FeedbackRead>),
    /// The thread deleted through the API: every rating of it goes.
    ThreadDeleted {
        thread_id: String,
    },
}

/// Every feedback read of one thread in one scope, at one instant.
#[derive(Clone, Debug)]
pub struct FeedbackRead {
    pub op: u64,
    /// Simulated time of the reads, as the trace stamps their line.
    pub at_us: u64,
    pub thread_id: String,
    /// The scope: a user's feedback, or every user's (`None`).
    pub user: Option<String>,
    /// `get` of every id the client was given on the thread.
    pub by_id: Vec<(u64, Option<Feedback>)>,
    /// `list_by_run` of every run of the thread.
    pub by_run: Vec<(String, Vec<Feedback>)>,
    /// `aggregate_by_run` of every run of the thread (every user's: it takes no scope).
    pub aggregates: Vec<FeedbackAggregate>,
    pub grouped: BTreeMap<String, Feedback>,
    /// `list_by_run_ids`: the runs asked for and the answer.
    pub run_ids: BTreeSet<String>,
    pub by_run_ids: BTreeMap<String, Feedback>,
    /// `/messages` with feedback attached, from the primary store, or the store's error (the
    /// record's `Answer`, spelled out: the record names this module's entries).
    pub messages: Result<Vec<MessageWithFeedback>, String>,
}
