//! Sends over a real HTTP connection (J14): Content-Length == sealed size == bytes received ==
//! the bytes the builder writes; no spool left after success, abort or failure; a continuation is
//! a second spool. (That those bytes equal the independent oracle is checked in `sim`.)

use std::cell::Cell;
use std::net::TcpListener;
use std::path::Path;

use history::journal::{Block, Origin, Row, Speaker};
use history::spool::{
    build, write_body, AbortSignal, BufferTracker, BuildOptions, Built, NeverAbort, RequestHead,
    SendOptions, Shape, SpoolDir, SpoolError, SpoolReport, SyntheticOptions, SyntheticRows,
    VecSource,
};

use crate::server::{Behaviour, TestServer};

fn spool_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("request dir is readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn send_opts(shape: Shape, server: &TestServer) -> SendOptions {
    SendOptions {
        target: shape.default_target().to_string(),
        host: server.addr.to_string(),
        headers: vec![("x-api-key".into(), "test".into())],
        chunk_bytes: 4096,
        io_timeout_ms: Some(60_000),
        ..SendOptions::default()
    }
}

fn synthetic(content_bytes_target: u64, tool_heavy: bool) -> SyntheticRows {
    SyntheticRows::new(SyntheticOptions {
        content_bytes_target,
        tool_heavy,
        seed: 11,
        ..SyntheticOptions::default()
    })
}

fn collect(mut source: SyntheticRows) -> Vec<Row> {
    let mut rows = Vec::new();
    while let Some(row) = history::spool::RowSource::next_row(&mut source) {
        rows.push(row.expect("the generator does not fail"));
    }
    rows
}

/// The body the streaming builder writes for `rows`, in memory: what the server must receive.
fn body(shape: Shape, rows: &[Row]) -> Vec<u8> {
    let mut out = Vec::new();
    write_body(
        shape,
        &RequestHead::default(),
        &mut VecSource::new(rows.to_vec()),
        &mut out,
        &NeverAbort,
        &mut BufferTracker::new(4096),
    )
    .expect("valid rows");
    out
}

/// The J14 figures of a clean request agree: Content-Length, sealed size and bytes sent, and the
/// builder within its streaming bound.
fn assert_consistent(report: &SpoolReport) {
    assert_eq!(report.content_length, report.sealed_bytes, "{report:?}");
    assert_eq!(report.sent_bytes, report.sealed_bytes, "{report:?}");
    assert!(
        report.peak_buffered_bytes <= report.buffered_bound_bytes,
        "{report:?}"
    );
}

fn build_rows(shape: Shape, rows: Vec<Row>, dir: &mut SpoolDir) -> Built {
    try_build_rows(shape, rows, dir).expect("build")
}

/// Builds a tool-heavy request of about 100 KiB into a spool of `dir`, polling `abort`.
fn build_abortable(
    shape: Shape,
    dir: &mut SpoolDir,
    abort: &dyn AbortSignal,
) -> Result<Built, SpoolError> {
    let head = RequestHead::default();
    let mut rows = synthetic(100 * 1024, true);
    build(
        shape,
        &head,
        &mut rows,
        dir,
        &BuildOptions::default(),
        abort,
    )
}

/// An abort signal that lets `polls` polls pass and fires on every later one.
fn abort_after(polls: u32) -> impl Fn() -> bool {
    let seen = Cell::new(0u32);
    move || {
        seen.set(seen.get() + 1);
        seen.get() > polls
    }
}

/// Builds `rows` into a spool of `dir` and sends it to `server`.
fn build_and_send(
    shape: Shape,
    rows: Vec<Row>,
    dir: &mut SpoolDir,
    server: &TestServer,
) -> Result<SpoolReport, SpoolError> {
    build_rows(shape, rows, dir).send(server.addr, &send_opts(shape, server), &NeverAbort)
}

fn try_build_rows(shape: Shape, rows: Vec<Row>, dir: &mut SpoolDir) -> Result<Built, SpoolError> {
    build(
        shape,
        &RequestHead::default(),
        &mut VecSource::new(rows),
        dir,
        &BuildOptions::default(),
        &NeverAbort,
    )
}

#[test]
fn content_length_equals_the_sealed_size_and_the_bytes_received() {
    let server = TestServer::start(Behaviour::Check);
    let (_tmp, mut dir) = crate::request_dir();
    for shape in Shape::ALL {
        for tool_heavy in [false, true] {
            let rows = collect(synthetic(300 * 1024, tool_heavy));
            let want = body(shape, &rows);
            let built = build_rows(shape, rows, &mut dir);
            let sealed = built.spool.size_bytes();
            let report = built
                .send(server.addr, &send_opts(shape, &server), &NeverAbort)
                .expect("send");
            let got = server.next_request();
            assert_eq!(got.target, shape.default_target());
            assert!(got.complete);
            assert_eq!(got.content_length, Some(sealed));
            assert_eq!(got.body.len() as u64, sealed);
            assert!(got.body == want, "{shape:?} tool_heavy={tool_heavy}");
            assert_eq!(report.content_length, sealed);
            assert_eq!(report.sent_bytes, sealed);
            assert_consistent(&report);
            assert_eq!(spool_files(dir.path()), Vec::<String>::new());
        }
    }
    dir.close().expect("the request dir is empty and removable");
}

#[test]
fn a_continuation_after_tool_calls_is_a_second_spool() {
    let server = TestServer::start(Behaviour::Check);
    let (_tmp, mut dir) = crate::request_dir();
    let mut rows = vec![
        Row::text(Speaker::Human, Origin::Main, "list the files"),
        Row {
            speaker: Speaker::Ai,
            origin: Origin::Main,
            blocks: vec![Block::ToolCall {
                id: "raw-1".into(),
                name: "list_dir".into(),
                arguments: "{\"path\":\".\"}".into(),
            }],
        },
    ];
    for shape in Shape::ALL {
        let first = build_rows(shape, rows.clone(), &mut dir);
        assert!(first.spool.path().ends_with("spool-000000.json") || shape != Shape::OpenAiChat);
        let first_path = first.spool.path().to_path_buf();
        first
            .send(server.addr, &send_opts(shape, &server), &NeverAbort)
            .expect("first send");
        let mut continued = rows.clone();
        continued.push(Row::tool_result(
            Origin::Main,
            "raw-1",
            "list_dir",
            "Cargo.toml\nsrc/",
        ));
        let second = build_rows(shape, continued.clone(), &mut dir);
        assert_ne!(
            second.spool.path(),
            first_path,
            "a continuation is a new spool"
        );
        second
            .send(server.addr, &send_opts(shape, &server), &NeverAbort)
            .expect("continuation send");
        let (a, b) = (server.next_request(), server.next_request());
        assert!(a.body == body(shape, &rows));
        assert!(b.body == body(shape, &continued));
        assert!(b.body.len() > a.body.len());
        assert_eq!(spool_files(dir.path()), Vec::<String>::new());
    }
    rows.clear();
    dir.close().expect("empty");
}

#[test]
fn an_abort_during_the_send_leaves_no_spool_and_a_short_body() {
    let server = TestServer::start(Behaviour::Check);
    let (_tmp, mut dir) = crate::request_dir();
    let built = build_abortable(Shape::OpenAiChat, &mut dir, &NeverAbort).expect("build");
    let sealed = built.spool.size_bytes();
    // Fires on the 6th chunk: 5 chunks of 4096 bytes went out.
    let abort = abort_after(5);
    let err = built
        .send(server.addr, &send_opts(Shape::OpenAiChat, &server), &abort)
        .expect_err("aborted");
    assert!(
        matches!(
            err,
            SpoolError::Aborted {
                phase: "send",
                at_bytes: 20480
            }
        ),
        "{err}"
    );
    assert_eq!(spool_files(dir.path()), Vec::<String>::new());
    let got = server.next_request();
    assert!(!got.complete);
    assert_eq!(got.content_length, Some(sealed));
    assert!((got.body.len() as u64) < sealed);
}

#[test]
fn an_abort_during_the_build_leaves_no_spool_and_sends_nothing() {
    let (_tmp, mut dir) = crate::request_dir();
    for shape in Shape::ALL {
        let abort = abort_after(10);
        let err = build_abortable(shape, &mut dir, &abort).expect_err("aborted");
        assert!(
            matches!(err, SpoolError::Aborted { phase: "build", .. }),
            "{err}"
        );
        assert_eq!(spool_files(dir.path()), Vec::<String>::new());
    }
}

#[test]
fn failed_calls_leave_no_spool() {
    let (_tmp, mut dir) = crate::request_dir();
    let rows = collect(synthetic(64 * 1024, true));

    // The server answers 500.
    let failing = TestServer::start(Behaviour::Fail(500));
    let err = build_and_send(Shape::AnthropicMessages, rows.clone(), &mut dir, &failing)
        .expect_err("500");
    assert!(
        matches!(err, SpoolError::Status { status: 500, .. }),
        "{err}"
    );
    assert!(failing.next_request().complete);
    assert_eq!(spool_files(dir.path()), Vec::<String>::new());

    // The server hangs up without answering.
    let hanging = TestServer::start(Behaviour::HangUp);
    let err =
        build_and_send(Shape::OpenAiChat, rows.clone(), &mut dir, &hanging).expect_err("hang-up");
    assert!(
        matches!(err, SpoolError::Response { .. } | SpoolError::Net { .. }),
        "{err}"
    );
    assert_eq!(spool_files(dir.path()), Vec::<String>::new());

    // Nobody listens.
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let err = build_rows(Shape::OpenAiChat, rows.clone(), &mut dir)
        .send(closed, &SendOptions::default(), &NeverAbort)
        .expect_err("refused");
    assert!(
        matches!(err, SpoolError::Net { op: "connect", .. }),
        "{err}"
    );
    assert_eq!(spool_files(dir.path()), Vec::<String>::new());

    // The build itself fails on a row its speaker may not send.
    let mut bad = rows;
    bad.push(Row::text(Speaker::Tool, Origin::Main, "text in a tool row"));
    let err = try_build_rows(Shape::OpenAiChat, bad, &mut dir).expect_err("invalid row");
    assert!(matches!(err, SpoolError::Shape { .. }), "{err}");
    assert_eq!(spool_files(dir.path()), Vec::<String>::new());
    dir.close().expect("empty");
}

#[test]
fn a_send_over_any_stream_reports_the_same_figures() {
    // The simulator sends over its own connections: send_over on an in-memory duplex.
    struct Duplex {
        request: Vec<u8>,
        response: std::io::Cursor<Vec<u8>>,
    }
    impl std::io::Write for Duplex {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.request.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl std::io::Read for Duplex {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.response.read(buf)
        }
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut dir = SpoolDir::open(tmp.path()).expect("open");
    let rows = collect(synthetic(32 * 1024, true));
    let built = build_rows(Shape::OpenAiChat, rows.clone(), &mut dir);
    let sealed = built.spool.size_bytes();
    let mut stream = Duplex {
        request: Vec::new(),
        response: std::io::Cursor::new(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec()),
    };
    let (report, sent) = built
        .send_over(&mut stream, &SendOptions::default(), &NeverAbort)
        .expect("send");
    assert_consistent(&report);
    assert_eq!(sent.status, 200);
    let text = String::from_utf8_lossy(&stream.request).into_owned();
    let (head, sent_body) = text.split_once("\r\n\r\n").expect("a head and a body");
    assert!(
        head.contains(&format!("\r\nContent-Length: {sealed}\r\n")),
        "{head}"
    );
    assert_eq!(sent_body.as_bytes(), &body(Shape::OpenAiChat, &rows)[..]);
    assert_eq!(spool_files(tmp.path()), Vec::<String>::new());
}
