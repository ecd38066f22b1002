//! A journal file's bytes as a strip: the journal workload draws one at each crash, the spool
//! workload the history's journal as its requests read it. Both read the same record format, so
//! the strip is made here, once.

use super::facts::{Strip, StripPart};
use super::html::ms;
use history::journal::{dump_lines, DumpLine};

/// The strip of one journal file: `kept` its bytes after the crash, `synced` how many were
/// synced, `length` its length before.
pub fn journal_strip(
    at_us: u64,
    lane: &str,
    file: &str,
    kept: &[u8],
    synced: u64,
    length: u64,
) -> Strip {
    let mut torn = 0;
    let mut record_starts = Vec::new();
    for line in dump_lines(kept).into_iter().flatten() {
        match line {
            DumpLine::Record { offset, .. } => record_starts.push(offset),
            DumpLine::TornTail { bytes, .. } => torn = bytes,
        }
    }
    let kept_len = kept.len() as u64;
    let synced = synced.min(kept_len - torn.min(kept_len));
    Strip {
        at_us,
        moment: format!("crash at {}", ms(at_us)),
        after_events: None,
        lane: lane.to_string(),
        file: file.to_string(),
        parts: vec![
            StripPart::Synced(synced),
            StripPart::Unsynced(kept_len - synced - torn.min(kept_len - synced)),
            StripPart::Torn(torn.min(kept_len - synced)),
            StripPart::Lost(length.saturating_sub(kept_len)),
        ],
        record_starts,
    }
}
