//! Reading frames from a byte range of a journal file, and telling a torn tail from corruption.
//!
//! At each offset the scanner either decodes a record, or finds the end, or finds bad bytes. Bad
//! bytes are a torn tail only when they can be what is left of the last frame when the process
//! died: a short header, a checked header whose payload runs past the end, a last frame whose
//! payload checksum fails, zero fill, or a bad header no checked header follows (a file system
//! may persist the sectors of an unsynced write in any order, so a lost header sector can sit
//! before payload sectors that landed; the writer keeps at most one record unsynced, J19).
//! Anything else is corruption, reported with its offset (J10). Reads go through a window so a
//! scan touches each byte once (a bad header excepted: the tail after it is read again to look
//! for a header), and the scanner counts the bytes it read.

use std::io;

use super::error::JournalError;
use super::fold::Fold;
use super::frame::{decode_payload, parse_header, DecodeError, FrameProblem, HEADER_BYTES};
use super::record::Record;
use super::storage::Storage;
use crate::{BugId, Planted};

/// Bytes at the end of a file that a crash left half-written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    pub offset: u64,
    pub bytes: u64,
    pub problem: FrameProblem,
}

/// A decoded record and where it sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScannedRecord {
    pub offset: u64,
    pub frame_bytes: u64,
    pub record: Record,
}

/// What a scan found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanOutcome {
    /// The offset after the last good record.
    pub valid_end: u64,
    pub torn_tail: Option<TornTail>,
    pub records: u64,
    pub bytes_read: u64,
    /// Bad records stepped over: only ever non-empty under the planted J10 bug.
    pub skipped: Vec<DecodeError>,
}

/// How a scan reads.
#[derive(Clone, Copy, Debug)]
pub struct ScanOptions {
    /// Bytes fetched per storage read (a frame larger than this is fetched whole).
    pub window_bytes: usize,
    pub planted: Planted,
}

/// Scans `[from, to)` of `name`, folding each record into `fold` (a record the fold refuses stops
/// the scan as [`JournalError::Invalid`]), then handing it to `observe`: how a reader and a
/// writer bring their fold up to the file.
pub fn scan_into_fold(
    storage: &dyn Storage,
    name: &str,
    from: u64,
    to: u64,
    opts: ScanOptions,
    fold: &mut Fold,
    observe: &mut dyn FnMut(&ScannedRecord) -> Result<(), JournalError>,
) -> Result<ScanOutcome, JournalError> {
    scan(storage, name, from, to, opts, &mut |rec| {
        fold.apply(&rec.record)
            .map_err(|problem| JournalError::Invalid {
                file: name.to_string(),
                offset: rec.offset,
                seq: rec.record.seq,
                problem,
            })?;
        observe(&rec)
    })
}

/// Scans `[from, to)` of `name`, handing each record to `apply` (whose error stops the scan).
pub fn scan(
    storage: &dyn Storage,
    name: &str,
    from: u64,
    to: u64,
    opts: ScanOptions,
    apply: &mut dyn FnMut(ScannedRecord) -> Result<(), JournalError>,
) -> Result<ScanOutcome, JournalError> {
    assert!(from <= to, "scan range {from}..{to} is reversed");
    assert!(opts.window_bytes >= HEADER_BYTES, "window below a header");
    let mut w = Window {
        storage,
        name,
        to,
        start: from,
        buf: Vec::new(),
        window_bytes: opts.window_bytes,
        bytes_read: 0,
        planted: opts.planted,
    };
    let mut out = ScanOutcome {
        valid_end: from,
        ..ScanOutcome::default()
    };
    let mut offset = from;
    while offset < to {
        match next_frame(&mut w, offset)? {
            Next::Record(rec) => {
                offset += rec.frame_bytes;
                out.valid_end = offset;
                out.records += 1;
                apply(rec)?;
            }
            Next::Torn(problem) => {
                out.torn_tail = Some(TornTail {
                    offset,
                    bytes: to - offset,
                    problem,
                });
                break;
            }
            Next::Bad { problem, skip } => {
                let err = DecodeError { offset, problem };
                if opts.planted.is(BugId::J10) {
                    // planted J10: a bad record was skipped (by its claimed length, or one byte
                    // when even the header was bad), counted and forgotten.
                    out.skipped.push(err);
                    offset += skip;
                    continue;
                }
                return Err(JournalError::Corrupt {
                    file: name.to_string(),
                    source: err,
                });
            }
        }
    }
    out.bytes_read = w.bytes_read;
    // Post-condition: the good records end inside the range, a torn tail runs from there (but
    // past skipped records, planted J10) to its end.
    debug_assert!(from <= out.valid_end && out.valid_end <= to);
    debug_assert!(out
        .torn_tail
        .as_ref()
        .is_none_or(|t| t.offset + t.bytes == to
            && (t.offset == out.valid_end || opts.planted.is(BugId::J10))));
    Ok(out)
}

enum Next {
    Record(ScannedRecord),
    Torn(FrameProblem),
    /// Corruption; `skip` is what the legacy reader stepped over.
    Bad {
        problem: FrameProblem,
        skip: u64,
    },
}

fn next_frame(w: &mut Window<'_>, offset: u64) -> Result<Next, JournalError> {
    let remaining = w.to - offset;
    if remaining < HEADER_BYTES as u64 {
        return Ok(Next::Torn(FrameProblem::ShortHeader {
            available_bytes: remaining,
        }));
    }
    let mut h = [0u8; HEADER_BYTES];
    h.copy_from_slice(w.get(offset, HEADER_BYTES)?);
    let header = match parse_header(&h) {
        Ok(header) => header,
        Err(problem) => {
            if w.zero_from(offset)? {
                return Ok(Next::Torn(FrameProblem::ZeroFill {
                    zero_bytes: remaining,
                }));
            }
            // No header starts after the bad one: the bytes are what a crash left of the last
            // frame (a file system may persist the sectors of an unsynced write in any order, so
            // a lost header sector can sit before payload sectors that landed). A header after
            // them is a later write, so these bytes were durable: corruption.
            if !w.header_after(offset)? {
                return Ok(Next::Torn(problem));
            }
            return Ok(Next::Bad { problem, skip: 1 });
        }
    };
    let frame_bytes = header.frame_bytes();
    if frame_bytes > remaining {
        return Ok(Next::Torn(FrameProblem::ShortPayload {
            payload_bytes: header.payload_bytes,
            available_bytes: remaining - HEADER_BYTES as u64,
        }));
    }
    let planted_j20 = w.planted.is(BugId::J20);
    let payload = w.get(offset + HEADER_BYTES as u64, header.payload_bytes as usize)?;
    match decode_payload(header, payload) {
        Err(FrameProblem::PayloadChecksum { .. })
            if planted_j20 && serde_json::from_slice::<Record>(payload).is_ok() =>
        {
            // planted J20: the checksum was only consulted when the payload did not parse, so a
            // flipped bit inside a row's text read back as a different row.
            let record = serde_json::from_slice(payload).expect("parsed just above");
            Ok(Next::Record(ScannedRecord {
                offset,
                frame_bytes,
                record,
            }))
        }
        Ok(record) => Ok(Next::Record(ScannedRecord {
            offset,
            frame_bytes,
            record,
        })),
        Err(problem @ FrameProblem::PayloadChecksum { .. }) if frame_bytes == remaining => {
            Ok(Next::Torn(problem))
        }
        Err(problem) => Ok(Next::Bad {
            problem,
            skip: frame_bytes,
        }),
    }
}

/// A read-ahead window over `[.., to)` of one file.
struct Window<'a> {
    storage: &'a dyn Storage,
    name: &'a str,
    to: u64,
    start: u64,
    buf: Vec<u8>,
    window_bytes: usize,
    bytes_read: u64,
    planted: Planted,
}

impl Window<'_> {
    /// Bytes `[offset, offset + n)`, which must lie before `to`.
    fn get(&mut self, offset: u64, n: usize) -> Result<&[u8], JournalError> {
        assert!(
            offset + n as u64 <= self.to,
            "window read past the scan end"
        );
        let held_end = self.start + self.buf.len() as u64;
        if offset < self.start || offset + n as u64 > held_end {
            // Keep the part of the window at and after `offset`, so no byte is read twice.
            let keep = if offset >= self.start && offset < held_end {
                self.buf.drain(..(offset - self.start) as usize);
                self.buf.len()
            } else {
                self.buf.clear();
                0
            };
            self.start = offset;
            let want_end = (offset + n.max(self.window_bytes) as u64).min(self.to);
            let len = (want_end - offset) as usize;
            self.buf.resize(len, 0);
            let got = self
                .storage
                .read_at(self.name, offset + keep as u64, &mut self.buf[keep..])
                .map_err(|e| JournalError::io(self.name, "read", e))?;
            self.bytes_read += got as u64;
            self.buf.truncate(keep + got);
            if self.buf.len() < n {
                let e = io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("file shorter than {} bytes during a scan", self.to),
                );
                return Err(JournalError::io(self.name, "read", e));
            }
        }
        let at = (offset - self.start) as usize;
        // Post-condition: the window never reaches past the end of the scan.
        debug_assert!(self.start + self.buf.len() as u64 <= self.to);
        Ok(&self.buf[at..at + n])
    }

    /// Whether a checked header starts anywhere after `offset`.
    fn header_after(&mut self, offset: u64) -> Result<bool, JournalError> {
        let from = offset + 1;
        if from + HEADER_BYTES as u64 > self.to {
            return Ok(false);
        }
        let rest = self.get(from, (self.to - from) as usize)?.to_vec();
        Ok(rest.windows(HEADER_BYTES).any(|h| {
            let mut header = [0u8; HEADER_BYTES];
            header.copy_from_slice(h);
            parse_header(&header).is_ok()
        }))
    }

    /// Whether every byte from `offset` to the end is zero.
    fn zero_from(&mut self, offset: u64) -> Result<bool, JournalError> {
        let mut at = offset;
        while at < self.to {
            let n = (self.to - at).min(self.window_bytes as u64) as usize;
            if self.get(at, n)?.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            at += n as u64;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::frame::encode_main_journal;
    use crate::journal::mem::MemStorage;
    use crate::journal::record::RecordBody;

    fn frames(n: u64) -> Vec<u8> {
        encode_main_journal((0..n).map(|_| RecordBody::Clear))
    }

    fn run(bytes: &[u8], planted: Planted) -> Result<(ScanOutcome, Vec<u64>), JournalError> {
        let s = MemStorage::with_file("j", bytes);
        let mut seqs = Vec::new();
        let opts = ScanOptions {
            window_bytes: 16,
            planted,
        };
        let out = scan(&s, "j", 0, bytes.len() as u64, opts, &mut |r| {
            seqs.push(r.record.seq);
            Ok(())
        })?;
        Ok((out, seqs))
    }

    #[test]
    fn every_cut_of_the_last_frame_is_a_torn_tail() {
        let whole = frames(3);
        let two = frames(2).len();
        for cut in two + 1..whole.len() {
            let (out, seqs) = run(&whole[..cut], Planted::none()).expect("a tear is not an error");
            assert_eq!(seqs, [1, 2], "cut at {cut}");
            assert_eq!(out.valid_end, two as u64);
            assert_eq!(out.torn_tail.map(|t| t.offset), Some(two as u64));
        }
        let (out, seqs) = run(&whole, Planted::none()).expect("whole");
        assert_eq!((seqs.len(), out.torn_tail), (3, None));
        assert_eq!(out.bytes_read, whole.len() as u64);
    }

    #[test]
    fn a_flipped_byte_before_the_tail_is_an_error_naming_its_offset() {
        let mut bytes = frames(3);
        let second = frames(1).len();
        bytes[second + 14] ^= 0x20;
        let err = run(&bytes, Planted::none()).expect_err("corrupt");
        assert_eq!(err.offset(), Some(second as u64));
        let mut bytes = frames(3);
        bytes[second + 2] ^= 0x01; // the length, under the header checksum
        assert_eq!(
            run(&bytes, Planted::none()).expect_err("corrupt").offset(),
            Some(second as u64)
        );
    }

    #[test]
    fn zero_fill_and_a_bad_last_checksum_are_torn_tails() {
        let mut bytes = frames(2);
        bytes.extend_from_slice(&[0u8; 40]);
        let (out, seqs) = run(&bytes, Planted::none()).expect("zero fill");
        assert_eq!(seqs.len(), 2);
        assert!(matches!(
            out.torn_tail.map(|t| t.problem),
            Some(FrameProblem::ZeroFill { .. })
        ));
        // Zeros then bytes that landed out of order (a lost header sector): a tear, as long as
        // no header follows; with a record after, it is corruption (that record would be lost).
        for zeros in [12usize, 40, 100] {
            let mut bytes = frames(2);
            let at = bytes.len() as u64;
            bytes.extend(std::iter::repeat_n(0u8, zeros));
            bytes.push(1);
            let (out, seqs) = run(&bytes, Planted::none()).expect("a tear");
            assert_eq!((seqs.len(), out.torn_tail.map(|t| t.offset)), (2, Some(at)));
            let mut bytes = frames(2);
            bytes.extend(std::iter::repeat_n(0u8, zeros));
            bytes.extend(frames(1));
            let err = run(&bytes, Planted::none()).expect_err("corruption, not a tear");
            assert_eq!(err.offset(), Some(at), "{zeros} zeros");
        }
        let mut bytes = frames(2);
        let n = bytes.len();
        bytes[n - 1] ^= 0xff;
        let (out, seqs) = run(&bytes, Planted::none()).expect("bad last checksum");
        assert_eq!(seqs, [1]);
        assert!(out.torn_tail.is_some());
    }

    /// A storage that logs every read it serves.
    #[derive(Debug)]
    struct Reads {
        inner: MemStorage,
        log: std::sync::Mutex<Vec<(u64, usize)>>,
    }

    impl Storage for Reads {
        crate::forward_storage!(inner: len, append, truncate, sync, remove, list);
        fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
            let got = self.inner.read_at(name, offset, buf)?;
            self.log.lock().expect("log").push((offset, buf.len()));
            Ok(got)
        }
    }

    #[test]
    fn a_scan_reads_each_byte_once_in_window_sized_reads() {
        let bytes = frames(40);
        let frame = frames(1).len();
        for window_bytes in [HEADER_BYTES, 16, frame - 1, frame, 3 * frame + 5, 4096] {
            let s = Reads {
                inner: MemStorage::with_file("j", &bytes),
                log: Default::default(),
            };
            let opts = ScanOptions {
                window_bytes,
                planted: Planted::none(),
            };
            let mut seqs = Vec::new();
            let out = scan(&s, "j", 0, bytes.len() as u64, opts, &mut |r| {
                assert!(r.frame_bytes >= frame as u64);
                seqs.push(r.record.seq);
                Ok(())
            })
            .expect("scan");
            assert_eq!(
                seqs,
                (1..=40).collect::<Vec<u64>>(),
                "window {window_bytes}"
            );
            assert_eq!(out.records, 40);
            assert_eq!(out.valid_end, bytes.len() as u64);
            assert_eq!(out.bytes_read, bytes.len() as u64, "window {window_bytes}");
            // The reads tile the file: each starts where the last ended, so no byte is read
            // twice; and there are about as many as windows, plus at most one a frame (a frame
            // that straddles the window's end).
            let log = s.log.lock().expect("log").clone();
            let mut at = 0u64;
            for (i, (offset, asked)) in log.iter().enumerate() {
                assert_eq!(*offset, at, "window {window_bytes}: read {i} of {log:?}");
                at += *asked as u64;
            }
            assert_eq!(at, bytes.len() as u64, "window {window_bytes}: {log:?}");
            let windows = bytes.len().div_ceil(window_bytes);
            assert!(
                log.len() <= windows + 40,
                "window {window_bytes}: {} reads",
                log.len()
            );
        }
    }

    #[test]
    fn a_complete_header_with_no_payload_at_the_end_is_a_short_payload_tear() {
        let mut bytes = frames(2);
        let whole = bytes.len();
        let third = frames(3)[whole..].to_vec();
        for extra in [HEADER_BYTES, HEADER_BYTES + 5] {
            bytes.truncate(whole);
            bytes.extend_from_slice(&third[..extra]);
            let (out, seqs) = run(&bytes, Planted::none()).expect("a tear");
            assert_eq!(seqs, [1, 2]);
            let tail = out.torn_tail.expect("torn");
            assert_eq!((tail.offset, tail.bytes), (whole as u64, extra as u64));
            assert_eq!(
                tail.problem,
                FrameProblem::ShortPayload {
                    payload_bytes: (third.len() - HEADER_BYTES) as u32,
                    available_bytes: (extra - HEADER_BYTES) as u64,
                }
            );
        }
        bytes.truncate(whole);
        bytes.extend_from_slice(&third[..HEADER_BYTES - 1]);
        let (out, _) = run(&bytes, Planted::none()).expect("a tear");
        assert_eq!(
            out.torn_tail.map(|t| t.problem),
            Some(FrameProblem::ShortHeader {
                available_bytes: (HEADER_BYTES - 1) as u64
            })
        );
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_j10_skips_a_corrupt_record_silently() {
        let mut bytes = frames(3);
        let second = frames(1).len();
        bytes[second + 14] ^= 0x20;
        let (out, seqs) = run(&bytes, Planted::only(BugId::J10)).expect("skipped");
        assert_eq!(seqs, [1, 3]);
        assert_eq!(out.skipped.len(), 1);
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_j20_reads_a_parsable_corrupt_record_as_another_one() {
        use crate::journal::frame::encode_frame;
        use crate::journal::row::Origin;
        let text_record = |text: &str| Record {
            seq: 2,
            origin: Origin::Main,
            body: RecordBody::Append {
                rows: vec![crate::journal::row::Row::text(
                    crate::journal::row::Speaker::Human,
                    Origin::Main,
                    text,
                )],
            },
        };
        let mut bytes = frames(1);
        let second = bytes.len();
        bytes.extend(encode_frame(&text_record("hello")));
        bytes.extend(encode_frame(&Record {
            seq: 3,
            origin: Origin::Main,
            body: RecordBody::Clear,
        }));
        // 'h' -> 'i': the payload still parses, only its checksum tells.
        let at = second
            + bytes[second..]
                .windows(5)
                .position(|w| w == b"hello")
                .expect("text");
        bytes[at] ^= 0x01;
        let err = run(&bytes, Planted::none()).expect_err("the checksum catches it");
        assert!(
            err.to_string().contains(&format!("offset {second}")),
            "{err}"
        );
        let (_, seqs) = run(&bytes, Planted::only(BugId::J20)).expect("read as valid");
        assert_eq!(seqs, [1, 2, 3]);
    }
}
