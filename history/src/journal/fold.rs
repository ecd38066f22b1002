//! Folding records into the history: the in-context rows, the full transcript and running
//! statistics.
//!
//! Rules (the `model` crate restates them independently):
//! - Every row a record introduces gets the next [`RowId`], in record order: appended rows, the
//!   rows of a replacement (at its commit), a compression's summary, a synthetic insert (even when
//!   its anchor is gone and the insert is skipped). A density replacement keeps its row's id.
//! - The in-context rows are what a request sends. The transcript is every introduced row in the
//!   order it was introduced; only a suffix cut (an undo) removes rows from it.
//! - A replacement is invisible until its `replace_commit` (J1): its rows wait in the open
//!   transaction, which an abort discards and which a reader that reaches the end of the file
//!   without a terminator simply never shows.
//! - Statistics (rows, bytes, tokens of the in-context rows) change by what each record adds or
//!   removes, so keeping them costs nothing per read (J11).
//!
//! [`Fold::apply`] validates a record completely before changing anything, so the writer can use
//! the same code to refuse a record its readers would reject.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use super::record::{Record, RecordBody, RowId};
use super::row::{Origin, Row};
use super::tokens::{TokenCounter, Tokenizer};
use crate::{BugId, Planted};

/// One row in context or in the transcript, with its cached size and token count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: RowId,
    pub row: Arc<Row>,
    pub bytes: u64,
    pub tokens: u64,
}

/// Size of the in-context history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Statistics {
    pub rows: u64,
    pub bytes: u64,
    pub tokens: u64,
}

impl Statistics {
    fn add(&mut self, e: &Entry) {
        self.rows += 1;
        self.bytes += e.bytes;
        self.tokens += e.tokens;
    }

    fn sub(&mut self, e: &Entry) {
        self.rows -= 1;
        self.bytes -= e.bytes;
        self.tokens -= e.tokens;
    }
}

/// Why a well-formed record cannot apply to the history before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FoldError {
    SeqGap {
        expected: u64,
        found: u64,
    },
    StartNotFirst,
    EmptyRows {
        kind: &'static str,
    },
    /// A `replace_begin` while another replacement is still open: what a resume that forgot its
    /// `replace_abort` produces (J2).
    NestedTransaction {
        open: u64,
        begin: u64,
    },
    BeginTxnNotSeq {
        txn: u64,
        seq: u64,
    },
    /// A `replace_rows` or `replace_commit` that does not belong to the open transaction.
    NotOpen {
        kind: &'static str,
        txn: u64,
        open: Option<u64>,
    },
    /// An abort naming a transaction other than the open one.
    AbortMismatch {
        txn: u64,
        open: u64,
    },
    CutBeyondContext {
        rows: u64,
        in_context: u64,
    },
    CompressBeyondContext {
        rows: u64,
        in_context: u64,
    },
}

impl fmt::Display for FoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FoldError::SeqGap { expected, found } => {
                write!(f, "sequence {found} where {expected} was due")
            }
            FoldError::StartNotFirst => f.write_str("a start record that is not the first record"),
            FoldError::EmptyRows { kind } => write!(f, "{kind} with no rows"),
            FoldError::NestedTransaction { open, begin } => write!(
                f,
                "replace_begin {begin} while transaction {open} is still open (J2)"
            ),
            FoldError::BeginTxnNotSeq { txn, seq } => {
                write!(f, "replace_begin names txn {txn} but has sequence {seq}")
            }
            FoldError::NotOpen { kind, txn, open } => match open {
                Some(o) => write!(f, "{kind} for txn {txn} while txn {o} is open"),
                None => write!(f, "{kind} for txn {txn} with no transaction open"),
            },
            FoldError::AbortMismatch { txn, open } => {
                write!(f, "replace_abort for txn {txn} while txn {open} is open")
            }
            FoldError::CutBeyondContext { rows, in_context } => {
                write!(f, "suffix cut of {rows} rows with {in_context} in context")
            }
            FoldError::CompressBeyondContext { rows, in_context } => {
                write!(f, "compression of {rows} rows with {in_context} in context")
            }
        }
    }
}

impl std::error::Error for FoldError {}

/// A replacement between its begin and its terminator.
#[derive(Clone, Debug)]
struct OpenTxn {
    txn: u64,
    rows: Vec<Row>,
}

/// The folded state of a journal.
#[derive(Debug)]
pub struct Fold {
    in_context: Vec<Entry>,
    transcript: Vec<Entry>,
    stats: Statistics,
    next_row_id: u64,
    last_seq: u64,
    open_txn: Option<OpenTxn>,
    mirror_of: Option<Origin>,
    /// Sequence numbers of records that landed inside an open replacement without belonging to
    /// it (J3). The fold applies them, but a correct writer never produces one.
    interleaved: Vec<u64>,
    counter: TokenCounter,
    planted: Planted,
}

impl Fold {
    /// The fold of an empty journal.
    pub fn new(tokenizer: &Tokenizer, planted: Planted) -> Fold {
        Fold {
            in_context: Vec::new(),
            transcript: Vec::new(),
            stats: Statistics::default(),
            next_row_id: 0,
            last_seq: 0,
            open_txn: None,
            mirror_of: None,
            interleaved: Vec::new(),
            counter: tokenizer.counter(planted),
            planted,
        }
    }

    pub fn in_context(&self) -> &[Entry] {
        &self.in_context
    }

    pub fn transcript(&self) -> &[Entry] {
        &self.transcript
    }

    /// The in-context rows, cloned.
    pub fn rows(&self) -> Vec<Row> {
        self.in_context.iter().map(|e| (*e.row).clone()).collect()
    }

    pub fn statistics(&self) -> Statistics {
        self.stats
    }

    /// The sequence number of the last applied record (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// The id the next introduced row will get.
    pub fn next_row_id(&self) -> RowId {
        RowId(self.next_row_id)
    }

    /// The open replacement, if a `replace_begin` has no terminator yet.
    pub fn open_txn(&self) -> Option<u64> {
        self.open_txn.as_ref().map(|t| t.txn)
    }

    /// planted J21: the legacy recovery dropped an open replacement from memory without writing
    /// its abort (see `reopen::close_for_writer`).
    pub(crate) fn forget_open_txn(&mut self) {
        self.open_txn = None;
    }

    /// The origin filter a mirror journal's start record names.
    pub fn mirror_of(&self) -> Option<&Origin> {
        self.mirror_of.as_ref()
    }

    /// Records that landed inside another transaction (J3 diagnostics).
    pub fn interleaved(&self) -> &[u64] {
        &self.interleaved
    }

    /// Position of the in-context row `id`.
    pub fn position(&self, id: RowId) -> Option<usize> {
        // Ids increase along the context except where inserts and commits reorder them, so a
        // linear search is the honest bound; callers use it for anchors, not per row.
        self.in_context.iter().position(|e| e.id == id)
    }

    /// Checks that `record` can apply, without changing anything.
    pub fn validate(&self, record: &Record) -> Result<(), FoldError> {
        let expected = self.last_seq + 1;
        if record.seq != expected {
            return Err(FoldError::SeqGap {
                expected,
                found: record.seq,
            });
        }
        let in_context = self.in_context.len() as u64;
        let open = self.open_txn();
        let legacy_txn = self.planted.is(BugId::J1);
        match &record.body {
            RecordBody::Start { .. } if record.seq != 1 => Err(FoldError::StartNotFirst),
            RecordBody::Append { rows } if rows.is_empty() => {
                Err(FoldError::EmptyRows { kind: "append" })
            }
            RecordBody::ReplaceBegin { txn } if *txn != record.seq => {
                Err(FoldError::BeginTxnNotSeq {
                    txn: *txn,
                    seq: record.seq,
                })
            }
            RecordBody::ReplaceBegin { txn } if !legacy_txn && open.is_some() => {
                Err(FoldError::NestedTransaction {
                    open: open.unwrap_or_default(),
                    begin: *txn,
                })
            }
            RecordBody::ReplaceRows { txn, .. } if !legacy_txn && open != Some(*txn) => {
                Err(FoldError::NotOpen {
                    kind: "replace_rows",
                    txn: *txn,
                    open,
                })
            }
            RecordBody::ReplaceCommit { txn } if !legacy_txn && open != Some(*txn) => {
                Err(FoldError::NotOpen {
                    kind: "replace_commit",
                    txn: *txn,
                    open,
                })
            }
            RecordBody::ReplaceAbort { txn } if !legacy_txn && open.is_some_and(|o| o != *txn) => {
                Err(FoldError::AbortMismatch {
                    txn: *txn,
                    open: open.unwrap_or_default(),
                })
            }
            RecordBody::SuffixCut { rows } if *rows > in_context => {
                Err(FoldError::CutBeyondContext {
                    rows: *rows,
                    in_context,
                })
            }
            RecordBody::Compression {
                compressed_rows, ..
            } if *compressed_rows > in_context => Err(FoldError::CompressBeyondContext {
                rows: *compressed_rows,
                in_context,
            }),
            _ => Ok(()),
        }
    }

    /// Applies one record, or changes nothing and says why it cannot apply.
    pub fn apply(&mut self, record: &Record) -> Result<(), FoldError> {
        self.validate(record)?;
        self.last_seq = record.seq;
        if let Some(open) = &self.open_txn {
            let own = matches!(&record.body,
                RecordBody::ReplaceRows { txn, .. }
                | RecordBody::ReplaceCommit { txn }
                | RecordBody::ReplaceAbort { txn } if *txn == open.txn);
            if !own {
                self.interleaved.push(record.seq);
            }
        }
        if self.planted.is(BugId::J1) && self.apply_legacy_txn(&record.body) {
            debug_assert_eq!(self.stats.rows, self.in_context.len() as u64);
            return Ok(());
        }
        match &record.body {
            RecordBody::Start { mirror_of } => self.mirror_of = mirror_of.clone(),
            RecordBody::Append { rows } => {
                for row in rows {
                    let e = self.introduce(row.clone());
                    self.push_context(e);
                }
            }
            RecordBody::ReplaceBegin { txn } => {
                self.open_txn = Some(OpenTxn {
                    txn: *txn,
                    rows: Vec::new(),
                });
            }
            RecordBody::ReplaceRows { rows, .. } => {
                let open = self.open_txn.as_mut().expect("validated: txn open");
                open.rows.extend(rows.iter().cloned());
            }
            RecordBody::ReplaceCommit { .. } => {
                let open = self.open_txn.take().expect("validated: txn open");
                self.clear_context();
                for row in open.rows {
                    let e = self.introduce(row);
                    self.push_context(e);
                }
            }
            RecordBody::ReplaceAbort { .. } => self.open_txn = None,
            RecordBody::SuffixCut { rows } => self.cut(*rows as usize),
            RecordBody::Clear => self.clear_context(),
            RecordBody::Compression {
                summary,
                compressed_rows,
            } => self.compress(summary, *compressed_rows as usize),
            RecordBody::DensityMutation {
                removed,
                replacements,
            } => {
                let removed: BTreeSet<RowId> = removed.iter().copied().collect();
                let replaced: BTreeMap<RowId, &Row> =
                    replacements.iter().map(|r| (r.id, &r.row)).collect();
                self.density(&removed, &replaced);
            }
            RecordBody::SyntheticInsert { anchor, row } => self.insert(*anchor, row),
        }
        // Post-condition: the record is the last one folded, and the statistics count the rows
        // in context.
        debug_assert_eq!(self.last_seq, record.seq);
        debug_assert_eq!(self.stats.rows, self.in_context.len() as u64);
        Ok(())
    }

    /// planted J1: replacements applied as they were read, with no transaction: a begin clears
    /// the context at once and its rows show before (and without) a commit. Returns whether the
    /// record was a replace_* record.
    fn apply_legacy_txn(&mut self, body: &RecordBody) -> bool {
        match body {
            RecordBody::ReplaceBegin { .. } => self.clear_context(),
            RecordBody::ReplaceRows { rows, .. } => {
                for row in rows {
                    let e = self.introduce(row.clone());
                    self.push_context(e);
                }
            }
            RecordBody::ReplaceCommit { .. } | RecordBody::ReplaceAbort { .. } => {}
            _ => return false,
        }
        true
    }

    fn introduce(&mut self, row: Row) -> Entry {
        let tokens = self.counter.count_row(&row);
        let e = Entry {
            id: RowId(self.next_row_id),
            bytes: row.content_bytes() as u64,
            row: Arc::new(row),
            tokens,
        };
        self.next_row_id += 1;
        self.transcript.push(e.clone());
        // Post-condition: row ids are handed out in increasing order, each once.
        debug_assert!(
            self.transcript.len() < 2 || self.transcript[self.transcript.len() - 2].id < e.id
        );
        e
    }

    fn push_context(&mut self, e: Entry) {
        self.stats.add(&e);
        self.in_context.push(e);
    }

    fn clear_context(&mut self) {
        self.in_context.clear();
        self.stats = Statistics::default();
    }

    fn cut(&mut self, rows: usize) {
        debug_assert!(
            rows <= self.in_context.len(),
            "validated: a cut within the context"
        );
        let keep = self.in_context.len() - rows;
        let mut gone: BTreeSet<RowId> = BTreeSet::new();
        for e in self.in_context.drain(keep..) {
            self.stats.sub(&e);
            gone.insert(e.id);
        }
        // Cut rows are almost always the newest: walk the transcript from its end.
        let mut i = self.transcript.len();
        while !gone.is_empty() && i > 0 {
            i -= 1;
            if gone.remove(&self.transcript[i].id) {
                self.transcript.remove(i);
            }
        }
        // Post-condition: every row cut from the context left the transcript too.
        debug_assert!(
            gone.is_empty(),
            "cut rows {gone:?} missing from the transcript"
        );
    }

    fn compress(&mut self, summary: &Row, rows: usize) {
        let before = self.in_context.len();
        for e in &self.in_context[..rows] {
            self.stats.sub(e);
        }
        let e = self.introduce(summary.clone());
        self.stats.add(&e);
        self.in_context.splice(..rows, std::iter::once(e));
        // Post-condition: `rows` rows became one summary, first in context.
        debug_assert_eq!(self.in_context.len(), before - rows + 1);
    }

    fn density(&mut self, removed: &BTreeSet<RowId>, replaced: &BTreeMap<RowId, &Row>) {
        let mut kept = Vec::with_capacity(self.in_context.len());
        for e in std::mem::take(&mut self.in_context) {
            if let Some(row) = replaced.get(&e.id) {
                // A replacement wins over a removal of the same row.
                self.stats.sub(&e);
                let tokens = self.counter.count_row(row);
                let new = Entry {
                    id: e.id,
                    row: Arc::new((*row).clone()),
                    bytes: row.content_bytes() as u64,
                    tokens,
                };
                self.stats.add(&new);
                kept.push(new);
            } else if removed.contains(&e.id) {
                self.stats.sub(&e);
            } else {
                kept.push(e);
            }
        }
        self.in_context = kept;
        // Post-condition: no row left in context was removed without a replacement.
        debug_assert!(self
            .in_context
            .iter()
            .all(|e| !removed.contains(&e.id) || replaced.contains_key(&e.id)));
    }

    fn insert(&mut self, anchor: Option<RowId>, row: &Row) {
        let at = match anchor {
            None => Some(0),
            Some(id) => self.position(id).map(|p| p + 1),
        };
        let e = self.introduce(row.clone());
        // When the anchor is gone the insert is skipped; the row keeps its transcript place.
        if let Some(p) = at {
            self.stats.add(&e);
            self.in_context.insert(p, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::record::DensityReplacement;
    use crate::journal::row::Speaker;

    fn row(t: &str) -> Row {
        Row::text(Speaker::Human, Origin::Main, t)
    }

    fn texts(f: &Fold) -> Vec<String> {
        f.in_context()
            .iter()
            .map(|e| match &e.row.blocks[0] {
                crate::journal::row::Block::Text { text } => text.clone(),
                _ => String::new(),
            })
            .collect()
    }

    struct Seq(u64);
    impl Seq {
        fn rec(&mut self, body: RecordBody) -> Record {
            self.0 += 1;
            Record {
                seq: self.0,
                origin: Origin::Main,
                body,
            }
        }
    }

    fn fold_of(bodies: Vec<RecordBody>) -> Result<Fold, FoldError> {
        let mut f = Fold::new(&Tokenizer::o200k(), Planted::none());
        let mut s = Seq(0);
        for b in bodies {
            f.apply(&s.rec(b))?;
        }
        Ok(f)
    }

    /// `old` appended, then replacement 2 begun with `rows` in it and not terminated.
    fn open_replacement(rows: &str) -> Vec<RecordBody> {
        vec![
            RecordBody::Append {
                rows: vec![row("old")],
            },
            RecordBody::ReplaceBegin { txn: 2 },
            RecordBody::ReplaceRows {
                txn: 2,
                rows: vec![row(rows)],
            },
        ]
    }

    #[test]
    fn appends_cuts_and_statistics() {
        let f = fold_of(vec![
            RecordBody::Append {
                rows: vec![row("a"), row("bb")],
            },
            RecordBody::Append {
                rows: vec![row("ccc")],
            },
            RecordBody::SuffixCut { rows: 1 },
        ])
        .expect("folds");
        assert_eq!(texts(&f), ["a", "bb"]);
        assert_eq!(f.statistics().rows, 2);
        assert_eq!(f.statistics().bytes, 3);
        assert_eq!(f.transcript().len(), 2);
        assert_eq!(f.next_row_id(), RowId(3));
    }

    #[test]
    fn a_replacement_is_invisible_until_commit() {
        let mut f = fold_of(open_replacement("new")).expect("folds");
        assert_eq!(texts(&f), ["old"]);
        assert_eq!(f.open_txn(), Some(2));
        f.apply(&Record {
            seq: 4,
            origin: Origin::Main,
            body: RecordBody::ReplaceCommit { txn: 2 },
        })
        .expect("commits");
        assert_eq!(texts(&f), ["new"]);
        assert_eq!(f.open_txn(), None);
        assert_eq!(f.transcript().len(), 2);
    }

    #[test]
    fn nested_begins_and_stray_commits_are_refused() {
        let err = fold_of(vec![
            RecordBody::ReplaceBegin { txn: 1 },
            RecordBody::ReplaceBegin { txn: 2 },
        ])
        .expect_err("nested");
        assert_eq!(err, FoldError::NestedTransaction { open: 1, begin: 2 });
        let err = fold_of(vec![RecordBody::ReplaceCommit { txn: 1 }]).expect_err("stray");
        assert!(matches!(err, FoldError::NotOpen { .. }));
        // An abort with nothing open is harmless: resume may write one defensively.
        assert!(fold_of(vec![RecordBody::ReplaceAbort { txn: 9 }]).is_ok());
    }

    #[test]
    fn a_refused_record_changes_nothing() {
        let mut f = fold_of(vec![RecordBody::Append {
            rows: vec![row("a")],
        }])
        .expect("folds");
        let bad = Record {
            seq: 2,
            origin: Origin::Main,
            body: RecordBody::SuffixCut { rows: 5 },
        };
        assert!(f.apply(&bad).is_err());
        assert_eq!(f.last_seq(), 1);
        assert_eq!(texts(&f), ["a"]);
    }

    #[test]
    fn compression_density_and_inserts() {
        let f = fold_of(vec![
            RecordBody::Append {
                rows: vec![row("a"), row("b"), row("c")],
            },
            RecordBody::Compression {
                summary: row("S"),
                compressed_rows: 2,
            },
            RecordBody::SyntheticInsert {
                anchor: Some(RowId(3)),
                row: row("i"),
            },
            RecordBody::SyntheticInsert {
                anchor: Some(RowId(0)),
                row: row("skipped"),
            },
            RecordBody::DensityMutation {
                removed: vec![RowId(2), RowId(4)],
                replacements: vec![DensityReplacement {
                    id: RowId(2),
                    row: row("C"),
                }],
            },
        ])
        .expect("folds");
        assert_eq!(texts(&f), ["S", "C"]);
        let ids: Vec<u64> = f.in_context().iter().map(|e| e.id.0).collect();
        assert_eq!(ids, [3, 2]);
        assert_eq!(f.transcript().len(), 6);
        assert_eq!(f.statistics().rows, 2);
        assert_eq!(f.statistics().bytes, 2);
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_j1_shows_an_unterminated_replacement() {
        let mut f = Fold::new(&Tokenizer::o200k(), Planted::only(BugId::J1));
        let mut s = Seq(0);
        for b in open_replacement("half") {
            f.apply(&s.rec(b)).expect("applies");
        }
        assert_eq!(texts(&f), ["half"]);
    }
}
