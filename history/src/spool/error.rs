//! The one error type of the request spool: every failure names what was wrong and where (row and
//! block index, byte offset, file path), so a failed call can be diagnosed from its error alone.
//!
//! Every path that returns one of these leaves no spool file behind (the spool's drop guard).

use std::io;
use std::path::PathBuf;

use crate::journal::Speaker;

/// Why building, sealing or sending a request spool failed.
#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    /// The row source (the journal's cursor) could not produce row `row_index`.
    #[error("row source failed at row {row_index}: {message}")]
    Source { row_index: u64, message: String },

    /// Row `row_index` holds a block its speaker may not send (e.g. a tool result in a human row).
    #[error("row {row_index} block {block_index}: a {speaker:?} row cannot hold a {block} block")]
    Shape {
        row_index: u64,
        block_index: usize,
        speaker: Speaker,
        block: &'static str,
    },

    /// A file operation on the spool or its directory failed.
    #[error("spool {op} failed on {}: {source}", path.display())]
    File {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },

    /// Writing the body failed (the spool file or the caller's writer).
    #[error("writing the body failed after {written_bytes} bytes: {source}")]
    Write {
        written_bytes: u64,
        source: io::Error,
    },

    /// The sealed file's size differs from the bytes the builder wrote, or the file changed size
    /// between sealing and sending. Content-Length would lie, so nothing is sent.
    #[error("spool {} has {on_disk_bytes} bytes on disk, expected {expected_bytes}", path.display())]
    SizeMismatch {
        path: PathBuf,
        expected_bytes: u64,
        on_disk_bytes: u64,
    },

    /// The caller's abort signal fired during `phase` ("build" or "send") after `at_bytes` bytes.
    #[error("aborted during {phase} after {at_bytes} bytes")]
    Aborted { phase: &'static str, at_bytes: u64 },

    /// A request option cannot go on the wire (e.g. a header value holding a line break).
    #[error("invalid request option {field}: {reason}")]
    InvalidOption { field: &'static str, reason: String },

    /// The connection failed while `op` ran (connect, write the head, write the body, read).
    #[error("network {op} failed after {sent_bytes} body bytes: {source}")]
    Net {
        op: &'static str,
        sent_bytes: u64,
        source: io::Error,
    },

    /// The server's response is not valid HTTP/1.1 at byte `offset` of the response.
    #[error("malformed response at byte {offset}: {what}")]
    Response { offset: u64, what: String },

    /// The server answered with a non-2xx status. `body_excerpt` is the start of its body.
    #[error("server answered {status}: {body_excerpt}")]
    Status { status: u16, body_excerpt: String },
}

impl SpoolError {
    /// A file error on `path`.
    pub(crate) fn file(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        SpoolError::File {
            op,
            path: path.into(),
            source,
        }
    }
}
