//! The conversation-history components under test, written for production.
//!
//! - [`display`]: persisted display events of an agent platform, their stores (in memory and
//!   SQLite) and the display-scoped projector that rebuilds a chat history from raw rows
//!   (seed 000, catalog P1 to P14).
//! - [`runs`]: the append-only run-event store, the run journal, the checkpointer with its
//!   summarization middleware, the history and messages views and feedback (seed 003, R1 to R22).
//! - [`journal`]: the file-backed history journal of a coding agent: crash-safe replacement,
//!   origins and mirrors, incremental reads (seed 004, J1 to J13, J15 to J22).
//! - [`spool`]: provider request bodies streamed from the journal into a sealed spool (J14).
//! - [`client_merge`]: the web client's merge of the live stream, the history pages loaded and
//!   summarization's resets into the list the user sees (M1 to M6).
//!
//! Legacy behaviours that the seeds report as bugs can be switched back on, one at a time, through
//! [`Planted`] when the crate is built with the `planted` feature (off in production builds).
//!
//! **Architecture invariant:** this crate knows nothing of the simulation. It never imports `sim`
//! or `model`; time, randomness and storage come in through its arguments.

pub mod client_merge;
pub mod display;
mod fixed_hash;
pub mod journal;
pub mod planted;
pub mod runs;
pub mod spool;
mod sqlite_setup;
mod token_counts;

pub use planted::{BugId, Planted, UnknownBugId};
