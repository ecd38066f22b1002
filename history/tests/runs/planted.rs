//! One test per planted bug: the same check that passes on the fixed code fails with that bug
//! switched on, for the reason the catalog gives.

use history::{BugId, Planted};

use crate::checks::{self, Stop, StoreOp};
use crate::support::*;
use history::runs::{FeedbackStore, MessageCursor, NewFeedback, Rating};
use std::collections::BTreeSet;

fn on(id: BugId) -> Planted {
    Planted::only(id)
}

/// Asserts the fixed run passes and the planted run fails; returns the failure text.
fn fixed_passes_planted_fails<T: std::fmt::Debug>(
    fixed: Result<T, String>,
    planted: Result<T, String>,
) -> String {
    assert!(fixed.is_ok(), "fixed code failed: {fixed:?}");
    match planted {
        Ok(v) => panic!("the planted bug went unnoticed: {v:?}"),
        Err(e) => e,
    }
}

/// On every backend: `check` passes on the fixed code and fails with `bug` on, saying `reason`.
fn every_backend_catches<T: std::fmt::Debug>(
    bug: BugId,
    reason: &str,
    check: impl Fn(Backend, Planted) -> Result<T, String>,
) {
    for b in BACKENDS {
        let err = fixed_passes_planted_fails(check(b, Planted::none()), check(b, on(bug)));
        assert!(err.contains(reason), "{b:?}: {err}");
    }
}

/// The backends agree on `ops` on the fixed code; with R9 on they do not, as `reason` says.
fn backends_disagree_with_r9(ops: &[StoreOp], reason: &str) {
    let err = fixed_passes_planted_fails(
        checks::backends_agree(Planted::none(), ops),
        checks::backends_agree(on(BugId::R9), ops),
    );
    assert!(err.contains(reason), "{err}");
}

#[test]
fn planted_r1_history_loses_summarized_messages() {
    let runs = conversation(&[vec![1, 0, 2], vec![0, 1]], 6);
    every_backend_catches(BugId::R1, "Here is a summary", |b, planted| {
        checks::history_survives_summarization(b, planted, &runs, 60)
    });
}

#[test]
fn planted_r2_drops_oldest_messages() {
    every_backend_catches(
        BugId::R2,
        "history has 1000 messages, the store 1001",
        |b, planted| checks::history_is_complete(b, planted, 1001, 500),
    );
}

#[test]
fn planted_r3_reads_write_into_the_memory_and_jsonl_stores() {
    let runs = conversation(&[vec![1, 0], vec![0]], 0);
    let err = fixed_passes_planted_fails(
        checks::reads_leave_the_store_unchanged(Backend::Memory, Planted::none(), &runs),
        checks::reads_leave_the_store_unchanged(Backend::Memory, on(BugId::R3), &runs),
    );
    assert!(err.contains("stored rows changed by reads"), "{err}");
    // The JSONL store's index is the memory store's: the legacy helper reaches it too.
    let err = fixed_passes_planted_fails(
        checks::reads_leave_the_store_unchanged(Backend::Jsonl, Planted::none(), &runs),
        checks::reads_leave_the_store_unchanged(Backend::Jsonl, on(BugId::R3), &runs),
    );
    assert!(err.contains("stored rows changed by reads"), "{err}");
    // The SQLite store hands out fresh rows: the legacy helper could not reach its data.
    assert_eq!(
        checks::reads_leave_the_store_unchanged(Backend::Sqlite, on(BugId::R3), &runs),
        Ok(())
    );
}

#[test]
fn planted_r4_error_and_cancel_lose_the_buffer() {
    for b in BACKENDS {
        for stop in [Stop::Error, Stop::Cancel] {
            let err = fixed_passes_planted_fails(
                checks::journal_keeps_events(b, Planted::none(), 25, 20, &[], stop),
                checks::journal_keeps_events(b, on(BugId::R4), 25, 20, &[], stop),
            );
            assert!(
                err.contains("20 of 25 events stored, 5 still buffered"),
                "{err}"
            );
        }
        // A normal end still flushes under R4.
        assert_eq!(
            checks::journal_keeps_events(b, on(BugId::R4), 25, 20, &[], Stop::End),
            Ok(())
        );
    }
}

#[test]
fn planted_r5_racing_writers_duplicate_seqs() {
    every_backend_catches(BugId::R5, "seqs not unique and increasing", |b, planted| {
        checks::seqs_survive_racing_writers(b, planted, (6, 6), (3, 3), &[true, false])
    });
}

#[test]
fn planted_r6_ratings_by_ai_index_hit_the_wrong_run() {
    let runs = conversation(&[vec![1, 0], vec![2], vec![0]], 2);
    every_backend_catches(BugId::R6, "maps to", |b, planted| {
        checks::ratings_land_on_their_run(b, planted, &runs)
    });
}

#[test]
fn planted_r7_messages_view_capped_at_200() {
    every_backend_catches(
        BugId::R7,
        "/messages has 200 rows, /history 201",
        |b, planted| checks::views_agree(b, planted, 201, 500),
    );
}

#[test]
fn planted_r8_stale_mapping_after_a_new_run() {
    let runs = conversation(&[vec![1], vec![0, 2]], 0);
    every_backend_catches(BugId::R8, "maps to None", |b, planted| {
        checks::rating_after_a_new_run(b, planted, &runs)
    });
}

#[test]
fn planted_r9_backends_disagree_on_null_users() {
    let ops = [
        StoreOp::Batch(vec![(0, true, true), (0, true, false), (0, true, true)]),
        StoreOp::List {
            thread: 0,
            limit: 10,
            cursor: MessageCursor::None,
        },
    ];
    backends_disagree_with_r9(&ops, "memory [1, 2, 3] vs sqlite [1, 3]");
}

#[test]
fn planted_r9_backends_disagree_on_both_cursors() {
    let ops = [
        StoreOp::Batch(vec![(0, true, true); 10]),
        StoreOp::List {
            thread: 0,
            limit: 2,
            cursor: MessageCursor::Both {
                before: 9,
                after: 2,
            },
        },
    ];
    backends_disagree_with_r9(&ops, "memory [3, 4] vs sqlite [7, 8]");
}

#[test]
fn planted_r10_ids_change_between_reads() {
    let first = conversation(&[vec![1, 0]], 0);
    let more = named_conversation(&[vec![0]], 0, "later-");
    every_backend_catches(BugId::R10, "ids are not uuid5/model ids", |b, planted| {
        checks::ids_are_stable(b, planted, &first, &more)
    });
}

#[test]
fn planted_r11_summary_splits_tool_pairs() {
    // A tool step with two calls: keeping the last 2 by count keeps one result without its call.
    let runs = conversation(&[vec![2, 2, 2]], 3);
    let err = fixed_passes_planted_fails(
        checks::summaries_keep_tool_pairs(Planted::none(), &runs, 30, 2),
        checks::summaries_keep_tool_pairs(on(BugId::R11), &runs, 30, 2),
    );
    assert!(err.contains("kept without their call"), "{err}");
}

/// A feedback row of thread `t1`.
fn feedback(run: &str, rating: Rating, user: Option<&str>) -> NewFeedback {
    crate::support::new_feedback(run, "t1", rating, user)
}

/// R21's legacy count: anonymous feedback is left out of `aggregate_by_run` (upstream's
/// `test_aggregate_by_run` counts every row of the run; here one of them anonymous).
#[test]
fn planted_r21_counts_leave_out_anonymous_feedback() {
    let counts = |planted: Planted| {
        let s = FeedbackStore::with_planted(planted);
        s.create(feedback("r1", Rating::Up, Some("user-1")))
            .unwrap();
        s.create(feedback("r1", Rating::Down, None)).unwrap();
        let a = s.aggregate_by_run("t1", "r1");
        (a.total, a.positive, a.negative)
    };
    assert_eq!(counts(Planted::none()), (2, 1, 1));
    assert_eq!(counts(on(BugId::R21)), (1, 1, 0));
}

/// R22's legacy soft delete: after `delete_by_run` (upstream's `test_delete_by_run`: the run's
/// listing is empty) the grouped listings still return the withdrawn row.
#[test]
fn planted_r22_grouped_listings_return_withdrawn_feedback() {
    let grouped = |planted: Planted| {
        let s = FeedbackStore::with_planted(planted);
        s.create(feedback("r1", Rating::Up, Some("u1"))).unwrap();
        assert!(s.delete_by_run("t1", "r1", "u1"));
        assert!(s.list_by_run("t1", "r1", 100, Some("u1")).is_empty());
        let runs = BTreeSet::from(["r1".to_string()]);
        (
            s.list_by_thread_grouped("t1", Some("u1")).len(),
            s.list_by_run_ids("t1", &runs, Some("u1")).len(),
        )
    };
    assert_eq!(grouped(Planted::none()), (0, 0));
    assert_eq!(grouped(on(BugId::R22)), (1, 1));
}
