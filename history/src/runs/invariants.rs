//! Predicates the run-event stores assert (in debug builds) of what they answer: the invariants
//! every backend keeps, planted legacy paths included.

use std::collections::BTreeMap;

use super::event::{Category, MessageCursor, RunEvent};

/// Whether `rows` can be a page of at most `limit` rows: no more than `limit`, ascending by seq
/// (equal seqs only where a missing unique guard let them in, R5).
pub(crate) fn is_page(rows: &[RunEvent], limit: usize) -> bool {
    rows.len() <= limit && rows.windows(2).all(|w| w[0].seq <= w[1].seq)
}

/// Whether `seq` lies inside the cursor's exclusive bounds (every seq does for no cursor).
pub(crate) fn in_cursor(seq: u64, cursor: MessageCursor) -> bool {
    match cursor {
        MessageCursor::None => true,
        MessageCursor::Before(before) => seq < before,
        MessageCursor::After(after) => seq > after,
        MessageCursor::Both { before, after } => after < seq && seq < before,
    }
}

/// Whether `rows` can be a message page of `thread_id` read with `limit` and `cursor`: a page
/// ([`is_page`]) of the thread's message rows, each inside the cursor's bounds. Every planted
/// read keeps this (they drop or add rows of the thread, never rows of another or outside the
/// window).
pub(crate) fn is_message_page(
    rows: &[RunEvent],
    thread_id: &str,
    limit: usize,
    cursor: MessageCursor,
) -> bool {
    is_page(rows, limit)
        && rows.iter().all(|e| {
            e.thread_id == thread_id && e.category == Category::Message && in_cursor(e.seq, cursor)
        })
}

/// Whether `seqs`, assigned in order to events of `threads`, rise strictly within each thread and
/// start above the thread's maximum before the write (`prior`).
pub(crate) fn seqs_follow(threads: &[&str], seqs: &[u64], prior: impl Fn(&str) -> u64) -> bool {
    if threads.len() != seqs.len() {
        return false;
    }
    let mut last: BTreeMap<&str, u64> = BTreeMap::new();
    for (&thread, &seq) in threads.iter().zip(seqs) {
        let floor = last.get(thread).copied().unwrap_or_else(|| prior(thread));
        if seq <= floor {
            return false;
        }
        last.insert(thread, seq);
    }
    true
}

/// The post-condition of a batch write that numbered events of `threads` with `seqs`, each
/// thread's maximum before it in `prior`: [`seqs_follow`], checked in debug builds.
pub(crate) fn debug_assert_seqs_follow(
    threads: &[String],
    seqs: &[u64],
    prior: &BTreeMap<String, u64>,
) {
    let threads: Vec<&str> = threads.iter().map(String::as_str).collect();
    debug_assert!(
        seqs_follow(&threads, seqs, |t| prior[t]),
        "seqs {seqs:?} of threads {threads:?} do not follow the maxima {prior:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seqs_follow_per_thread_from_the_prior_maximum() {
        let prior = |t: &str| if t == "a" { 3 } else { 0 };
        assert!(seqs_follow(&["a", "b", "a"], &[4, 1, 5], prior));
        assert!(!seqs_follow(&["a"], &[3], prior));
        assert!(!seqs_follow(&["b", "b"], &[2, 2], prior));
        assert!(!seqs_follow(&["b"], &[], prior));
    }

    #[test]
    fn cursor_bounds_are_exclusive() {
        assert!(in_cursor(0, MessageCursor::None));
        assert!(in_cursor(4, MessageCursor::Before(5)) && !in_cursor(5, MessageCursor::Before(5)));
        assert!(in_cursor(3, MessageCursor::After(2)) && !in_cursor(2, MessageCursor::After(2)));
        let both = MessageCursor::Both {
            before: 5,
            after: 2,
        };
        assert!(in_cursor(3, both) && in_cursor(4, both));
        assert!(!in_cursor(2, both) && !in_cursor(5, both));
    }
}
