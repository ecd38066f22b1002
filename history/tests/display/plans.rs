//! The SQLite store answers both stages from the one `row_parents` index: no table scan.

use history::display::{DisplayEventStore, SqliteDisplayStore};
use history::Planted;

use crate::support::*;

#[test]
fn both_stages_search_the_index_and_never_scan() {
    let store = SqliteDisplayStore::open_in_memory(Planted::none()).expect("open");
    for k in 0..50 {
        let d = format!("d{}", k % 5);
        store
            .append(&Ev::user(&d, &format!("u{k}"), k, "hi").bytes())
            .expect("append");
        store
            .append(&Ev::chunk(&lead(), &d, "r", &format!("c{k}"), k, "x").bytes())
            .expect("append");
        let custom = Ev::custom(
            &sub(),
            &d,
            &format!("x{k}"),
            k,
            &["CustomEvent", "BaseEvent"],
            serde_json::json!({}),
        );
        store.append(&custom.bytes()).expect("append");
    }
    let plans = store.explain_query_plans(THREAD).expect("explain");
    assert_eq!(plans.len(), 2);
    for (stage, lines) in &plans {
        println!("EXPLAIN QUERY PLAN {stage}:");
        for line in lines {
            println!("    {line}");
        }
        assert!(!lines.is_empty(), "{stage}: no plan");
        for line in lines {
            let scans_table =
                line.contains("SCAN") && (line.contains("rows") || line.contains("row_parents"));
            assert!(!scans_table, "{stage} scans a table: {line}");
        }
        assert!(
            lines
                .iter()
                .any(|l| l.contains("row_parents_thread_type_parent")),
            "{stage} does not use the index: {lines:?}"
        );
    }
}
