//! Every store test of DeerFlow's repository (bytedance/deer-flow `backend/tests/`, the four
//! store files at commit f1f4af99b: 80 tests, a parametrized case counted once per parameter),
//! and what became of each here: transcribed as a case of `upstream_store` (which must pass on
//! every backend), a declared difference (docs/reported-bugs.md, "Known differences with the
//! published stores": histsim's own behaviour there is a case too), or Python machinery with no
//! counterpart (asyncio locks, the store factory, the Postgres lock statement, JSONL's file
//! layout). The figure is printed by
//! `cargo test -p history --test runs upstream_ledger -- --nocapture`.

use super::upstream_store::*;

/// What became of one upstream test.
enum Fate {
    /// Transcribed: this case states it.
    Case(Body),
    /// A declared difference (its ID); this case states histsim's side.
    Differs(&'static str, Body),
    /// Python-only machinery: why it has no counterpart.
    Machinery(&'static str),
}
use Fate::*;

const STORE: &str = "test_run_event_store.py";
const PAGINATION: &str = "test_run_event_store_pagination.py";
const FILTER: &str = "test_run_event_store_filter.py";
const BY_RUN: &str = "test_run_event_store_by_run_index.py";

const LOCKS: &str = "an asyncio lock object of the DB store";
const FACTORY: &str = "make_run_event_store's backend choice from the configuration";

/// The 80 upstream tests, by file, `Class::test` (or `test`), and their fate.
const LEDGER: &[(&str, &str, Fate)] = &[
    (
        STORE,
        "TestPutAndSeq::test_put_returns_dict_with_seq",
        Case(put_returns_the_record_with_seq),
    ),
    (
        STORE,
        "TestPutAndSeq::test_seq_strictly_increasing_same_thread",
        Case(seq_strictly_increasing_same_thread),
    ),
    (
        STORE,
        "TestPutAndSeq::test_seq_independent_across_threads",
        Case(seq_independent_across_threads),
    ),
    (
        STORE,
        "TestPutAndSeq::test_put_respects_provided_created_at",
        Case(put_keeps_created_at_and_metadata),
    ),
    (
        STORE,
        "TestPutAndSeq::test_put_metadata_preserved",
        Case(put_keeps_created_at_and_metadata),
    ),
    (
        STORE,
        "TestPutAndSeq::test_put_if_absent_preserves_first_run_scoped_event",
        Case(put_if_absent_preserves_the_first_run_scoped_event),
    ),
    (
        STORE,
        "TestListMessages::test_only_returns_message_category",
        Case(only_returns_message_category),
    ),
    (
        STORE,
        "TestListMessages::test_ascending_seq_order",
        Case(cross_run_unified_ordering),
    ),
    (
        STORE,
        "TestListMessages::test_before_seq_pagination",
        Case(before_and_after_seq_pagination),
    ),
    (
        STORE,
        "TestListMessages::test_after_seq_pagination",
        Case(before_and_after_seq_pagination),
    ),
    (
        STORE,
        "TestListMessages::test_limit_restricts_count",
        Case(limit_restricts_count),
    ),
    (
        STORE,
        "TestListMessages::test_cross_run_unified_ordering",
        Case(cross_run_unified_ordering),
    ),
    (
        STORE,
        "TestListMessages::test_default_returns_latest",
        Case(before_and_after_seq_pagination),
    ),
    (
        STORE,
        "TestListMessages::test_pagination_with_interleaved_trace_events",
        Case(pagination_with_interleaved_trace_events),
    ),
    (
        STORE,
        "TestListEvents::test_returns_all_categories_for_run",
        Case(list_events_returns_all_categories_of_the_run_only),
    ),
    (
        STORE,
        "TestListEvents::test_event_types_filter",
        Case(event_types_filter),
    ),
    (
        STORE,
        "TestListEvents::test_only_returns_specified_run",
        Case(list_events_returns_all_categories_of_the_run_only),
    ),
    (
        STORE,
        "TestListMessagesByRun::test_only_messages_for_specified_run",
        Case(by_run_only_messages_of_the_run),
    ),
    (
        STORE,
        "TestCountMessages::test_counts_only_message_category",
        Case(counts_only_message_category),
    ),
    (
        STORE,
        "TestPutBatch::test_batch_assigns_seq",
        Case(batch_returns_records_with_consecutive_seqs),
    ),
    (
        STORE,
        "TestPutBatch::test_batch_seq_strictly_increasing",
        Case(batch_returns_records_with_consecutive_seqs),
    ),
    (
        STORE,
        "TestDelete::test_delete_by_thread",
        Case(delete_by_thread),
    ),
    (STORE, "TestDelete::test_delete_by_run", Case(delete_by_run)),
    (
        STORE,
        "TestDelete::test_delete_nonexistent_thread_returns_zero",
        Case(deleting_nothing_counts_zero),
    ),
    (
        STORE,
        "TestDelete::test_delete_nonexistent_run_returns_zero",
        Case(deleting_nothing_counts_zero),
    ),
    (
        STORE,
        "TestDelete::test_delete_nonexistent_thread_for_run_returns_zero",
        Case(deleting_nothing_counts_zero),
    ),
    (
        STORE,
        "TestEdgeCases::test_empty_thread_list_messages",
        Case(empty_thread_reads),
    ),
    (
        STORE,
        "TestEdgeCases::test_empty_run_list_events",
        Case(empty_thread_reads),
    ),
    (
        STORE,
        "TestEdgeCases::test_empty_thread_count_messages",
        Case(empty_thread_reads),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_postgres_max_seq_uses_advisory_lock_without_for_update",
        Machinery("the SQL statement sent to a fake Postgres session"),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_basic_crud",
        Case(basic_crud),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_put_if_absent_is_idempotent",
        Case(put_if_absent_preserves_the_first_run_scoped_event),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_trace_content_truncation",
        Case(trace_content_truncation),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_structured_content_round_trips",
        Differs("S1", structured_content_round_trips_without_marks),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_pagination",
        Case(before_and_after_seq_pagination),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_delete",
        Case(delete_run_then_thread),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_put_batch_seq_continuity",
        Case(batch_returns_records_with_consecutive_seqs),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_put_batch_accepts_structured_content",
        Differs("S2", structured_content_round_trips_without_marks),
    ),
    (
        STORE,
        "TestDbRunEventStore::test_dict_content_keeps_legacy_metadata_flag",
        Differs("S3", structured_content_round_trips_without_marks),
    ),
    (
        STORE,
        "TestDbRunEventStoreWriteLock::test_get_write_lock_same_thread_returns_same_lock",
        Machinery(LOCKS),
    ),
    (
        STORE,
        "TestDbRunEventStoreWriteLock::test_get_write_lock_distinct_threads_get_distinct_locks",
        Machinery(LOCKS),
    ),
    (
        STORE,
        "TestDbRunEventStoreWriteLock::test_concurrent_put_batch_same_thread_has_no_seq_collision",
        Case(two_batches_on_one_thread_never_collide),
    ),
    (
        STORE,
        "TestDbRunEventStoreWriteLock::test_delete_by_thread_evicts_orphaned_write_lock",
        Case(seq_restarts_after_delete_by_thread),
    ),
    (
        STORE,
        "TestDbRunEventStoreWriteLock::test_delete_by_thread_keeps_lock_held_by_inflight_writer",
        Machinery(LOCKS),
    ),
    (
        STORE,
        "TestMakeRunEventStore::test_memory_backend_default",
        Machinery(FACTORY),
    ),
    (
        STORE,
        "TestMakeRunEventStore::test_memory_backend_explicit",
        Machinery(FACTORY),
    ),
    (
        STORE,
        "TestMakeRunEventStore::test_db_backend_with_engine",
        Machinery(FACTORY),
    ),
    (
        STORE,
        "TestMakeRunEventStore::test_db_backend_no_engine_falls_back",
        Machinery(FACTORY),
    ),
    (
        STORE,
        "TestMakeRunEventStore::test_jsonl_backend",
        Machinery(FACTORY),
    ),
    (
        STORE,
        "TestMakeRunEventStore::test_unknown_backend_raises",
        Machinery(FACTORY),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_rejects_noncanonical_thread_ids[\"\"]",
        Case(an_empty_thread_id_is_refused),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_rejects_noncanonical_thread_ids[thread.with.dot]",
        Differs("S4", non_canonical_thread_ids_are_kept),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_rejects_noncanonical_thread_ids[../escape]",
        Differs("S5", non_canonical_thread_ids_are_kept),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_rejects_noncanonical_thread_ids[x*65]",
        Differs("S6", non_canonical_thread_ids_are_kept),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_basic_crud",
        Case(basic_crud),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_put_if_absent_is_idempotent",
        Case(put_if_absent_preserves_the_first_run_scoped_event),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_file_at_correct_path",
        Machinery("the JSONL store's directory layout (histsim's: history/src/runs/jsonl.rs)"),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_cross_run_messages",
        Case(cross_run_unified_ordering),
    ),
    (
        STORE,
        "TestJsonlRunEventStore::test_delete_by_run",
        Case(delete_by_run),
    ),
    (
        PAGINATION,
        "test_list_messages_by_run_default_returns_all",
        Case(by_run_default_returns_all),
    ),
    (
        PAGINATION,
        "test_list_messages_by_run_with_limit",
        Case(by_run_limit_and_cursors),
    ),
    (
        PAGINATION,
        "test_list_messages_by_run_after_seq",
        Case(by_run_limit_and_cursors),
    ),
    (
        PAGINATION,
        "test_list_messages_by_run_before_seq",
        Case(by_run_limit_and_cursors),
    ),
    (
        PAGINATION,
        "test_list_messages_by_run_does_not_include_other_run",
        Case(by_run_default_returns_all),
    ),
    (
        PAGINATION,
        "test_list_messages_by_run_empty_run",
        Case(empty_thread_reads),
    ),
    (FILTER, "test_memory_task_id_filter", Case(task_id_filter)),
    (
        FILTER,
        "test_memory_task_id_with_event_types",
        Case(task_id_filter),
    ),
    (
        FILTER,
        "test_memory_after_seq_cursor",
        Case(after_seq_cursor),
    ),
    (
        FILTER,
        "test_memory_task_id_after_seq_paginate",
        Case(task_id_after_seq_paginate),
    ),
    (
        FILTER,
        "test_memory_no_task_id_returns_all",
        Case(task_id_filter),
    ),
    (FILTER, "test_db_task_id_filter", Case(task_id_filter)),
    (
        FILTER,
        "test_db_task_id_after_seq_paginate",
        Case(task_id_after_seq_paginate),
    ),
    (
        FILTER,
        "test_db_no_task_id_returns_all",
        Case(task_id_filter),
    ),
    (FILTER, "test_jsonl_task_id_filter", Case(task_id_filter)),
    (
        FILTER,
        "test_jsonl_task_id_after_seq_paginate",
        Case(task_id_after_seq_paginate),
    ),
    (
        BY_RUN,
        "test_list_messages_by_run_matches_reference_across_cursors",
        Case(by_run_matches_the_reference_across_cursors),
    ),
    (
        BY_RUN,
        "test_list_events_matches_reference_with_filters",
        Case(list_events_matches_the_reference_with_filters),
    ),
    (
        BY_RUN,
        "test_run_keyed_index_partitions_every_event",
        Case(every_event_is_filed_under_its_run),
    ),
    (
        BY_RUN,
        "test_run_index_stays_in_lockstep_after_delete_by_run",
        Case(per_run_reads_follow_delete_by_run),
    ),
    (
        BY_RUN,
        "test_delete_by_thread_clears_run_indexes",
        Case(per_run_reads_follow_delete_by_thread),
    ),
];

/// The declared differences, as docs/reported-bugs.md defines them.
const DECLARED: [&str; 6] = ["S1", "S2", "S3", "S4", "S5", "S6"];

#[test]
fn every_upstream_store_test_is_transcribed_declared_or_machinery() {
    let mut failures = Vec::new();
    let (mut passed, mut differs, mut machinery) = (0, 0, 0);
    for (file, test, fate) in LEDGER {
        let body = match fate {
            Case(body) => body,
            Differs(id, body) => {
                assert!(
                    DECLARED.contains(id),
                    "{file}::{test}: {id} is no declared difference"
                );
                body
            }
            Machinery(why) => {
                assert!(!why.is_empty(), "{file}::{test}: machinery says why");
                machinery += 1;
                continue;
            }
        };
        let mut ok = true;
        for (backend, open) in BACKENDS {
            if let Err(why) = body(open().as_ref()) {
                failures.push(format!("{backend}: {file}::{test}: {why}"));
                ok = false;
            }
        }
        match (fate, ok) {
            (Case(_), true) => passed += 1,
            (Differs(..), true) => differs += 1,
            _ => {}
        }
    }
    println!(
        "upstream store tests: {} ({passed} transcribed and passing on every backend, {differs} declared differences, {machinery} Python machinery), {} failing",
        LEDGER.len(),
        LEDGER.len() - passed - differs - machinery
    );
    assert_eq!(LEDGER.len(), 80, "the four upstream files hold 80 tests");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let ids: std::collections::BTreeSet<&str> = LEDGER
        .iter()
        .filter_map(|(_, _, f)| match f {
            Differs(id, _) => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        DECLARED,
        "each declared difference is used"
    );
}
