//! The journal's record kinds: what one self-validating frame carries.
//!
//! Every record names its origin (the main session or a subagent) and a sequence number one above
//! the previous record's, so a reader can tell a lost or repeated record from a valid history. Row
//! identities ([`RowId`]) are not stored with appended rows: the fold hands them out in record
//! order, so the same bytes always give the same ids, and only records that point at existing rows
//! (density mutations, synthetic inserts) carry ids.

use serde::{Deserialize, Serialize};
use strum::IntoStaticStr;

use super::row::{Origin, Row};

/// The identity of a row within one journal, handed out by the fold in record order.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct RowId(pub u64);

/// One replacement of a density mutation: the row with `id` gets new content, keeping its place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DensityReplacement {
    pub id: RowId,
    pub row: Row,
}

/// What a record does to the history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, IntoStaticStr)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RecordBody {
    /// The first record of a journal. `mirror_of` is the origin filter of a per-origin mirror
    /// journal, so a resumed mirror keeps its filter (J7); `None` for a primary journal.
    Start { mirror_of: Option<Origin> },
    /// Rows appended at the end of the history.
    Append { rows: Vec<Row> },
    /// Opens a general replacement. `txn` is this record's own sequence number.
    ReplaceBegin { txn: u64 },
    /// Rows of the open replacement `txn`; invisible until its commit.
    ReplaceRows { txn: u64, rows: Vec<Row> },
    /// Makes replacement `txn` the in-context history, atomically.
    ReplaceCommit { txn: u64 },
    /// Discards replacement `txn`.
    ReplaceAbort { txn: u64 },
    /// Removes the last `rows` in-context rows (a rewind), as one record (J15).
    SuffixCut { rows: u64 },
    /// Removes every in-context row, as one record (J15).
    Clear,
    /// Replaces the first `compressed_rows` in-context rows with `summary`, as one record (J15).
    Compression { summary: Row, compressed_rows: u64 },
    /// Removes rows and rewrites rows in place; at most 64 rows or 64 KiB a record (J16).
    DensityMutation {
        removed: Vec<RowId>,
        replacements: Vec<DensityReplacement>,
    },
    /// Inserts `row` right after `anchor` (at the start when `None`); skipped when the anchor is
    /// no longer in context.
    SyntheticInsert { anchor: Option<RowId>, row: Row },
}

impl RecordBody {
    /// The record kind as `histsim journal dump` spells it.
    pub fn kind(&self) -> &'static str {
        self.into()
    }

    /// The transaction a replace_* record belongs to.
    pub fn txn(&self) -> Option<u64> {
        match self {
            RecordBody::ReplaceBegin { txn }
            | RecordBody::ReplaceRows { txn, .. }
            | RecordBody::ReplaceCommit { txn }
            | RecordBody::ReplaceAbort { txn } => Some(*txn),
            _ => None,
        }
    }

    /// How many rows the record carries or names (the J16 bound counts these).
    pub fn row_count(&self) -> usize {
        match self {
            RecordBody::Append { rows } | RecordBody::ReplaceRows { rows, .. } => rows.len(),
            RecordBody::Compression { .. } | RecordBody::SyntheticInsert { .. } => 1,
            RecordBody::DensityMutation {
                removed,
                replacements,
            } => removed.len() + replacements.len(),
            _ => 0,
        }
    }
}

/// One journal record: the unit that a frame checksums and a reader applies. Written as
/// derived; read in one pass through its wire shape (`Deserialize` is in `wire.rs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Record {
    /// One above the previous record's; the first record of a journal has 1.
    pub seq: u64,
    /// Who issued the mutation.
    pub origin: Origin,
    #[serde(flatten)]
    pub body: RecordBody,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::row::Speaker;

    #[test]
    fn records_round_trip_through_json_with_their_kind() {
        let bodies = vec![
            RecordBody::Start { mirror_of: None },
            RecordBody::Append {
                rows: vec![Row::text(Speaker::Human, Origin::Main, "hi")],
            },
            RecordBody::ReplaceBegin { txn: 3 },
            RecordBody::Clear,
            RecordBody::DensityMutation {
                removed: vec![RowId(1)],
                replacements: vec![DensityReplacement {
                    id: RowId(2),
                    row: Row::text(Speaker::Ai, Origin::Subagent("s".into()), "x"),
                }],
            },
        ];
        for body in bodies {
            let record = Record {
                seq: 7,
                origin: Origin::Subagent("explorer".into()),
                body: body.clone(),
            };
            let json = serde_json::to_value(&record).expect("encodes");
            assert_eq!(json["kind"], body.kind());
            let back: Record = serde_json::from_value(json).expect("decodes");
            assert_eq!(back, record);
        }
    }

    #[test]
    fn row_counts_cover_rows_carried_and_named() {
        let row = Row::text(Speaker::Ai, Origin::Main, "r");
        assert_eq!(
            RecordBody::Append {
                rows: vec![row.clone(), row.clone()]
            }
            .row_count(),
            2
        );
        assert_eq!(RecordBody::Clear.row_count(), 0);
        assert_eq!(RecordBody::ReplaceCommit { txn: 1 }.txn(), Some(1));
    }
}
