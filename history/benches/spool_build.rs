//! Spool build throughput for an 8 MiB body against the physical floor: writing the finished
//! bytes to a file. Both sides end with an fsync (sealing a spool fsyncs it).
//!
//! `cargo bench -p history --bench spool_build`
//!
//! - `floor`: the body, already in memory, written to a new file and fsynced;
//! - `spool/<shape>/<history>`: rows in, sealed spool out ([`build`]);
//! - `sink/<shape>/<history>`: the same streaming pass into `io::sink` (CPU cost alone);
//! - `memory/<shape>/<history>`: the whole body built in a vector (the route J14 describes, no
//!   file; the serde_json oracle that proves the bytes lives in the `model` crate).
//!
//! Throughput is the body size in bytes. The synthetic text is escape-dense on purpose (about one
//! character to escape every 10 bytes: quotes, backslashes, newlines, control characters), which
//! is the worst case for a writer that escapes strings piece by piece.

use std::fs::{self, File};
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion, Throughput,
};
use history::journal::Row;
use history::spool::{
    build, write_body, BufferTracker, BuildOptions, NeverAbort, RequestHead, RowSource, Shape,
    SpoolDir, SyntheticOptions, SyntheticRows, VecSource,
};

/// A history whose OpenAI body is about 8 MiB.
fn rows(tool_heavy: bool) -> Vec<Row> {
    let mut source = SyntheticRows::new(SyntheticOptions {
        // Escapes and JSON add about 20% to the content.
        content_bytes_target: 8 * (1 << 20) * 5 / 6,
        tool_heavy,
        seed: 1,
        ..SyntheticOptions::default()
    });
    let mut rows = Vec::new();
    while let Some(row) = source.next_row() {
        rows.push(row.expect("the generator does not fail"));
    }
    rows
}

/// The whole body of `rows` in a vector.
fn in_memory(shape: Shape, head: &RequestHead, rows: &[Row]) -> Vec<u8> {
    let mut out = Vec::new();
    write_body(
        shape,
        head,
        &mut VecSource::new(rows.to_vec()),
        &mut out,
        &NeverAbort,
        &mut BufferTracker::new(64 * 1024),
    )
    .expect("valid rows");
    out
}

/// Removes a file when dropped (outside the timed part of a batched iteration).
struct Remove(PathBuf);

impl Drop for Remove {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

fn write_floor(dir: &Path, n: u64, body: &[u8]) -> Remove {
    let path = dir.join(format!("floor-{n}.json"));
    let mut file = File::create(&path).expect("create");
    file.write_all(body).expect("write");
    file.sync_all().expect("fsync");
    Remove(path)
}

/// The group every route of every shape and history is measured in.
type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// One shape and history: what every route of it starts from.
struct Case<'a> {
    shape: Shape,
    head: &'a RequestHead,
    rows: &'a [Row],
    /// `<shape>/<history>`, the end of each route's bench name.
    name: String,
}

/// `floor`: the finished body written to a new file and fsynced.
fn bench_floor(group: &mut Group, case: &Case, dir: &Path, body: &[u8]) {
    let mut n = 0u64;
    group.bench_function(format!("floor/{}", case.name), |b| {
        b.iter_batched(
            || {
                n += 1;
                n
            },
            |n| write_floor(dir, n, black_box(body)),
            BatchSize::PerIteration,
        )
    });
}

/// `spool`: rows in, sealed spool out.
fn bench_spool(group: &mut Group, case: &Case, dir: &mut SpoolDir) {
    group.bench_function(format!("spool/{}", case.name), |b| {
        b.iter_batched(
            || VecSource::new(case.rows.to_vec()),
            |mut source| {
                build(
                    case.shape,
                    case.head,
                    &mut source,
                    dir,
                    &BuildOptions::default(),
                    &NeverAbort,
                )
                .expect("build")
            },
            BatchSize::PerIteration,
        )
    });
}

/// `memory`: the whole body built in a vector.
fn bench_memory(group: &mut Group, case: &Case) {
    group.bench_function(format!("memory/{}", case.name), |b| {
        b.iter_batched(
            || case.rows.to_vec(),
            |rows| in_memory(case.shape, case.head, black_box(&rows)),
            BatchSize::PerIteration,
        )
    });
}

/// `sink`: the streaming pass into `io::sink`, the CPU cost alone.
fn bench_sink(group: &mut Group, case: &Case) {
    group.bench_function(format!("sink/{}", case.name), |b| {
        b.iter_batched(
            || VecSource::new(case.rows.to_vec()),
            |mut source| {
                write_body(
                    case.shape,
                    case.head,
                    &mut source,
                    std::io::sink(),
                    &NeverAbort,
                    &mut BufferTracker::new(0),
                )
                .expect("build")
            },
            BatchSize::PerIteration,
        )
    });
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut dir = SpoolDir::open(tmp.path().join("request")).expect("spool dir");
    let head = RequestHead::default();
    let mut group = c.benchmark_group("spool_build_8MiB");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(10));
    for tool_heavy in [false, true] {
        let history = if tool_heavy { "tool-heavy" } else { "plain" };
        let rows = rows(tool_heavy);
        for shape in Shape::ALL {
            let case = Case {
                shape,
                head: &head,
                rows: &rows,
                name: format!("{}/{history}", shape.name()),
            };
            let body = in_memory(shape, &head, &rows);
            group.throughput(Throughput::Bytes(body.len() as u64));
            bench_floor(&mut group, &case, tmp.path(), &body);
            bench_spool(&mut group, &case, &mut dir);
            bench_memory(&mut group, &case);
            bench_sink(&mut group, &case);
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
