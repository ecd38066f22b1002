//! Last-resort truncation of oversized tool results, decided in one pass (J13).
//!
//! When a request would still exceed its budget, the oldest tool results longer than
//! `keep_bytes` are cut to that length (plus a marker saying how much went), oldest first, until
//! the history fits. The total is computed once and lowered by what each cut saves, so deciding
//! every replacement costs one pass over the rows. The legacy code re-projected the whole history
//! after each replacement to re-measure it: O(candidates x rows), 722 s at 1,024 rows in the seed.
//! Truncation changes only the request; the journal is not written.

use super::row::{Block, Row};
use crate::{BugId, Planted};

/// How much to keep.
#[derive(Clone, Copy, Debug)]
pub struct TruncationOptions {
    /// The request's budget, in content bytes ([`Row::content_bytes`]).
    pub budget_bytes: u64,
    /// Bytes of a tool result kept when it is cut.
    pub keep_bytes: usize,
    pub planted: Planted,
}

/// The decided replacements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TruncationPlan {
    /// Row index and its truncated replacement, in row order.
    pub replacements: Vec<(usize, Row)>,
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// Whether the history fits the budget after the replacements.
    pub fits: bool,
    /// Rows looked at while deciding: the cost the J13 invariant bounds by the row count.
    pub rows_visited: u64,
}

/// Decides which tool results to cut so `rows` fit the budget.
pub fn plan_truncation(rows: &[&Row], opts: TruncationOptions) -> TruncationPlan {
    let mut rows_visited = 0u64;
    let mut total = 0u64;
    let mut candidates = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        rows_visited += 1;
        total += r.content_bytes() as u64;
        if has_long_result(r, opts.keep_bytes) {
            candidates.push(i);
        }
    }
    let bytes_before = total;
    let mut replacements: Vec<(usize, Row)> = Vec::new();
    for i in candidates {
        if total <= opts.budget_bytes {
            break;
        }
        let cut = truncate_results(rows[i], opts.keep_bytes);
        let saved = (rows[i].content_bytes() - cut.content_bytes()) as u64;
        replacements.push((i, cut));
        if opts.planted.is(BugId::J13) {
            // planted J13: after every replacement the whole history was projected again (with
            // the replacements so far) and measured from scratch.
            let (measured, visited) = reproject(rows, &replacements);
            total = measured;
            rows_visited += visited;
        } else {
            total -= saved;
        }
    }
    // Post-condition: cuts only shrink the history, and (but with J13 planted) deciding visits
    // each row once.
    debug_assert!(total <= bytes_before);
    debug_assert!(rows_visited == rows.len() as u64 || opts.planted.is(BugId::J13));
    TruncationPlan {
        replacements,
        bytes_before,
        bytes_after: total,
        fits: total <= opts.budget_bytes,
        rows_visited,
    }
}

/// The legacy measurement: every row, each replaced one in its replaced form.
fn reproject(rows: &[&Row], replacements: &[(usize, Row)]) -> (u64, u64) {
    let projected: Vec<Row> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            replacements
                .iter()
                .find(|(j, _)| *j == i)
                .map_or_else(|| (*r).clone(), |(_, cut)| cut.clone())
        })
        .collect();
    let total = projected.iter().map(|r| r.content_bytes() as u64).sum();
    (total, projected.len() as u64)
}

fn has_long_result(row: &Row, keep_bytes: usize) -> bool {
    row.blocks.iter().any(|b| match b {
        Block::ToolResult { content, .. } => shortened(content, keep_bytes).is_some(),
        _ => false,
    })
}

/// `content` cut to at most `keep_bytes` (on a char boundary) plus a marker, when that is
/// shorter than `content`.
fn shortened(content: &str, keep_bytes: usize) -> Option<String> {
    if content.len() <= keep_bytes {
        return None;
    }
    let mut end = keep_bytes;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    let cut = format!(
        "{}\n[truncated {} bytes]",
        &content[..end],
        content.len() - end
    );
    // Post-condition: the cut keeps the start of `content`, at most `keep_bytes` of it.
    debug_assert!(end <= keep_bytes && cut.starts_with(&content[..end]));
    (cut.len() < content.len()).then_some(cut)
}

/// `row` with every long tool result cut.
fn truncate_results(row: &Row, keep_bytes: usize) -> Row {
    let mut out = row.clone();
    for b in &mut out.blocks {
        if let Block::ToolResult { content, .. } = b {
            if let Some(cut) = shortened(content, keep_bytes) {
                *content = cut;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::row::Origin;

    fn result(len: usize) -> Row {
        Row::tool_result(Origin::Main, "c", "read", "é".repeat(len / 2))
    }

    #[test]
    fn cuts_oldest_results_until_the_history_fits() {
        let rows: Vec<Row> = (0..10).map(|_| result(1_000)).collect();
        let refs: Vec<&Row> = rows.iter().collect();
        let opts = TruncationOptions {
            budget_bytes: 7_000,
            keep_bytes: 101,
            planted: Planted::none(),
        };
        let plan = plan_truncation(&refs, opts);
        assert!(plan.fits);
        let idx: Vec<usize> = plan.replacements.iter().map(|(i, _)| *i).collect();
        assert_eq!(idx, [0, 1, 2, 3]);
        assert!(plan.rows_visited <= rows.len() as u64);
        let after: u64 = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                plan.replacements
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map_or(r.content_bytes(), |(_, c)| c.content_bytes()) as u64
            })
            .sum();
        assert_eq!(after, plan.bytes_after);
    }

    #[test]
    fn nothing_to_do_under_budget_and_short_results_stay() {
        let rows = [result(10)];
        let refs: Vec<&Row> = rows.iter().collect();
        let plan = plan_truncation(
            &refs,
            TruncationOptions {
                budget_bytes: 1,
                keep_bytes: 100,
                planted: Planted::none(),
            },
        );
        assert!(plan.replacements.is_empty());
        assert!(!plan.fits);
    }
}
