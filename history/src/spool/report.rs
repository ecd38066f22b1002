//! What a request reports about itself, so a checker can verify it without a global allocator:
//! the sizes that must agree (sealed, Content-Length, sent) and the largest in-memory buffer the
//! builder held against the bound a streaming builder can never exceed. Judging them is the
//! simulator's job (`sim::spool::check`); this crate only reports.
//!
//! "Buffered" counts the bytes a builder itself holds: its fixed output buffer plus the
//! content of the rows it holds at once (one row for OpenAI, a window of at most three for
//! Anthropic's cache markers). A builder that holds the whole history or the whole body (J14)
//! exceeds the bound as soon as the history is larger than a few rows.

use crate::journal::Row;

/// The most rows any streaming builder holds at once (Anthropic: the row being decided plus the
/// two rows after it, which tell whether it is among the last two).
pub const WINDOW_ROWS_MAX: u64 = 3;

/// Figures of one body build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Rows the source produced (including rows with no blocks, which send nothing).
    pub rows_read: u64,
    /// Size of the body written.
    pub body_bytes: u64,
    /// Content bytes of the largest row.
    pub max_row_bytes: u64,
    /// The most bytes the builder held in memory at once.
    pub peak_buffered_bytes: u64,
    /// What a streaming builder may hold at most: write buffer + WINDOW_ROWS_MAX largest rows.
    pub buffered_bound_bytes: u64,
}

/// Counts what a builder holds; the builders report every row they take and let go of.
#[derive(Debug)]
pub struct BufferTracker {
    base_bytes: u64,
    held_bytes: u64,
    stats: BuildStats,
}

impl BufferTracker {
    /// A tracker for a builder whose output buffer holds `write_buffer_bytes`.
    pub fn new(write_buffer_bytes: u64) -> Self {
        BufferTracker {
            base_bytes: write_buffer_bytes,
            held_bytes: 0,
            stats: BuildStats {
                peak_buffered_bytes: write_buffer_bytes,
                ..BuildStats::default()
            },
        }
    }

    /// The builder's output buffer size this tracker was made with.
    pub fn write_buffer_bytes(&self) -> u64 {
        self.base_bytes
    }

    /// A row came out of the source.
    pub fn row_read(&mut self, row: &Row) {
        self.stats.rows_read += 1;
        self.stats.max_row_bytes = self.stats.max_row_bytes.max(row.content_bytes() as u64);
    }

    /// The builder now also holds `bytes` (a row's content, a body buffer).
    pub fn hold(&mut self, bytes: u64) {
        self.held_bytes += bytes;
        self.stats.peak_buffered_bytes = self
            .stats
            .peak_buffered_bytes
            .max(self.base_bytes + self.held_bytes);
    }

    /// The builder let go of `bytes` it held.
    pub fn release(&mut self, bytes: u64) {
        assert!(bytes <= self.held_bytes, "released more than was held");
        self.held_bytes -= bytes;
    }

    /// The figures of a finished build of `body_bytes`.
    pub fn finish(mut self, body_bytes: u64) -> BuildStats {
        self.stats.body_bytes = body_bytes;
        self.stats.buffered_bound_bytes =
            self.base_bytes + WINDOW_ROWS_MAX * self.stats.max_row_bytes;
        self.stats
    }
}

/// Figures of one send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendReport {
    /// The response status (2xx; other statuses are errors).
    pub status: u16,
    /// The Content-Length header the request carried.
    pub content_length: u64,
    /// Body bytes written to the connection.
    pub sent_bytes: u64,
    /// The response body (de-chunked), at most `SendOptions::response_body_max_bytes`.
    pub response_body: Vec<u8>,
}

/// Everything a checker needs about one request: build and send figures side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpoolReport {
    /// Size of the spool file when sealed.
    pub sealed_bytes: u64,
    /// The Content-Length header sent.
    pub content_length: u64,
    /// Body bytes written to the connection.
    pub sent_bytes: u64,
    /// The most bytes the builder held in memory at once.
    pub peak_buffered_bytes: u64,
    /// What a streaming builder may hold at most for this history.
    pub buffered_bound_bytes: u64,
}

impl SpoolReport {
    /// Puts the build figures and the send figures of one request together.
    pub fn new(sealed_bytes: u64, build: &BuildStats, send: &SendReport) -> Self {
        SpoolReport {
            sealed_bytes,
            content_length: send.content_length,
            sent_bytes: send.sent_bytes,
            peak_buffered_bytes: build.peak_buffered_bytes,
            buffered_bound_bytes: build.buffered_bound_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Origin, Speaker};

    #[test]
    fn the_peak_counts_the_write_buffer_and_held_rows() {
        let mut t = BufferTracker::new(100);
        let row = Row::text(Speaker::Human, Origin::Main, "0123456789");
        t.row_read(&row);
        t.hold(10);
        t.hold(10);
        t.release(10);
        t.release(10);
        t.hold(5);
        let stats = t.finish(42);
        assert_eq!(stats.peak_buffered_bytes, 120);
        assert_eq!(stats.max_row_bytes, 10);
        assert_eq!(stats.buffered_bound_bytes, 130);
        assert_eq!(stats.body_bytes, 42);
        assert_eq!(stats.rows_read, 1);
    }
}
