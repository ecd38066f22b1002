//! The builders' side of a row source: polls the abort signal, validates each row against its
//! speaker, skips rows with no blocks and tells the buffer tracker what is held.

use crate::journal::Row;

use super::report::BufferTracker;
use super::rules::check_row;
use super::{AbortSignal, RowSource, SpoolError};

/// Reads rows for one body build.
pub struct RowReader<'a, S: RowSource + ?Sized> {
    source: &'a mut S,
    abort: &'a dyn AbortSignal,
    track: &'a mut BufferTracker,
    next_index: u64,
}

impl<'a, S: RowSource + ?Sized> RowReader<'a, S> {
    pub fn new(
        source: &'a mut S,
        abort: &'a dyn AbortSignal,
        track: &'a mut BufferTracker,
    ) -> Self {
        RowReader {
            source,
            abort,
            track,
            next_index: 0,
        }
    }

    /// The next row that has blocks, validated and counted as held; `None` at the end.
    /// `written_bytes` is what the builder wrote so far (for the abort error).
    pub fn next(&mut self, written_bytes: u64) -> Result<Option<Row>, SpoolError> {
        loop {
            if self.abort.is_aborted() {
                return Err(SpoolError::Aborted {
                    phase: "build",
                    at_bytes: written_bytes,
                });
            }
            let index = self.next_index;
            let row = match self.source.next_row() {
                None => return Ok(None),
                Some(row) => row?,
            };
            self.next_index += 1;
            check_row(index, &row)?;
            self.track.row_read(&row);
            if !row.blocks.is_empty() {
                self.track.hold(row.content_bytes() as u64);
                return Ok(Some(row));
            }
        }
    }

    /// The builder is done with `row` (it is dropped here).
    pub fn release(&mut self, row: Row) {
        self.track.release(row.content_bytes() as u64);
    }
}
