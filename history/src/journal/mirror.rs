//! Translating a shared-history mutation into the write one per-origin mirror needs.
//!
//! A mirror for origin O holds exactly the in-context rows of O, in order: the shared history
//! filtered by O. Each mutation is translated against the shared history as it was before the
//! mutation: positions in the shared history become positions among O's rows, and row ids become
//! the mirror's own ids (the mirror's fold hands out its own). A rewind removes from O's mirror
//! only the rows of O it removed (J7).

use super::error::JournalError;
use super::fold::{Entry, Fold};
use super::record::{DensityReplacement, RowId};
use super::row::{Origin, Row};
use super::session::Recorder;
use super::writer::{Journal, WriteReceipt};
use crate::BugId;

/// A mutation of the shared history, in shared-history terms; translated ([`translate`]), one
/// mirror's part of it in the mirror's own terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SharedOp {
    Append(Vec<Row>),
    Insert {
        anchor: Option<RowId>,
        row: Row,
    },
    Rewind(u64),
    Clear,
    Compress {
        summary: Row,
        rows: u64,
    },
    Density {
        removed: Vec<RowId>,
        replacements: Vec<DensityReplacement>,
    },
    Restore(Vec<Row>),
}

/// The write `mirror` needs for `op`, given the shared history `shared` before `op`.
pub fn translate(op: &SharedOp, shared: &Fold, mirror: &Recorder) -> Option<SharedOp> {
    let out = translate_op(op, shared, mirror);
    // Post-condition: a mirror is never asked to drop more rows than it holds, since it holds
    // exactly the shared rows it accepts. A planted bug may break that agreement, and the
    // checks must be the ones to see it.
    let held = mirror.journal().fold().in_context().len();
    debug_assert!(
        mirror.journal().options().planted.active().is_some()
            || match &out {
                Some(SharedOp::Rewind(n)) => *n <= held as u64,
                Some(SharedOp::Compress { rows, .. }) => *rows <= held as u64,
                Some(SharedOp::Density { removed, .. }) => removed.len() <= held,
                _ => true,
            }
    );
    out
}

/// [`translate`] without its post-condition.
fn translate_op(op: &SharedOp, shared: &Fold, mirror: &Recorder) -> Option<SharedOp> {
    let ctx = shared.in_context();
    let accepted = |range: &[Entry]| {
        range
            .iter()
            .filter(|e| mirror.accepts(&e.row.origin))
            .count()
    };
    let own = mirror.journal().fold().in_context();
    match op {
        SharedOp::Append(rows) => {
            let mine: Vec<Row> = rows
                .iter()
                .filter(|r| mirror.accepts(&r.origin))
                .cloned()
                .collect();
            (!mine.is_empty()).then_some(SharedOp::Append(mine))
        }
        SharedOp::Insert { anchor, row } => {
            if !mirror.accepts(&row.origin) {
                return None;
            }
            let after = match anchor {
                None => 0,
                // The shared insert is skipped when its anchor is gone; so is the mirror's.
                Some(id) => shared.position(*id)? + 1,
            };
            let k = accepted(&ctx[..after]);
            let anchor = (k > 0).then(|| own[k - 1].id);
            Some(SharedOp::Insert {
                anchor,
                row: row.clone(),
            })
        }
        SharedOp::Rewind(n) => {
            let cut = if mirror.journal().options().planted.is(BugId::J7) {
                // planted J7: a rewind reached every mirror with its full row count.
                (*n).min(own.len() as u64)
            } else {
                accepted(&ctx[ctx.len() - *n as usize..]) as u64
            };
            (cut > 0).then_some(SharedOp::Rewind(cut))
        }
        SharedOp::Clear => (!own.is_empty()).then_some(SharedOp::Clear),
        SharedOp::Compress { summary, rows } => {
            let m = accepted(&ctx[..*rows as usize]);
            if mirror.accepts(&summary.origin) {
                Some(SharedOp::Compress {
                    summary: summary.clone(),
                    rows: m as u64,
                })
            } else {
                (m > 0).then(|| SharedOp::Density {
                    removed: own[..m].iter().map(|e| e.id).collect(),
                    replacements: Vec::new(),
                })
            }
        }
        SharedOp::Density {
            removed,
            replacements,
        } => translate_density(ctx, own, mirror, removed, replacements),
        SharedOp::Restore(rows) => Some(SharedOp::Restore(
            rows.iter()
                .filter(|r| mirror.accepts(&r.origin))
                .cloned()
                .collect(),
        )),
    }
}

/// [`translate`] of a density mutation: the removed and replaced shared rows of the mirror's
/// origin, named by the mirror's own ids (`ctx` is the shared history's context, `own` the
/// mirror's).
fn translate_density(
    ctx: &[Entry],
    own: &[Entry],
    mirror: &Recorder,
    removed: &[RowId],
    replacements: &[DensityReplacement],
) -> Option<SharedOp> {
    // Pair each accepted shared row with the mirror row at the same place among O's rows.
    let mut map = std::collections::BTreeMap::new();
    let mut k = 0;
    for e in ctx {
        if mirror.accepts(&e.row.origin) {
            if let Some(m) = own.get(k) {
                map.insert(e.id, m.id);
            }
            k += 1;
        }
    }
    let removed: Vec<RowId> = removed
        .iter()
        .filter_map(|id| map.get(id))
        .copied()
        .collect();
    let replacements: Vec<DensityReplacement> = replacements
        .iter()
        .filter_map(|r| {
            map.get(&r.id).map(|id| DensityReplacement {
                id: *id,
                row: r.row.clone(),
            })
        })
        .collect();
    (!removed.is_empty() || !replacements.is_empty()).then_some(SharedOp::Density {
        removed,
        replacements,
    })
}

/// Writes a mutation (the shared history's own, or one mirror's part of it) to `j`, durably.
pub fn apply_write(
    j: &mut Journal,
    origin: Origin,
    write: SharedOp,
) -> Result<WriteReceipt, JournalError> {
    match write {
        SharedOp::Append(rows) => j.append(origin, rows),
        SharedOp::Insert { anchor, row } => j.insert_after(origin, anchor, row),
        SharedOp::Rewind(n) => j.suffix_cut(origin, n),
        SharedOp::Clear => j.clear(origin),
        SharedOp::Compress { summary, rows } => j.compress(origin, summary, rows),
        SharedOp::Density {
            removed,
            replacements,
        } => j.density_mutation(origin, &removed, &replacements),
        SharedOp::Restore(rows) => j.replace_all(origin, rows),
    }
}
