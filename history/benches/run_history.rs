//! Full `thread_history` read of a 10,000- and a 100,000-message thread from each backend
//! (seed 003, R2: the full read pages through everything, so its cost must grow linearly).
//!
//! Criterion reports time and rows/s per case, and the cost of one 500-row page at the start and
//! at the end of the 100k thread (equal costs: a page does not get dearer deeper in the thread,
//! so the full read is linear in the number of pages). Afterwards a short direct measurement
//! prints rows/s and the 100k/10k time ratio per backend (linear ≈ 10).
//!
//! Run: `cargo bench -p history --bench run_history`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use history::runs::*;
use history::Planted;
use serde_json::json;

const SIZES: [usize; 2] = [10_000, 100_000];

struct Case {
    name: &'static str,
    store: Box<dyn RunEventStore>,
    _dir: Option<tempfile::TempDir>,
}

/// A thread of `n` messages (human, tool call, tool result, answer, repeating) with a trace
/// event every 10 messages, written in batches of 1,000.
fn fill(store: &dyn RunEventStore, n: usize) {
    let mut batch = Vec::with_capacity(1_100);
    for i in 0..n {
        let m = match i % 4 {
            0 => ChatMessage::human(format!("question {i} about the weather in a city")),
            1 => ChatMessage::ai_tool_calls(
                Some(format!("lc_run--{i}")),
                vec![ToolCall {
                    id: format!("call-{i}"),
                    name: "search".into(),
                    args: json!({"q": "weather"}),
                }],
            ),
            2 => ChatMessage::tool(
                format!("result {i}: sunny, 21 degrees"),
                format!("call-{}", i - 1),
            ),
            _ => ChatMessage::ai(
                format!("answer {i}: it is sunny"),
                Some(format!("lc_run--{i}")),
            ),
        };
        batch.push(NewRunEvent {
            thread_id: "bench".into(),
            run_id: format!("run-{}", i / 40),
            user_id: Some("user".into()),
            event_type: m.event_type().into(),
            category: Category::Message,
            content: m.to_content().into(),
            metadata: json!({}),
            created_at_ns: i as i64,
        });
        if i % 10 == 9 {
            batch.push(NewRunEvent {
                category: Category::Trace,
                event_type: "llm_response".into(),
                content: json!({"tokens": i}).into(),
                ..batch[batch.len() - 1].clone()
            });
        }
        if batch.len() >= 1_000 {
            store.put_batch(std::mem::take(&mut batch)).expect("fill");
        }
    }
    store.put_batch(batch).expect("fill");
}

fn cases(n: usize) -> Vec<Case> {
    let memory = MemoryRunEventStore::new(Planted::none());
    fill(&memory, n);
    let dir = tempfile::tempdir().expect("tempdir");
    let sqlite = SqliteRunEventStore::open(&dir.path().join("runs.db"), Planted::none())
        .expect("open sqlite");
    fill(&sqlite, n);
    vec![
        Case {
            name: "memory",
            store: Box::new(memory),
            _dir: None,
        },
        Case {
            name: "sqlite",
            store: Box::new(sqlite),
            _dir: Some(dir),
        },
    ]
}

fn checkpointer() -> Checkpointer {
    let cps = Checkpointer::new();
    cps.put(
        "bench",
        Checkpoint {
            messages: vec![ChatMessage::human(
                "Here is a summary of the conversation to date:",
            )],
            title: Some("bench".into()),
            ..Checkpoint::default()
        },
    );
    cps
}

fn read(store: &dyn RunEventStore, cps: &Checkpointer) -> usize {
    let h = thread_history(store, cps, "bench", &ViewOptions::default())
        .expect("read")
        .expect("history");
    h.messages.len()
}

/// The cases of each size, built once and read by every measurement.
type Built = Vec<(usize, Vec<Case>)>;

/// Criterion: one full read per backend and size; returns the cases it built.
fn bench_full_reads(c: &mut Criterion, cps: &Checkpointer) -> Built {
    let mut all = Vec::new();
    let mut group = c.benchmark_group("thread_history_full_read");
    for n in SIZES {
        let built = cases(n);
        group.throughput(Throughput::Elements(n as u64));
        for case in &built {
            assert_eq!(
                read(&*case.store, cps),
                n,
                "a full read returns every message"
            );
            group.bench_with_input(BenchmarkId::new(case.name, n), &n, |b, _| {
                b.iter(|| black_box(read(&*case.store, cps)))
            });
        }
        all.push((n, built));
    }
    group.finish();
    all
}

/// Criterion: one 500-row page at the start and at the end of the largest thread per backend.
fn bench_pages(c: &mut Criterion, all: &Built) {
    let mut group = c.benchmark_group("list_messages_page_500");
    group.throughput(Throughput::Elements(500));
    let (n, built) = &all[all.len() - 1];
    for case in built {
        // The last full page starts ~700 seqs before the end (traces take seqs too).
        let max = case.store.max_seq("bench").expect("max seq");
        for (at, after) in [("start", 0u64), ("end", max.saturating_sub(700))] {
            group.bench_function(BenchmarkId::new(case.name, format!("{at}_of_{n}")), |b| {
                b.iter(|| {
                    let page = case
                        .store
                        .list_messages("bench", 500, MessageCursor::After(after))
                        .expect("page");
                    black_box(page.len())
                })
            });
        }
    }
    group.finish();
}

/// The best of 5 full reads of `store`.
fn best_read(store: &dyn RunEventStore, cps: &Checkpointer) -> Duration {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            black_box(read(store, cps));
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Direct figures: best of 5 full reads per case, rows/s and the 100k/10k ratio.
fn print_direct_figures(all: &Built, cps: &Checkpointer) {
    let mut times = std::collections::BTreeMap::new();
    for (n, built) in all {
        for case in built {
            let t = best_read(&*case.store, cps);
            println!(
                "{:>6} {:>7} messages: {:>9.2} ms, {:>12.0} rows/s",
                case.name,
                n,
                t.as_secs_f64() * 1e3,
                *n as f64 / t.as_secs_f64()
            );
            times.insert((case.name, *n), t);
        }
    }
    for name in ["memory", "sqlite"] {
        if let (Some(small), Some(big)) =
            (times.get(&(name, SIZES[0])), times.get(&(name, SIZES[1])))
        {
            println!(
                "{name}: 100k/10k time ratio {:.2} (linear = 10)",
                big.as_secs_f64() / small.as_secs_f64()
            );
        }
    }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    let cps = checkpointer();
    let all = bench_full_reads(&mut c, &cps);
    bench_pages(&mut c, &all);
    c.final_summary();
    print_direct_figures(&all, &cps);
}
