//! Candidate simplifications of a journal scenario, for the shrinker.
//!
//! Each candidate is the scenario with one thing removed or made plainer: a session, a block of
//! operations, one operation, a crash, an injected failure, rows, padding, waits. Candidates are
//! listed from the largest cut to the smallest, so the greedy shrinker takes big steps first.

use super::scenario::{Action, JournalScenario, Pending, SharedAction};
use crate::workload::{halving_blocks, Integer, Move};
use crate::workload_items::shrink_helpers;
use std::collections::BTreeSet;

shrink_helpers!(JournalScenario);

/// The size the shrinker minimises: operations first, then faults (crashes and injected
/// failures).
pub fn size(s: &JournalScenario) -> (usize, usize) {
    let failures: usize = s
        .sessions
        .iter()
        .flat_map(|x| &x.ops)
        .map(|op| {
            usize::from(op.fail)
                + match &op.action {
                    Action::Shared { fail_mirror, .. } => usize::from(fail_mirror.is_some()),
                    Action::Dispose { fault } => usize::from(fault.is_some()),
                    _ => 0,
                }
        })
        .sum();
    let corruptions = s.crashes.iter().filter(|c| c.corrupt.is_some()).count();
    (s.op_count(), s.crashes.len() + corruptions + failures)
}

/// Every one-move simplification of `s`, largest first, not yet made or validated: each move
/// makes its scenario from `s` when applied, and the workload's `shrink_candidates` keeps the
/// valid ones that differ from `s`.
pub fn moves(s: &JournalScenario) -> Vec<Move<JournalScenario>> {
    let mut out: Vec<Move<JournalScenario>> = Vec::new();
    if s.sessions.len() > 1 {
        for k in 0..s.sessions.len() {
            out.push(Box::new(move |s: &JournalScenario| without_session(s, k)));
        }
    }
    for (k, session) in s.sessions.iter().enumerate() {
        for range in halving_blocks(session.ops.len()) {
            out.push(Box::new(move |s: &JournalScenario| {
                without_ops(s, k, range.clone().collect())
            }));
        }
    }
    out.extend(removals(s.crashes.len(), |x| &mut x.crashes));
    plainer_faults(s, &mut out);
    plainer_ops(s, &mut out);
    plainer_sessions(s, &mut out);
    out
}

/// The integers the shrinker bisects: padding of appended rows, a torn tail's bytes, how long
/// a crashed session stays down, the pauses before operations.
pub fn integers(s: &JournalScenario) -> Vec<Integer<JournalScenario>> {
    let mut out = Vec::new();
    for (k, session) in s.sessions.iter().enumerate() {
        for (i, op) in session.ops.iter().enumerate() {
            if let Action::Append { rows } = &op.action {
                for (r, row) in rows.iter().enumerate() {
                    let path = format!("sessions[{k}].ops[{i}].rows[{r}].pad_bytes");
                    let pad = int(path, row.pad_bytes.into(), 0, move |x, v| {
                        if let Action::Append { rows } = &mut x.sessions[k].ops[i].action {
                            rows[r].pad_bytes = v as u32;
                        }
                    });
                    out.extend(pad.map(Integer::scaling));
                }
            }
        }
    }
    for (c, crash) in s.crashes.iter().enumerate() {
        if let Pending::Cut { bytes } = crash.pending {
            let path = format!("crashes[{c}].pending.bytes");
            out.extend(int(path, bytes, 1, move |x, v| {
                x.crashes[c].pending = Pending::Cut { bytes: v as _ }
            }));
        }
        let path = format!("crashes[{c}].down_ms");
        out.extend(int(path, crash.down_ms.into(), 1, move |x, v| {
            x.crashes[c].down_ms = v as u32
        }));
    }
    for (k, session) in s.sessions.iter().enumerate() {
        for (i, op) in session.ops.iter().enumerate() {
            let path = format!("sessions[{k}].ops[{i}].after_ms");
            out.extend(int(path, op.after_ms.into(), 1, move |x, v| {
                x.sessions[k].ops[i].after_ms = v as u32
            }));
        }
    }
    if s.recorded_storage_ops > 0 {
        let ops = s.recorded_storage_ops.into();
        out.extend(int("recorded_storage_ops".into(), ops, 1, |x, v| {
            x.recorded_storage_ops = v as u32
        }));
    }
    out
}

fn without_session(s: &JournalScenario, k: usize) -> JournalScenario {
    let mut x = s.clone();
    x.sessions.remove(k);
    x.crashes.retain(|c| c.session as usize != k);
    for c in &mut x.crashes {
        if c.session as usize > k {
            c.session -= 1;
        }
    }
    x
}

/// Session `k` without the operations at `gone`; crashes and switches that named them go too.
fn without_ops(s: &JournalScenario, k: usize, gone: BTreeSet<usize>) -> JournalScenario {
    let mut x = s.clone();
    let session = &mut x.sessions[k];
    let mut kept = Vec::with_capacity(session.ops.len());
    let mut new_index = Vec::with_capacity(session.ops.len());
    for (i, op) in session.ops.drain(..).enumerate() {
        if gone.contains(&i) {
            new_index.push(None);
        } else {
            new_index.push(Some(kept.len()));
            kept.push(op);
        }
    }
    // A switch to a copy whose fork or clone is gone cannot run: drop it (and crash points on it).
    let mut created = BTreeSet::new();
    let mut dropped = BTreeSet::new();
    for (i, op) in kept.iter().enumerate() {
        match &op.action {
            Action::Fork { name, .. } | Action::Clone { name } => {
                created.insert(name.clone());
            }
            Action::Switch { to, .. } if !created.contains(to) => {
                dropped.insert(i);
            }
            _ => {}
        }
    }
    let mut final_index = Vec::with_capacity(kept.len());
    let mut ops = Vec::with_capacity(kept.len());
    for (i, op) in kept.into_iter().enumerate() {
        if dropped.contains(&i) {
            final_index.push(None);
        } else {
            final_index.push(Some(ops.len()));
            ops.push(op);
        }
    }
    session.ops = ops;
    x.crashes.retain_mut(|c| {
        if c.session as usize != k {
            return true;
        }
        match new_index
            .get(c.op as usize)
            .copied()
            .flatten()
            .and_then(|i| final_index[i])
        {
            Some(i) => {
                c.op = i as u32;
                true
            }
            None => false,
        }
    });
    x
}

fn plainer_faults(s: &JournalScenario, out: &mut Vec<Move<JournalScenario>>) {
    for (k, session) in s.sessions.iter().enumerate() {
        for (i, op) in session.ops.iter().enumerate() {
            if op.fail {
                out.push(edit(move |x| x.sessions[k].ops[i].fail = false));
            }
            if matches!(
                &op.action,
                Action::Shared {
                    fail_mirror: Some(_),
                    ..
                } | Action::Dispose { fault: Some(_) }
            ) {
                out.push(edit(move |x| match &mut x.sessions[k].ops[i].action {
                    Action::Shared { fail_mirror, .. } => *fail_mirror = None,
                    Action::Dispose { fault } => *fault = None,
                    _ => {}
                }));
            }
        }
    }
    for (c, crash) in s.crashes.iter().enumerate() {
        if !crash.arrivals.is_empty() {
            out.push(edit(move |x| {
                x.crashes[c].arrivals.pop();
            }));
        }
        if crash.corrupt.is_some() {
            out.push(edit(move |x| x.crashes[c].corrupt = None));
        }
        if crash.down_ms > 1 {
            out.push(edit(move |x| x.crashes[c].down_ms = 1));
        }
        if let Pending::Cut { bytes } = crash.pending {
            if bytes > 1 {
                out.push(edit(move |x| {
                    x.crashes[c].pending = Pending::Cut { bytes: bytes / 2 }
                }));
            }
        }
    }
}

fn plainer_ops(s: &JournalScenario, out: &mut Vec<Move<JournalScenario>>) {
    for (k, session) in s.sessions.iter().enumerate() {
        for (i, op) in session.ops.iter().enumerate() {
            if op.after_ms > 1 {
                out.push(edit(move |x| x.sessions[k].ops[i].after_ms = 1));
            }
            // Whether a move changes anything is tried on a copy of the one action.
            if plainer_action(&mut op.action.clone()) {
                out.push(edit(move |x| {
                    plainer_action(&mut x.sessions[k].ops[i].action);
                }));
            }
            // Shorter padding of any padded row.
            if halve_padding(&mut op.action.clone()) {
                out.push(edit(move |x| {
                    halve_padding(&mut x.sessions[k].ops[i].action);
                }));
            }
        }
    }
}

/// One row, arrival or group fewer, or a smaller rewrite; whether anything changed.
fn plainer_action(action: &mut Action) -> bool {
    match action {
        Action::Append { rows } if rows.len() > 1 => {
            rows.pop();
            true
        }
        Action::Replace {
            groups, arrivals, ..
        } => {
            if !arrivals.is_empty() {
                arrivals.pop();
                true
            } else if let Some(g) = groups.iter_mut().find(|g| !g.is_empty()) {
                g.pop();
                true
            } else {
                false
            }
        }
        Action::Density { rewrite_bytes, .. } if *rewrite_bytes > 16 => {
            *rewrite_bytes /= 2;
            true
        }
        Action::Shared {
            op: SharedAction::Append { rows } | SharedAction::Restore { rows },
            ..
        } if rows.len() > 1 => {
            rows.pop();
            true
        }
        _ => false,
    }
}

/// A session without its shared history when no operation uses it; a replacement with one group
/// fewer.
fn plainer_sessions(s: &JournalScenario, out: &mut Vec<Move<JournalScenario>>) {
    for (k, session) in s.sessions.iter().enumerate() {
        let shared_used = session.ops.iter().any(|op| {
            matches!(
                op.action,
                Action::Shared { .. } | Action::AttachMirror { .. } | Action::SharedResume
            )
        });
        let has_shared = !session.subagents.is_empty() || !session.mirrors.is_empty();
        if !shared_used && has_shared {
            out.push(edit(move |x| {
                x.sessions[k].subagents.clear();
                x.sessions[k].mirrors.clear();
            }));
        }
        for (i, op) in session.ops.iter().enumerate() {
            if let Action::Replace { groups, .. } = &op.action {
                if groups.len() > 1 {
                    // A crash inside the replacement is capped by the groups left.
                    let during_max = groups.len() as u32 - 1;
                    out.push(edit(move |x| {
                        if let Action::Replace { groups, .. } = &mut x.sessions[k].ops[i].action {
                            groups.pop();
                        }
                        for c in &mut x.crashes {
                            if c.session as usize == k && c.op as usize == i {
                                c.during = c.during.map(|d| d.min(during_max));
                            }
                        }
                    }));
                }
            }
        }
    }
}

fn halve_padding(action: &mut Action) -> bool {
    let rows: Vec<&mut super::scenario::RowSpec> = match action {
        Action::Append { rows } => rows.iter_mut().collect(),
        Action::Replace { groups, .. } => groups.iter_mut().flatten().collect(),
        _ => Vec::new(),
    };
    match rows.into_iter().find(|r| r.pad_bytes > 16) {
        Some(r) => {
            r.pad_bytes /= 2;
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::JournalWorkload;
    use crate::workload_items::seeds_with_shrink_candidates;

    #[test]
    fn candidates_are_valid_and_not_larger() {
        for (seed, s, cands) in seeds_with_shrink_candidates::<JournalWorkload>() {
            assert!(cands.iter().all(|c| size(c).0 <= size(&s).0), "seed {seed}");
        }
    }
}
