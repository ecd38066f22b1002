//! `histsim journal dump FILE`: a journal's records as JSON lines, for people and scripts.
//!
//! Each good record becomes its JSON object plus `offset` and `frame_bytes`. A torn tail becomes
//! one line `{"offset":..,"torn_tail_bytes":..,"problem":".."}`. Corruption ends the dump with an
//! error naming its offset; the lines before it are still produced.

use serde_json::{json, Value};

use super::error::JournalError;
use super::frame::DecodeError;
use super::mem::MemStorage;
use super::scan::{scan, ScanOptions};
use crate::Planted;

/// The records of a journal file's bytes, in file order, as JSON values.
pub fn dump_records(bytes: &[u8]) -> impl Iterator<Item = Result<Value, DecodeError>> {
    let storage = MemStorage::with_file("dump", bytes);
    let mut lines: Vec<Result<Value, DecodeError>> = Vec::new();
    let opts = ScanOptions {
        window_bytes: 64 * 1024,
        planted: Planted::none(),
    };
    let result = scan(&storage, "dump", 0, bytes.len() as u64, opts, &mut |rec| {
        let mut v = serde_json::to_value(&rec.record).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.insert("offset".into(), json!(rec.offset));
            map.insert("frame_bytes".into(), json!(rec.frame_bytes));
        }
        lines.push(Ok(v));
        Ok(())
    });
    match result {
        Ok(out) => {
            if let Some(t) = out.torn_tail {
                lines.push(Ok(json!({
                    "offset": t.offset,
                    "torn_tail_bytes": t.bytes,
                    "problem": t.problem.to_string(),
                })));
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
    lines.into_iter()
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
