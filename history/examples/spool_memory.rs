//! The memory proof of the request spool (catalog J14): prints figures, asserts nothing about time.
//!
//! ```text
//! cargo run --release -p history --example spool_memory
//! cargo run --release -p history --example spool_memory --features planted   # adds the J14 route
//! ```
//!
//! A counting global allocator tracks current and peak heap bytes. For each shape (OpenAI chat,
//! Anthropic messages) and kind of history (plain, tool-heavy) it builds and sends a 1 MiB and an
//! 8 MiB body to a local HTTP server and records the peak heap growth over the baseline before the
//! request. Rows come from [`SyntheticRows`], which yields them one at a time and holds nothing.
//!
//! - `streamed`: the production route ([`build`] then send).
//! - `trap`: the route J14 describes, which holds the whole history: every row collected into a
//!   vector, the whole body built in a vector, then written to a spool and sent.
//! - `planted-J14` (with `--features planted` only): [`build`] with the planted bug on.
//!
//! Growth between the 1 MiB and the 8 MiB body is what matters: fixed buffers cancel out, and what
//! remains grows with the history. Goal: under 64 KiB for the streamed route (the seed's bound was
//! 1 MiB), and at least 10x that for the trap. The server checks that Content-Length equals the
//! bytes it received for every request. The last line reads
//! `heap growth 1MiB->8MiB: streamed=N bytes trap=M bytes`, N the worst streamed case, M the
//! smallest trap growth. Exit status 1 when a length check or a goal fails.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use history::journal::Row;
use history::spool::{
    build, write_body, BufferTracker, BuildOptions, NeverAbort, RequestHead, RowSource,
    SendOptions, Shape, SpoolDir, SpoolError, SyntheticOptions, SyntheticRows, VecSource,
};
use history::Planted;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = CURRENT.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

fn shrank(bytes: usize) {
    CURRENT.fetch_sub(bytes, Ordering::SeqCst);
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const MIB: u64 = 1 << 20;
const GOAL_BYTES: i64 = 64 * 1024;
const TRAP_FACTOR_MIN: i64 = 10;
/// The sizes of the two bodies each case builds; the growth between them is the figure.
const SIZES: [u64; 2] = [MIB, 8 * MIB];

/// What the server saw of the last request (atomics: the server must not allocate per request,
/// or its buffers would blur the figures).
static LAST_CONTENT_LENGTH: AtomicU64 = AtomicU64::new(u64::MAX);
static LAST_RECEIVED: AtomicU64 = AtomicU64::new(u64::MAX);

/// A minimal HTTP/1.1 sink on 127.0.0.1: one connection at a time, one preallocated buffer.
fn start_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 256 * 1024];
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (content_length, received) = read_request(&mut stream, &mut buf);
            LAST_CONTENT_LENGTH.store(content_length, Ordering::SeqCst);
            LAST_RECEIVED.store(received, Ordering::SeqCst);
            let answer: &[u8] = if content_length == received {
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            } else {
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 8\r\nConnection: close\r\n\r\nmismatch"
            };
            let _ = stream.write_all(answer);
        }
    });
    addr
}

/// Reads one request; returns (Content-Length, body bytes received).
fn read_request(stream: &mut impl Read, buf: &mut [u8]) -> (u64, u64) {
    let mut filled = 0;
    let head_end = loop {
        match stream.read(&mut buf[filled..]) {
            Ok(0) | Err(_) => return (u64::MAX, 0),
            Ok(n) => filled += n,
        }
        if let Some(i) = buf[..filled].windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if filled == buf.len() {
            return (u64::MAX, 0);
        }
    };
    let head = std::str::from_utf8(&buf[..head_end]).unwrap_or("");
    let content_length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<u64>().ok())
        .unwrap_or(u64::MAX);
    let mut received = (filled - head_end) as u64;
    while received < content_length {
        match stream.read(buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => received += n as u64,
        }
    }
    (content_length, received)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Streamed,
    Trap,
    #[cfg(feature = "planted")]
    Planted,
}

impl Route {
    fn name(self) -> &'static str {
        match self {
            Route::Streamed => "streamed",
            Route::Trap => "trap",
            #[cfg(feature = "planted")]
            Route::Planted => "planted-J14",
        }
    }
}

/// One request on `route`; returns the sealed body size.
fn request(
    route: Route,
    shape: Shape,
    history: SyntheticOptions,
    dir: &mut SpoolDir,
    addr: SocketAddr,
) -> Result<u64, SpoolError> {
    let head = RequestHead::default();
    let send = SendOptions {
        target: shape.default_target().to_string(),
        ..SendOptions::default()
    };
    let mut rows = SyntheticRows::new(history);
    let planted = match route {
        Route::Streamed | Route::Trap => Planted::none(),
        #[cfg(feature = "planted")]
        Route::Planted => Planted::only(history::BugId::J14),
    };
    if route == Route::Trap {
        // Hold the whole history, build the whole body, then spool and send it.
        let mut all: Vec<Row> = Vec::new();
        while let Some(row) = rows.next_row() {
            all.push(row?);
        }
        let mut body = Vec::new();
        write_body(
            shape,
            &head,
            &mut VecSource::new(all),
            &mut body,
            &NeverAbort,
            &mut BufferTracker::new(0),
        )?;
        let mut spool = dir.create_spool()?;
        spool.write_all(&body).map_err(|source| SpoolError::Write {
            written_bytes: 0,
            source,
        })?;
        let sealed = spool.seal()?;
        let size = sealed.size_bytes();
        sealed.send(addr, &send, &NeverAbort)?;
        return Ok(size);
    }
    let opts = BuildOptions {
        planted,
        ..BuildOptions::default()
    };
    let built = build(shape, &head, &mut rows, dir, &opts, &NeverAbort)?;
    let size = built.spool.size_bytes();
    let report = built.send(addr, &send, &NeverAbort)?;
    // The length figures are checked by the server (see main); the buffer figure is printed
    // when over the bound, which only the planted route may be.
    if report.peak_buffered_bytes > report.buffered_bound_bytes {
        println!(
            "  {}: the builder held {} bytes, over the streaming bound of {}",
            route.name(),
            report.peak_buffered_bytes,
            report.buffered_bound_bytes
        );
    }
    Ok(size)
}

/// The content bytes that give a body of about `body_bytes` (escapes and JSON add to the rows'
/// content), measured on a 256 KiB history streamed into a sink.
fn content_target(shape: Shape, tool_heavy: bool, body_bytes: u64) -> u64 {
    let sample = SyntheticOptions {
        content_bytes_target: 256 * 1024,
        tool_heavy,
        ..SyntheticOptions::default()
    };
    let mut rows = SyntheticRows::new(sample);
    let mut track = BufferTracker::new(0);
    let body = write_body(
        shape,
        &RequestHead::default(),
        &mut rows,
        std::io::sink(),
        &NeverAbort,
        &mut track,
    )
    .expect("a sink does not fail");
    (body_bytes as f64 * rows.produced_bytes() as f64 / body as f64) as u64
}

/// Peak heap growth over the baseline while `f` runs.
fn peak_growth<T>(f: impl FnOnce() -> T) -> (i64, T) {
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let out = f();
    (PEAK.load(Ordering::SeqCst) as i64 - base as i64, out)
}

struct Figure {
    route: Route,
    shape: Shape,
    tool_heavy: bool,
    body: [u64; 2],
    growth: [i64; 2],
}

impl Figure {
    fn delta(&self) -> i64 {
        self.growth[1] - self.growth[0]
    }
}

/// One request per shape on the streamed route, so lazy statics, the first connection and the
/// first file are not counted in any figure.
fn warm_up(dir: &mut SpoolDir, addr: SocketAddr) {
    for shape in Shape::ALL {
        let small = SyntheticOptions {
            content_bytes_target: 64 * 1024,
            ..SyntheticOptions::default()
        };
        request(Route::Streamed, shape, small, dir, addr).expect("warm-up request");
    }
}

fn print_header() {
    println!(
        "{:<12} {:<9} {:<11} {:>10} {:>12} {:>10} {:>12} {:>13}",
        "route",
        "shape",
        "history",
        "body 1MiB",
        "growth 1MiB",
        "body 8MiB",
        "growth 8MiB",
        "growth 1->8"
    );
}

fn print_figure(fig: &Figure) {
    println!(
        "{:<12} {:<9} {:<11} {:>10} {:>12} {:>10} {:>12} {:>13}",
        fig.route.name(),
        fig.shape.name(),
        if fig.tool_heavy {
            "tool-heavy"
        } else {
            "plain"
        },
        fig.body[0],
        fig.growth[0],
        fig.body[1],
        fig.growth[1],
        fig.delta()
    );
}

/// One request of about `size` body bytes: its sealed size and the peak heap growth while it was
/// built and sent, and whether it succeeded with the server seeing the sealed size as both
/// Content-Length and bytes received.
fn measure_request(
    route: Route,
    shape: Shape,
    tool_heavy: bool,
    size: u64,
    dir: &mut SpoolDir,
    addr: SocketAddr,
) -> (u64, i64, bool) {
    let history = SyntheticOptions {
        content_bytes_target: content_target(shape, tool_heavy, size),
        tool_heavy,
        seed: size ^ u64::from(tool_heavy),
        ..SyntheticOptions::default()
    };
    let (growth, result) = peak_growth(|| request(route, shape, history, dir, addr));
    let mut ok = true;
    let body = match result {
        Ok(body) => body,
        Err(e) => {
            println!("  {} {:?} failed: {e}", route.name(), shape);
            ok = false;
            0
        }
    };
    let (cl, got) = (
        LAST_CONTENT_LENGTH.load(Ordering::SeqCst),
        LAST_RECEIVED.load(Ordering::SeqCst),
    );
    if cl != body || got != body {
        println!("  LENGTH MISMATCH: sealed {body}, Content-Length {cl}, received {got}");
        ok = false;
    }
    (body, growth, ok)
}

/// Every route, shape and kind of history at both sizes, each printed as measured; the flag says
/// whether every request succeeded with matching lengths.
fn measure_all(routes: &[Route], dir: &mut SpoolDir, addr: SocketAddr) -> (Vec<Figure>, bool) {
    let mut figures = Vec::new();
    let mut all_ok = true;
    for &route in routes {
        for shape in Shape::ALL {
            for tool_heavy in [false, true] {
                let mut fig = Figure {
                    route,
                    shape,
                    tool_heavy,
                    body: [0; 2],
                    growth: [0; 2],
                };
                for (i, &size) in SIZES.iter().enumerate() {
                    let (body, growth, ok) =
                        measure_request(route, shape, tool_heavy, size, dir, addr);
                    all_ok &= ok;
                    fig.body[i] = body;
                    fig.growth[i] = growth;
                }
                print_figure(&fig);
                figures.push(fig);
            }
        }
    }
    (figures, all_ok)
}

/// Prints the goals against the figures and the last line; returns whether a goal was missed.
fn judge(figures: &[Figure], lengths_ok: bool) -> bool {
    let of = |route: Route| {
        figures
            .iter()
            .filter(move |f| f.route == route)
            .map(Figure::delta)
    };
    let streamed = of(Route::Streamed).max().expect("streamed figures");
    let trap = of(Route::Trap).min().expect("trap figures");
    println!("every request: Content-Length == sealed size == bytes received: {lengths_ok}");
    println!(
        "streamed worst growth {streamed} B vs goal {GOAL_BYTES} B: {}",
        if streamed < GOAL_BYTES {
            "met"
        } else {
            "MISSED"
        }
    );
    println!(
        "trap least growth {trap} B = {:.1}x the goal (needs {TRAP_FACTOR_MIN}x): {}",
        trap as f64 / GOAL_BYTES as f64,
        if trap >= TRAP_FACTOR_MIN * GOAL_BYTES {
            "met"
        } else {
            "MISSED"
        }
    );
    #[cfg_attr(not(feature = "planted"), allow(unused_mut))]
    let mut missed = streamed >= GOAL_BYTES || trap < TRAP_FACTOR_MIN * GOAL_BYTES;
    #[cfg(feature = "planted")]
    {
        let planted = of(Route::Planted).min().expect("planted figures");
        println!(
            "planted J14 least growth {planted} B: {}",
            if planted >= GOAL_BYTES {
                "detected (over the goal)"
            } else {
                "NOT detected"
            }
        );
        missed |= planted < GOAL_BYTES;
    }
    println!("heap growth 1MiB->8MiB: streamed={streamed} bytes trap={trap} bytes");
    missed
}

fn main() {
    let addr = start_server();
    let scratch = std::env::temp_dir().join(format!("histsim-spool-memory-{}", std::process::id()));
    let mut dir = SpoolDir::open(&scratch).expect("scratch dir");
    #[cfg_attr(not(feature = "planted"), allow(unused_mut))]
    let mut routes = vec![Route::Streamed, Route::Trap];
    #[cfg(feature = "planted")]
    routes.push(Route::Planted);

    warm_up(&mut dir, addr);
    print_header();
    let (figures, lengths_ok) = measure_all(&routes, &mut dir, addr);
    drop(dir);
    let _ = std::fs::remove_dir(&scratch);

    let missed = judge(&figures, lengths_ok);
    if missed || !lengths_ok {
        std::process::exit(1);
    }
}
