//! Splitting row-carrying changes into bounded records: at most 64 rows or 64 KiB each (J16).
//!
//! A density mutation (rows removed or rewritten to make the context denser) and the rows of a
//! replacement can be arbitrarily large; a record that holds all of them costs a reader that much
//! memory at once and makes one torn write lose all of it. Items are packed greedily in order; a
//! single row larger than the byte bound travels alone.

use std::collections::BTreeSet;

use super::record::{DensityReplacement, RecordBody, RowId};
use super::row::Row;

/// Most rows (removed ids count as rows) one density or replace_rows record may hold.
pub const MAX_RECORD_ROWS: usize = 64;
/// Most payload bytes one density or replace_rows record may hold, unless it holds one row.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;
/// What a record spends besides its items (seq, origin, kind, field names), bounded generously.
const RECORD_OVERHEAD_BYTES: usize = 512;

/// The records of one density mutation. A row both removed and replaced is only replaced (the
/// replacement wins), so the order of the records never matters for it.
pub fn density_records(removed: &[RowId], replacements: &[DensityReplacement]) -> Vec<RecordBody> {
    let replaced: BTreeSet<RowId> = replacements.iter().map(|r| r.id).collect();
    let mut chunks: Vec<RecordBody> = Vec::new();
    let mut rem: Vec<RowId> = Vec::new();
    let mut rep: Vec<DensityReplacement> = Vec::new();
    let mut bytes = RECORD_OVERHEAD_BYTES;
    let flush = |rem: &mut Vec<RowId>, rep: &mut Vec<DensityReplacement>, out: &mut Vec<_>| {
        if !rem.is_empty() || !rep.is_empty() {
            out.push(RecordBody::DensityMutation {
                removed: std::mem::take(rem),
                replacements: std::mem::take(rep),
            });
        }
    };
    for id in removed.iter().filter(|id| !replaced.contains(id)) {
        let size = 24;
        if rem.len() + rep.len() == MAX_RECORD_ROWS || bytes + size > MAX_RECORD_BYTES {
            flush(&mut rem, &mut rep, &mut chunks);
            bytes = RECORD_OVERHEAD_BYTES;
        }
        rem.push(*id);
        bytes += size;
    }
    for r in replacements {
        let size = json_bytes(&r.row) + 32;
        let full = rem.len() + rep.len() == MAX_RECORD_ROWS || bytes + size > MAX_RECORD_BYTES;
        if full && !(rem.is_empty() && rep.is_empty()) {
            flush(&mut rem, &mut rep, &mut chunks);
            bytes = RECORD_OVERHEAD_BYTES;
        }
        rep.push(r.clone());
        bytes += size;
    }
    flush(&mut rem, &mut rep, &mut chunks);
    // Post-condition: no record over the row bound, and every replacement in one of them.
    debug_assert!(chunks.iter().all(|c| matches!(c,
        RecordBody::DensityMutation { removed, replacements }
            if removed.len() + replacements.len() <= MAX_RECORD_ROWS)));
    debug_assert_eq!(
        chunks
            .iter()
            .map(|c| match c {
                RecordBody::DensityMutation { replacements, .. } => replacements.len(),
                _ => 0,
            })
            .sum::<usize>(),
        replacements.len()
    );
    chunks
}

/// The rows of a replacement, as bounded groups for `replace_rows` records.
pub fn row_groups(rows: Vec<Row>) -> Vec<Vec<Row>> {
    let count = rows.len();
    let mut groups: Vec<Vec<Row>> = Vec::new();
    let mut group: Vec<Row> = Vec::new();
    let mut bytes = RECORD_OVERHEAD_BYTES;
    for row in rows {
        let size = json_bytes(&row) + 1;
        if !group.is_empty() && (group.len() == MAX_RECORD_ROWS || bytes + size > MAX_RECORD_BYTES)
        {
            groups.push(std::mem::take(&mut group));
            bytes = RECORD_OVERHEAD_BYTES;
        }
        group.push(row);
        bytes += size;
    }
    if !group.is_empty() {
        groups.push(group);
    }
    // Post-condition: every row in one group, in no empty group over the row bound.
    debug_assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), count);
    debug_assert!(groups
        .iter()
        .all(|g| !g.is_empty() && g.len() <= MAX_RECORD_ROWS));
    groups
}

fn json_bytes(row: &Row) -> usize {
    serde_json::to_vec(row).map(|v| v.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::frame::{encode_frame, HEADER_BYTES};
    use crate::journal::record::Record;
    use crate::journal::row::{Origin, Speaker};

    fn rep(id: u64, bytes: usize) -> DensityReplacement {
        DensityReplacement {
            id: RowId(id),
            row: Row::text(Speaker::Tool, Origin::Main, "x".repeat(bytes)),
        }
    }

    fn payload_bytes(body: &RecordBody) -> usize {
        let rec = Record {
            seq: u64::MAX,
            origin: Origin::Subagent("a-long-subagent-name".into()),
            body: body.clone(),
        };
        encode_frame(&rec).len() - HEADER_BYTES
    }

    #[test]
    fn records_stay_within_64_rows_and_64_kib() {
        let removed: Vec<RowId> = (0..300).map(RowId).collect();
        let reps: Vec<_> = (300..400).map(|i| rep(i, 3000)).collect();
        let bodies = density_records(&removed, &reps);
        let mut rows = 0;
        for b in &bodies {
            assert!(b.row_count() <= MAX_RECORD_ROWS);
            assert!(payload_bytes(b) <= MAX_RECORD_BYTES, "{}", payload_bytes(b));
            rows += b.row_count();
        }
        assert_eq!(rows, 400);
    }

    #[test]
    fn an_oversized_row_travels_alone_and_replacement_wins() {
        let bodies = density_records(&[RowId(1), RowId(2)], &[rep(1, 10), rep(2, 100_000)]);
        let counts: Vec<usize> = bodies.iter().map(RecordBody::row_count).collect();
        assert_eq!(counts, [1, 1]);
        let groups = row_groups(vec![rep(0, 70_000).row, rep(1, 5).row, rep(2, 5).row]);
        assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), [1, 2]);
        assert!(density_records(&[], &[]).is_empty());
    }
}
