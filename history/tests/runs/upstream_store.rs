//! DeerFlow's own run-event store tests, transcribed as expectations on `history::runs` (facts,
//! not code: every case is our Rust, and names the upstream test it states, as
//! `file::Class::test`). The files are those of bytedance/deer-flow `backend/tests/`:
//! `test_run_event_store.py`, `test_run_event_store_pagination.py`,
//! `test_run_event_store_filter.py`, `test_run_event_store_by_run_index.py` and
//! `test_history_batch_queries.py`.
//!
//! Every case runs on every backend in [`BACKENDS`] through one body; a third backend is one
//! more line there. Upstream tests of Python-only machinery (asyncio locks, the store factory,
//! the Postgres advisory lock, JSONL paths, DB content encoding flags) have no counterpart here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use history::journal::MemStorage;

use history::runs::*;
use history::Planted;
use serde_json::{json, Value};

pub(super) type Store = Box<dyn RunEventStore>;

/// A backend the cases run on: its name and how to open a fresh empty store.
pub(super) type Backend = (&'static str, fn() -> Store);

/// Every backend the cases run on.
pub(super) const BACKENDS: &[Backend] = &[
    ("memory", || {
        Box::new(MemoryRunEventStore::new(Planted::none()))
    }),
    ("sqlite", || {
        Box::new(SqliteRunEventStore::open_in_memory(Planted::none()).expect("open"))
    }),
    ("jsonl", || {
        Box::new(
            JsonlRunEventStore::open(Arc::new(MemStorage::new()), Planted::none()).expect("open"),
        )
    }),
];

/// One expectation: the upstream test it transcribes and its body (an `Err` says what differed).
pub(super) type Case = (&'static str, Body);

/// A case's body: `Err` says what differed.
pub(super) type Body = fn(&dyn RunEventStore) -> Result<(), String>;

fn ev(thread: &str, run: &str, event_type: &str, category: Category) -> NewRunEvent {
    NewRunEvent {
        thread_id: thread.into(),
        run_id: run.into(),
        user_id: None,
        event_type: event_type.into(),
        category,
        content: json!("").into(),
        metadata: json!({}),
        created_at_ns: 0,
    }
}

fn put(s: &dyn RunEventStore, e: NewRunEvent) -> Result<RunEvent, String> {
    s.put(e).map_err(|e| e.to_string())
}

fn put_plain(
    s: &dyn RunEventStore,
    thread: &str,
    run: &str,
    event_type: &str,
    category: Category,
) -> Result<RunEvent, String> {
    put(s, ev(thread, run, event_type, category))
}

fn seqs(rows: &[RunEvent]) -> Vec<u64> {
    rows.iter().map(|r| r.seq).collect()
}

/// `assert_eq!` that returns the difference instead of panicking, so that one run names every
/// failing case on every backend.
macro_rules! same {
    ($got:expr, $want:expr) => {{
        match (&$got, &$want) {
            (got, want) if got != want => {
                return Err(format!(
                    "line {}: {} = {:?}, expected {:?}",
                    line!(),
                    stringify!($got),
                    got,
                    want
                ));
            }
            _ => {}
        }
    }};
}

macro_rules! ok {
    ($e:expr) => {
        $e.map_err(|e| format!("line {}: {}: {e}", line!(), stringify!($e)))?
    };
}

fn msgs(
    s: &dyn RunEventStore,
    t: &str,
    limit: usize,
    c: MessageCursor,
) -> Result<Vec<u64>, String> {
    Ok(seqs(
        &s.list_messages(t, limit, c).map_err(|e| e.to_string())?,
    ))
}

fn by_run(
    s: &dyn RunEventStore,
    t: &str,
    r: &str,
    limit: usize,
    c: MessageCursor,
) -> Result<Vec<RunEvent>, String> {
    s.list_messages_by_run(t, r, limit, c, &UserScope::All)
        .map_err(|e| e.to_string())
}

fn events(
    s: &dyn RunEventStore,
    t: &str,
    r: &str,
    f: EventFilter,
) -> Result<Vec<RunEvent>, String> {
    s.list_events_filtered(t, r, &f, &UserScope::All)
        .map_err(|e| e.to_string())
}

// --- test_run_event_store.py: TestPutAndSeq ---------------------------------------------------

pub(super) fn put_returns_the_record_with_seq(s: &dyn RunEventStore) -> Result<(), String> {
    let mut e = ev("t1", "r1", HUMAN_MESSAGE, Category::Message);
    e.content = json!("hello").into();
    let r = put(s, e.clone())?;
    same!(r, e.with_seq(1));
    Ok(())
}

pub(super) fn seq_strictly_increasing_same_thread(s: &dyn RunEventStore) -> Result<(), String> {
    let a = put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    let b = put_plain(s, "t1", "r1", AI_MESSAGE, Category::Message)?;
    let c = put_plain(s, "t1", "r1", "llm_end", Category::Trace)?;
    same!((a.seq, b.seq, c.seq), (1, 2, 3));
    Ok(())
}

pub(super) fn seq_independent_across_threads(s: &dyn RunEventStore) -> Result<(), String> {
    let a = put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    let b = put_plain(s, "t2", "r2", HUMAN_MESSAGE, Category::Message)?;
    same!((a.seq, b.seq), (1, 1));
    Ok(())
}

pub(super) fn put_keeps_created_at_and_metadata(s: &dyn RunEventStore) -> Result<(), String> {
    let mut e = ev("t1", "r1", "llm_end", Category::Trace);
    e.created_at_ns = 1_717_243_200_000_000_000;
    e.metadata = json!({"model": "gpt-4", "tokens": 100});
    let r = put(s, e.clone())?;
    same!(
        (r.created_at_ns, r.metadata.clone()),
        (e.created_at_ns, e.metadata.clone())
    );
    same!(ok!(s.list_events("t1", "r1")), vec![r]);
    Ok(())
}

fn delivery(content: Value) -> NewRunEvent {
    let mut e = ev("t1", "r1", current::RUN_DELIVERY, Category::Outputs);
    e.content = content.into();
    e
}

pub(super) fn put_if_absent_preserves_the_first_run_scoped_event(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    let (first, created) = ok!(s.put_if_absent(delivery(json!({"presented": 1}))));
    let (dup, dup_created) = ok!(s.put_if_absent(delivery(json!({"presented": 0}))));
    same!((created, dup_created), (true, false));
    same!(&dup, &first);
    let only = EventFilter {
        event_types: Some(vec![current::RUN_DELIVERY.into()]),
        ..EventFilter::default()
    };
    let stored = events(s, "t1", "r1", only)?;
    same!(
        stored
            .iter()
            .map(|e| (*e.content).clone())
            .collect::<Vec<_>>(),
        vec![json!({"presented": 1})]
    );
    Ok(())
}

/// Our decision where upstream has none: the key ignores category and user, and another run
/// (or thread) with the same event type is a different key.
pub(super) fn put_if_absent_keys_on_thread_run_and_type(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    ok!(s.put_if_absent(delivery(json!(1))));
    let mut other_category = delivery(json!(2));
    other_category.category = Category::Trace;
    other_category.user_id = Some("u".into());
    same!(ok!(s.put_if_absent(other_category)).1, false);
    let mut other_run = delivery(json!(3));
    other_run.run_id = "r2".into();
    same!(ok!(s.put_if_absent(other_run)).0.seq, 2);
    let mut other_thread = delivery(json!(4));
    other_thread.thread_id = "t2".into();
    same!(ok!(s.put_if_absent(other_thread)).1, true);
    Ok(())
}

// --- test_run_event_store.py: TestListMessages ------------------------------------------------

pub(super) fn only_returns_message_category(s: &dyn RunEventStore) -> Result<(), String> {
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r1", "llm_end", Category::Trace)?;
    put_plain(s, "t1", "r1", RUN_START, Category::Lifecycle)?;
    let rows = ok!(s.list_messages("t1", 50, MessageCursor::None));
    same!(
        rows.iter().map(|r| r.category).collect::<Vec<_>>(),
        vec![Category::Message]
    );
    Ok(())
}

pub(super) fn ten_messages(s: &dyn RunEventStore) -> Result<(), String> {
    for i in 0..10 {
        let mut e = ev("t1", "r1", HUMAN_MESSAGE, Category::Message);
        e.content = json!(i.to_string()).into();
        put(s, e)?;
    }
    Ok(())
}

pub(super) fn before_and_after_seq_pagination(s: &dyn RunEventStore) -> Result<(), String> {
    ten_messages(s)?;
    same!(msgs(s, "t1", 3, MessageCursor::Before(6))?, vec![3, 4, 5]);
    same!(msgs(s, "t1", 3, MessageCursor::After(7))?, vec![8, 9, 10]);
    same!(msgs(s, "t1", 3, MessageCursor::None)?, vec![8, 9, 10]);
    Ok(())
}

pub(super) fn limit_restricts_count(s: &dyn RunEventStore) -> Result<(), String> {
    for _ in 0..20 {
        put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    }
    same!(msgs(s, "t1", 5, MessageCursor::None)?.len(), 5);
    Ok(())
}

pub(super) fn cross_run_unified_ordering(s: &dyn RunEventStore) -> Result<(), String> {
    for run in ["r1", "r1", "r2", "r2"] {
        put_plain(s, "t1", run, HUMAN_MESSAGE, Category::Message)?;
    }
    let rows = ok!(s.list_messages("t1", 50, MessageCursor::None));
    same!(seqs(&rows), vec![1, 2, 3, 4]);
    same!(
        (rows[0].run_id.as_str(), rows[2].run_id.as_str()),
        ("r1", "r2")
    );
    Ok(())
}

pub(super) fn pagination_with_interleaved_trace_events(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    for i in 0..10 {
        let category = if i % 2 == 0 {
            Category::Message
        } else {
            Category::Trace
        };
        put_plain(s, "t1", "r1", "e", category)?;
    }
    same!(msgs(s, "t1", 50, MessageCursor::None)?, vec![1, 3, 5, 7, 9]);
    same!(msgs(s, "t1", 2, MessageCursor::Before(6))?, vec![3, 5]);
    same!(msgs(s, "t1", 5, MessageCursor::Before(5))?, vec![1, 3]);
    same!(msgs(s, "t1", 2, MessageCursor::After(4))?, vec![5, 7]);
    same!(msgs(s, "t1", 5, MessageCursor::After(5))?, vec![7, 9]);
    Ok(())
}

// --- test_run_event_store.py: TestListEvents, TestListMessagesByRun, TestCountMessages --------

pub(super) fn list_events_returns_all_categories_of_the_run_only(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r1", "llm_end", Category::Trace)?;
    put_plain(s, "t1", "r1", RUN_START, Category::Lifecycle)?;
    put_plain(s, "t1", "r2", "llm_end", Category::Trace)?;
    same!(events(s, "t1", "r1", EventFilter::default())?.len(), 3);
    same!(
        seqs(&events(s, "t1", "r2", EventFilter::default())?),
        vec![4]
    );
    Ok(())
}

pub(super) fn event_types_filter(s: &dyn RunEventStore) -> Result<(), String> {
    for t in ["llm_start", "llm_end", "tool_start"] {
        put_plain(s, "t1", "r1", t, Category::Trace)?;
    }
    let f = EventFilter {
        event_types: Some(vec!["llm_end".into()]),
        ..EventFilter::default()
    };
    let rows = events(s, "t1", "r1", f)?;
    same!(
        rows.iter()
            .map(|r| r.event_type.as_str())
            .collect::<Vec<_>>(),
        vec!["llm_end"]
    );
    Ok(())
}

pub(super) fn by_run_only_messages_of_the_run(s: &dyn RunEventStore) -> Result<(), String> {
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r1", "llm_end", Category::Trace)?;
    put_plain(s, "t1", "r2", HUMAN_MESSAGE, Category::Message)?;
    same!(
        seqs(&by_run(s, "t1", "r1", 50, MessageCursor::None)?),
        vec![1]
    );
    Ok(())
}

pub(super) fn counts_only_message_category(s: &dyn RunEventStore) -> Result<(), String> {
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r1", AI_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r1", "llm_end", Category::Trace)?;
    same!(ok!(s.count_messages("t1")), 2);
    Ok(())
}

// --- test_run_event_store.py: TestPutBatch, TestDbRunEventStore ----------------------------------

pub(super) fn batch_returns_records_with_consecutive_seqs(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    let batch: Vec<NewRunEvent> = (0..50)
        .map(|_| ev("t1", "r1", "trace", Category::Trace))
        .collect();
    let records = ok!(s.put_batch_records(batch.clone()));
    same!(seqs(&records), (1..=50).collect::<Vec<u64>>());
    same!(records[0].clone(), batch[0].clone().with_seq(1));
    Ok(())
}

pub(super) fn two_batches_on_one_thread_never_collide(s: &dyn RunEventStore) -> Result<(), String> {
    let batch = |run: &str| {
        (0..20)
            .map(|_| ev("t1", run, "trace", Category::Trace))
            .collect()
    };
    let mut all = seqs(&ok!(s.put_batch_records(batch("r1"))));
    all.extend(seqs(&ok!(s.put_batch_records(batch("r2")))));
    all.sort_unstable();
    same!(all, (1..=40).collect::<Vec<u64>>());
    Ok(())
}

// --- test_run_event_store.py: TestDelete, TestDbRunEventStore::test_delete ---------------------

pub(super) fn delete_by_thread(s: &dyn RunEventStore) -> Result<(), String> {
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r1", AI_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r2", "llm_end", Category::Trace)?;
    same!(ok!(s.delete_by_thread("t1", &UserScope::All)), 3);
    same!(msgs(s, "t1", 50, MessageCursor::None)?, Vec::<u64>::new());
    same!(ok!(s.count_messages("t1")), 0);
    Ok(())
}

pub(super) fn delete_by_run(s: &dyn RunEventStore) -> Result<(), String> {
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r2", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r2", "llm_end", Category::Trace)?;
    same!(ok!(s.delete_by_run("t1", "r2", &UserScope::All)), 2);
    let rows = ok!(s.list_messages("t1", 50, MessageCursor::None));
    same!(
        rows.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        vec!["r1"]
    );
    Ok(())
}

pub(super) fn deleting_nothing_counts_zero(s: &dyn RunEventStore) -> Result<(), String> {
    same!(ok!(s.delete_by_thread("nope", &UserScope::All)), 0);
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    same!(ok!(s.delete_by_run("t1", "nope", &UserScope::All)), 0);
    same!(ok!(s.delete_by_run("nope", "r1", &UserScope::All)), 0);
    Ok(())
}

pub(super) fn delete_run_then_thread(s: &dyn RunEventStore) -> Result<(), String> {
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r2", AI_MESSAGE, Category::Message)?;
    same!(ok!(s.delete_by_run("t1", "r2", &UserScope::All)), 1);
    same!(ok!(s.count_messages("t1")), 1);
    same!(ok!(s.delete_by_thread("t1", &UserScope::All)), 1);
    same!(ok!(s.count_messages("t1")), 0);
    Ok(())
}

/// `TestDbRunEventStoreWriteLock::test_delete_by_thread_evicts_orphaned_write_lock`'s last
/// assertion: after `delete_by_thread` the thread's numbering restarts at 1.
pub(super) fn seq_restarts_after_delete_by_thread(s: &dyn RunEventStore) -> Result<(), String> {
    put_plain(s, "t1", "r1", "trace", Category::Trace)?;
    ok!(s.delete_by_thread("t1", &UserScope::All));
    same!(ok!(s.max_seq("t1")), 0);
    same!(put_plain(s, "t1", "r2", "trace", Category::Trace)?.seq, 1);
    Ok(())
}

/// Ours (R23; both upstream stores agree): `delete_by_thread` removes every row of the thread,
/// whatever its category (messages, traces, lifecycle marks, receipts), and no row of another
/// thread; the emptied thread reads empty everywhere and starts over at 1, the other keeps its
/// numbering.
pub(super) fn delete_by_thread_empties_only_its_thread(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    put_plain(s, "t1", "r1", "run_start", Category::Lifecycle)?;
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r1", "llm_end", Category::Trace)?;
    put_plain(s, "t1", "r1", "run.delivery", Category::Outputs)?;
    put_plain(s, "t2", "r2", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t2", "r2", "llm_end", Category::Trace)?;
    same!(ok!(s.delete_by_thread("t1", &UserScope::All)), 4);
    same!(ok!(s.max_seq("t1")), 0);
    same!(ok!(s.list_events("t1", "r1")), Vec::<RunEvent>::new());
    same!(ok!(s.count_messages("t1")), 0);
    same!(seqs(&ok!(s.list_events("t2", "r2"))), vec![1, 2]);
    same!(
        put_plain(s, "t1", "r3", HUMAN_MESSAGE, Category::Message)?.seq,
        1
    );
    same!(
        put_plain(s, "t2", "r2", AI_MESSAGE, Category::Message)?.seq,
        3
    );
    Ok(())
}

/// Our decision (R13; upstream's memory store, not its DB store): `delete_by_run` never lowers
/// the numbering, so a deleted run's seqs (its message ids, a reader's cursor) are not reused.
pub(super) fn delete_by_run_keeps_the_high_water_mark(s: &dyn RunEventStore) -> Result<(), String> {
    put_plain(s, "t1", "r1", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r2", HUMAN_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r2", AI_MESSAGE, Category::Message)?;
    ok!(s.delete_by_run("t1", "r2", &UserScope::All));
    same!(ok!(s.max_seq("t1")), 3);
    same!(
        put_plain(s, "t1", "r3", HUMAN_MESSAGE, Category::Message)?.seq,
        4
    );
    // Even a run that empties the thread keeps the mark; only delete_by_thread resets it.
    ok!(s.delete_by_run("t1", "r1", &UserScope::All));
    ok!(s.delete_by_run("t1", "r3", &UserScope::All));
    same!(
        put_plain(s, "t1", "r4", HUMAN_MESSAGE, Category::Message)?.seq,
        5
    );
    Ok(())
}

// --- test_run_event_store.py: TestEdgeCases ----------------------------------------------------

pub(super) fn empty_thread_reads(s: &dyn RunEventStore) -> Result<(), String> {
    same!(
        msgs(s, "empty", 50, MessageCursor::None)?,
        Vec::<u64>::new()
    );
    same!(
        events(s, "empty", "r1", EventFilter::default())?,
        Vec::<RunEvent>::new()
    );
    same!(ok!(s.count_messages("empty")), 0);
    same!(
        by_run(s, "t1", "nonexistent", 50, MessageCursor::None)?,
        Vec::<RunEvent>::new()
    );
    Ok(())
}

// --- test_run_event_store_pagination.py -------------------------------------------------------

pub(super) fn seven_of_run_a(s: &dyn RunEventStore) -> Result<(), String> {
    for i in 0..7 {
        let t = if i % 2 == 0 {
            HUMAN_MESSAGE
        } else {
            AI_MESSAGE
        };
        put_plain(s, "t1", "run-a", t, Category::Message)?;
    }
    Ok(())
}

pub(super) fn by_run_default_returns_all(s: &dyn RunEventStore) -> Result<(), String> {
    seven_of_run_a(s)?;
    for _ in 0..3 {
        put_plain(s, "t1", "run-b", HUMAN_MESSAGE, Category::Message)?;
    }
    put_plain(s, "t1", "run-a", "tool_call", Category::Trace)?;
    let a = by_run(s, "t1", "run-a", 50, MessageCursor::None)?;
    same!(a.len(), 7);
    same!(
        a.iter()
            .all(|m| m.category == Category::Message && m.run_id == "run-a"),
        true
    );
    let b = by_run(s, "t1", "run-b", 50, MessageCursor::None)?;
    same!(seqs(&b), vec![8, 9, 10]);
    Ok(())
}

pub(super) fn by_run_limit_and_cursors(s: &dyn RunEventStore) -> Result<(), String> {
    seven_of_run_a(s)?;
    same!(
        seqs(&by_run(s, "t1", "run-a", 3, MessageCursor::None)?),
        vec![5, 6, 7]
    );
    let all = by_run(s, "t1", "run-a", 50, MessageCursor::None)?;
    let after = by_run(s, "t1", "run-a", 50, MessageCursor::After(all[2].seq))?;
    same!(seqs(&after), vec![4, 5, 6, 7]);
    let before = by_run(s, "t1", "run-a", 50, MessageCursor::Before(all[4].seq))?;
    same!(seqs(&before), vec![1, 2, 3, 4]);
    Ok(())
}

// --- test_run_event_store_by_run_index.py -------------------------------------------------------

/// Two runs interleaved in one thread, messages and traces mixed (`_seed`).
fn two_interleaved_runs(s: &dyn RunEventStore) -> Result<Vec<RunEvent>, String> {
    let plan = [
        ("run-a", Category::Message),
        ("run-a", Category::Trace),
        ("run-b", Category::Message),
        ("run-a", Category::Message),
        ("run-b", Category::Trace),
        ("run-b", Category::Message),
        ("run-a", Category::Trace),
        ("run-a", Category::Message),
        ("run-b", Category::Message),
        ("run-a", Category::Message),
        ("run-b", Category::Message),
        ("run-a", Category::Message),
    ];
    let mut records = Vec::new();
    for (i, (run, category)) in plan.into_iter().enumerate() {
        let mut e = ev("t1", run, &format!("e{i}"), category);
        e.content = json!(i.to_string()).into();
        records.push(put(s, e)?);
    }
    Ok(records)
}

/// The brute-force reference of `_ref_messages_by_run`, as our own function.
fn reference_by_run(
    rows: &[RunEvent],
    run: &str,
    limit: usize,
    before: Option<u64>,
    after: Option<u64>,
) -> Vec<RunEvent> {
    let window: Vec<RunEvent> = rows
        .iter()
        .filter(|e| e.run_id == run && e.category == Category::Message)
        .filter(|e| before.is_none_or(|b| e.seq < b) && after.is_none_or(|a| e.seq > a))
        .cloned()
        .collect();
    if after.is_some() {
        window.into_iter().take(limit).collect()
    } else {
        window[window.len().saturating_sub(limit)..].to_vec()
    }
}

pub(super) fn by_run_matches_the_reference_across_cursors(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    let records = two_interleaved_runs(s)?;
    let mut cursors: Vec<Option<u64>> = vec![None, Some(0)];
    cursors.extend(records.iter().map(|r| Some(r.seq)));
    cursors.push(Some(records.len() as u64 + 1));
    for run in ["run-a", "run-b", "run-missing"] {
        for limit in [1, 2, 3, 50] {
            for &before in &cursors {
                for &after in &cursors {
                    let got = by_run(
                        s,
                        "t1",
                        run,
                        limit,
                        MessageCursor::from_bounds(before, after),
                    )?;
                    let want = reference_by_run(&records, run, limit, before, after);
                    if got != want {
                        return Err(format!(
                            "{run} limit {limit} before {before:?} after {after:?}: {:?} != {:?}",
                            seqs(&got),
                            seqs(&want)
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

pub(super) fn list_events_matches_the_reference_with_filters(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    let records = two_interleaved_runs(s)?;
    for run in ["run-a", "run-b", "run-missing"] {
        let of_run: Vec<RunEvent> = records
            .iter()
            .filter(|e| e.run_id == run)
            .cloned()
            .collect();
        same!(
            events(s, "t1", run, EventFilter::default())?,
            of_run.clone()
        );
        let two = EventFilter {
            limit: 2,
            ..EventFilter::default()
        };
        same!(
            events(s, "t1", run, two)?,
            of_run.iter().take(2).cloned().collect::<Vec<_>>()
        );
        for r in &records {
            let f = EventFilter {
                event_types: Some(vec![r.event_type.clone()]),
                ..EventFilter::default()
            };
            let want: Vec<RunEvent> = of_run
                .iter()
                .filter(|e| e.event_type == r.event_type)
                .cloned()
                .collect();
            same!(events(s, "t1", run, f)?, want);
        }
    }
    Ok(())
}

pub(super) fn every_event_is_filed_under_its_run(s: &dyn RunEventStore) -> Result<(), String> {
    let records = two_interleaved_runs(s)?;
    let mut union = events(s, "t1", "run-a", EventFilter::everything())?;
    union.extend(events(s, "t1", "run-b", EventFilter::everything())?);
    union.sort_by_key(|e| e.seq);
    same!(union, records);
    Ok(())
}

pub(super) fn per_run_reads_follow_delete_by_run(s: &dyn RunEventStore) -> Result<(), String> {
    two_interleaved_runs(s)?;
    same!(ok!(s.delete_by_run("t1", "run-a", &UserScope::All)), 7);
    run_reads_are_empty(s, "run-a")?;
    let b = by_run(s, "t1", "run-b", 50, MessageCursor::None)?;
    same!(b.len(), 4);
    let thread = ok!(s.list_messages("t1", 50, MessageCursor::None));
    same!(thread.iter().all(|m| m.run_id == "run-b"), true);
    Ok(())
}

pub(super) fn per_run_reads_follow_delete_by_thread(s: &dyn RunEventStore) -> Result<(), String> {
    two_interleaved_runs(s)?;
    ok!(s.delete_by_thread("t1", &UserScope::All));
    run_reads_are_empty(s, "run-a")?;
    run_reads_are_empty(s, "run-b")?;
    same!(ok!(s.dump()), Vec::<RunEvent>::new());
    Ok(())
}

/// Neither per-run read of `run` on t1 answers a row (its events, its messages).
fn run_reads_are_empty(s: &dyn RunEventStore, run: &str) -> Result<(), String> {
    same!(
        events(s, "t1", run, EventFilter::default())?,
        Vec::<RunEvent>::new()
    );
    same!(
        by_run(s, "t1", run, 50, MessageCursor::None)?,
        Vec::<RunEvent>::new()
    );
    Ok(())
}

// --- test_run_event_store_filter.py -----------------------------------------------------------

/// Run r1 with task A (start + 3 steps) and task B (start + 2 steps) (`_seed_two_tasks`).
pub(super) fn two_tasks(s: &dyn RunEventStore) -> Result<(), String> {
    let step = |event_type: &str, task: &str, index: Option<u64>| {
        let mut e = ev("t1", "r1", event_type, Category::Subagent);
        e.metadata = match index {
            Some(i) => json!({"task_id": task, "message_index": i}),
            None => json!({"task_id": task}),
        };
        e.content = e.metadata.clone().into();
        e
    };
    put(s, step(current::SUBAGENT_START, "A", None))?;
    put(s, step(current::SUBAGENT_START, "B", None))?;
    for i in 0..3 {
        put(s, step(current::SUBAGENT_STEP, "A", Some(i)))?;
    }
    for i in 0..2 {
        put(s, step(current::SUBAGENT_STEP, "B", Some(i)))?;
    }
    Ok(())
}

fn task_ids(rows: &[RunEvent]) -> Vec<&str> {
    rows.iter()
        .filter_map(|e| task_id_of(&e.metadata))
        .collect()
}

fn task(id: &str) -> EventFilter {
    EventFilter {
        task_id: Some(id.into()),
        ..EventFilter::default()
    }
}

pub(super) fn task_id_filter(s: &dyn RunEventStore) -> Result<(), String> {
    two_tasks(s)?;
    same!(task_ids(&events(s, "t1", "r1", task("A"))?), vec!["A"; 4]);
    same!(task_ids(&events(s, "t1", "r1", task("B"))?), vec!["B"; 3]);
    let steps = EventFilter {
        event_types: Some(vec![current::SUBAGENT_STEP.into()]),
        ..task("A")
    };
    let a = events(s, "t1", "r1", steps)?;
    same!(
        a.iter().map(|e| e.event_type.as_str()).collect::<Vec<_>>(),
        vec![current::SUBAGENT_STEP; 3]
    );
    same!(events(s, "t1", "r1", EventFilter::default())?.len(), 7);
    Ok(())
}

pub(super) fn after_seq_cursor(s: &dyn RunEventStore) -> Result<(), String> {
    two_tasks(s)?;
    let everything = events(s, "t1", "r1", EventFilter::default())?;
    let cut = everything[2].seq;
    let after = events(
        s,
        "t1",
        "r1",
        EventFilter {
            after_seq: Some(cut),
            ..EventFilter::default()
        },
    )?;
    same!(after.iter().all(|e| e.seq > cut), true);
    same!(after.len(), everything.len() - 3);
    Ok(())
}

pub(super) fn task_id_after_seq_paginate(s: &dyn RunEventStore) -> Result<(), String> {
    two_tasks(s)?;
    let mut collected = Vec::new();
    let mut after_seq = None;
    for _ in 0..10 {
        let f = EventFilter {
            event_types: Some(vec![current::SUBAGENT_STEP.into()]),
            after_seq,
            limit: 2,
            ..task("A")
        };
        let page = events(s, "t1", "r1", f)?;
        let full = page.len() == 2;
        after_seq = page.last().map(|e| e.seq);
        collected.extend(page);
        if !full {
            break;
        }
    }
    let indexes: Vec<Value> = collected
        .iter()
        .map(|e| e.content["message_index"].clone())
        .collect();
    same!(indexes, vec![json!(0), json!(1), json!(2)]);
    Ok(())
}

/// Our decisions on what upstream's backends answer differently: a number never matches a
/// `task_id` string, and an empty type list selects nothing.
pub(super) fn task_id_matches_strings_only(s: &dyn RunEventStore) -> Result<(), String> {
    let mut e = ev("t1", "r1", current::SUBAGENT_STEP, Category::Subagent);
    e.metadata = json!({"task_id": 5});
    put(s, e)?;
    same!(events(s, "t1", "r1", task("5"))?, Vec::<RunEvent>::new());
    let none = EventFilter {
        event_types: Some(vec![]),
        ..EventFilter::default()
    };
    same!(events(s, "t1", "r1", none)?, Vec::<RunEvent>::new());
    Ok(())
}

// --- test_history_batch_queries.py ------------------------------------------------------------

fn ai(run: &str, caller: &str) -> NewRunEvent {
    let mut e = ev("t1", run, current::LLM_AI_RESPONSE, Category::Message);
    e.content = json!({"type": "ai", "content": caller}).into();
    e.metadata = json!({"caller": caller});
    e
}

pub(super) fn last_non_middleware_ai_seq(s: &dyn RunEventStore) -> Result<(), String> {
    put(s, ai("r1", "lead_agent"))?;
    put(s, ai("r1", "middleware:title"))?;
    let last = put(s, ai("r1", "lead_agent"))?;
    let other = put(s, ai("r2", "lead_agent"))?;
    put(s, ai("r_mw", "middleware:title"))?;
    let runs: BTreeSet<String> = ["r1", "r2", "r_mw", "missing"].map(String::from).into();
    let got = ok!(s.get_last_visible_ai_seq_by_run("t1", &runs, &UserScope::All));
    same!(
        got,
        BTreeMap::from([("r1".to_string(), last.seq), ("r2".to_string(), other.seq)])
    );
    Ok(())
}

/// `test_memory_event_store_defensively_rechecks_message_category`, as rows: an AI-typed row
/// that is not a message, a legacy `ai_message`, and a capitalised caller (SQL's LIKE would
/// take it for middleware; the rule is case-sensitive).
pub(super) fn last_visible_ai_is_a_message_of_a_visible_type(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    let legacy = put_plain(s, "t1", "r1", AI_MESSAGE, Category::Message)?;
    let mut trace = ai("r1", "lead_agent");
    trace.category = Category::Trace;
    put(s, trace)?;
    put_plain(s, "t1", "r1", current::LLM_TOOL_RESULT, Category::Message)?;
    let loud = put(s, ai("r2", "MIDDLEWARE:title"))?;
    let runs: BTreeSet<String> = ["r1", "r2"].map(String::from).into();
    let got = ok!(s.get_last_visible_ai_seq_by_run("t1", &runs, &UserScope::All));
    same!(
        got,
        BTreeMap::from([("r1".to_string(), legacy.seq), ("r2".to_string(), loud.seq)])
    );
    same!(
        ok!(s.get_last_visible_ai_seq_by_run("t1", &BTreeSet::new(), &UserScope::All)),
        BTreeMap::new()
    );
    Ok(())
}

/// Ours (R18): a tool-calling turn (`ai_tool_call`) is an AI message but not an answer.
pub(super) fn a_tool_calling_turn_is_no_answer(s: &dyn RunEventStore) -> Result<(), String> {
    let answer = put_plain(s, "t1", "r1", AI_MESSAGE, Category::Message)?;
    put_plain(s, "t1", "r1", AI_TOOL_CALL, Category::Message)?;
    put_plain(s, "t1", "r2", AI_TOOL_CALL, Category::Message)?;
    let runs: BTreeSet<String> = ["r1", "r2"].map(String::from).into();
    let got = ok!(s.get_last_visible_ai_seq_by_run("t1", &runs, &UserScope::All));
    same!(got, BTreeMap::from([("r1".to_string(), answer.seq)]));
    Ok(())
}

// --- user scope (deerflow/runtime/user_context.py: resolve_user_id's three states) -------------

pub(super) fn user_scopes(s: &dyn RunEventStore) -> Result<(), String> {
    let mut mine = ev("t1", "r1", HUMAN_MESSAGE, Category::Message);
    mine.user_id = Some("alice".into());
    put(s, mine.clone())?;
    put_plain(s, "t1", "r1", AI_MESSAGE, Category::Message)?; // no user: a background writer
    let mut theirs = mine.clone();
    theirs.user_id = Some("bob".into());
    put(s, theirs)?;
    let alice = UserScope::Only("alice".into());
    let current = UserScope::Current(Some("alice".into()));
    same!(ok!(s.count_messages_as("t1", &UserScope::All)), 3);
    same!(ok!(s.count_messages_as("t1", &alice)), 1);
    same!(
        seqs(&ok!(s.list_messages_as(
            "t1",
            50,
            MessageCursor::None,
            &current
        ))),
        vec![1]
    );
    same!(
        seqs(&ok!(s.list_messages_by_run(
            "t1",
            "r1",
            50,
            MessageCursor::After(0),
            &alice
        ))),
        vec![1]
    );
    same!(
        seqs(&ok!(s.list_events_filtered(
            "t1",
            "r1",
            &EventFilter::default(),
            &alice
        ))),
        vec![1]
    );
    let no_user = UserScope::Current(None);
    let refused = RunStoreError::NoUserContext {
        op: "count_messages",
    };
    same!(s.count_messages_as("t1", &no_user), Err(refused));
    same!(s.delete_by_thread("t1", &no_user).is_err(), true);
    // A scoped deletion leaves the others' rows, and the thread keeps its numbering.
    same!(
        ok!(s.delete_by_thread("t1", &UserScope::Only("bob".into()))),
        1
    );
    same!(ok!(s.max_seq("t1")), 3);
    same!(ok!(s.delete_by_run("t1", "r1", &alice)), 1);
    same!(ok!(s.count_messages("t1")), 1);
    Ok(())
}

/// Upstream's DB store cuts a long trace at `put`; histsim's journal does it before the write
/// (`RunJournalOptions::max_trace_content_bytes`), so every backend keeps the same cut event.
pub(super) fn trace_content_truncation(s: &dyn RunEventStore) -> Result<(), String> {
    use super::support::block_on;
    let options = RunJournalOptions {
        max_trace_content_bytes: Some(100),
        ..RunJournalOptions::default()
    };
    let mut journal = RunJournal::new(s, "t1", "r1", None, options);
    let long = "x".repeat(200);
    let trace = JournalEntry::other(Category::Trace, "llm_end", json!(long), 0);
    ok!(block_on(journal.record(trace)));
    let message = JournalEntry::other(Category::Message, "ai_message", json!(long), 1);
    ok!(block_on(journal.record(message)));
    ok!(block_on(journal.end()));
    let rows = events(s, "t1", "r1", EventFilter::default())?;
    same!(rows.len(), 2);
    same!(rows[0].content.as_str().map(str::len), Some(100));
    same!(
        rows[0].metadata.get("content_truncated"),
        Some(&json!(true))
    );
    // message content NOT truncated
    same!(rows[1].content.as_str().map(str::len), Some(200));
    Ok(())
}

/// Two puts numbered 1 and 2, both read back and counted.
pub(super) fn basic_crud(s: &dyn RunEventStore) -> Result<(), String> {
    same!(
        put_plain(s, "t1", "r1", "human_message", Category::Message)?.seq,
        1
    );
    same!(
        put_plain(s, "t1", "r1", "ai_message", Category::Message)?.seq,
        2
    );
    same!(msgs(s, "t1", 50, MessageCursor::None)?, vec![1, 2]);
    same!(ok!(s.count_messages("t1")), 2);
    Ok(())
}

/// An empty thread id is refused, and nothing is written.
pub(super) fn an_empty_thread_id_is_refused(s: &dyn RunEventStore) -> Result<(), String> {
    if put_plain(s, "", "r1", "human_message", Category::Message).is_ok() {
        return Err("an empty thread id was accepted".into());
    }
    same!(ok!(s.dump()).len(), 0);
    Ok(())
}

/// Declared difference S4 to S6 (docs/reported-bugs.md, "Known differences with the published
/// stores"): a thread id with a dot, a path's `..` and `/`, or 65 characters is accepted by
/// every backend and read back as written (JSONL escapes it in its file names), where
/// upstream's JSONL store refuses it.
pub(super) fn non_canonical_thread_ids_are_kept(s: &dyn RunEventStore) -> Result<(), String> {
    let ids = [
        "thread.with.dot".to_string(),
        "../escape".to_string(),
        "x".repeat(65),
    ];
    for id in &ids {
        same!(
            put_plain(s, id, "r1", "human_message", Category::Message)?.seq,
            1
        );
    }
    for id in &ids {
        let rows = ok!(s.list_messages(id, 50, MessageCursor::None));
        same!(
            rows.iter()
                .map(|r| r.thread_id.as_str())
                .collect::<Vec<_>>(),
            vec![id.as_str()]
        );
    }
    same!(ok!(s.dump()).len(), 3);
    Ok(())
}

/// Declared difference S1 to S3: structured content (a list, a dict) comes back exactly as
/// written, with the metadata as written: no storage marks (`content_is_json`,
/// `content_is_dict`) are added to what the caller sees.
pub(super) fn structured_content_round_trips_without_marks(
    s: &dyn RunEventStore,
) -> Result<(), String> {
    let list = json!([{"type": "text", "text": "hello"}, {"type": "image_url", "image_url": {"url": "https://example.test/a.png"}}]);
    let dict = json!({"status": "success"});
    for (event_type, category, content) in [
        ("ai_message", Category::Message, list.clone()),
        (
            "run.end",
            Category::Outputs,
            json!([{"messages": [{"type": "ai", "content": ""}]}]),
        ),
        ("run.end", Category::Outputs, dict.clone()),
    ] {
        let mut e = ev("t1", "r1", event_type, category);
        e.content = content.clone().into();
        let record = put(s, e)?;
        same!(*record.content, content);
        same!(record.metadata, json!({}));
    }
    let rows = events(s, "t1", "r1", EventFilter::default())?;
    same!(
        rows.iter().map(|r| r.metadata.clone()).collect::<Vec<_>>(),
        vec![json!({}); 3]
    );
    same!(*rows[0].content, list);
    same!(*rows[2].content, dict);
    Ok(())
}

pub(super) const CASES: &[Case] = &[
    ("test_run_event_store.py::TestPutAndSeq::test_put_returns_dict_with_seq", put_returns_the_record_with_seq),
    ("test_run_event_store.py::TestPutAndSeq::test_seq_strictly_increasing_same_thread", seq_strictly_increasing_same_thread),
    ("test_run_event_store.py::TestPutAndSeq::test_seq_independent_across_threads", seq_independent_across_threads),
    ("test_run_event_store.py::TestPutAndSeq::test_put_respects_provided_created_at + test_put_metadata_preserved", put_keeps_created_at_and_metadata),
    ("test_run_event_store.py::TestPutAndSeq::test_put_if_absent_preserves_first_run_scoped_event (+ TestDbRunEventStore, TestJsonlRunEventStore ::test_put_if_absent_is_idempotent)", put_if_absent_preserves_the_first_run_scoped_event),
    ("ours: put_if_absent's key (thread, run, event type)", put_if_absent_keys_on_thread_run_and_type),
    ("test_run_event_store.py::TestListMessages::test_only_returns_message_category", only_returns_message_category),
    ("test_run_event_store.py::TestListMessages::test_before_seq_pagination + test_after_seq_pagination + test_default_returns_latest (+ TestDbRunEventStore::test_pagination)", before_and_after_seq_pagination),
    ("test_run_event_store.py::TestListMessages::test_limit_restricts_count", limit_restricts_count),
    ("test_run_event_store.py::TestListMessages::test_cross_run_unified_ordering + test_ascending_seq_order", cross_run_unified_ordering),
    ("test_run_event_store.py::TestListMessages::test_pagination_with_interleaved_trace_events", pagination_with_interleaved_trace_events),
    ("test_run_event_store.py::TestListEvents::test_returns_all_categories_for_run + test_only_returns_specified_run", list_events_returns_all_categories_of_the_run_only),
    ("test_run_event_store.py::TestListEvents::test_event_types_filter", event_types_filter),
    ("test_run_event_store.py::TestListMessagesByRun::test_only_messages_for_specified_run", by_run_only_messages_of_the_run),
    ("test_run_event_store.py::TestCountMessages::test_counts_only_message_category", counts_only_message_category),
    ("test_run_event_store.py::TestPutBatch::test_batch_assigns_seq + test_batch_seq_strictly_increasing (+ TestDbRunEventStore::test_put_batch_seq_continuity)", batch_returns_records_with_consecutive_seqs),
    ("test_run_event_store.py::TestDbRunEventStoreWriteLock::test_concurrent_put_batch_same_thread_has_no_seq_collision", two_batches_on_one_thread_never_collide),
    ("test_run_event_store.py::TestDelete::test_delete_by_thread", delete_by_thread),
    ("test_run_event_store.py::TestDelete::test_delete_by_run", delete_by_run),
    ("test_run_event_store.py::TestDelete::test_delete_nonexistent_thread_returns_zero + _run_ + _thread_for_run_returns_zero", deleting_nothing_counts_zero),
    ("test_run_event_store.py::TestDbRunEventStore::test_delete", delete_run_then_thread),
    ("test_run_event_store.py::TestDbRunEventStoreWriteLock::test_delete_by_thread_evicts_orphaned_write_lock (seq restarts from 1)", seq_restarts_after_delete_by_thread),
    ("ours (R13): delete_by_run keeps the high-water mark", delete_by_run_keeps_the_high_water_mark),
    ("ours (R23): delete_by_thread empties its thread, every category, and no other", delete_by_thread_empties_only_its_thread),
    ("test_run_event_store.py::TestEdgeCases (all three) + test_run_event_store_pagination.py::test_list_messages_by_run_empty_run", empty_thread_reads),
    ("test_run_event_store_pagination.py::test_list_messages_by_run_default_returns_all + test_list_messages_by_run_does_not_include_other_run", by_run_default_returns_all),
    ("test_run_event_store_pagination.py::test_list_messages_by_run_with_limit + _after_seq + _before_seq", by_run_limit_and_cursors),
    ("test_run_event_store_by_run_index.py::test_list_messages_by_run_matches_reference_across_cursors", by_run_matches_the_reference_across_cursors),
    ("test_run_event_store_by_run_index.py::test_list_events_matches_reference_with_filters", list_events_matches_the_reference_with_filters),
    ("test_run_event_store_by_run_index.py::test_run_keyed_index_partitions_every_event", every_event_is_filed_under_its_run),
    ("test_run_event_store_by_run_index.py::test_run_index_stays_in_lockstep_after_delete_by_run", per_run_reads_follow_delete_by_run),
    ("test_run_event_store_by_run_index.py::test_delete_by_thread_clears_run_indexes", per_run_reads_follow_delete_by_thread),
    ("test_run_event_store_filter.py::_check_task_id_filter + _check_task_id_with_event_types + _check_no_task_id_returns_all", task_id_filter),
    ("test_run_event_store_filter.py::_check_after_seq_cursor", after_seq_cursor),
    ("test_run_event_store_filter.py::_check_task_id_after_seq_paginate", task_id_after_seq_paginate),
    ("ours: task_id matches strings only; an empty type list selects nothing", task_id_matches_strings_only),
    ("test_history_batch_queries.py::test_memory_event_store_returns_global_last_non_middleware_ai_seq (+ jsonl, db)", last_non_middleware_ai_seq),
    ("test_history_batch_queries.py::test_memory_event_store_defensively_rechecks_message_category", last_visible_ai_is_a_message_of_a_visible_type),
    ("ours: a tool-calling turn is no answer", a_tool_calling_turn_is_no_answer),
    ("user_context.py::resolve_user_id (AUTO, None, explicit) as DbRunEventStore applies it", user_scopes),
    ("test_run_event_store.py::TestDbRunEventStore::test_trace_content_truncation (in the journal)", trace_content_truncation),
    ("test_run_event_store.py::TestDbRunEventStore::test_basic_crud + TestJsonlRunEventStore::test_basic_crud", basic_crud),
    ("test_run_event_store.py::TestJsonlRunEventStore::test_rejects_noncanonical_thread_ids[\"\"]", an_empty_thread_id_is_refused),
    ("ours (S4 to S6): non-canonical thread ids are kept", non_canonical_thread_ids_are_kept),
    ("ours (S1 to S3): structured content round-trips without storage marks", structured_content_round_trips_without_marks),
];

#[test]
fn upstream_store_expectations_hold_on_every_backend() {
    let mut failures = Vec::new();
    for (backend, open) in BACKENDS {
        for (upstream, case) in CASES {
            if let Err(why) = case(open().as_ref()) {
                failures.push(format!("{backend}: {upstream}: {why}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each legacy behaviour of R13 to R19 and R23, planted in every backend, breaks the expectation that
/// states its rule: the transcribed cases are what would have caught it.
#[cfg(feature = "planted")]
#[test]
fn each_planted_store_bug_breaks_its_expectation_on_every_backend() {
    use history::BugId;
    let broken: [(BugId, Body); 10] = [
        (BugId::R13, delete_by_run_keeps_the_high_water_mark),
        (BugId::R14, put_if_absent_keys_on_thread_run_and_type),
        (BugId::R15, per_run_reads_follow_delete_by_run),
        (BugId::R16, by_run_matches_the_reference_across_cursors),
        (BugId::R17, task_id_after_seq_paginate),
        (BugId::R18, a_tool_calling_turn_is_no_answer),
        // The legacy read ignores the caller too: a middleware's answer is taken for the run's
        // (this case calls no tool, so only the caller rule tells the stores apart).
        (BugId::R18, last_non_middleware_ai_seq),
        (BugId::R19, user_scopes),
        (BugId::R23, delete_by_thread),
        (BugId::R23, delete_by_thread_empties_only_its_thread),
    ];
    for (id, case) in broken {
        let planted = Planted::only(id);
        let stores: [Store; 3] = [
            Box::new(MemoryRunEventStore::new(planted)),
            Box::new(SqliteRunEventStore::open_in_memory(planted).expect("open")),
            Box::new(JsonlRunEventStore::open(Arc::new(MemStorage::new()), planted).expect("open")),
        ];
        for store in stores {
            assert!(
                case(store.as_ref()).is_err(),
                "{id} planted, yet its case passed"
            );
        }
    }
}
