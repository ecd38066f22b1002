//! Prints what writing and reopening cost on each run-event backend: `cargo run --release -p
//! history --example run_store_writes [BATCHES]`. Batches of 10 message rows over 4 runs of one
//! thread; the JSONL store on memory storage (as a simulation would hold it) and on the real
//! filesystem (a sync per touched file per batch), SQLite on a file. Figures only, nothing
//! asserted.

use std::sync::Arc;
use std::time::Instant;

use history::journal::MemStorage;
use history::runs::*;
use history::Planted;
use serde_json::json;

fn batch(b: usize) -> Vec<NewRunEvent> {
    (0..10)
        .map(|i| NewRunEvent {
            thread_id: "t".into(),
            run_id: format!("run-{}", (b + i) % 4),
            user_id: Some("u".into()),
            event_type: HUMAN_MESSAGE.into(),
            category: Category::Message,
            content: ChatMessage::human(format!("message {b}.{i} lorem ipsum dolor"))
                .to_content()
                .into(),
            metadata: json!({}),
            created_at_ns: (b * 10 + i) as i64,
        })
        .collect()
}

fn writes(name: &str, store: &dyn RunEventStore, batches: usize) {
    let start = Instant::now();
    for b in 0..batches {
        store.put_batch(batch(b)).expect("write");
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{name:<14} {batches} batches of 10: {:>9.1} rows/s ({:.3} ms a batch)",
        (batches * 10) as f64 / secs,
        secs * 1000.0 / batches as f64
    );
}

fn main() {
    let batches: usize = std::env::args()
        .nth(1)
        .map_or(2000, |a| a.parse().expect("BATCHES is a number"));
    writes(
        "memory",
        &MemoryRunEventStore::new(Planted::none()),
        batches,
    );
    let disk = Arc::new(MemStorage::new());
    let jsonl = JsonlRunEventStore::open(disk.clone(), Planted::none()).expect("open");
    writes("jsonl (memory)", &jsonl, batches);
    let start = Instant::now();
    let reopened = JsonlRunEventStore::open(disk, Planted::none()).expect("reopen");
    println!(
        "jsonl (memory) reopen of {} rows: {:.1} ms",
        reopened.count_messages("t").expect("count"),
        start.elapsed().as_secs_f64() * 1000.0
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let jsonl =
        JsonlRunEventStore::open_dir(dir.path().join("jsonl"), Planted::none()).expect("open dir");
    writes("jsonl (fs)", &jsonl, batches);
    let sqlite = SqliteRunEventStore::open(&dir.path().join("runs.db"), Planted::none())
        .expect("open sqlite");
    writes("sqlite (file)", &sqlite, batches);
}
