//! The answer lines of a child's stdout, each waited for with a deadline: poll(2) on the pipe
//! and a read, in the thread that asked. (A reader thread handing lines over a channel cost two
//! thread wake-ups an answer instead of one.)
//!
//! The deadline is wall time by necessity (the child is a real process); it decides only whether
//! a seed fails as a broken world, never what the seed shows.

use rustix::buffer::spare_capacity;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// What the next answer line turned out to be.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line {
    /// A line, its newline taken off (or the last bytes before the end, with none).
    Text(Vec<u8>),
    /// A line longer than the bound.
    TooLong,
    /// The child closed its stdout (it exited) before a line came.
    Closed,
    /// No whole line before the deadline.
    Timeout,
}

/// Bytes asked of the pipe at a time (a pipe holds 64 KiB by default).
const READ_BYTES: usize = 64 * 1024;

/// Reads answer lines of at most `bytes_max` bytes each from `source`.
pub(super) struct AnswerLines<R> {
    source: R,
    bytes_max: usize,
    /// Bytes read and not yet handed out: the start of the next line.
    pending: Vec<u8>,
    /// How many bytes of `pending` are known to hold no newline.
    scanned: usize,
    /// The source has ended.
    ended: bool,
}

impl<R: AsFd> AnswerLines<R> {
    pub(super) fn new(source: R, bytes_max: usize) -> Self {
        AnswerLines {
            source,
            bytes_max,
            pending: Vec::new(),
            scanned: 0,
            ended: false,
        }
    }

    /// The next line, waiting at most `timeout` for it to be whole.
    pub(super) fn next_line(&mut self, timeout: Duration) -> Line {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(at) = memchr(&self.pending[self.scanned..]).map(|i| self.scanned + i) {
                return self.take(at, 1);
            }
            self.scanned = self.pending.len();
            if self.pending.len() > self.bytes_max {
                return Line::TooLong;
            }
            if self.ended {
                return match self.pending.len() {
                    0 => Line::Closed,
                    // A last line without its newline, then the end.
                    n => self.take(n, 0),
                };
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !self.readable_within(left) {
                return Line::Timeout;
            }
            self.read_some();
        }
    }

    /// Takes back the buffer of a line handed out, done with: a long line's buffer becomes the
    /// next lines' (when nothing is pending), so the next long answer needs no new one grown.
    pub(super) fn give_back(&mut self, mut line: Vec<u8>) {
        if self.pending.is_empty() && line.capacity() > self.pending.capacity() {
            line.clear();
            self.pending = line;
        }
    }

    /// Hands out the line of the first `len` pending bytes and drops `skip` bytes after it.
    fn take(&mut self, len: usize, skip: usize) -> Line {
        self.scanned = 0;
        if len > self.bytes_max {
            return Line::TooLong;
        }
        if len + skip == self.pending.len() {
            // An answer alone in the buffer (the usual case: a child writes one answer, then
            // waits): handed out without a copy; `give_back` returns the buffer for the next.
            let mut line = std::mem::take(&mut self.pending);
            line.truncate(len);
            return Line::Text(line);
        }
        let line = self.pending[..len].to_vec();
        self.pending.drain(..len + skip);
        Line::Text(line)
    }

    /// Whether the source has bytes (or its end) to read within `left`.
    fn readable_within(&self, left: Duration) -> bool {
        let timeout = Timespec {
            tv_sec: left.as_secs().try_into().unwrap_or(i64::MAX),
            tv_nsec: left.subsec_nanos().into(),
        };
        let mut fds = [PollFd::new(&self.source, PollFlags::IN)];
        loop {
            match poll(&mut fds, Some(&timeout)) {
                Ok(n) => return n > 0,
                // A signal cut the wait short: wait again (at most `left` once more).
                Err(rustix::io::Errno::INTR) => continue,
                // The pipe cannot be polled: let the read below say what it is.
                Err(_) => return true,
            }
        }
    }

    /// One read of what the source holds, into the buffer's spare room (not zeroed first);
    /// its end (or an error) ends the source.
    fn read_some(&mut self) {
        self.pending.reserve(READ_BYTES);
        let got = loop {
            match rustix::io::read(&self.source, spare_capacity(&mut self.pending)) {
                Err(rustix::io::Errno::INTR) => continue,
                other => break other,
            }
        };
        if !matches!(got, Ok(n) if n > 0) {
            self.ended = true;
        }
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    fn lines_of(written: &[u8], bytes_max: usize) -> Vec<Line> {
        let (mut tx, rx) = UnixStream::pair().expect("a socket pair");
        tx.write_all(written).expect("written");
        drop(tx);
        let mut lines = AnswerLines::new(rx, bytes_max);
        let mut out = Vec::new();
        loop {
            let line = lines.next_line(Duration::from_secs(5));
            let last = !matches!(line, Line::Text(_));
            out.push(line);
            if last {
                return out;
            }
        }
    }

    fn text(s: &str) -> Line {
        Line::Text(s.as_bytes().to_vec())
    }

    #[test]
    fn lines_come_out_one_by_one_and_a_last_unended_line_before_the_end() {
        assert_eq!(
            lines_of(b"a\n\nbc\nd", 10),
            vec![text("a"), text(""), text("bc"), text("d"), Line::Closed]
        );
    }

    #[test]
    fn a_line_over_the_bound_is_too_long_with_or_without_its_newline() {
        assert_eq!(lines_of(b"12345\n", 5), vec![text("12345"), Line::Closed]);
        assert_eq!(lines_of(b"123456\n", 5), vec![Line::TooLong]);
        assert_eq!(lines_of(b"123456", 5), vec![Line::TooLong]);
    }

    #[test]
    fn a_buffer_given_back_holds_the_next_lines() {
        let (mut tx, rx) = UnixStream::pair().expect("a socket pair");
        tx.write_all(b"first\n").expect("written");
        let mut lines = AnswerLines::new(rx, 100);
        assert_eq!(lines.next_line(Duration::from_secs(5)), text("first"));
        let mut kept = Vec::with_capacity(4 * READ_BYTES);
        kept.extend_from_slice(b"stale bytes");
        lines.give_back(kept);
        assert_eq!(lines.pending.capacity(), 4 * READ_BYTES);
        tx.write_all(b"second\nthi").expect("written");
        assert_eq!(lines.next_line(Duration::from_secs(5)), text("second"));
        // Something pending: a buffer given back now is dropped, the pending bytes kept.
        lines.give_back(Vec::with_capacity(8 * READ_BYTES));
        tx.write_all(b"rd\n").expect("written");
        assert_eq!(lines.next_line(Duration::from_secs(5)), text("third"));
    }

    #[test]
    fn no_line_within_the_timeout_is_a_timeout() {
        let (mut tx, rx) = UnixStream::pair().expect("a socket pair");
        tx.write_all(b"half a li").expect("written");
        let mut lines = AnswerLines::new(rx, 100);
        assert_eq!(lines.next_line(Duration::from_millis(50)), Line::Timeout);
        tx.write_all(b"ne\n").expect("written");
        assert_eq!(lines.next_line(Duration::from_secs(5)), text("half a line"));
    }
}
