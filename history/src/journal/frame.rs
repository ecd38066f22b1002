//! The on-disk frame of one record: a checksummed header, then a checksummed JSON payload.
//!
//! ```text
//! offset 0  u32 LE  payload length in bytes (1 ..= MAX_PAYLOAD_BYTES)
//! offset 4  u32 LE  crc32c of the payload
//! offset 8  u32 LE  crc32c of bytes 0..8 (the header checksum)
//! offset 12 payload: the record as one JSON object
//! ```
//!
//! The header has its own checksum so a damaged length is never trusted: without it a flipped
//! length bit in the middle of a file could point past the end and make every later record look
//! like a torn tail, silently dropping history (J10). A write that tears keeps a prefix of the
//! frame, so a complete header always checks; only the payload of the last frame can be short.

use std::fmt;

use super::record::Record;
#[cfg(any(test, feature = "testing"))]
use super::{record::RecordBody, row::Origin};

/// Bytes in a frame header.
pub const HEADER_BYTES: usize = 12;
/// The largest payload a frame may carry. Larger lengths are corruption, never a tear.
pub const MAX_PAYLOAD_BYTES: u32 = 64 << 20;

/// A decoded, checked frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub payload_bytes: u32,
    pub payload_crc: u32,
}

impl Header {
    /// Bytes of the whole frame, header included.
    pub fn frame_bytes(self) -> u64 {
        HEADER_BYTES as u64 + u64::from(self.payload_bytes)
    }
}

/// What is wrong with the bytes at one offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameProblem {
    /// Fewer than [`HEADER_BYTES`] bytes remain.
    ShortHeader { available_bytes: u64 },
    /// The header checksum does not match.
    HeaderChecksum { stored: u32, computed: u32 },
    /// The header checks but its length is 0 or above [`MAX_PAYLOAD_BYTES`].
    BadLength { payload_bytes: u32 },
    /// The payload runs past the end of the file.
    ShortPayload {
        payload_bytes: u32,
        available_bytes: u64,
    },
    /// The payload checksum does not match.
    PayloadChecksum { stored: u32, computed: u32 },
    /// The payload checks but is not a record.
    Json { message: String },
    /// The rest of the file is zero bytes: a file extended but never written.
    ZeroFill { zero_bytes: u64 },
}

impl fmt::Display for FrameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameProblem::ShortHeader { available_bytes } => write!(
                f,
                "header cut short: {available_bytes} of {HEADER_BYTES} bytes"
            ),
            FrameProblem::HeaderChecksum { stored, computed } => write!(
                f,
                "header checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
            ),
            FrameProblem::BadLength { payload_bytes } => write!(
                f,
                "payload length {payload_bytes} outside 1..={MAX_PAYLOAD_BYTES}"
            ),
            FrameProblem::ShortPayload {
                payload_bytes,
                available_bytes,
            } => write!(
                f,
                "payload cut short: {available_bytes} of {payload_bytes} bytes"
            ),
            FrameProblem::PayloadChecksum { stored, computed } => write!(
                f,
                "payload checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
            ),
            FrameProblem::Json { message } => write!(f, "payload is not a record: {message}"),
            FrameProblem::ZeroFill { zero_bytes } => {
                write!(f, "{zero_bytes} zero bytes where a frame should start")
            }
        }
    }
}

/// A frame problem at a byte offset of a named file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: u64,
    pub problem: FrameProblem,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "record at byte offset {}: {}", self.offset, self.problem)
    }
}

impl std::error::Error for DecodeError {}

/// The bytes of a journal whose records are `bodies`, in order, of the main origin, numbered
/// from 1: a journal a test writes directly.
#[cfg(any(test, feature = "testing"))]
pub fn encode_main_journal(bodies: impl IntoIterator<Item = RecordBody>) -> Vec<u8> {
    (1..)
        .zip(bodies)
        .flat_map(|(seq, body)| {
            encode_frame(&Record {
                seq,
                origin: Origin::Main,
                body,
            })
        })
        .collect()
}

/// Encodes a record as one frame.
pub fn encode_frame(record: &Record) -> Vec<u8> {
    // Serializing our own types to a Vec cannot fail: every map key is a string.
    let payload = serde_json::to_vec(record).expect("records serialize to JSON");
    assert!(
        !payload.is_empty() && payload.len() <= MAX_PAYLOAD_BYTES as usize,
        "record {} encodes to {} bytes, above the frame limit",
        record.seq,
        payload.len()
    );
    let mut frame = Vec::with_capacity(HEADER_BYTES + payload.len());
    let payload_crc = crc32c::crc32c(&payload);
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(&payload_crc.to_le_bytes());
    let header_crc = crc32c::crc32c(&frame[0..8]);
    frame.extend_from_slice(&header_crc.to_le_bytes());
    frame.extend_from_slice(&payload);
    // Post-condition: the header reads back, and its length field matches the payload.
    debug_assert!({
        let mut header = [0u8; HEADER_BYTES];
        header.copy_from_slice(&frame[..HEADER_BYTES]);
        parse_header(&header)
            .is_ok_and(|h| h.frame_bytes() == frame.len() as u64 && h.payload_crc == payload_crc)
    });
    frame
}

/// Checks a header's own checksum and its length bound.
pub fn parse_header(bytes: &[u8; HEADER_BYTES]) -> Result<Header, FrameProblem> {
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let stored = word(8);
    let computed = crc32c::crc32c(&bytes[0..8]);
    if stored != computed {
        return Err(FrameProblem::HeaderChecksum { stored, computed });
    }
    let payload_bytes = word(0);
    if payload_bytes == 0 || payload_bytes > MAX_PAYLOAD_BYTES {
        return Err(FrameProblem::BadLength { payload_bytes });
    }
    let header = Header {
        payload_bytes,
        payload_crc: word(4),
    };
    // Post-condition: a checked header's frame holds a payload and stays inside the bound.
    debug_assert!(
        header.frame_bytes() > HEADER_BYTES as u64
            && header.frame_bytes() <= HEADER_BYTES as u64 + u64::from(MAX_PAYLOAD_BYTES)
    );
    Ok(header)
}

/// Checks a payload against its header and decodes the record.
pub fn decode_payload(header: Header, payload: &[u8]) -> Result<Record, FrameProblem> {
    assert_eq!(payload.len(), header.payload_bytes as usize);
    let computed = crc32c::crc32c(payload);
    if computed != header.payload_crc {
        return Err(FrameProblem::PayloadChecksum {
            stored: header.payload_crc,
            computed,
        });
    }
    serde_json::from_slice(payload).map_err(|e| FrameProblem::Json {
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::record::RecordBody;
    use crate::journal::row::Origin;

    fn record() -> Record {
        Record {
            seq: 1,
            origin: Origin::Main,
            body: RecordBody::Clear,
        }
    }

    fn header_with_length(payload_bytes: u32) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        h[0..4].copy_from_slice(&payload_bytes.to_le_bytes());
        let crc = crc32c::crc32c(&h[0..8]);
        h[8..12].copy_from_slice(&crc.to_le_bytes());
        h
    }

    #[test]
    fn the_length_bound_is_inclusive() {
        assert_eq!(
            parse_header(&header_with_length(MAX_PAYLOAD_BYTES)).map(|h| h.payload_bytes),
            Ok(MAX_PAYLOAD_BYTES)
        );
        assert_eq!(
            parse_header(&header_with_length(MAX_PAYLOAD_BYTES + 1)),
            Err(FrameProblem::BadLength {
                payload_bytes: MAX_PAYLOAD_BYTES + 1
            })
        );
        assert_eq!(
            parse_header(&header_with_length(0)),
            Err(FrameProblem::BadLength { payload_bytes: 0 })
        );
        assert_eq!(
            parse_header(&header_with_length(1)).map(|h| h.frame_bytes()),
            Ok(13)
        );
    }

    #[test]
    fn problems_read_as_sentences_with_their_numbers() {
        let cases = [
            (FrameProblem::ShortHeader { available_bytes: 5 }, "5 of 12"),
            (
                FrameProblem::HeaderChecksum {
                    stored: 1,
                    computed: 2,
                },
                "header checksum mismatch (stored 0x00000001, computed 0x00000002)",
            ),
            (
                FrameProblem::BadLength { payload_bytes: 0 },
                "payload length 0",
            ),
            (
                FrameProblem::ShortPayload {
                    payload_bytes: 9,
                    available_bytes: 4,
                },
                "payload cut short: 4 of 9 bytes",
            ),
            (
                FrameProblem::PayloadChecksum {
                    stored: 3,
                    computed: 4,
                },
                "0x00000003",
            ),
            (
                FrameProblem::Json {
                    message: "eof".into(),
                },
                "not a record: eof",
            ),
            (FrameProblem::ZeroFill { zero_bytes: 7 }, "7"),
        ];
        for (problem, expected) in cases {
            let text = problem.to_string();
            assert!(text.contains(expected), "{problem:?} reads `{text}`");
        }
    }

    fn split(frame: &[u8]) -> ([u8; HEADER_BYTES], &[u8]) {
        let mut h = [0u8; HEADER_BYTES];
        h.copy_from_slice(&frame[..HEADER_BYTES]);
        (h, &frame[HEADER_BYTES..])
    }

    #[test]
    fn a_frame_decodes_to_its_record() {
        let frame = encode_frame(&record());
        let (h, payload) = split(&frame);
        let header = parse_header(&h).expect("header checks");
        assert_eq!(header.frame_bytes(), frame.len() as u64);
        assert_eq!(decode_payload(header, payload), Ok(record()));
    }

    #[test]
    fn every_flipped_bit_is_caught() {
        let frame = encode_frame(&record());
        for i in 0..frame.len() {
            for bit in 0..8 {
                let mut bad = frame.clone();
                bad[i] ^= 1 << bit;
                let (h, payload) = split(&bad);
                let ok = parse_header(&h).and_then(|header| {
                    if header.payload_bytes as usize != payload.len() {
                        return Err(FrameProblem::BadLength {
                            payload_bytes: header.payload_bytes,
                        });
                    }
                    decode_payload(header, payload)
                });
                assert!(ok.is_err(), "flip of bit {bit} in byte {i} went unnoticed");
            }
        }
    }

    #[test]
    fn zero_and_oversized_lengths_are_rejected() {
        let mut h = [0u8; HEADER_BYTES];
        let crc = crc32c::crc32c(&h[0..8]);
        h[8..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            parse_header(&h),
            Err(FrameProblem::BadLength { payload_bytes: 0 })
        );
        h[0..4].copy_from_slice(&(MAX_PAYLOAD_BYTES + 1).to_le_bytes());
        let crc = crc32c::crc32c(&h[0..8]);
        h[8..].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(
            parse_header(&h),
            Err(FrameProblem::BadLength { .. })
        ));
    }
}
