//! `histsim journal dump FILE`: a journal's records as JSON lines, for people and scripts.
//!
//! Each good record becomes its JSON object plus `offset` and `frame_bytes`. A torn tail becomes
//! one line `{"offset":..,"torn_tail_bytes":..,"problem":".."}`. Corruption ends the dump with an
//! error naming its offset; the lines before it are still produced. The checkers read the same
//! lines typed ([`dump_lines`]).

use serde_json::{json, Value};

use super::error::JournalError;
use super::frame::DecodeError;
use super::mem::MemStorage;
use super::record::Record;
use super::scan::{scan, ScanOptions};
use crate::Planted;

/// A line of a journal file's dump: a record where it stands, or the torn tail after the last
/// one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DumpLine {
    Record {
        /// Where its frame begins in the file.
        offset: u64,
        /// Its frame's length, header included.
        frame_bytes: u64,
        record: Record,
    },
    TornTail {
        offset: u64,
        bytes: u64,
        problem: String,
    },
}

/// The records of a journal file's bytes, in file order, typed: every frame decoded as a reader
/// decodes it, then the torn tail, or the corruption that ended the scan as the last line.
///
/// What the checkers read of a disk image (several times a seed). [`dump_records`] is this as
/// JSON, for `histsim journal dump`; a checker reads the typed records instead of building a
/// JSON tree of every row only to look at a record's kind, seq and transaction.
pub fn dump_lines(bytes: &[u8]) -> Vec<Result<DumpLine, DecodeError>> {
    let storage = MemStorage::with_file("dump", bytes);
    let mut lines: Vec<Result<DumpLine, DecodeError>> = Vec::new();
    let opts = ScanOptions {
        window_bytes: 64 * 1024,
        planted: Planted::none(),
    };
    let result = scan(&storage, "dump", 0, bytes.len() as u64, opts, &mut |rec| {
        lines.push(Ok(DumpLine::Record {
            offset: rec.offset,
            frame_bytes: rec.frame_bytes,
            record: rec.record,
        }));
        Ok(())
    });
    match result {
        Ok(out) => {
            if let Some(t) = out.torn_tail {
                lines.push(Ok(DumpLine::TornTail {
                    offset: t.offset,
                    bytes: t.bytes,
                    problem: t.problem.to_string(),
                }));
            }
        }
        Err(JournalError::Corrupt { source, .. }) => lines.push(Err(source)),
        // A scan over memory fails only on corruption; keep any other error visible anyway.
        Err(other) => lines.push(Err(DecodeError {
            offset: other.offset().unwrap_or(0),
            problem: super::frame::FrameProblem::Json {
                message: other.to_string(),
            },
        })),
    }
    // Post-condition: the records lie back to back from byte 0 in file order (the scan stops
    // at the first frame it cannot take), and whatever ended the dump is its last line.
    let mut end = 0;
    for line in &lines {
        if let Ok(DumpLine::Record {
            offset,
            frame_bytes,
            ..
        }) = line
        {
            debug_assert_eq!(*offset, end, "a gap or an overlap between records");
            end = offset + frame_bytes;
        }
    }
    debug_assert!(end <= bytes.len() as u64);
    debug_assert!(lines
        .iter()
        .rev()
        .skip(1)
        .all(|l| matches!(l, Ok(DumpLine::Record { .. }))));
    lines
}

/// The records of a journal file's bytes, in file order, as JSON values: [`dump_lines`], each
/// record with its `offset` and `frame_bytes`, the torn tail as `offset`, `torn_tail_bytes`
/// and `problem`.
pub fn dump_records(bytes: &[u8]) -> impl Iterator<Item = Result<Value, DecodeError>> {
    dump_lines(bytes).into_iter().map(|line| {
        line.map(|line| match line {
            DumpLine::Record {
                offset,
                frame_bytes,
                record,
            } => {
                let mut v = serde_json::to_value(&record).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut v {
                    map.insert("offset".into(), json!(offset));
                    map.insert("frame_bytes".into(), json!(frame_bytes));
                }
                v
            }
            DumpLine::TornTail {
                offset,
                bytes,
                problem,
            } => json!({
                "offset": offset,
                "torn_tail_bytes": bytes,
                "problem": problem,
            }),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::frame::encode_frame;
    use crate::journal::record::{Record, RecordBody};
    use crate::journal::row::{Origin, Row, Speaker};

    #[test]
    fn dumps_records_then_the_torn_tail() {
        let mut bytes = encode_frame(&Record {
            seq: 1,
            origin: Origin::Main,
            body: RecordBody::Append {
                rows: vec![Row::text(Speaker::Human, Origin::Main, "hi")],
            },
        });
        let first = bytes.len();
        bytes.extend_from_slice(&[7, 0, 0]);
        let lines: Vec<_> = dump_records(&bytes).collect();
        assert_eq!(lines.len(), 2);
        let rec = lines[0].as_ref().expect("record");
        assert_eq!(rec["kind"], "append");
        assert_eq!(rec["offset"], 0);
        let torn = lines[1].as_ref().expect("torn tail line");
        assert_eq!(torn["offset"], first as u64);
        assert_eq!(torn["torn_tail_bytes"], 3);
    }

    #[test]
    fn the_typed_lines_are_the_json_lines() {
        // `dump_records` is `dump_lines` as JSON: one line each, the same offsets, kinds, seqs
        // and transactions, the torn tail last.
        let record = |seq, body| Record {
            seq,
            origin: Origin::Main,
            body,
        };
        let mut bytes = encode_frame(&record(1, RecordBody::ReplaceBegin { txn: 4 }));
        bytes.extend(encode_frame(&record(
            2,
            RecordBody::ReplaceRows {
                txn: 4,
                rows: vec![Row::text(Speaker::Ai, Origin::Main, "kept")],
            },
        )));
        bytes.extend([9, 9]);
        let typed = dump_lines(&bytes);
        let json: Vec<_> = dump_records(&bytes).collect();
        assert_eq!(typed.len(), 3);
        assert_eq!(json.len(), 3);
        for (line, value) in typed.iter().zip(&json) {
            let (line, value) = (
                line.as_ref().expect("a line"),
                value.as_ref().expect("a line"),
            );
            match line {
                DumpLine::Record {
                    offset,
                    frame_bytes,
                    record,
                } => {
                    assert_eq!(value["offset"], *offset);
                    assert_eq!(value["frame_bytes"], *frame_bytes);
                    assert_eq!(value["kind"], record.body.kind());
                    assert_eq!(value["seq"], record.seq);
                    assert_eq!(value["txn"], 4);
                    assert_eq!(record.body.txn(), Some(4));
                }
                DumpLine::TornTail {
                    offset,
                    bytes: torn,
                    problem,
                } => {
                    assert_eq!(value["offset"], *offset);
                    assert_eq!(value["torn_tail_bytes"], *torn);
                    assert_eq!(value["problem"], problem.as_str());
                    assert_eq!(*torn, 2);
                }
            }
        }
    }

    #[test]
    fn corruption_ends_the_dump_with_its_offset() {
        let rec = |seq| {
            encode_frame(&Record {
                seq,
                origin: Origin::Main,
                body: RecordBody::Clear,
            })
        };
        let mut bytes = rec(1);
        let second = bytes.len();
        bytes.extend(rec(2));
        bytes.extend(rec(3));
        bytes[second + 13] ^= 0x40;
        let lines: Vec<_> = dump_records(&bytes).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[1].as_ref().expect_err("corrupt").offset,
            second as u64
        );
    }
}
