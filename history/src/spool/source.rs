//! Where a body builder gets its rows: one owned row at a time, so the builder never needs the
//! whole history at once.
//!
//! The journal's row cursor implements [`RowSource`] (adapted by the caller); tests use
//! [`VecSource`], generators use [`IterSource`]. A compressed history is a [`Compressed`] source:
//! the summary row first, then the kept rows, which is exactly the body after compression.

use crate::journal::Row;

use super::SpoolError;

/// A stream of history rows in conversation order.
pub trait RowSource {
    /// The next row, `None` at the end. After an error or `None` the builder stops reading.
    fn next_row(&mut self) -> Option<Result<Row, SpoolError>>;
}

impl<S: RowSource + ?Sized> RowSource for &mut S {
    fn next_row(&mut self) -> Option<Result<Row, SpoolError>> {
        (**self).next_row()
    }
}

impl<S: RowSource + ?Sized> RowSource for Box<S> {
    fn next_row(&mut self) -> Option<Result<Row, SpoolError>> {
        (**self).next_row()
    }
}

/// Rows from a vector (tests, histories already in memory). Rows are moved out one at a time.
#[derive(Debug)]
pub struct VecSource {
    rows: std::vec::IntoIter<Row>,
}

impl VecSource {
    pub fn new(rows: Vec<Row>) -> Self {
        VecSource {
            rows: rows.into_iter(),
        }
    }
}

impl RowSource for VecSource {
    fn next_row(&mut self) -> Option<Result<Row, SpoolError>> {
        self.rows.next().map(Ok)
    }
}

/// Rows from any iterator of rows (generators that hold nothing but their own state).
#[derive(Debug)]
pub struct IterSource<I>(pub I);

impl<I: Iterator<Item = Row>> RowSource for IterSource<I> {
    fn next_row(&mut self) -> Option<Result<Row, SpoolError>> {
        self.0.next().map(Ok)
    }
}

/// The rows of a compressed history: `summary` first, then every row of `kept`.
///
/// The body after a compression is "the summary plus the kept rows"; the summary is an ordinary row
/// (usually a human row holding the summary text), so builders need no special case for it.
#[derive(Debug)]
pub struct Compressed<S> {
    summary: Option<Row>,
    kept: S,
}

impl<S: RowSource> Compressed<S> {
    pub fn new(summary: Row, kept: S) -> Self {
        Compressed {
            summary: Some(summary),
            kept,
        }
    }
}

impl<S: RowSource> RowSource for Compressed<S> {
    fn next_row(&mut self) -> Option<Result<Row, SpoolError>> {
        match self.summary.take() {
            Some(summary) => Some(Ok(summary)),
            None => self.kept.next_row(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Origin, Speaker};

    fn drain(mut s: impl RowSource) -> Vec<Row> {
        let rows = std::iter::from_fn(|| s.next_row());
        rows.map(|r| r.expect("vector sources do not fail"))
            .collect()
    }

    #[test]
    fn compressed_yields_the_summary_then_the_kept_rows() {
        let summary = Row::text(Speaker::Human, Origin::Main, "summary");
        let kept = vec![
            Row::text(Speaker::Ai, Origin::Main, "a"),
            Row::text(Speaker::Human, Origin::Main, "b"),
        ];
        let got = drain(Compressed::new(
            summary.clone(),
            VecSource::new(kept.clone()),
        ));
        let mut want = vec![summary];
        want.extend(kept);
        assert_eq!(got, want);
    }

    #[test]
    fn iter_source_passes_rows_through_in_order() {
        let rows: Vec<Row> = (0..3)
            .map(|i| Row::text(Speaker::Human, Origin::Main, format!("{i}")))
            .collect();
        assert_eq!(drain(IterSource(rows.clone().into_iter())), rows);
    }
}
