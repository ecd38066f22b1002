//! Candidate simplifications of a spool scenario, for the shrinker: fewer requests, a smaller
//! and plainer history, a plainer source.

use super::scenario::{SourceKind, SpoolScenario};

/// The size the shrinker minimises: requests, then history content in KiB.
pub fn size(s: &SpoolScenario) -> (usize, usize) {
    (s.requests.len(), (s.history.content_bytes / 1024) as usize)
}

/// Every one-move simplification of `s`, not yet validated: the workload's
/// `shrink_candidates` keeps the valid ones that differ from `s`.
pub fn moves(s: &SpoolScenario) -> Vec<SpoolScenario> {
    let mut out = Vec::new();
    for k in 0..s.requests.len() {
        let mut x = s.clone();
        x.requests.remove(k);
        out.push(x);
    }
    if s.history.content_bytes > 1024 {
        let mut x = s.clone();
        x.history.content_bytes /= 2;
        out.push(x);
    }
    let mut x = s.clone();
    x.compress_keep = None;
    out.push(x);
    let mut x = s.clone();
    x.source = SourceKind::Rows;
    out.push(x);
    let mut x = s.clone();
    x.history.tool_heavy = false;
    out.push(x);
    let mut x = s.clone();
    x.system = None;
    out.push(x);
    if s.history.text_bytes_max >= 32 {
        let mut x = s.clone();
        x.history.text_bytes_max /= 2;
        out.push(x);
    }
    out
}
