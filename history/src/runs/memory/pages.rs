//! Message pages of the in-memory store: the window a cursor selects in seq-sorted rows, and
//! pages of a selection (a run's rows, a user's) found without collecting it first.

use std::ops::Range;

use super::rows::Stored;
use crate::runs::event::{MessageCursor, RunEvent};
use crate::runs::invariants::is_page;
use crate::runs::query::UserScope;

/// The index window of a message page, per the semantics documented on [`MessageCursor`].
/// `rows` are sorted by `seq_of`; a page is always contiguous in them.
pub(crate) fn window<T>(
    rows: &[T],
    seq_of: impl Fn(&T) -> u64,
    limit: usize,
    cursor: MessageCursor,
) -> Range<usize> {
    let (bounds, latest) = cursor_bounds(rows, seq_of, cursor);
    let take = limit.min(bounds.len());
    let range = if latest {
        bounds.end - take..bounds.end
    } else {
        bounds.start..bounds.start + take
    };
    debug_assert!(range.start <= range.end && range.end <= rows.len() && range.len() <= limit);
    range
}

/// The index range of the rows inside the cursor's seq bounds, and whether a page of them is
/// their latest rows (no cursor, `Before`) rather than their first (`After`, `Both`).
pub(super) fn cursor_bounds<T>(
    rows: &[T],
    seq_of: impl Fn(&T) -> u64,
    cursor: MessageCursor,
) -> (Range<usize>, bool) {
    let first_above = |a: u64| rows.partition_point(|s| seq_of(s) <= a);
    let first_at_or_above = |b: u64| rows.partition_point(|s| seq_of(s) < b);
    let (bounds, latest) = match cursor {
        MessageCursor::None => (0..rows.len(), true),
        MessageCursor::Before(b) => (0..first_at_or_above(b), true),
        MessageCursor::After(a) => (first_above(a)..rows.len(), false),
        MessageCursor::Both { before, after } => {
            let start = first_above(after);
            (start..first_at_or_above(before).max(start), false)
        }
    };
    debug_assert!(bounds.start <= bounds.end && bounds.end <= rows.len());
    (bounds, latest)
}

/// A message page of already selected rows (seq order), copied out.
pub(super) fn page(rows: &[&Stored], limit: usize, cursor: MessageCursor) -> Vec<RunEvent> {
    let page: Vec<RunEvent> = rows[window(rows, |s| s.event.seq, limit, cursor)]
        .iter()
        .map(|s| s.event.clone())
        .collect();
    debug_assert!(is_page(&page, limit));
    page
}

/// Whether a message row belongs to a read of `run_id`'s rows (all runs' when `None`) in
/// `user`'s resolved scope.
pub(super) fn in_selection(s: &Stored, run_id: Option<&str>, user: Option<&str>) -> bool {
    run_id.is_none_or(|r| s.event.run_id == r)
        && UserScope::admits(user, s.event.user_id.as_deref())
}

/// The page [`page`] cuts from the rows [`in_selection`] admits, copied out, found without
/// collecting the selection first: from the cursor's end of the thread, only as far as the page
/// needs. A run's page of a long thread, or a user's, then costs its rows and the others it
/// passes, not every row of the thread at every page.
pub(super) fn selected_page(
    rows: &[Stored],
    run_id: Option<&str>,
    user: Option<&str>,
    limit: usize,
    cursor: MessageCursor,
) -> Vec<RunEvent> {
    let (bounds, latest) = cursor_bounds(rows, |s| s.event.seq, cursor);
    let selected = rows[bounds]
        .iter()
        .filter(|s| in_selection(s, run_id, user));
    let copy = |s: &Stored| s.event.clone();
    let page = if latest {
        let mut page: Vec<RunEvent> = selected.rev().take(limit).map(copy).collect();
        page.reverse();
        page
    } else {
        selected.take(limit).map(copy).collect()
    };
    debug_assert!(is_page(&page, limit));
    page
}
