//! The journal's error type: every failure names its file and, for bad bytes, the offset.

use std::io;

use super::fold::FoldError;
use super::frame::DecodeError;

/// Why a journal operation failed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The storage failed (EIO, ENOSPC, ...).
    #[error("{file}: {op} failed: {source}")]
    Io {
        file: String,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    /// Bad bytes before the tail. The file is left untouched: history is never dropped silently.
    #[error("{file}: corrupt {source}")]
    Corrupt {
        file: String,
        #[source]
        source: DecodeError,
    },
    /// A well-formed record that cannot apply to the history before it.
    #[error("{file}: record {seq} at byte offset {offset} cannot apply: {problem}")]
    Invalid {
        file: String,
        offset: u64,
        seq: u64,
        problem: FoldError,
    },
    #[error("{file} does not exist")]
    NotFound { file: String },
    #[error("{file} already exists")]
    AlreadyExists { file: String },
    /// An earlier write or sync failed in a way that leaves the file's state unknown; the writer
    /// refuses further writes until the journal is resumed.
    #[error("{file}: writer stopped after an earlier failure: {reason}")]
    Poisoned { file: String, reason: String },
    /// The file is shorter than what this writer wrote: someone else cut it.
    #[error("{file}: length {actual} is below this writer's end {expected}")]
    Shrunk {
        file: String,
        expected: u64,
        actual: u64,
    },
    /// A caller passed something the operation cannot do.
    #[error("{0}")]
    Argument(String),
}

impl JournalError {
    pub(crate) fn io(file: &str, op: &'static str, source: io::Error) -> JournalError {
        JournalError::Io {
            file: file.to_string(),
            op,
            source,
        }
    }

    /// The byte offset a corrupt or invalid record starts at.
    pub fn offset(&self) -> Option<u64> {
        match self {
            JournalError::Corrupt { source, .. } => Some(source.offset),
            JournalError::Invalid { offset, .. } => Some(*offset),
            _ => None,
        }
    }
}
