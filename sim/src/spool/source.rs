//! Where the body builder's rows come from: the synthetic history a scenario names, and a
//! [`RowSource`] over a journal's in-context rows that hands them over one at a time.

use super::scenario::HistorySpec;
use crate::compression::compression;
use history::journal::{JournalReader, Origin, Row};
use history::spool::{RowSource, SpoolError, SyntheticOptions, SyntheticRows};
use std::cell::RefCell;
use std::rc::Rc;

/// Every row of the synthetic history `spec` names, in order.
pub fn history_rows(spec: &HistorySpec) -> Vec<Row> {
    let mut g = SyntheticRows::new(SyntheticOptions {
        content_bytes_target: spec.content_bytes,
        tool_heavy: spec.tool_heavy,
        text_bytes_max: spec.text_bytes_max as usize,
        seed: spec.seed,
    });
    let mut rows = Vec::new();
    // The generator never fails; a failure would end the history early.
    while let Some(Ok(row)) = g.next_row() {
        rows.push(row);
    }
    rows
}

/// The rows a request sends after the summarization middleware kept the last `keep`: the
/// summary first, then the kept rows.
pub fn compressed(rows: &[Row], keep: Option<u64>) -> Vec<Row> {
    match keep.and_then(|k| compression(rows, k, &Origin::Main)) {
        Some((summary, cut)) => {
            let mut out = vec![summary];
            out.extend_from_slice(&rows[cut as usize..]);
            out
        }
        None => rows.to_vec(),
    }
}

/// How many of `total` rows a request of `percent` sends: at least one, when there is one.
pub fn prefix(total: usize, percent: u8) -> usize {
    let n = (total * usize::from(percent)).div_ceil(100);
    n.clamp(total.min(1), total)
}

/// The first `end` in-context rows of a journal, read one at a time through its incremental
/// reader: the builder never holds more than the row it is writing. The reader is the
/// conversation's, shared by every request of it (as a server keeps one per conversation, J11):
/// the first request folds the journal, the later ones fold what was appended since (nothing,
/// here) instead of decoding the same bytes into the same rows again.
#[derive(Debug)]
pub struct JournalRows {
    reader: Rc<RefCell<JournalReader>>,
    next: usize,
    end: usize,
}

impl JournalRows {
    pub fn new(reader: Rc<RefCell<JournalReader>>, end: usize) -> Self {
        JournalRows {
            reader,
            next: 0,
            end,
        }
    }
}

impl RowSource for JournalRows {
    fn next_row(&mut self) -> Option<Result<Row, SpoolError>> {
        if self.next >= self.end {
            return None;
        }
        let at = self.next;
        let rows = self.reader.borrow_mut().context_range(at..at + 1);
        match rows {
            Ok(rows) => {
                let row = rows.into_iter().next()?;
                self.next += 1;
                Some(Ok(std::sync::Arc::unwrap_or_clone(row)))
            }
            Err(e) => Some(Err(SpoolError::Source {
                row_index: at as u64,
                message: e.to_string(),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::journal::{Journal, JournalOptions, MemStorage, Speaker};
    use std::sync::Arc;

    #[test]
    fn journal_rows_come_out_one_at_a_time_and_stop_at_the_end() {
        let storage = Arc::new(MemStorage::new());
        let mut j =
            Journal::create(storage.clone(), "h", JournalOptions::default(), None).expect("create");
        let rows: Vec<Row> = (0..5)
            .map(|i| Row::text(Speaker::Human, Origin::Main, format!("r{i}")))
            .collect();
        j.append(Origin::Main, rows.clone()).expect("append");
        let reader = Rc::new(RefCell::new(JournalReader::new(
            storage,
            "h",
            JournalOptions::default(),
        )));
        let read_all = |end| {
            let mut src = JournalRows::new(reader.clone(), end);
            let mut got = Vec::new();
            while let Some(r) = src.next_row() {
                got.push(r.expect("reads"));
            }
            got
        };
        assert_eq!(read_all(3), rows[..3]);
        let folded = reader.borrow().bytes_read();
        assert!(folded > 0);
        // A later request over the same reader gets its rows without reading the journal again.
        assert_eq!(read_all(5), rows);
        assert_eq!(read_all(9), rows, "clamped to the journal's rows");
        assert_eq!(reader.borrow().bytes_read(), folded);
    }

    #[test]
    fn prefixes_and_compression() {
        assert_eq!(prefix(10, 100), 10);
        assert_eq!(prefix(10, 1), 1);
        assert_eq!(prefix(0, 50), 0);
        let rows = history_rows(&HistorySpec {
            seed: 1,
            content_bytes: 4096,
            tool_heavy: true,
            text_bytes_max: 256,
        });
        let c = compressed(&rows, Some(2));
        assert!(c.len() < rows.len());
        assert_eq!(c.last(), rows.last());
    }
}
