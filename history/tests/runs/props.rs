//! The rules R1 to R11 as properties of the fixed code, each run against both backends with the
//! same body.

use history::runs::*;
use history::Planted;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use crate::checks::{self, Stop, StoreOp};
use crate::support::*;

/// Thread sizes around the caps (200, 1000) and the page size (500), and one past each.
const SIZES: [usize; 14] = [
    0, 1, 199, 200, 201, 499, 500, 501, 999, 1000, 1001, 1499, 1500, 1501,
];

fn size() -> impl Strategy<Value = usize> {
    prop_oneof![prop::sample::select(SIZES.to_vec()), 0usize..1600]
}

fn page() -> impl Strategy<Value = usize> {
    prop_oneof![Just(500usize), 1usize..600]
}

fn shape(runs: usize, steps: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(0u8..9, 0..steps), 1..runs)
}

fn seq_value() -> impl Strategy<Value = u64> {
    prop_oneof![8 => 0u64..400, 1 => Just(u64::MAX), 1 => Just(SEQ_MAX)]
}

fn cursor() -> impl Strategy<Value = MessageCursor> {
    prop_oneof![
        Just(MessageCursor::None),
        seq_value().prop_map(MessageCursor::Before),
        seq_value().prop_map(MessageCursor::After),
        (seq_value(), seq_value())
            .prop_map(|(before, after)| MessageCursor::Both { before, after }),
    ]
}

fn store_op() -> impl Strategy<Value = StoreOp> {
    let event = (0u8..3, prop::bool::weighted(0.7), any::<bool>());
    prop_oneof![
        3 => prop::collection::vec(event, 0..120).prop_map(StoreOp::Batch),
        4 => (0u8..3, prop_oneof![9 => 0usize..400, 1 => Just(usize::MAX)], cursor())
            .prop_map(|(thread, limit, cursor)| StoreOp::List { thread, limit, cursor }),
        1 => (0u8..3).prop_map(StoreOp::Count),
        1 => (0u8..3, 0u8..4).prop_map(|(thread, run)| StoreOp::Events { thread, run }),
    ]
}

fn stop() -> impl Strategy<Value = Stop> {
    prop_oneof![
        Just(Stop::End),
        Just(Stop::Error),
        Just(Stop::Cancel),
        (0usize..120).prop_map(Stop::Kill),
    ]
}

#[test]
fn r2_r7_full_reads_at_every_cap_and_page_boundary() {
    for n in SIZES {
        for b in BACKENDS {
            assert_eq!(
                checks::history_is_complete(b, Planted::none(), n, 500),
                Ok(())
            );
            assert_eq!(checks::views_agree(b, Planted::none(), n, 500), Ok(()));
        }
    }
}

#[test]
fn r1_history_survives_repeated_summarization() {
    let runs = conversation(&[vec![1, 0, 2, 4], vec![0, 5, 0], vec![2, 2, 0, 1]], 8);
    for b in BACKENDS {
        let summaries = checks::history_survives_summarization(b, Planted::none(), &runs, 80);
        assert!(matches!(summaries, Ok(n) if n >= 3), "{b:?}: {summaries:?}");
    }
}

#[test]
fn r11_tool_heavy_threads_near_the_budget_keep_pairs() {
    let runs = conversation(&[vec![2, 2, 1, 5, 2], vec![1, 1, 1, 0], vec![2, 5, 8]], 4);
    for keep in 1..12 {
        let got = checks::summaries_keep_tool_pairs(Planted::none(), &runs, 60, keep);
        assert!(matches!(got, Ok(n) if n >= 2), "keep {keep}: {got:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/runs/proptest-regressions/props.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn r2_full_history_reads_return_every_message(n in size(), page in page()) {
        prop_assert_eq!(on_every_backend(|b| checks::history_is_complete(b, Planted::none(), n, page)), Ok(()));
    }

    #[test]
    fn r7_both_views_return_the_same_rows(n in size(), page in page()) {
        prop_assert_eq!(on_every_backend(|b| checks::views_agree(b, Planted::none(), n, page)), Ok(()));
    }

    #[test]
    fn r9_backends_give_identical_answers(ops in prop::collection::vec(store_op(), 1..25)) {
        prop_assert_eq!(checks::backends_agree(Planted::none(), &ops), Ok(()));
    }

    #[test]
    fn r3_reads_never_change_the_store(shape in shape(5, 6)) {
        let runs = conversation(&shape, 0);
        prop_assert_eq!(on_every_backend(|b| checks::reads_leave_the_store_unchanged(b, Planted::none(), &runs)), Ok(()));
    }

    #[test]
    fn r10_ids_are_stable_and_unique(first in shape(4, 5), more in shape(3, 5)) {
        let (first, more) = (conversation(&first, 0), named_conversation(&more, 0, "later-"));
        prop_assert_eq!(on_every_backend(|b| checks::ids_are_stable(b, Planted::none(), &first, &more)), Ok(()));
    }

    #[test]
    fn r4_stopped_runs_store_every_event_killed_runs_a_prefix(
        events in 0usize..120,
        threshold in 1usize..30,
        failing in prop::collection::vec(0u64..12, 0..4),
        stop in stop(),
    ) {
        let got = on_every_backend(|b| checks::journal_keeps_events(b, Planted::none(), events, threshold, &failing, stop));
        prop_assert_eq!(got, Ok(()));
    }

    #[test]
    fn r5_racing_writers_keep_seq_unique_and_increasing(
        counts in (0usize..60, 0usize..60),
        thresholds in (1usize..25, 1usize..25),
        schedule in prop::collection::vec(any::<bool>(), 1..16),
    ) {
        let got = on_every_backend(|b| checks::seqs_survive_racing_writers(b, Planted::none(), counts, thresholds, &schedule));
        prop_assert_eq!(got, Ok(()));
    }

    #[test]
    fn r11_summaries_never_split_tool_pairs(
        shape in shape(6, 8),
        words in 0usize..30,
        budget in 20usize..400,
        keep in 1usize..25,
    ) {
        let runs = conversation(&shape, words);
        let got = checks::summaries_keep_tool_pairs(Planted::none(), &runs, budget, keep);
        prop_assert!(got.is_ok(), "{:?}", got);
    }

    #[test]
    fn r1_history_is_every_emitted_message(shape in shape(5, 6), words in 0usize..12, budget in 10usize..300) {
        let runs = conversation(&shape, words);
        let got = on_every_backend(|b| checks::history_survives_summarization(b, Planted::none(), &runs, budget));
        prop_assert_eq!(got, Ok(()));
    }

    #[test]
    fn r6_ratings_land_on_the_run_that_produced_the_message(shape in shape(5, 6)) {
        let runs = conversation(&shape, 2);
        prop_assert_eq!(on_every_backend(|b| checks::ratings_land_on_their_run(b, Planted::none(), &runs)), Ok(()));
    }

    #[test]
    fn r8_a_rating_right_after_a_run_targets_that_run(shape in shape(5, 6)) {
        let runs = conversation(&shape, 0);
        prop_assert_eq!(on_every_backend(|b| checks::rating_after_a_new_run(b, Planted::none(), &runs)), Ok(()));
    }
}
