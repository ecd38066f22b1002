//! The two stores run through the same bodies and must answer identically.

use history::display::{
    reconstruct, Admission, DisplayEventStore, MemoryDisplayStore, SqliteDisplayStore, StoreOptions,
};
use history::Planted;
use proptest::prelude::*;
use serde_json::json;

use crate::gen;
use crate::support::*;

fn append_all(store: &dyn DisplayEventStore, rows: &[Vec<u8>]) -> Vec<Admission> {
    rows.iter()
        .map(|r| store.append(r).expect("append"))
        .collect()
}

#[test]
fn unindexable_rows_are_quarantined_not_dropped() {
    let good = Ev::user("d", "e0", 0, "hi");
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not json".to_vec(), "not valid JSON"),
        (b"[1]".to_vec(), "not an object"),
        (
            good.clone().set("thread_id", json!(1)).bytes(),
            "`thread_id`",
        ),
        (good.clone().without("display_id").bytes(), "`display_id`"),
        (
            good.clone().set("event_type", json!(null)).bytes(),
            "`event_type`",
        ),
        (
            good.clone()
                .set("agent_class", json!(["UserAgent"]))
                .bytes(),
            "`agent_class`",
        ),
        (
            good.clone()
                .set("event_parents", json!("UserMessageEvent"))
                .bytes(),
            "`event_parents`",
        ),
        (
            good.clone()
                .set("event_parents", json!(["UserMessageEvent", null]))
                .bytes(),
            "`event_parents`",
        ),
    ];
    for (name, store) in both_stores(Planted::none()) {
        for (bytes, want) in &cases {
            match store.append(bytes).expect("append") {
                Admission::Quarantined { reason } => {
                    assert!(reason.contains(want), "{name}: {reason:?} lacks {want:?}")
                }
                Admission::Stored => panic!("{name}: stored an unindexable row ({want})"),
            }
        }
        // Other malformed fields are stored as given: the projector deals with them.
        let odd = good
            .clone()
            .set("agent_id", json!(5))
            .data("created_at", json!("x"));
        assert_eq!(
            store.append(&odd.bytes()).expect("append"),
            Admission::Stored,
            "{name}"
        );
        assert_eq!(store.row_count().expect("count"), 1, "{name}");
        let q = store.quarantined().expect("quarantine");
        assert_eq!(
            q.iter().map(|r| r.seq).collect::<Vec<_>>(),
            (1..=cases.len() as u64).collect::<Vec<_>>(),
            "{name}"
        );
        assert_eq!(&*q[0].bytes, b"not json", "{name}");
        assert!(
            store
                .visible_displays(THREAD)
                .expect("stage 1")
                .contains(&"d".to_string()),
            "{name}"
        );
    }
}

#[test]
fn the_two_stages_follow_the_contract() {
    let rows = [
        Ev::user("d1", "e0", 0, "visible"),               // 1
        Ev::chunk(&lead(), "d1", "r", "e1", 1, "x"),      // 2
        Ev::chunk(&lead(), "d2", "r", "e2", 2, "hidden"), // 3
        Ev::user("d3", "e3", 3, "x").set("agent_class", json!("LeadAgent")), // 4 not a marker
        Ev::answer("d4", "e4", 4, json!(1)),              // 5 marker whatever its payload
        Ev::custom(
            &user_agent(),
            "d5",
            "e5",
            5,
            &["UserMessageEventLog"],
            json!({}),
        ), // 6 decoy
        Ev::user("d6", "e6", 6, "x").set("event_type", json!("control_event")), // 7 control
        Ev::user("d7", "e7", 7, "x").set("thread_id", json!("other")), // 8 other thread
        Ev::custom(&lead(), "d1", "e8", 8, &["NoAnswerStopEvent"], json!({})), // 9 not a family
        Ev::custom(
            &lead(),
            "d1",
            "e9",
            9,
            &["ChunkEvent", "StopEvent"],
            json!({}),
        ), // 10 two families: once
        Ev::chunk(&lead(), "d1", "r", "e10", 10, "c").set("event_type", json!("control_event")), // 11 control
        Ev::custom(
            &user_agent(),
            "d8",
            "e11",
            11,
            &["ChunkEvent", "UserMessageEvent"],
            json!({}),
        ), // 12 member: marker
    ];
    for (name, store) in both_stores(Planted::none()) {
        append_all(&*store, &bytes(&rows));
        assert_eq!(
            store.visible_displays(THREAD).expect("stage 1"),
            ["d1", "d4", "d8"],
            "{name}"
        );
        let displays: Vec<String> = ["d1", "d2", "d4"].map(String::from).to_vec();
        let seqs: Vec<u64> = store
            .rows_on_displays(THREAD, &displays)
            .expect("stage 2")
            .iter()
            .map(|r| r.seq)
            .collect();
        assert_eq!(seqs, [1, 2, 3, 5, 10], "{name}");
        assert_eq!(
            store.thread_displays(THREAD).expect("legacy"),
            ["d1", "d2", "d3", "d4", "d5", "d8"],
            "{name}"
        );
        assert!(
            store
                .visible_displays("nobody")
                .expect("stage 1")
                .is_empty(),
            "{name}"
        );
        assert!(
            store
                .rows_on_displays(THREAD, &[])
                .expect("stage 2")
                .is_empty(),
            "{name}"
        );
        assert_eq!(
            store.row_count().expect("count"),
            rows.len() as u64,
            "{name}"
        );
    }
}

#[test]
fn a_thread_without_a_marker_fails_closed() {
    let rows = [
        Ev::chunk(&lead(), "d", "r", "e1", 1, "orphan"),
        Ev::user("d", "e0", 0, "x").set("agent_class", json!("LeadAgent")),
    ];
    for (name, store) in both_stores(Planted::none()) {
        append_all(&*store, &bytes(&rows));
        let p = reconstruct(&*store, THREAD, Some(&lead()), &opts(Planted::none()))
            .expect("reconstructs");
        assert!(p.messages.is_empty(), "{name}");
        assert_eq!(p.warnings.len(), 1, "{name}");
        assert_eq!(
            p.warnings[0].code,
            history::display::WarningCode::NoVisibleDisplay,
            "{name}"
        );
    }
}

#[test]
fn the_display_event_type_is_a_store_option() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&lead(), "d", "r", "e1", 1, "shown"),
        Ev::chunk(&lead(), "d", "r", "e2", 2, "control").set("event_type", json!("control_event")),
        Ev::user("d", "e3", 3, "OLD").set("event_type", json!("DISPLAY_EVENT")),
        Ev::chunk(&lead(), "d", "r", "e4", 4, "OLDER").set("event_type", json!("DISPLAY_EVENT")),
    ];
    let upper = || StoreOptions {
        display_event_type: "DISPLAY_EVENT".to_string(),
        ..StoreOptions::default()
    };
    assert_eq!(StoreOptions::default().display_event_type, "display_event");
    type Case<'a> = (
        &'a str,
        Box<dyn DisplayEventStore>,
        Vec<(history::display::Role, String)>,
    );
    let stores: Vec<Case> = vec![
        (
            "memory default",
            Box::new(MemoryDisplayStore::with_options(StoreOptions::default())),
            vec![u("hi"), a("shown")],
        ),
        (
            "sqlite default",
            Box::new(
                SqliteDisplayStore::open_in_memory_with_options(StoreOptions::default())
                    .expect("opens"),
            ),
            vec![u("hi"), a("shown")],
        ),
        (
            "memory DISPLAY_EVENT",
            Box::new(MemoryDisplayStore::with_options(upper())),
            vec![u("OLD"), a("OLDER")],
        ),
        (
            "sqlite DISPLAY_EVENT",
            Box::new(SqliteDisplayStore::open_in_memory_with_options(upper()).expect("opens")),
            vec![u("OLD"), a("OLDER")],
        ),
    ];
    for (name, store, want) in stores {
        append_all(&*store, &bytes(&rows));
        let p = reconstruct(&*store, THREAD, None, &opts(Planted::none())).expect("reconstructs");
        assert_eq!(texts(&p), want, "{name}");
        assert_eq!(
            store.row_count().expect("counts"),
            5,
            "{name}: every row is stored"
        );
    }
}

#[test]
fn an_unknown_nested_event_cannot_break_reconstruction() {
    // The seed's incident: a custom AITL response event whose closest known parent lacks the
    // field the legacy union required.
    let rows = [
        Ev::user("d", "e0", 0, "find it"),
        Ev::aitl_response(1, json!({"hits": 3})),
        Ev::chunk(&lead(), "d", "r", "e2", 2, "Found 3."),
    ];
    for (name, store) in both_stores(Planted::none()) {
        append_all(&*store, &bytes(&rows));
        let p = reconstruct(&*store, THREAD, Some(&lead()), &opts(Planted::none()))
            .expect("never a 500");
        assert_eq!(texts(&p), [u("find it"), a("Found 3.")], "{name}");
    }
}

#[test]
fn sqlite_store_persists_across_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("display.sqlite");
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&lead(), "d", "r", "e1", 1, "yo"),
    ];
    {
        let store = SqliteDisplayStore::open(&path, Planted::none()).expect("open");
        append_all(&store, &bytes(&rows));
        assert!(matches!(
            store.append(b"{").expect("append"),
            Admission::Quarantined { .. }
        ));
    }
    let store = SqliteDisplayStore::open(&path, Planted::none()).expect("reopen");
    assert_eq!(store.row_count().expect("count"), 2);
    assert_eq!(store.quarantined().expect("quarantine").len(), 1);
    let p = reconstruct(&store, THREAD, None, &opts(Planted::none())).expect("reconstructs");
    assert_eq!(texts(&p), [u("hi"), a("yo")]);
    assert_eq!(
        store.append(&rows[0].bytes()).expect("append"),
        Admission::Stored
    );
    assert_eq!(store.row_count().expect("count"), 3);
    let stored: Vec<_> = (store.rows().expect("rows").into_iter())
        .map(|r| (r.seq, r.bytes.to_vec()))
        .collect();
    let expected = [
        (1, rows[0].bytes()),
        (2, rows[1].bytes()),
        (3, rows[0].bytes()),
    ];
    assert_eq!(stored, expected, "every row, in commit order");
}

#[test]
fn stage_two_handles_more_displays_than_one_query_binds() {
    let mut rows = Vec::new();
    for k in 0..1200 {
        rows.push(Ev::user(&format!("d{k:04}"), &format!("u{k}"), k, "hi"));
    }
    for (name, store) in both_stores(Planted::none()) {
        append_all(&*store, &bytes(&rows));
        let displays = store.visible_displays(THREAD).expect("stage 1");
        assert_eq!(displays.len(), 1200, "{name}");
        let got = store.rows_on_displays(THREAD, &displays).expect("stage 2");
        assert_eq!(
            got.iter().map(|r| r.seq).collect::<Vec<_>>(),
            (1..=1200).collect::<Vec<u64>>(),
            "{name}"
        );
    }
}

/// Appends the same deliveries to both stores and compares every answer.
pub fn compare_stores(rows: &[Vec<u8>], planted: Planted) -> Result<(), TestCaseError> {
    let memory = MemoryDisplayStore::new(planted);
    let sqlite = SqliteDisplayStore::open_in_memory(planted)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let stores: [&dyn DisplayEventStore; 2] = [&memory, &sqlite];
    for row in rows {
        let (m, s) = ask_both(stores, |st| st.append(row))?;
        prop_assert_eq!(m, s);
    }
    for thread in [THREAD, "T-other", "absent"] {
        let (vm, vs) = ask_both(stores, |st| st.visible_displays(thread))?;
        prop_assert_eq!(&vm, &vs);
        let all: Vec<String> = (0..gen::DISPLAYS).map(|k| format!("d{k}")).collect();
        for displays in [&vm, &all] {
            let (rm, rs) = ask_both(stores, |st| st.rows_on_displays(thread, displays))?;
            prop_assert_eq!(rm, rs);
        }
        prop_assert_eq!(
            memory.thread_displays(thread).ok(),
            sqlite.thread_displays(thread).ok()
        );
        for primary in [None, Some(lead())] {
            let (pm, ps) = ask_both(stores, |st| {
                reconstruct(st, thread, primary.as_ref(), &opts(planted))
            })?;
            prop_assert_eq!(pm, ps);
        }
    }
    prop_assert_eq!(memory.row_count().ok(), sqlite.row_count().ok());
    prop_assert_eq!(memory.quarantined().ok(), sqlite.quarantined().ok());
    prop_assert_eq!(memory.rows().ok(), sqlite.rows().ok());
    Ok(())
}

/// What the memory store, then the SQLite store, answer to `ask`; an error of either fails the
/// test case.
fn ask_both<'a, T, E: std::fmt::Display>(
    [memory, sqlite]: [&'a dyn DisplayEventStore; 2],
    ask: impl Fn(&'a dyn DisplayEventStore) -> Result<T, E>,
) -> Result<(T, T), TestCaseError> {
    let fail = |e: E| TestCaseError::fail(e.to_string());
    Ok((ask(memory).map_err(fail)?, ask(sqlite).map_err(fail)?))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn both_stores_answer_identically((specs, order) in gen::deliveries(30)) {
        compare_stores(&gen::delivered(&specs, &order), Planted::none())?;
    }

    #[test]
    fn both_stores_answer_identically_on_garbage(rows in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..16)) {
        compare_stores(&rows, Planted::none())?;
    }
}
