//! The small deterministic workload that crash exploration runs: every mutation kind of the
//! journal, chosen in a fixed cycle and parameterised from the model's current state so every
//! operation is valid.

use history::journal::{
    DensityReplacement, Journal, JournalError, Origin, Row, RowId, Speaker, WriteReceipt,
};
use model::journal::{ModelHistory, ModelOp};

/// One mutation of the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkloadOp {
    Append(Vec<Row>),
    /// A replacement whose rows are pushed in these groups (one `replace_rows` record each).
    Replace(Vec<Vec<Row>>),
    SuffixCut(u64),
    Clear,
    Compress {
        summary: Row,
        rows: u64,
    },
    Density {
        removed: Vec<RowId>,
        replacements: Vec<DensityReplacement>,
    },
    Insert {
        anchor: Option<RowId>,
        row: Row,
    },
}

impl WorkloadOp {
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadOp::Append(_) => "append",
            WorkloadOp::Replace(_) => "replace",
            WorkloadOp::SuffixCut(_) => "suffix_cut",
            WorkloadOp::Clear => "clear",
            WorkloadOp::Compress { .. } => "compression",
            WorkloadOp::Density { .. } => "density_mutation",
            WorkloadOp::Insert { .. } => "synthetic_insert",
        }
    }

    /// The same operation for the model.
    pub fn model_op(&self) -> ModelOp<Row> {
        match self {
            WorkloadOp::Append(rows) => ModelOp::Append(rows.clone()),
            WorkloadOp::Replace(groups) => ModelOp::Replace(groups.concat()),
            WorkloadOp::SuffixCut(n) => ModelOp::SuffixCut(*n),
            WorkloadOp::Clear => ModelOp::Clear,
            WorkloadOp::Compress { summary, rows } => ModelOp::Compression {
                summary: summary.clone(),
                rows: *rows,
            },
            WorkloadOp::Density {
                removed,
                replacements,
            } => ModelOp::Density {
                removed: removed.iter().map(|id| id.0).collect(),
                replacements: replacements
                    .iter()
                    .map(|r| (r.id.0, r.row.clone()))
                    .collect(),
            },
            WorkloadOp::Insert { anchor, row } => ModelOp::Insert {
                anchor: anchor.map(|a| a.0),
                row: row.clone(),
            },
        }
    }

    /// Runs the operation on a journal.
    pub fn run(&self, j: &mut Journal, origin: &Origin) -> Result<WriteReceipt, JournalError> {
        let o = origin.clone();
        match self {
            WorkloadOp::Append(rows) => j.append(o, rows.clone()),
            WorkloadOp::Replace(groups) => {
                let mut g = j.begin_replace(o)?;
                for rows in groups {
                    g.push_rows(rows.clone())?;
                }
                g.commit()
            }
            WorkloadOp::SuffixCut(n) => j.suffix_cut(o, *n),
            WorkloadOp::Clear => j.clear(o),
            WorkloadOp::Compress { summary, rows } => j.compress(o, summary.clone(), *rows),
            WorkloadOp::Density {
                removed,
                replacements,
            } => j.density_mutation(o, removed, replacements),
            WorkloadOp::Insert { anchor, row } => j.insert_after(o, *anchor, row.clone()),
        }
    }

    /// J15: a suffix cut, a clear and a compression are one record each. The error says what
    /// the operation (the `i`th of its workload) wrote instead.
    pub fn check_one_record(&self, i: usize, receipt: &WriteReceipt) -> Result<(), String> {
        let single = matches!(
            self,
            WorkloadOp::SuffixCut(_) | WorkloadOp::Clear | WorkloadOp::Compress { .. }
        );
        if single && receipt.records != 1 {
            return Err(format!(
                "op {i} ({}) wrote {} records; it must be one",
                self.kind(),
                receipt.records
            ));
        }
        Ok(())
    }

    /// Whether the operation is one atomic unit on disk: a single record, or a transaction.
    pub fn atomic_with(&self, receipt: &WriteReceipt) -> bool {
        matches!(self, WorkloadOp::Replace(_)) || receipt.records == 1
    }
}

fn row(speaker: Speaker, origin: &Origin, text: String) -> Row {
    Row::text(speaker, origin.clone(), text)
}

/// The `i`th operation of the cycle, valid on `state`.
pub fn next_op(i: usize, state: &ModelHistory<Row>, origin: &Origin) -> WorkloadOp {
    let ids: Vec<RowId> = state.in_context.iter().map(|(id, _)| RowId(*id)).collect();
    let n = ids.len() as u64;
    let append = WorkloadOp::Append(vec![
        row(Speaker::Human, origin, format!("question {i}")),
        row(Speaker::Ai, origin, format!("answer {i}")),
    ]);
    match i % 8 {
        0 => append,
        1 => WorkloadOp::Replace(vec![
            vec![row(Speaker::Human, origin, format!("restored {i}a"))],
            vec![
                row(Speaker::Ai, origin, format!("restored {i}b")),
                // A long tool output: its record spans several disk sectors, so the persistence
                // models have sectors of one record to keep or lose.
                row(
                    Speaker::Tool,
                    origin,
                    format!("restored {i}c: {}", "a line of tool output, ".repeat(72)),
                ),
            ],
        ]),
        2 => WorkloadOp::Insert {
            anchor: ids.first().copied(),
            row: row(Speaker::Ai, origin, format!("inserted {i}")),
        },
        3 if n >= 2 => WorkloadOp::SuffixCut(2),
        4 if n >= 2 => WorkloadOp::Compress {
            summary: row(Speaker::Ai, origin, format!("summary {i}")),
            rows: n - 1,
        },
        5 if n >= 1 => WorkloadOp::Density {
            removed: ids[..ids.len() / 2].to_vec(),
            replacements: vec![DensityReplacement {
                id: ids[n as usize - 1],
                row: row(Speaker::Tool, origin, format!("denser {i}")),
            }],
        },
        6 if n >= 2 => WorkloadOp::Clear,
        _ => append,
    }
}
