//! The spool workload as data: a history, how it reaches the body builder, and the requests sent.
//!
//! The history is a synthetic one ([`history::spool::SyntheticRows`], deterministic in its seed),
//! so a scenario file names it by its parameters instead of listing kilobytes of rows.

use crate::scenario_file::bounds::{entries_within, within};
use serde::{Deserialize, Serialize};

fn default_write_buffer() -> u32 {
    4096
}

/// One history sent as a series of requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpoolScenario {
    pub history: HistorySpec,
    /// The summarization middleware folds every row but the last `compress_keep` (more when a
    /// tool call and its results straddle the cut) into a summary before the requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_keep: Option<u64>,
    /// Where the builder reads rows from.
    pub source: SourceKind,
    /// The builder's output buffer (the only part of a body it may hold).
    #[serde(default = "default_write_buffer")]
    pub write_buffer_bytes: u32,
    /// Bytes read from the spool and written per chunk when sending.
    pub chunk_bytes: u32,
    /// The system prompt, if the requests carry one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The requests, in order; each builds a spool in the one request directory (a continuation
    /// after tool calls is the next spool).
    pub requests: Vec<RequestSpec>,
}

/// A synthetic history: plain turns, or turns with tool calls and long results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySpec {
    pub seed: u64,
    /// Content bytes the history stops at (at the end of a turn).
    pub content_bytes: u64,
    pub tool_heavy: bool,
    /// The longest text block; tool results are up to twice as long.
    pub text_bytes_max: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// The history is written to a journal on a simulated disk and read back one row at a time
    /// through the journal's incremental reader.
    Journal,
    /// The rows are handed over from memory, one at a time (a compressed history through the
    /// summary-first adapter).
    Rows,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeSpec {
    Openai,
    Anthropic,
}

/// One request: the first `rows_percent` of the history's rows, in `shape`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    pub shape: ShapeSpec,
    pub rows_percent: u8,
}

/// Bounds that keep a run small.
pub const CONTENT_BYTES_MAX: u64 = 4 << 20;
pub const REQUESTS_MAX: usize = 16;

impl SpoolScenario {
    /// Checks what a file can get wrong, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        let h = &self.history;
        within(
            "history.content_bytes",
            h.content_bytes,
            1..=CONTENT_BYTES_MAX,
        )?;
        within("history.text_bytes_max", h.text_bytes_max, 16..=65_536)?;
        within("write_buffer_bytes", self.write_buffer_bytes, 64..=1 << 20)?;
        within("chunk_bytes", self.chunk_bytes, 1..=1 << 20)?;
        entries_within("requests", self.requests.len(), REQUESTS_MAX)?;
        for (i, r) in self.requests.iter().enumerate() {
            within(
                &format!("requests[{i}].rows_percent"),
                r.rows_percent,
                1..=100,
            )?;
        }
        if let Some(s) = &self.system {
            if s.len() > 4096 {
                return Err("system: at most 4096 bytes".into());
            }
        }
        Ok(())
    }
}
