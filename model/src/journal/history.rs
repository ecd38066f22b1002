//! A history as a plain list of rows, changed by whole operations.
//!
//! The rules, stated once: every row an operation introduces gets the next id (appended rows, the
//! rows of a replacement, a compression's summary, an inserted row even when its anchor is gone);
//! a density replacement keeps its row's id. The in-context list is what a request sends; the
//! transcript lists every introduced row in order of introduction, and only a suffix cut removes
//! rows from it. A replacement is one operation: the model has no half-done state.

use std::fmt;

/// One whole operation on a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelOp<R> {
    /// Rows added at the end.
    Append(Vec<R>),
    /// The in-context rows become these (a committed replacement).
    Replace(Vec<R>),
    /// The last n in-context rows go.
    SuffixCut(u64),
    /// Every in-context row goes.
    Clear,
    /// The first `rows` in-context rows become one summary row.
    Compression { summary: R, rows: u64 },
    /// Rows with these ids go, and rows with these ids get new content in place; a replacement
    /// wins over a removal. Ids not in context are ignored.
    Density {
        removed: Vec<u64>,
        replacements: Vec<(u64, R)>,
    },
    /// `row` goes right after the row with id `anchor` (first when `None`); skipped when the
    /// anchor is not in context.
    Insert { anchor: Option<u64>, row: R },
}

/// An operation that cannot apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    CutBeyondContext { rows: u64, in_context: u64 },
    CompressBeyondContext { rows: u64, in_context: u64 },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::CutBeyondContext { rows, in_context } => {
                write!(f, "cut of {rows} rows with {in_context} in context")
            }
            ModelError::CompressBeyondContext { rows, in_context } => {
                write!(f, "compression of {rows} rows with {in_context} in context")
            }
        }
    }
}

impl std::error::Error for ModelError {}

/// The rows in context and the transcript, each row with its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelHistory<R> {
    pub in_context: Vec<(u64, R)>,
    pub transcript: Vec<(u64, R)>,
    pub next_id: u64,
}

impl<R> ModelHistory<R> {
    /// The history of a journal nothing was written to yet.
    pub const EMPTY: Self = ModelHistory {
        in_context: Vec::new(),
        transcript: Vec::new(),
        next_id: 0,
    };
}

impl<R> Default for ModelHistory<R> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<R: Clone + Eq> ModelHistory<R> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The in-context rows without ids.
    pub fn rows(&self) -> Vec<R> {
        self.in_context.iter().map(|(_, r)| r.clone()).collect()
    }

    /// The in-context rows that `keep` selects: what a per-origin mirror must hold.
    pub fn filtered(&self, keep: impl Fn(&R) -> bool) -> Vec<R> {
        self.in_context
            .iter()
            .filter(|(_, r)| keep(r))
            .map(|(_, r)| r.clone())
            .collect()
    }

    /// This history after `op`, or an error and no change.
    pub fn apply(&self, op: &ModelOp<R>) -> Result<Self, ModelError> {
        let mut next = self.clone();
        let len = next.in_context.len() as u64;
        match op {
            ModelOp::Append(rows) => {
                for r in rows {
                    let id = next.introduce(r);
                    next.in_context.push((id, r.clone()));
                }
            }
            ModelOp::Replace(rows) => {
                next.in_context.clear();
                for r in rows {
                    let id = next.introduce(r);
                    next.in_context.push((id, r.clone()));
                }
            }
            ModelOp::SuffixCut(n) => {
                if *n > len {
                    return Err(ModelError::CutBeyondContext {
                        rows: *n,
                        in_context: len,
                    });
                }
                let cut: Vec<u64> = next.in_context[(len - n) as usize..]
                    .iter()
                    .map(|(id, _)| *id)
                    .collect();
                next.in_context.truncate((len - n) as usize);
                next.transcript.retain(|(id, _)| !cut.contains(id));
            }
            ModelOp::Clear => next.in_context.clear(),
            ModelOp::Compression { summary, rows } => {
                if *rows > len {
                    return Err(ModelError::CompressBeyondContext {
                        rows: *rows,
                        in_context: len,
                    });
                }
                let id = next.introduce(summary);
                let mut in_context = vec![(id, summary.clone())];
                in_context.extend(next.in_context[*rows as usize..].iter().cloned());
                next.in_context = in_context;
            }
            ModelOp::Density {
                removed,
                replacements,
            } => next.densify(removed, replacements),
            ModelOp::Insert { anchor, row } => {
                let id = next.introduce(row);
                let at = match anchor {
                    None => Some(0),
                    Some(a) => next
                        .in_context
                        .iter()
                        .position(|(i, _)| i == a)
                        .map(|p| p + 1),
                };
                if let Some(p) = at {
                    next.in_context.insert(p, (id, row.clone()));
                }
            }
        }
        Ok(next)
    }

    /// A density mutation: each in-context row named in `replacements` takes its new content in
    /// place, each named in `removed` (and not replaced) leaves the context.
    fn densify(&mut self, removed: &[u64], replacements: &[(u64, R)]) {
        let mut kept = Vec::new();
        for (id, r) in &self.in_context {
            match replacements.iter().find(|(rid, _)| rid == id) {
                Some((_, new)) => kept.push((*id, new.clone())),
                None if removed.contains(id) => {}
                None => kept.push((*id, r.clone())),
            }
        }
        self.in_context = kept;
    }

    fn introduce(&mut self, row: &R) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.transcript.push((id, row.clone()));
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ops: &[ModelOp<&'static str>]) -> ModelHistory<&'static str> {
        let mut h = ModelHistory::new();
        for op in ops {
            h = h.apply(op).expect("applies");
        }
        h
    }

    #[test]
    fn the_rules_in_one_history() {
        let h = run(&[
            ModelOp::Append(vec!["a", "b", "c"]),
            ModelOp::Compression {
                summary: "S",
                rows: 2,
            },
            ModelOp::Insert {
                anchor: Some(3),
                row: "i",
            },
            ModelOp::Insert {
                anchor: Some(0),
                row: "skipped",
            },
            ModelOp::Density {
                removed: vec![2, 4],
                replacements: vec![(2, "C")],
            },
        ]);
        assert_eq!(h.rows(), ["S", "C"]);
        assert_eq!(h.transcript.len(), 6);
        assert_eq!(h.next_id, 6);
    }

    #[test]
    fn cuts_leave_the_transcript_and_replacements_join_it() {
        let h = run(&[
            ModelOp::Append(vec!["a", "b"]),
            ModelOp::Replace(vec!["x"]),
            ModelOp::Append(vec!["y"]),
            ModelOp::SuffixCut(1),
            ModelOp::Clear,
        ]);
        assert!(h.rows().is_empty());
        let t: Vec<_> = h.transcript.iter().map(|(_, r)| *r).collect();
        assert_eq!(t, ["a", "b", "x"]);
    }

    #[test]
    fn impossible_operations_change_nothing() {
        let h = run(&[ModelOp::Append(vec!["a"])]);
        assert!(h.apply(&ModelOp::SuffixCut(2)).is_err());
        assert!(h
            .apply(&ModelOp::Compression {
                summary: "s",
                rows: 3
            })
            .is_err());
        assert_eq!(h.filtered(|r| *r == "a"), ["a"]);
    }
}
