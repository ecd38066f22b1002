//! Provider request bodies streamed from the journal into a sealed spool (seed 004, catalog J14).
//!
//! A request body is built one row at a time into a file (the spool) instead of as one in-memory
//! array, so a send holds a bounded amount of memory however long the history is:
//!
//! 1. rows come from a [`RowSource`] (the journal's cursor; a [`Compressed`] source puts the
//!    summary before the kept rows);
//! 2. [`build`] writes the OpenAI chat or Anthropic messages body ([`Shape`]) into a new spool in a
//!    request-scoped [`SpoolDir`] and seals it (flush, fsync, size check);
//! 3. [`SealedSpool::send`] posts it with `Content-Length` equal to the sealed size, streaming the
//!    file in fixed chunks; a continuation after tool calls is a second spool;
//! 4. a failed or aborted build or send leaves no spool behind.
//!
//! The reference for the bytes is outside this crate: `model::spool::body` builds the same bodies
//! in memory with `serde_json`, and the simulator checks that the two are equal for every history.
//! [`SpoolReport`] carries what a checker needs to detect J14 without a global allocator: sealed
//! size, Content-Length and bytes sent, and the largest buffer the builder held against the bound
//! a streaming builder keeps.
//!
//! ```
//! use history::journal::{Origin, Row, Speaker};
//! use history::spool::{build, BuildOptions, NeverAbort, RequestHead, Shape, SpoolDir, VecSource};
//!
//! let rows = vec![Row::text(Speaker::Human, Origin::Main, "hello")];
//! let tmp = tempfile::tempdir().unwrap();
//! let mut dir = SpoolDir::open(tmp.path().join("request-1")).unwrap();
//! let head = RequestHead::default();
//! let built = build(Shape::OpenAiChat, &head, &mut VecSource::new(rows), &mut dir,
//!                   &BuildOptions::default(), &NeverAbort).unwrap();
//! let on_disk = std::fs::read(built.spool.path()).unwrap();
//! assert_eq!(
//!     on_disk,
//!     br#"{"model":"test-model","messages":[{"role":"user","content":"hello"}],"stream":true}"#
//! );
//! assert_eq!(built.spool.size_bytes(), on_disk.len() as u64);
//! ```

mod abort;
pub mod anthropic;
mod builder;
mod error;
mod file;
mod head;
mod http;
mod ids;
mod json;
pub mod openai;
mod reader;
mod report;
mod rules;
pub mod source;
#[cfg(any(test, feature = "testing"))]
pub mod synthetic;

pub use abort::{AbortSignal, NeverAbort};
#[cfg(any(test, feature = "testing"))]
pub use builder::streamed_in_memory;
pub use builder::{build, write_body, BuildOptions, Built};
pub use error::SpoolError;
pub use file::{SealedSpool, Spool, SpoolDir};
pub use head::{RequestHead, Shape};
pub use http::SendOptions;
pub use ids::ToolIdMapper;
pub use report::{BufferTracker, BuildStats, SendReport, SpoolReport, WINDOW_ROWS_MAX};
pub use source::{Compressed, IterSource, RowSource, VecSource};
#[cfg(any(test, feature = "testing"))]
pub use synthetic::{SyntheticOptions, SyntheticRows};
