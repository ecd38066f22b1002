//! The run-events model (seed 003): the append-only truth of what every run emitted, and what
//! every rating must target. Pure values, no I/O; it never sees stored rows.
//!
//! - [`RunTruth`]: per thread, every message each run emitted, in emission order, and how each
//!   run stopped; what `/history` and `/messages` must show (R1, R2, R4, R7), which run a
//!   rendered message belongs to (R6, R8), and what a read scoped to some runs (one user's,
//!   [`RunTruth::restricted_to`]) must show (R19).
//! - [`RatingTruth`]: one rating per (thread, run, user), the last one wins; anonymous ratings
//!   each count.
//! - [`ReceiptTruth`]: one run-scoped singleton event per (thread, run, event type), the first
//!   one wins (`put_if_absent`, R14).
//! - [`check_filtered_pages`] and [`last_visible_answer`]: what one run's filtered event pages
//!   (R17) and its last visible AI message (R18) must be, from the events it emitted (an AI
//!   message a middleware journaled, [`hidden_by_caller`], is never the run's answer).
//! - [`WriteFence`]: the runs each thread deletion fenced: a later write of one of them on its
//!   thread must be refused (R28).
//! - [`StoredRows`]: the rows a store must hold once the world ended (every row written and
//!   not deleted), and the answers of the store reads the simulation asks of it then.
//! - [`summarization`]: what the summarization middleware must make of a checkpoint (R20).
//!
//! Deletion (`delete_by_run`) takes a run out of [`RunTruth`] and its receipts out of
//! [`ReceiptTruth`]; the numbering it must leave alone (R13) is stated on the writes the
//! simulation recorded, not here.

mod events;
mod feedback_reads;
mod fence;
mod ratings;
mod receipts;
mod stored_rows;
pub mod summarization;
mod traces;
mod truth;
mod wording;

pub use events::{
    check_filtered_pages, hidden_by_caller, last_visible_answer, selected, EmittedMessage,
    EventQuery, FilteredMismatch, RunEventKey,
};
pub use feedback_reads::{attachment_choices, grouped_choices};
pub use fence::WriteFence;
pub use ratings::{expected_attachment, Rater, RatingCounts, RatingRow, RatingTruth};
pub use receipts::{ReceiptAnswer, ReceiptTruth};
pub use stored_rows::{StoredRow, StoredRows};
pub use traces::kept_trace;
pub use truth::{ExpectedMessage, HistoryMismatch, MessageKind, RunOutcome, RunTruth};
pub use wording::{brief, brief_json, SHOWN_CHARS};
