//! What the journal checker expects, rebuilt from the scenario alone and from the faults the world
//! injected: per journal file its history after each change (`model::journal::ModelHistory`),
//! and the shared history, and what each operation does to them.

use super::meaning::{
    density_positions, insert_after, origin_name, rewind_rows, rewrite_row, row, rows, transformed,
    SESSION_JOURNAL,
};
use super::record::Seen;
use super::scenario::{Action, Op, SessionScript, SharedAction};
use crate::compression::compression;
use history::journal::{Origin, Row};
use model::journal::{ModelHistory, ModelOp};
use std::collections::{BTreeMap, BTreeSet};

/// One operation of a session as the rules see it: `seen` is what it returned, for a rule about
/// one kind of operation that kind's record (`T`).
pub struct OpSeen<'o, T: ?Sized = Seen> {
    /// `session S op K (kind)`, the opening of every message, and the request its findings
    /// point at.
    pub at: &'o super::step::Step,
    pub k: usize,
    pub op: &'o Op,
    pub seen: &'o T,
}

impl<'o> OpSeen<'o> {
    /// The same operation, with what it returned narrowed to its kind's record.
    pub fn of<T: ?Sized>(&self, seen: &'o T) -> OpSeen<'o, T> {
        OpSeen {
            at: self.at,
            k: self.k,
            op: self.op,
            seen,
        }
    }
}

/// The shared history as the model knows it.
pub struct SharedModel {
    pub truth: ModelHistory<Row>,
    /// The history before the last mutation that resolved: a mirror equal to this is behind.
    pub before: ModelHistory<Row>,
    pub attached: Vec<Origin>,
    /// Mirrors that missed a write because of an injected fault, until the next resync.
    pub stale: BTreeSet<Origin>,
}

impl SharedModel {
    pub fn of(&self, h: &ModelHistory<Row>, origin: &Origin) -> Vec<Row> {
        h.filtered(|r| r.origin == *origin)
    }
}

pub struct SessionCheck<'a> {
    pub s: usize,
    pub script: &'a SessionScript,
    /// Per journal file: its history after each change, in order.
    pub journals: BTreeMap<String, Vec<ModelHistory<Row>>>,
    /// Per journal file: whether the rows last seen equalled the model. A difference found later
    /// that was already there is not a new defect of what ran in between.
    pub in_sync: BTreeMap<String, bool>,
    /// The disk the last crash left, for the restart that follows it.
    pub crash_image: BTreeMap<String, Vec<u8>>,
    /// Per file, the length that was synced and unchanged at the last crash.
    pub crash_synced: BTreeMap<String, u64>,
    pub current: String,
    pub shared: Option<SharedModel>,
}

pub fn short(rows: &[Row]) -> String {
    let texts: Vec<String> = rows
        .iter()
        .take(6)
        .map(|r| {
            let t = r
                .blocks
                .first()
                .map(|b| match b {
                    history::journal::Block::Text { text } => text.clone(),
                    history::journal::Block::ToolCall { id, .. } => format!("call {id}"),
                    history::journal::Block::ToolResult { call_id, .. } => {
                        format!("result {call_id}")
                    }
                })
                .unwrap_or_default();
            let t: String = t.chars().take(24).collect();
            format!("{}:{t}", origin_name(&r.origin))
        })
        .collect();
    let more = if rows.len() > 6 { ", ..." } else { "" };
    format!("{} rows [{}{more}]", rows.len(), texts.join(", "))
}

impl<'a> SessionCheck<'a> {
    pub fn new(s: usize, script: &'a SessionScript) -> Self {
        let mut journals = BTreeMap::new();
        journals.insert(SESSION_JOURNAL.to_string(), vec![ModelHistory::new()]);
        let shared = (!script.subagents.is_empty()).then(|| SharedModel {
            truth: ModelHistory::new(),
            before: ModelHistory::new(),
            attached: script
                .mirrors
                .iter()
                .map(|m| super::meaning::origin_of(m))
                .collect(),
            stale: BTreeSet::new(),
        });
        SessionCheck {
            s,
            script,
            journals,
            in_sync: BTreeMap::new(),
            crash_image: BTreeMap::new(),
            crash_synced: BTreeMap::new(),
            current: SESSION_JOURNAL.to_string(),
            shared,
        }
    }

    /// The model's latest history of `journal`, borrowed: most rules only compare with it, and a
    /// copy of a history is a copy of every row's text.
    pub fn latest_ref(&self, journal: &str) -> &ModelHistory<Row> {
        self.journals
            .get(journal)
            .and_then(|v| v.last())
            .unwrap_or(&NO_HISTORY)
    }

    pub fn push(&mut self, journal: &str, h: ModelHistory<Row>) {
        self.journals
            .entry(journal.to_string())
            .or_default()
            .push(h);
    }

    /// Notes whether the rows seen of `journal` equal the model's latest history.
    pub fn seen(&mut self, journal: &str, rows: &[Row]) -> bool {
        let same = holds(self.latest_ref(journal), rows);
        self.in_sync.insert(journal.to_string(), same);
        same
    }

    pub fn was_in_sync(&self, journal: &str) -> bool {
        self.in_sync.get(journal).copied().unwrap_or(true)
    }
}

/// The model's history of a journal nothing was written to yet, to lend.
static NO_HISTORY: ModelHistory<Row> = ModelHistory::EMPTY;

/// Whether `rows` are the history's in-context rows (`state.rows() == rows`, without copying them).
pub fn holds(state: &ModelHistory<Row>, rows: &[Row]) -> bool {
    state.in_context.iter().map(|(_, want)| want).eq(rows)
}

pub fn with_arrivals(state: &ModelHistory<Row>, arrivals: &[Row]) -> ModelHistory<Row> {
    if arrivals.is_empty() {
        return state.clone();
    }
    state
        .apply(&ModelOp::Append(arrivals.to_vec()))
        .unwrap_or_else(|_| state.clone())
}

pub fn apply_all(
    state: &ModelHistory<Row>,
    ops: &[ModelOp<Row>],
) -> Result<ModelHistory<Row>, model::journal::ModelError> {
    let mut h = state.clone();
    for op in ops {
        h = h.apply(op)?;
    }
    Ok(h)
}

/// What a mutation of the recording does to the model, or `None` when it changes nothing (the
/// session skips it).
pub fn solo_model_ops(
    k: usize,
    action: &Action,
    state: &ModelHistory<Row>,
) -> Option<Vec<ModelOp<Row>>> {
    let main = Origin::Main;
    let ids: Vec<u64> = state.in_context.iter().map(|(id, _)| *id).collect();
    let n = ids.len();
    Some(match action {
        Action::Append { rows: specs } => vec![ModelOp::Append(rows(specs, &main))],
        Action::Replace {
            groups, arrivals, ..
        } => {
            let mut ops = vec![ModelOp::Replace(rows(&groups.concat(), &main))];
            // The other recorder's rows are written once the replacement is done.
            ops.extend(
                rows(arrivals, &main)
                    .into_iter()
                    .map(|r| ModelOp::Append(vec![r])),
            );
            ops
        }
        Action::Rewind { rows } => match rewind_rows(*rows, n) {
            0 => return None,
            cut => vec![ModelOp::SuffixCut(cut)],
        },
        Action::Clear => vec![ModelOp::Clear],
        Action::Compress { keep } => {
            let (summary, cut) = compression(&state.rows(), *keep, &main)?;
            vec![ModelOp::Compression { summary, rows: cut }]
        }
        Action::Density {
            remove,
            rewrite,
            rewrite_bytes,
        } => {
            let (removed, rewritten) = density_positions(remove, rewrite, n)?;
            vec![ModelOp::Density {
                removed: removed.iter().map(|p| ids[*p]).collect(),
                replacements: rewritten
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (ids[*p], rewrite_row(k, i, *rewrite_bytes)))
                    .collect(),
            }]
        }
        Action::Insert { after, row: spec } => vec![ModelOp::Insert {
            anchor: insert_after(*after, n).map(|p| ids[p]),
            row: row(spec, &main),
        }],
        _ => return None,
    })
}

/// What a shared mutation does to the shared history, or `None` when it changes nothing.
pub fn shared_model_op(
    k: usize,
    origin: &Origin,
    action: &SharedAction,
    truth: &ModelHistory<Row>,
) -> Option<ModelOp<Row>> {
    let n = truth.in_context.len();
    Some(match action {
        SharedAction::Append { rows: specs } => ModelOp::Append(rows(specs, origin)),
        SharedAction::Rewind { rows } => match rewind_rows(*rows, n) {
            0 => return None,
            cut => ModelOp::SuffixCut(cut),
        },
        SharedAction::Clear => ModelOp::Clear,
        SharedAction::Compress { keep } => {
            let (summary, cut) = compression(&truth.rows(), *keep, origin)?;
            ModelOp::Compression { summary, rows: cut }
        }
        SharedAction::Transform { at } => {
            if n == 0 {
                return None;
            }
            let (id, old) = &truth.in_context[*at as usize % n];
            ModelOp::Density {
                removed: Vec::new(),
                replacements: vec![(*id, transformed(old, k))],
            }
        }
        SharedAction::Restore { rows: specs } => ModelOp::Replace(rows(specs, origin)),
        SharedAction::Insert { after, row: spec } => ModelOp::Insert {
            anchor: insert_after(*after, n).map(|p| truth.in_context[p].0),
            row: row(spec, origin),
        },
    })
}
