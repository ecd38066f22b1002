//! Candidate simplifications of a spool scenario, for the shrinker: fewer requests, a smaller
//! and plainer history, a plainer source.

use super::scenario::{SourceKind, SpoolScenario};
use crate::workload::{Integer, Move};
use crate::workload_items::shrink_helpers;

shrink_helpers!(SpoolScenario);

/// The size the shrinker minimises: requests, then history content in KiB.
pub fn size(s: &SpoolScenario) -> (usize, usize) {
    (s.requests.len(), (s.history.content_bytes / 1024) as usize)
}

/// Every one-move simplification of `s`, not yet made or validated: each move makes its
/// scenario from `s` when applied, and the workload's `shrink_candidates` keeps the valid ones
/// that differ from `s`.
pub fn moves(s: &SpoolScenario) -> Vec<Move<SpoolScenario>> {
    let mut out: Vec<Move<SpoolScenario>> = Vec::new();
    out.extend(removals(s.requests.len(), |x| &mut x.requests));
    if s.history.content_bytes > 1024 {
        out.push(edit(|x| x.history.content_bytes /= 2));
    }
    out.push(edit(|x| x.compress_keep = None));
    out.push(edit(|x| x.source = SourceKind::Rows));
    out.push(edit(|x| x.history.tool_heavy = false));
    out.push(edit(|x| x.system = None));
    if s.history.text_bytes_max >= 32 {
        out.push(edit(|x| x.history.text_bytes_max /= 2));
    }
    out
}

/// The integers the shrinker bisects: the history's size and its longest text, then each
/// request's share of the rows.
pub fn integers(s: &SpoolScenario) -> Vec<Integer<SpoolScenario>> {
    let mut out = Vec::new();
    let content = int(
        "history.content_bytes".into(),
        s.history.content_bytes,
        1,
        |x, v| x.history.content_bytes = v,
    );
    out.extend(content.map(Integer::scaling));
    let text = int(
        "history.text_bytes_max".into(),
        s.history.text_bytes_max.into(),
        16,
        |x, v| x.history.text_bytes_max = v as u32,
    );
    out.extend(text.map(Integer::scaling));
    for (k, request) in s.requests.iter().enumerate() {
        let path = format!("requests[{k}].rows_percent");
        out.extend(int(path, request.rows_percent.into(), 1, move |x, v| {
            x.requests[k].rows_percent = v as u8
        }));
    }
    out
}
