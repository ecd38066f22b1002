//! Projecting a 100,000-row thread from raw bytes, beside parsing every row into a
//! `serde_json::Value`. 10 % of the rows are family rows on visible displays; 90 % are custom
//! events with ~2 KiB payloads, which the projector skips at the envelope (`RawValue`).
//!
//! Run: `cargo bench -p history --bench display_projector`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use history::display::{project, AgentIdentity, ProjectorOptions};
use history::Planted;
use serde_json::json;

const ROWS: usize = 100_000;

fn row(i: usize) -> Vec<u8> {
    let display = format!("d{}", i % 4);
    let (agent_class, agent_id, parents, data) = if !i.is_multiple_of(10) {
        let docs: Vec<_> = (0..6)
            .map(|k| json!({"id": format!("doc-{i}-{k}"), "score": 0.25 * k as f64, "tags": ["a", "b", k],
                "text": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat."}))
            .collect();
        (
            "RetrieverAgent",
            "a2",
            json!(["RetrievalAgentInTheLoopResponseEvent", "RetrieverEvent"]),
            json!({"created_at": i, "query": "q", "documents": docs, "nested": {"depth": {"more": [1, 2, 3]}}}),
        )
    } else {
        match (i / 10) % 3 {
            0 => (
                "UserAgent",
                "u0",
                json!(["UserMessageEvent", "BaseEvent"]),
                json!({"created_at": i, "messages": [{"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": format!("question {i}")}]}]}),
            ),
            1 => (
                "LeadAgent",
                "a1",
                json!(["ChunkEvent", "BaseEvent"]),
                json!({"created_at": i, "content": format!("answer {i} ")}),
            ),
            _ => (
                "LeadAgent",
                "a1",
                json!(["StopEvent"]),
                json!({"created_at": i, "output_messages": [{"role": "assistant", "contents": [{"type": "text", "text": format!("answer {} final", i - 10)}], "content": format!("answer {} final", i - 10)}]}),
            ),
        }
    };
    serde_json::to_vec(&json!({
        "agent_class": agent_class, "agent_id": agent_id, "thread_id": "T", "display_id": display,
        "run_id": format!("r{}", i / 30), "event_id": format!("{i:024x}"), "event_type": "display_event",
        "event_name": "E", "event_parents": parents, "event_data": data,
    }))
    .expect("a Value serializes")
}

fn bench(c: &mut Criterion) {
    let rows: Vec<Vec<u8>> = (0..ROWS).map(row).collect();
    let bytes: usize = rows.iter().map(Vec::len).sum();
    println!(
        "thread: {ROWS} rows, {bytes} bytes, mean {} bytes/row",
        bytes / ROWS
    );
    let primary = AgentIdentity::new("LeadAgent", "a1");
    let options = ProjectorOptions {
        planted: Planted::none(),
    };
    let messages = project(&rows, Some(&primary), &options).messages.len();
    println!("projection: {messages} messages");

    let mut group = c.benchmark_group("display_100k_rows");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("project", |b| {
        b.iter(|| black_box(project(black_box(&rows), Some(&primary), &options)))
    });
    group.bench_function("parse_value_only", |b| {
        b.iter(|| {
            for r in &rows {
                black_box(serde_json::from_slice::<serde_json::Value>(black_box(r)).ok());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
