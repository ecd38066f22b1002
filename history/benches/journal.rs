//! Journal benches (issue 5, item 11):
//! - append throughput against a bare buffered file write of the same bytes;
//! - replacing 8,192 rows;
//! - a statistics read after one append at 1,024 and at 8,192 rows (the cost must not change
//!   with length; the seed's fix reached 0.04 ms and 4 KB a call);
//! - the cost of turn 500 against turn 1 of a shared history with two mirrors;
//! - last-resort truncation at 1,024 rows (the seed's fix: 84 ms).
//!
//! Run: `cargo bench -p history --bench journal`.

use std::io::Write;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use history::journal::frame::encode_frame;
use history::journal::{
    plan_truncation, CountsReads, FsStorage, Journal, JournalOptions, JournalReader, MemStorage,
    Origin, Record, RecordBody, Row, SharedHistory, Speaker, TruncationOptions,
};
use history::Planted;

fn row(i: usize) -> Row {
    Row::text(
        Speaker::Human,
        Origin::Main,
        format!("turn {i}: please look at src/lib.rs and explain the error on line {i}"),
    )
}

fn append(c: &mut Criterion) {
    const ROWS: usize = 256;
    let mut g = c.benchmark_group("append_256_rows");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS as u64));
    let opts = JournalOptions::default();
    g.bench_function("journal_fs_fsync_each", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("tempdir"),
            |dir| {
                let s = Arc::new(FsStorage::new(dir.path()).expect("fs"));
                let mut j = Journal::create(s, "j", opts.clone(), None).expect("create");
                for i in 0..ROWS {
                    j.append(Origin::Main, vec![row(i)]).expect("append");
                }
                dir
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("journal_memory", |b| {
        b.iter(|| {
            let s = Arc::new(MemStorage::new());
            let mut j = Journal::create(s, "j", opts.clone(), None).expect("create");
            for i in 0..ROWS {
                j.append(Origin::Main, vec![row(i)]).expect("append");
            }
        })
    });
    // The same frames the journal writes, through a BufWriter, without fsync.
    let frames: Vec<Vec<u8>> = (0..ROWS)
        .map(|i| {
            encode_frame(&Record {
                seq: i as u64 + 2,
                origin: Origin::Main,
                body: RecordBody::Append { rows: vec![row(i)] },
            })
        })
        .collect();
    g.bench_function("bare_buffered_write", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("tempdir"),
            |dir| {
                let f = std::fs::File::create(dir.path().join("bare")).expect("create");
                let mut w = std::io::BufWriter::new(f);
                for frame in &frames {
                    w.write_all(frame).expect("write");
                }
                w.flush().expect("flush");
                dir
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn replace(c: &mut Criterion) {
    let mut g = c.benchmark_group("replace_8192_rows");
    g.sample_size(10);
    let rows: Vec<Row> = (0..8_192).map(row).collect();
    let opts = JournalOptions::default();
    g.bench_function("memory", |b| {
        b.iter_batched(
            || {
                let s = Arc::new(MemStorage::new());
                let mut j = Journal::create(s, "j", opts.clone(), None).expect("create");
                j.append(Origin::Main, rows[..100].to_vec())
                    .expect("append");
                j
            },
            |mut j| j.replace_all(Origin::Main, rows.clone()).expect("replace"),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("fs", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().expect("tempdir");
                let s = Arc::new(FsStorage::new(dir.path()).expect("fs"));
                let mut j = Journal::create(s, "j", opts.clone(), None).expect("create");
                j.append(Origin::Main, rows[..100].to_vec())
                    .expect("append");
                (dir, j)
            },
            |(dir, mut j)| {
                j.replace_all(Origin::Main, rows.clone()).expect("replace");
                dir
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn statistics(c: &mut Criterion) {
    let mut g = c.benchmark_group("statistics_after_one_append");
    let opts = JournalOptions::default();
    for n in [1_024usize, 8_192] {
        let mem = Arc::new(MemStorage::new());
        let mut j = Journal::create(mem.clone(), "j", opts.clone(), None).expect("create");
        for chunk in (0..n).collect::<Vec<_>>().chunks(64) {
            j.append(Origin::Main, chunk.iter().map(|&i| row(i)).collect())
                .expect("append");
        }
        let mut reader = JournalReader::new(mem.clone(), "j", opts.clone());
        reader.statistics().expect("first read");
        let mut i = n;
        let mut bytes = 0;
        let mut calls = 0u64;
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_batched(
                || {
                    i += 1;
                    j.append(Origin::Main, vec![row(i)]).expect("append");
                    mem.reset_read_counters();
                },
                |()| {
                    let s = reader.statistics().expect("read");
                    bytes += mem.bytes_read("j");
                    calls += 1;
                    s
                },
                BatchSize::PerIteration,
            )
        });
        println!(
            "statistics_after_one_append/{n}: {} bytes read per call",
            bytes / calls.max(1)
        );
    }
    g.finish();
}

fn turns(c: &mut Criterion) {
    let mut g = c.benchmark_group("shared_history_turn");
    let opts = JournalOptions::default();
    for at in [1usize, 500] {
        let mem = Arc::new(MemStorage::new());
        let mut h = SharedHistory::create(mem.clone(), "shared", opts.clone()).expect("create");
        h.attach_mirror(Origin::Main, "main.mirror")
            .expect("mirror");
        let sub = Origin::Subagent("explorer".into());
        h.attach_mirror(sub.clone(), "sub.mirror").expect("mirror");
        for t in 1..at {
            h.append(Origin::Main, vec![row(t)]).expect("turn");
            h.append(
                sub.clone(),
                vec![Row::text(Speaker::Ai, sub.clone(), format!("found {t}"))],
            )
            .expect("turn");
        }
        // A turn: a user row and a subagent row; then a rewind keeps the length steady.
        g.bench_with_input(BenchmarkId::new("turn_and_rewind_at", at), &at, |b, _| {
            b.iter(|| {
                h.append(Origin::Main, vec![row(at)]).expect("turn");
                h.append(
                    sub.clone(),
                    vec![Row::text(Speaker::Ai, sub.clone(), "answer")],
                )
                .expect("turn");
                h.rewind(Origin::Main, 2).expect("rewind");
            })
        });
    }
    g.finish();
}

fn truncation(c: &mut Criterion) {
    let rows: Vec<Row> = (0..1_024)
        .map(|i| {
            let content = "let x = 1;\n".repeat(400 + i % 13);
            Row::tool_result(Origin::Main, format!("call-{i}"), "read_file", content)
        })
        .collect();
    let refs: Vec<&Row> = rows.iter().collect();
    let opts = TruncationOptions {
        budget_bytes: 1_024 * 1_000,
        keep_bytes: 512,
        planted: Planted::none(),
    };
    let mut g = c.benchmark_group("last_resort_truncation");
    g.bench_function("1024_rows", |b| b.iter(|| plan_truncation(&refs, opts)));
    g.finish();
}

criterion_group!(benches, append, replace, statistics, turns, truncation);
criterion_main!(benches);
