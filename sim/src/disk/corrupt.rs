//! Silent corruption of journal files: where a bit flip or a stale sector lands, decided from a
//! seeded pick before the world plays and placed when it is injected.
//!
//! Kinds ([`Corruption`]):
//! - `bit_flip`: one bit of a record (header or payload) flips on the medium;
//! - `text_flip`: one bit flips inside a row's text so that the payload still parses as JSON (a
//!   letter or digit turned into another printable character): only the payload checksum tells;
//! - `stale_sector`: reads of one 512-byte sector return the version it had before its last
//!   change (the drive served an old copy), zeros past what that version held.
//!
//! Every kind targets a record that an intact record follows ([`targets`]), so the damage is
//! never the last record of the file: a reader cannot take it for a torn tail, and the only
//! outcome a correct reader may show is an error naming the damaged record's offset (J10: a
//! corrupt record before the tail is reported). The last record's damage would be a torn tail
//! whose loss J10 accepts; `histsim crash`'s faulty disk covers that case.
//!
//! The injector walks frames with the journal's published format (`history::journal::frame`):
//! the format is the contract the corruption must defeat, not the reader under test.

use history::journal::frame::{decode_payload, parse_header, HEADER_BYTES};
use serde::{Deserialize, Serialize};
use strum::IntoStaticStr;

/// The sector a stale read serves whole (the persistence models use the same size).
pub const SECTOR_BYTES: u64 = super::persist::SECTOR_BYTES as u64;

/// What the fault stream decided a silent corruption does; `pick` chooses among the places the
/// kind can land when it is injected (modulo their number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, IntoStaticStr)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[strum(serialize_all = "snake_case")]
pub enum Corruption {
    BitFlip { pick: u32, bit: u8 },
    TextFlip { pick: u32 },
    StaleSector { pick: u32 },
}

impl Corruption {
    /// The kind as probes and traces spell it.
    pub fn kind(self) -> &'static str {
        self.into()
    }
}

/// Where a corruption landed: the harness's own record, for the model and the checker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injected {
    pub corruption: Corruption,
    pub file: String,
    /// The first byte a reader sees changed.
    pub byte: u64,
    /// The record holding that byte: a reader must report this offset.
    pub frame_start: u64,
    pub frame_end: u64,
    /// The damaged record's kind (`append`, `replace_rows`, ...).
    pub record_kind: String,
    /// Whether the damaged payload still parses as JSON.
    pub parsable: bool,
    /// A stale sector: its offset and the old bytes reads of it return.
    pub stale: Option<(u64, Vec<u8>)>,
}

/// One intact frame of a journal file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub start: u64,
    pub end: u64,
    pub kind: String,
}

impl Frame {
    fn payload_start(&self) -> u64 {
        self.start + HEADER_BYTES as u64
    }
}

/// The intact frames at the start of `bytes` (header and payload checksums hold), in order,
/// up to the first frame that does not check.
pub fn intact_frames(bytes: &[u8]) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut at = 0usize;
    while at + HEADER_BYTES <= bytes.len() {
        let mut h = [0u8; HEADER_BYTES];
        h.copy_from_slice(&bytes[at..at + HEADER_BYTES]);
        let Ok(header) = parse_header(&h) else { break };
        let end = at + header.frame_bytes() as usize;
        if end > bytes.len() {
            break;
        }
        let Ok(record) = decode_payload(header, &bytes[at + HEADER_BYTES..end]) else {
            break;
        };
        frames.push(Frame {
            start: at as u64,
            end: end as u64,
            kind: record.body.kind().to_string(),
        });
        at = end;
    }
    frames
}

/// The frames a corruption may damage: every intact frame an intact frame follows.
pub fn targets(bytes: &[u8]) -> Vec<Frame> {
    let mut frames = intact_frames(bytes);
    frames.pop();
    frames
}

/// Offsets in a JSON `payload` where flipping the lowest bit leaves valid JSON of the same
/// shape: letters and digits inside the string values of `text` keys (a row's text) and, with
/// `numbers`, the last digit of every number (a sequence number, a transaction, a count).
pub fn parsable_positions(payload: &[u8], numbers: bool) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut last_key_is_text = false;
    while i < payload.len() {
        match payload[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < payload.len() && payload[j] != b'"' {
                    j += if payload[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(payload.len());
                let is_key = payload[end.saturating_add(1).min(payload.len())..]
                    .iter()
                    .find(|b| !b.is_ascii_whitespace())
                    == Some(&b':');
                if is_key {
                    last_key_is_text = &payload[start..end] == b"text";
                } else if last_key_is_text {
                    out.extend(unescaped_alphanumerics(payload, start, end));
                }
                i = end + 1;
            }
            b'0'..=b'9' => {
                let mut j = i;
                while j < payload.len() && payload[j].is_ascii_digit() {
                    j += 1;
                }
                if numbers {
                    out.push(j - 1);
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

/// The letters and digits of the string body `payload[start..end]` outside escape sequences:
/// a flip inside `\n` or `\u001b` (a text with control characters) would break the JSON.
fn unescaped_alphanumerics(payload: &[u8], start: usize, end: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut k = start;
    while k < end {
        match payload[k] {
            b'\\' if payload.get(k + 1) == Some(&b'u') => k += 6,
            b'\\' => k += 2,
            b if b.is_ascii_alphanumeric() => {
                out.push(k);
                k += 1;
            }
            _ => k += 1,
        }
    }
    out
}

/// Flips a bit of `bytes` (of `file`) as `corruption` decides; `None` when nothing fits (no
/// record with an intact one after it, or no text in those).
pub fn flip(file: &str, bytes: &mut [u8], corruption: Corruption) -> Option<Injected> {
    let frames = targets(bytes);
    let (byte, mask) = match corruption {
        Corruption::BitFlip { pick, bit } => {
            let total: u64 = frames.iter().map(|f| f.end - f.start).sum();
            if total == 0 {
                return None;
            }
            let mut at = u64::from(pick) % total;
            let frame = frames.iter().find(|f| {
                let len = f.end - f.start;
                if at < len {
                    return true;
                }
                at -= len;
                false
            })?;
            (frame.start + at, 1u8 << (bit % 8))
        }
        Corruption::TextFlip { pick } => {
            let places: Vec<u64> = frames
                .iter()
                .flat_map(|f| {
                    let payload = &bytes[f.payload_start() as usize..f.end as usize];
                    parsable_positions(payload, false)
                        .into_iter()
                        .map(move |k| f.payload_start() + k as u64)
                })
                .collect();
            if places.is_empty() {
                return None;
            }
            (places[pick as usize % places.len()], 1)
        }
        Corruption::StaleSector { .. } => return None,
    };
    bytes[byte as usize] ^= mask;
    let frame = frames.iter().find(|f| (f.start..f.end).contains(&byte))?;
    Some(injected(file, bytes, corruption, byte, frame, None))
}

/// A stale read of one of `older` (sector offset, the version before its last change) that
/// damages a record of `bytes` an intact record follows past the sector; `None` when none does.
pub fn stale(
    file: &str,
    bytes: &[u8],
    older: &[(u64, Vec<u8>)],
    corruption: Corruption,
) -> Option<Injected> {
    let Corruption::StaleSector { pick } = corruption else {
        return None;
    };
    let frames = intact_frames(bytes);
    let last_start = frames.last()?.start;
    let fits: Vec<StaleFit<'_>> = older
        .iter()
        .filter_map(|old| {
            let (sector, version) = old;
            let end = (sector + SECTOR_BYTES).min(bytes.len() as u64);
            let first = (*sector..end).find(|&i| {
                version.get((i - sector) as usize).copied().unwrap_or(0) != bytes[i as usize]
            })?;
            // A checked header must start past the sector, or the damage reads as a torn tail.
            let frame = frames.iter().find(|f| (f.start..f.end).contains(&first))?;
            (frame.start < last_start && last_start >= sector + SECTOR_BYTES)
                .then_some((first, frame, old))
        })
        .collect();
    if fits.is_empty() {
        return None;
    }
    let (byte, frame, (sector, version)) = fits[pick as usize % fits.len()];
    let mut seen = bytes.to_vec();
    let end = (sector + SECTOR_BYTES).min(bytes.len() as u64);
    for i in *sector..end {
        seen[i as usize] = version.get((i - sector) as usize).copied().unwrap_or(0);
    }
    Some(injected(
        file,
        &seen,
        corruption,
        byte,
        frame,
        Some((*sector, version.clone())),
    ))
}

/// A stale sector that fits: the first byte it changes, that byte's record, the sector.
type StaleFit<'a> = (u64, &'a Frame, &'a (u64, Vec<u8>));

fn injected(
    file: &str,
    seen: &[u8],
    corruption: Corruption,
    byte: u64,
    frame: &Frame,
    stale: Option<(u64, Vec<u8>)>,
) -> Injected {
    let payload = &seen[frame.payload_start() as usize..frame.end as usize];
    Injected {
        corruption,
        file: file.to_string(),
        byte,
        frame_start: frame.start,
        frame_end: frame.end,
        record_kind: frame.kind.clone(),
        parsable: serde_json::from_slice::<serde::de::IgnoredAny>(payload).is_ok(),
        stale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::journal::frame::encode_main_journal;
    use history::journal::{Origin, RecordBody, Row, Speaker};

    fn journal(texts: &[&str]) -> Vec<u8> {
        encode_main_journal(texts.iter().map(|t| RecordBody::Append {
            rows: vec![Row::text(Speaker::Human, Origin::Main, *t)],
        }))
    }

    #[test]
    fn parsable_positions_skip_escape_sequences() {
        let payload = br#"{"text":"a\nb\u001bc\"d"}"#;
        let text: Vec<u8> = parsable_positions(payload, false)
            .into_iter()
            .map(|k| payload[k])
            .collect();
        assert_eq!(text, b"abcd");
        for k in parsable_positions(payload, false) {
            let mut flipped = payload.to_vec();
            flipped[k] ^= 1;
            assert!(serde_json::from_slice::<serde_json::Value>(&flipped).is_ok());
        }
    }

    #[test]
    fn parsable_positions_are_text_letters_and_last_digits() {
        let payload =
            br#"{"seq":12,"kind":"append","rows":[{"blocks":[{"type":"text","text":"a-b"}]}]}"#;
        let text: Vec<u8> = parsable_positions(payload, false)
            .iter()
            .map(|&k| payload[k])
            .collect();
        assert_eq!(text, b"ab");
        let all = parsable_positions(payload, true);
        assert!(all
            .iter()
            .any(|&k| payload[k] == b'2' && payload[k - 1] == b'1'));
        for k in all {
            let mut p = payload.to_vec();
            p[k] ^= 1;
            assert!(
                serde_json::from_slice::<serde_json::Value>(&p).is_ok(),
                "flip at {k}"
            );
        }
    }

    #[test]
    fn flips_never_hit_the_last_record_and_text_flips_parse() {
        let clean = journal(&["first", "second", "third"]);
        let frames = intact_frames(&clean);
        assert_eq!(frames.len(), 3);
        for pick in 0..64 {
            for c in [
                Corruption::BitFlip { pick, bit: 3 },
                Corruption::TextFlip { pick },
            ] {
                let mut bytes = clean.clone();
                let hit = flip("j", &mut bytes, c).expect("lands");
                assert!(hit.frame_end <= frames[2].start, "{hit:?}");
                assert_ne!(bytes, clean);
                if matches!(c, Corruption::TextFlip { .. }) {
                    assert!(hit.parsable, "{hit:?}");
                }
            }
        }
        let mut lone = journal(&["only"]);
        assert_eq!(flip("j", &mut lone, Corruption::TextFlip { pick: 0 }), None);
    }

    #[test]
    fn a_stale_sector_damages_a_record_a_checked_header_follows() {
        let long = "x".repeat(600);
        let bytes = journal(&["a", &long, &long, "b"]);
        let frames = intact_frames(&bytes);
        // The first sector as it was before the second record reached it.
        let old = bytes[..frames[1].start as usize].to_vec();
        let hit = stale(
            "j",
            &bytes,
            &[(0, old)],
            Corruption::StaleSector { pick: 0 },
        )
        .expect("lands");
        assert_eq!(hit.frame_start, frames[1].start);
        assert_eq!(hit.byte, frames[1].start);
        assert!(!hit.parsable);
        // A sector whose old version is the current one damages nothing.
        let same = bytes[..SECTOR_BYTES as usize].to_vec();
        assert_eq!(
            stale(
                "j",
                &bytes,
                &[(0, same)],
                Corruption::StaleSector { pick: 0 }
            ),
            None
        );
    }
}
