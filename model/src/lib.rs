//! Reference models: small, obviously correct, and independent of the code under test.
//!
//! A model computes what a client must see from the ground truth of what agents emitted and from
//! the simulation's own fault decisions. It never reads persisted rows or journal bytes.
//!
//! - [`display`]: the client's view of a conversation's display events (catalog P).
//! - [`journal`]: a list of rows with transaction semantics, and what a reopened journal may show
//!   after a crash (J).
//! - [`runs`]: the append-only truth of what each run emitted, and what a rating targets (R).
//! - [`spool`]: the provider request bodies a history must be sent as, built in memory (J14).
//! - [`merge`]: the list a chat client shows of live stream, history pages and resets (M).
//!
//! **Architecture invariant:** `model` depends on no crate of this workspace.

pub mod display;
pub mod journal;
pub mod merge;
pub mod runs;
pub mod spool;

pub use display::{client_transcript, text_sources, ClientView, Conversation, Transcript};
