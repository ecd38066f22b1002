//! How a record and a block are read from their JSON: in one pass over the payload.
//!
//! `Record` flattens its internally tagged body, and `Block` is internally tagged; serde's derive
//! reads both by first buffering every field into a generic tree and then reading that tree again
//! (its `Content`), which was a fifth of the journal workload's time (every open, every reader
//! refresh and every check of a crash image decodes whole journals). These wire shapes name every
//! field a kind can have, so serde reads the payload straight into them; the kind then says which
//! fields must be there. The JSON written is unchanged (serialization is still derived), and the
//! same documents decode to the same values: a field a kind does not have is ignored, as before,
//! and a missing one is an error naming it.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use super::record::{DensityReplacement, Record, RecordBody, RowId};
use super::row::{Block, Origin, Row};

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Record, D::Error> {
        RecordWire::deserialize(deserializer)?
            .try_into()
            .map_err(de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Block, D::Error> {
        BlockWire::deserialize(deserializer)?
            .try_into()
            .map_err(de::Error::custom)
    }
}

/// Every field of every record kind.
#[derive(Deserialize)]
struct RecordWire {
    seq: u64,
    origin: Origin,
    kind: RecordKind,
    mirror_of: Option<Origin>,
    rows: Option<RowsField>,
    txn: Option<u64>,
    summary: Option<Row>,
    compressed_rows: Option<u64>,
    removed: Option<Vec<RowId>>,
    replacements: Option<Vec<DensityReplacement>>,
    anchor: Option<RowId>,
    row: Option<Row>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum RecordKind {
    Start,
    Append,
    ReplaceBegin,
    ReplaceRows,
    ReplaceCommit,
    ReplaceAbort,
    SuffixCut,
    Clear,
    Compression,
    DensityMutation,
    SyntheticInsert,
}

/// `rows` is the rows an append carries but the number of rows a suffix cut removes; the kind
/// may come after it, so its value is read as whichever it is.
enum RowsField {
    Rows(Vec<Row>),
    Count(u64),
}

impl<'de> Deserialize<'de> for RowsField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RowsField, D::Error> {
        struct RowsVisitor;
        impl<'de> Visitor<'de> for RowsVisitor {
            type Value = RowsField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of rows or a row count")
            }
            fn visit_u64<E: de::Error>(self, count: u64) -> Result<RowsField, E> {
                Ok(RowsField::Count(count))
            }
            fn visit_i64<E: de::Error>(self, count: i64) -> Result<RowsField, E> {
                u64::try_from(count)
                    .map(RowsField::Count)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(count), &"a row count"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RowsField, A::Error> {
                let mut rows = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(row) = seq.next_element()? {
                    rows.push(row);
                }
                Ok(RowsField::Rows(rows))
            }
        }
        deserializer.deserialize_any(RowsVisitor)
    }
}

/// Why a document with a known kind is not that kind's record, in serde's own words.
#[derive(Debug)]
enum NotARecord {
    Missing(&'static str),
    RowsNotAList,
    RowsNotACount,
}

impl fmt::Display for NotARecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotARecord::Missing(field) => write!(f, "missing field `{field}`"),
            NotARecord::RowsNotAList => f.write_str("invalid type: integer, expected a sequence"),
            NotARecord::RowsNotACount => f.write_str("invalid type: sequence, expected u64"),
        }
    }
}

fn required<T>(value: Option<T>, field: &'static str) -> Result<T, NotARecord> {
    value.ok_or(NotARecord::Missing(field))
}

fn row_list(rows: Option<RowsField>) -> Result<Vec<Row>, NotARecord> {
    match required(rows, "rows")? {
        RowsField::Rows(rows) => Ok(rows),
        RowsField::Count(_) => Err(NotARecord::RowsNotAList),
    }
}

fn row_count(rows: Option<RowsField>) -> Result<u64, NotARecord> {
    match required(rows, "rows")? {
        RowsField::Count(count) => Ok(count),
        RowsField::Rows(_) => Err(NotARecord::RowsNotACount),
    }
}

impl TryFrom<RecordWire> for Record {
    type Error = NotARecord;

    fn try_from(w: RecordWire) -> Result<Record, NotARecord> {
        let body = match w.kind {
            RecordKind::Start => RecordBody::Start {
                mirror_of: w.mirror_of,
            },
            RecordKind::Append => RecordBody::Append {
                rows: row_list(w.rows)?,
            },
            RecordKind::ReplaceBegin => RecordBody::ReplaceBegin {
                txn: required(w.txn, "txn")?,
            },
            RecordKind::ReplaceRows => RecordBody::ReplaceRows {
                txn: required(w.txn, "txn")?,
                rows: row_list(w.rows)?,
            },
            RecordKind::ReplaceCommit => RecordBody::ReplaceCommit {
                txn: required(w.txn, "txn")?,
            },
            RecordKind::ReplaceAbort => RecordBody::ReplaceAbort {
                txn: required(w.txn, "txn")?,
            },
            RecordKind::SuffixCut => RecordBody::SuffixCut {
                rows: row_count(w.rows)?,
            },
            RecordKind::Clear => RecordBody::Clear,
            RecordKind::Compression => RecordBody::Compression {
                summary: required(w.summary, "summary")?,
                compressed_rows: required(w.compressed_rows, "compressed_rows")?,
            },
            RecordKind::DensityMutation => RecordBody::DensityMutation {
                removed: required(w.removed, "removed")?,
                replacements: required(w.replacements, "replacements")?,
            },
            RecordKind::SyntheticInsert => RecordBody::SyntheticInsert {
                anchor: w.anchor,
                row: required(w.row, "row")?,
            },
        };
        Ok(Record {
            seq: w.seq,
            origin: w.origin,
            body,
        })
    }
}

/// Every field of every block kind.
#[derive(Deserialize)]
struct BlockWire {
    #[serde(rename = "type")]
    kind: BlockKind,
    text: Option<String>,
    id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
    call_id: Option<String>,
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum BlockKind {
    Text,
    ToolCall,
    ToolResult,
}

impl TryFrom<BlockWire> for Block {
    type Error = NotARecord;

    fn try_from(w: BlockWire) -> Result<Block, NotARecord> {
        Ok(match w.kind {
            BlockKind::Text => Block::Text {
                text: required(w.text, "text")?,
            },
            BlockKind::ToolCall => Block::ToolCall {
                id: required(w.id, "id")?,
                name: required(w.name, "name")?,
                arguments: required(w.arguments, "arguments")?,
            },
            BlockKind::ToolResult => Block::ToolResult {
                call_id: required(w.call_id, "call_id")?,
                name: required(w.name, "name")?,
                content: required(w.content, "content")?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::row::Speaker;

    fn rows() -> Vec<Row> {
        vec![
            Row::text(Speaker::Human, Origin::Main, "q \"quoted\" \\ \u{e9}"),
            Row {
                speaker: Speaker::Ai,
                origin: Origin::Subagent("explorer".into()),
                blocks: vec![
                    Block::Text { text: "a".into() },
                    Block::ToolCall {
                        id: "c1".into(),
                        name: "run".into(),
                        arguments: "{\"call\":\"c1\"}".into(),
                    },
                ],
            },
            Row::tool_result(Origin::Main, "c1", "run", ""),
        ]
    }

    fn bodies() -> Vec<RecordBody> {
        let row = rows()[1].clone();
        vec![
            RecordBody::Start { mirror_of: None },
            RecordBody::Start {
                mirror_of: Some(Origin::Subagent("s".into())),
            },
            RecordBody::Append { rows: rows() },
            RecordBody::Append { rows: Vec::new() },
            RecordBody::ReplaceBegin { txn: 3 },
            RecordBody::ReplaceRows {
                txn: 3,
                rows: rows(),
            },
            RecordBody::ReplaceCommit { txn: 3 },
            RecordBody::ReplaceAbort { txn: u64::MAX },
            RecordBody::SuffixCut { rows: 2 },
            RecordBody::Clear,
            RecordBody::Compression {
                summary: row.clone(),
                compressed_rows: 4,
            },
            RecordBody::DensityMutation {
                removed: vec![RowId(1), RowId(5)],
                replacements: vec![DensityReplacement {
                    id: RowId(2),
                    row: row.clone(),
                }],
            },
            RecordBody::SyntheticInsert {
                anchor: None,
                row: row.clone(),
            },
            RecordBody::SyntheticInsert {
                anchor: Some(RowId(9)),
                row,
            },
        ]
    }

    fn decode(json: &str) -> Result<Record, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn every_kind_reads_back_as_written_and_as_the_derived_body_reads_it() {
        for body in bodies() {
            let record = Record {
                seq: 12,
                origin: Origin::Subagent("s".into()),
                body: body.clone(),
            };
            let json = serde_json::to_string(&record).unwrap();
            assert_eq!(decode(&json), Ok(record), "{json}");
            // The body alone through serde's derived (buffering) reader of the same document.
            let derived: RecordBody = serde_json::from_str(&json).unwrap();
            assert_eq!(derived, body, "{json}");
        }
    }

    #[test]
    fn fields_in_any_order_and_unknown_fields_are_read_as_before() {
        let json = r#"{"rows":2,"txn":"not this kind's","kind":"suffix_cut","origin":"main","seq":4,"extra":[1]}"#;
        let want = Record {
            seq: 4,
            origin: Origin::Main,
            body: RecordBody::SuffixCut { rows: 2 },
        };
        // The one difference from the derived reader: a field of another kind is typed here, so
        // one of the wrong type is an error where the derived reader skipped it. The writer never
        // writes another kind's fields, so only a document no journal wrote can tell.
        assert!(decode(json)
            .unwrap_err()
            .starts_with("invalid type: string"));
        let json = r#"{"rows":2,"summary_of":"x","kind":"suffix_cut","origin":"main","seq":4,"extra":[1]}"#;
        assert_eq!(decode(json), Ok(want));
        let json = r#"{"seq":1,"origin":"main","kind":"start","mirror_of":null}"#;
        assert_eq!(
            decode(json).unwrap().body,
            RecordBody::Start { mirror_of: None }
        );
        let json = r#"{"seq":1,"origin":"main","kind":"append","rows":[{"origin":"main","blocks":[{"text":"t","type":"text","call_id":"ignored"}],"speaker":"human"}]}"#;
        assert_eq!(
            decode(json).unwrap().body,
            RecordBody::Append {
                rows: vec![Row::text(Speaker::Human, Origin::Main, "t")]
            }
        );
    }

    #[test]
    fn a_document_that_is_no_record_is_an_error_naming_what_is_wrong() {
        let cases = [
            (
                r#"{"seq":1,"origin":"main","kind":"append"}"#,
                "missing field `rows`",
            ),
            (
                r#"{"seq":1,"origin":"main","rows":[]}"#,
                "missing field `kind`",
            ),
            (
                r#"{"seq":1,"origin":"main","kind":"replace_rows","rows":[]}"#,
                "missing field `txn`",
            ),
            (
                r#"{"seq":1,"origin":"main","kind":"append","rows":3}"#,
                "invalid type: integer, expected a sequence",
            ),
            (
                r#"{"seq":1,"origin":"main","kind":"suffix_cut","rows":[]}"#,
                "invalid type: sequence, expected u64",
            ),
            (
                r#"{"seq":1,"origin":"main","kind":"suffix_cut","rows":-1}"#,
                "invalid value: integer `-1`, expected a row count",
            ),
            (
                r#"{"seq":1,"origin":"main","kind":"merge"}"#,
                "unknown variant `merge`",
            ),
            (
                r#"{"seq":1,"origin":"main","kind":"compression","compressed_rows":1}"#,
                "missing field `summary`",
            ),
            (
                r#"{"seq":1,"origin":"main","kind":"append","rows":[{"speaker":"ai","origin":"main","blocks":[{"type":"tool_call","id":"c","name":"n"}]}]}"#,
                "missing field `arguments`",
            ),
            (
                r#"{"seq":1,"origin":"main","kind":"append","rows":[{"speaker":"ai","origin":"main","blocks":[{"type":"image"}]}]}"#,
                "unknown variant `image`",
            ),
        ];
        for (json, want) in cases {
            let got = decode(json).expect_err(json);
            assert!(got.starts_with(want), "{json}: {got}");
        }
    }
}
