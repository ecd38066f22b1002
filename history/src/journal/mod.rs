//! The file-backed history journal (seed 004): an append-only file of self-validating records
//! that folds into the in-context rows and the full transcript.
//!
//! - [`record`] and [`frame`]: the record kinds and their checksummed on-disk frame.
//! - [`storage`]: the small file interface, over the real filesystem ([`FsStorage`]) or memory
//!   ([`MemStorage`]); the `sim` crate adds a crash-simulating disk.
//! - [`fold`]: records to history; [`scan`]: bytes to records, torn tail versus corruption (J10).
//! - [`writer`] and [`replace`]: the one writer per journal, transactions and their guard (J1, J3),
//!   single-record shapes (J15) and bounded density records ([`density`], J16); a record is
//!   appended only behind durable ones, so a file system that persists unsynced writes out of
//!   order never leaves a hole before a complete record (J19).
//! - [`reader`]: incremental statistics and context reads (J11); [`tokens`]: o200k counts (J17);
//!   [`truncation`]: last-resort truncation of tool results in one pass (J13).
//! - [`reopen`]: resume, clone and fork, each closing a replacement left open first (J2).
//! - [`session`]: the session's recording and resume (J4, J5, J6); [`store`] and [`scratch`]:
//!   disposal that finishes and reports, and the sweep of dead processes' scratch (J18).
//! - [`shared`] and [`mirror`]: a history of several origins fanned out to per-origin mirrors
//!   (J7, J8, J9), with rollbacks that keep origins and never re-read the journal (J12).
//! - [`dump`]: the records as JSON lines for `histsim journal dump`.
//!
//! ```
//! use std::sync::Arc;
//! use history::journal::{Journal, JournalOptions, MemStorage, Origin, Row, Speaker};
//!
//! let storage = Arc::new(MemStorage::new());
//! let mut j = Journal::create(storage.clone(), "main.journal", JournalOptions::default(), None)?;
//! j.append(Origin::Main, vec![Row::text(Speaker::Human, Origin::Main, "hello")])?;
//! j.replace_all(Origin::Main, vec![Row::text(Speaker::Ai, Origin::Main, "restored")])?;
//! let reopened = Journal::open(storage, "main.journal", JournalOptions::default())?;
//! assert_eq!(reopened.rows(), j.rows());
//! # Ok::<(), history::journal::JournalError>(())
//! ```

pub mod density;
pub mod dump;
pub mod error;
pub mod fold;
pub mod frame;
pub mod fs;
pub mod inbox;
pub mod mem;
pub mod mirror;
pub mod options;
pub mod reader;
pub mod record;
pub mod reopen;
pub mod replace;
pub mod row;
pub mod scan;
pub mod scratch;
pub mod session;
pub mod shared;
pub mod storage;
pub mod store;
pub mod tokens;
pub mod truncation;
mod wire;
pub mod writer;

pub use density::{MAX_RECORD_BYTES, MAX_RECORD_ROWS};
pub use dump::{dump_lines, dump_records, DumpLine};
pub use error::JournalError;
pub use fold::{Entry, Fold, FoldError, Statistics};
pub use frame::{DecodeError, FrameProblem};
pub use fs::{FsCall, FsObserver, FsStorage};
pub use inbox::Inbox;
pub use mem::{FaultOp, MemStorage};
pub use options::JournalOptions;
pub use reader::JournalReader;
pub use record::{DensityReplacement, Record, RecordBody, RowId};
pub use reopen::{clone_journal, fork_journal, resume_journal};
pub use replace::ReplaceGuard;
pub use row::{Block, Origin, Row, Speaker};
pub use scan::{ScanOutcome, TornTail};
pub use scratch::{ScratchArea, ScratchOptions, SweepReport};
pub use session::{LoadProgress, Recorder, ResumeReport, Session};
pub use shared::SharedHistory;
pub use storage::{CountsReads, ReadCounters, SharedStorage, Storage};
pub use store::{DisposeError, DisposeReport, JournalStore};
pub use tokens::{TokenCounter, Tokenizer};
pub use truncation::{plan_truncation, TruncationOptions, TruncationPlan};
pub use writer::{Journal, WriteReceipt};
