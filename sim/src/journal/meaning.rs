//! What an operation of a script means against a list of rows: rows built from their specs,
//! positions resolved, counts clamped (a compression's summary is
//! [`crate::compression`]'s).
//!
//! The world applies these to the rows the system holds, the checker to the rows the model
//! holds. When the system is right the two agree; when it is wrong, the checker has already
//! seen the difference. Nothing here reads a journal.

use history::journal::{Block, Origin, Row, Speaker};

use super::scenario::{RowSpec, SpeakerSpec};

/// The origin a script names: `main` or a subagent.
pub fn origin_of(name: &str) -> Origin {
    if name == "main" {
        Origin::Main
    } else {
        Origin::Subagent(name.to_string())
    }
}

/// The script's name of an origin.
pub fn origin_name(origin: &Origin) -> &str {
    match origin {
        Origin::Main => "main",
        Origin::Subagent(s) => s,
    }
}

/// The session's recording at start.
pub const SESSION_JOURNAL: &str = "session.journal";
/// The shared history's primary journal.
pub const SHARED_JOURNAL: &str = "shared.journal";

/// The file of a fork or clone named `name`.
pub fn journal_file(name: &str) -> String {
    format!("{name}.journal")
}

/// The file of the mirror of `origin`.
pub fn mirror_file(origin: &Origin) -> String {
    format!("mirror-{}.journal", origin_name(origin))
}

/// `text` repeated (space-separated) until it is at least `pad_bytes` long.
pub fn padded(text: &str, pad_bytes: u32) -> String {
    let mut s = text.to_string();
    let piece = if text.is_empty() { "pad" } else { text };
    while s.len() < pad_bytes as usize {
        s.push(' ');
        s.push_str(piece);
    }
    s
}

/// The row a spec describes; `origin` when the spec names none.
pub fn row(spec: &RowSpec, origin: &Origin) -> Row {
    let origin = spec.origin.as_deref().map_or(origin.clone(), origin_of);
    let text = padded(&spec.text, spec.pad_bytes);
    let blocks = match (spec.speaker, &spec.call) {
        (SpeakerSpec::Human, _) | (SpeakerSpec::Ai, None) => vec![Block::Text { text }],
        (SpeakerSpec::Ai, Some(call)) => vec![
            Block::Text { text },
            Block::ToolCall {
                id: call.clone(),
                name: "run".to_string(),
                arguments: format!("{{\"call\":\"{call}\"}}"),
            },
        ],
        (SpeakerSpec::Tool, call) => vec![Block::ToolResult {
            call_id: call.clone().unwrap_or_default(),
            name: "run".to_string(),
            content: text,
        }],
    };
    let speaker = match spec.speaker {
        SpeakerSpec::Human => Speaker::Human,
        SpeakerSpec::Ai => Speaker::Ai,
        SpeakerSpec::Tool => Speaker::Tool,
    };
    Row {
        speaker,
        origin,
        blocks,
    }
}

pub fn rows(specs: &[RowSpec], origin: &Origin) -> Vec<Row> {
    specs.iter().map(|s| row(s, origin)).collect()
}

/// A rewind of `requested` rows with `n` in context removes this many (0: the rewind is skipped).
pub fn rewind_rows(requested: u64, n: usize) -> u64 {
    requested.min(n as u64)
}

/// The positions a density mutation removes and rewrites among `n` rows, each sorted and without
/// repeats (a rewrite wins over a removal of the same row). `None` when it changes nothing.
pub fn density_positions(
    remove: &[u32],
    rewrite: &[u32],
    n: usize,
) -> Option<(Vec<usize>, Vec<usize>)> {
    if n == 0 || (remove.is_empty() && rewrite.is_empty()) {
        return None;
    }
    let at = |ps: &[u32]| -> std::collections::BTreeSet<usize> {
        ps.iter().map(|p| *p as usize % n).collect()
    };
    let rewritten = at(rewrite);
    let removed: Vec<usize> = at(remove).difference(&rewritten).copied().collect();
    Some((removed, rewritten.into_iter().collect()))
}

/// The `k`th row a density mutation of op `op` writes: `bytes` of text (at least its label).
pub fn rewrite_row(op: usize, k: usize, bytes: u32) -> Row {
    Row::text(
        Speaker::Ai,
        Origin::Main,
        padded(&format!("dense {op}.{k}"), bytes),
    )
}

/// The position an insert goes after: `None` for the start.
pub fn insert_after(after: Option<u32>, n: usize) -> Option<usize> {
    match after {
        Some(p) if n > 0 => Some(p as usize % n),
        _ => None,
    }
}

/// A row transform of op `op`: new text, same speaker and origin.
pub fn transformed(row: &Row, op: usize) -> Row {
    Row::text(row.speaker, row.origin.clone(), format!("transformed {op}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(speaker: SpeakerSpec, text: &str, call: Option<&str>) -> RowSpec {
        RowSpec {
            speaker,
            text: text.into(),
            call: call.map(str::to_string),
            pad_bytes: 0,
            origin: None,
        }
    }

    #[test]
    fn compression_keeps_a_tool_pair_together() {
        use crate::compression::compression;
        use history::runs::SUMMARY_PREFIX;
        let rows = rows(
            &[
                spec(SpeakerSpec::Human, "q", None),
                spec(SpeakerSpec::Ai, "calling", Some("c1")),
                spec(SpeakerSpec::Tool, "result", Some("c1")),
                spec(SpeakerSpec::Ai, "answer", None),
            ],
            &Origin::Main,
        );
        // Keeping 2 would split the call from its result: the cut moves back to keep 3.
        let (summary, cut) = compression(&rows, 2, &Origin::Main).expect("something to fold");
        assert_eq!(cut, 1);
        assert!(
            matches!(&summary.blocks[0], Block::Text { text } if text.starts_with(SUMMARY_PREFIX))
        );
        assert!(compression(&rows, 9, &Origin::Main).is_none());
    }

    #[test]
    fn positions_wrap_and_rewrites_win() {
        assert_eq!(
            density_positions(&[0, 4, 1], &[1], 3),
            Some((vec![0], vec![1]))
        );
        assert_eq!(density_positions(&[1], &[], 0), None);
        assert_eq!(insert_after(Some(7), 3), Some(1));
        assert_eq!(insert_after(Some(7), 0), None);
        assert_eq!(rewind_rows(5, 2), 2);
        assert!(padded("ab", 7).len() >= 7);
    }
}
