//! Building a request spool: rows in, a sealed body file out, and the figures a checker needs.
//!
//! [`build`] creates a spool in the request's [`SpoolDir`], streams the body of the chosen shape
//! into it one row at a time, seals it and returns it with its [`BuildStats`]. [`write_body`] is
//! the same streaming pass into any writer.

use std::io::Write;
use std::net::SocketAddr;

use crate::{BugId, Planted};

use super::file::{SealedSpool, SpoolDir};
use super::json::JsonOut;
use super::reader::RowReader;
use super::report::{BufferTracker, BuildStats, SpoolReport};
use super::{anthropic, openai, AbortSignal, RequestHead, RowSource, SendOptions, Shape};
use super::{SendReport, SpoolError};

/// How a body is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    /// The builder's output buffer: the only part of the body it holds in memory. Larger means
    /// fewer, bigger writes to the spool file.
    pub write_buffer_bytes: usize,
    /// Legacy paths (J14: the whole body built in memory).
    pub planted: Planted,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            write_buffer_bytes: 64 * 1024,
            planted: Planted::none(),
        }
    }
}

/// A built request: the sealed spool and how it was built.
#[derive(Debug)]
pub struct Built {
    pub spool: SealedSpool,
    pub stats: BuildStats,
}

impl Built {
    /// Sends the spool to `addr` and reports build and send figures together.
    pub fn send(
        self,
        addr: SocketAddr,
        opts: &SendOptions,
        abort: &dyn AbortSignal,
    ) -> Result<SpoolReport, SpoolError> {
        let sealed_bytes = self.spool.size_bytes();
        let sent = self.spool.send(addr, opts, abort)?;
        Ok(SpoolReport::new(sealed_bytes, &self.stats, &sent))
    }

    /// Sends the spool over `stream` (see [`SealedSpool::send_over`]).
    pub fn send_over<T: std::io::Read + Write>(
        self,
        stream: &mut T,
        opts: &SendOptions,
        abort: &dyn AbortSignal,
    ) -> Result<(SpoolReport, SendReport), SpoolError> {
        let sealed_bytes = self.spool.size_bytes();
        let sent = self.spool.send_over(stream, opts, abort)?;
        Ok((SpoolReport::new(sealed_bytes, &self.stats, &sent), sent))
    }
}

/// Builds the body of `head` and `source`'s rows in `shape` into a new sealed spool in `dir`.
/// On any error the spool is removed.
pub fn build<S: RowSource + ?Sized>(
    shape: Shape,
    head: &RequestHead,
    source: &mut S,
    dir: &mut SpoolDir,
    opts: &BuildOptions,
    abort: &dyn AbortSignal,
) -> Result<Built, SpoolError> {
    let mut spool = dir.create_spool()?;
    let mut track = BufferTracker::new(opts.write_buffer_bytes as u64);
    if opts.planted.is(BugId::J14) {
        // planted J14: the legacy send collected every row and built the whole body in memory.
        let mut rows = Vec::new();
        while let Some(row) = source.next_row() {
            let row = row?;
            track.row_read(&row);
            track.hold(row.content_bytes() as u64);
            rows.push(row);
        }
        let mut body = Vec::new();
        // The same writers into memory: the bytes are right, only what is held is wrong. Their
        // own tracker is thrown away; `track` counts the whole history and the whole body.
        let mut scratch = BufferTracker::new(opts.write_buffer_bytes as u64);
        let mut all = super::VecSource::new(rows);
        write_body(shape, head, &mut all, &mut body, abort, &mut scratch)?;
        track.hold(body.len() as u64);
        spool.write_all(&body).map_err(|source| SpoolError::Write {
            written_bytes: 0,
            source,
        })?;
    } else {
        write_body(shape, head, source, &mut spool, abort, &mut track)?;
    }
    let stats = track.finish(spool.written_bytes());
    assert!(
        opts.planted.is(BugId::J14) || stats.peak_buffered_bytes <= stats.buffered_bound_bytes,
        "a streaming builder held more than its bound: {stats:?}"
    );
    let spool = spool.seal()?;
    debug_assert_eq!(spool.size_bytes(), stats.body_bytes);
    Ok(Built { spool, stats })
}

/// Streams the body into `out` one row at a time; returns the bytes written. The output buffer
/// is `track`'s write buffer ([`BufferTracker::new`]), so the figures count it.
pub fn write_body<S: RowSource + ?Sized, W: Write>(
    shape: Shape,
    head: &RequestHead,
    source: &mut S,
    out: W,
    abort: &dyn AbortSignal,
    track: &mut BufferTracker,
) -> Result<u64, SpoolError> {
    let mut out = JsonOut::new(out, track.write_buffer_bytes() as usize);
    let mut rows = RowReader::new(source, abort, track);
    match shape {
        Shape::OpenAiChat => openai::write_body(head, &mut rows, &mut out)?,
        Shape::AnthropicMessages => anthropic::write_body(head, &mut rows, &mut out)?,
    }
    out.flush()?;
    Ok(out.written_bytes())
}

/// The body of `rows` streamed into memory, through an output buffer of 16 bytes (so tokens
/// cross its boundary all the time): what a build's spool must hold.
#[cfg(any(test, feature = "testing"))]
pub fn streamed_in_memory(
    shape: Shape,
    head: &RequestHead,
    rows: Vec<crate::journal::Row>,
) -> Result<Vec<u8>, SpoolError> {
    let mut out = Vec::new();
    let mut track = BufferTracker::new(16);
    let mut source = super::VecSource::new(rows);
    write_body(
        shape,
        head,
        &mut source,
        &mut out,
        &super::NeverAbort,
        &mut track,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Origin, Row, Speaker};
    use crate::spool::{NeverAbort, VecSource};

    fn rows(n: usize) -> Vec<Row> {
        (0..n)
            .map(|i| {
                let speaker = if i % 2 == 0 {
                    Speaker::Human
                } else {
                    Speaker::Ai
                };
                Row::text(speaker, Origin::Main, format!("row {i} \"x\"\n"))
            })
            .collect()
    }

    /// The streaming pass into memory, the reference the file build must equal here (the
    /// oracle comparison lives in `sim`, which may import the independent model).
    fn in_memory(shape: Shape, head: &RequestHead, rows: Vec<Row>) -> Vec<u8> {
        streamed_in_memory(shape, head, rows).expect("valid rows")
    }

    #[test]
    fn the_spool_holds_the_streamed_bytes_and_the_builder_stays_in_bound() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut dir = SpoolDir::open(tmp.path()).expect("open");
        let head = RequestHead::default();
        for shape in Shape::ALL {
            let want = in_memory(shape, &head, rows(40));
            let built = build(
                shape,
                &head,
                &mut VecSource::new(rows(40)),
                &mut dir,
                &BuildOptions::default(),
                &NeverAbort,
            )
            .expect("build");
            let got = std::fs::read(built.spool.path()).expect("read spool");
            assert_eq!(got, want, "{shape:?}");
            assert_eq!(built.stats.body_bytes, want.len() as u64);
            assert_eq!(built.stats.rows_read, 40);
            assert!(built.stats.peak_buffered_bytes <= built.stats.buffered_bound_bytes);
        }
    }

    #[test]
    fn an_invalid_row_fails_the_build_and_leaves_no_spool() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut dir = SpoolDir::open(tmp.path()).expect("open");
        let mut bad = rows(3);
        bad[2].speaker = Speaker::Tool;
        let err = build(
            Shape::OpenAiChat,
            &RequestHead::default(),
            &mut VecSource::new(bad),
            &mut dir,
            &BuildOptions::default(),
            &NeverAbort,
        )
        .expect_err("a tool row cannot hold text");
        assert!(
            matches!(err, SpoolError::Shape { row_index: 2, .. }),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(tmp.path()).expect("dir").count(), 0);
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_j14_builds_the_same_bytes_but_holds_the_whole_history() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut dir = SpoolDir::open(tmp.path()).expect("open");
        let opts = BuildOptions {
            write_buffer_bytes: 1024,
            planted: Planted::only(BugId::J14),
        };
        let head = RequestHead::default();
        let built = build(
            Shape::AnthropicMessages,
            &head,
            &mut VecSource::new(rows(200)),
            &mut dir,
            &opts,
            &NeverAbort,
        )
        .expect("build");
        let want = in_memory(Shape::AnthropicMessages, &head, rows(200));
        assert_eq!(std::fs::read(built.spool.path()).expect("read"), want);
        assert!(built.stats.peak_buffered_bytes > built.stats.buffered_bound_bytes);
    }
}
