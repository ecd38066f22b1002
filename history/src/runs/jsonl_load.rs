//! Reading a JSONL run-event store back: which rows it holds and which tails a crash left.
//!
//! What a torn tail means. The store writes a batch by appending its lines to every run file it
//! touches and syncing each of them, and acknowledges the batch only after every sync returned;
//! writes are serialized and a failed one is cut back before the next begins. So after a crash at
//! most the last batch can be partly on disk, and only at the ends of its files. A reopened store
//! therefore keeps exactly the batches whose every row is readable, and cuts from each file the
//! tail that begins at its first line that is not one: a line without its newline (a torn
//! append), a line that is not a row, or a row of a batch some of whose rows are missing. Each
//! cut is reported as a [`DroppedTail`], never silently. Anything else (an unreadable line with
//! rows of complete batches after it, a row in another run's file, two rows with one write
//! number) cannot come from a crash, and opening fails naming the file and line.
//!
//! A thread's deletions file ([`super::jsonl_deletion`]) is read the same way: one line a
//! deletion, written and synced alone, so only its last line can be torn (cut and reported); an
//! unreadable line before a readable one is corruption.

use std::collections::{BTreeMap, BTreeSet};

use super::error::RunStoreError;
use super::jsonl_deletion::{is_deletions_file, Deletion};
use super::jsonl_line::{decode, is_run_file, run_file, StoredLine, THREADS_DIR};
use crate::journal::{storage::read_all, Storage};

/// A tail a reopened store cut from a file, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedTail {
    /// The storage name of the run file.
    pub file: String,
    /// Where the cut starts (the file's new length) and the 1-based line there.
    pub offset: u64,
    pub line: u64,
    /// How many bytes were cut.
    pub bytes: u64,
    /// What the first cut line was: torn, unreadable, or a row of an unfinished batch.
    pub reason: String,
}

impl std::fmt::Display for DroppedTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: cut {} bytes from line {} (offset {}): {}",
            self.file, self.bytes, self.line, self.offset, self.reason
        )
    }
}

/// What [`load`] found: the rows to keep and the deletions, each in replay (write) order, the
/// cuts to make, the run files read, the next write number.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) rows: Vec<StoredLine>,
    pub(crate) deletions: Vec<Deletion>,
    pub(crate) run_files: Vec<String>,
    pub(crate) dropped: Vec<DroppedTail>,
    pub(crate) next_write: u64,
}

impl Loaded {
    /// Whether the next write number is above every one the store holds, so a new write can
    /// never repeat one: [`load`]'s post-condition, with the run files all run files.
    fn next_write_is_fresh(&self) -> bool {
        let written = self.rows.iter().filter_map(|r| r.written.map(|w| w.write));
        written
            .chain(self.deletions.iter().map(|d| d.write))
            .all(|w| w < self.next_write)
            && self.run_files.iter().all(|f| is_run_file(f))
    }
}

/// One line of a file as read.
struct Line {
    offset: u64,
    number: u64,
    read: Result<StoredLine, String>,
}

fn corrupt(file: &str, line: u64, reason: String) -> RunStoreError {
    RunStoreError::CorruptLine {
        file: file.to_string(),
        line,
        reason,
    }
}

pub(crate) fn storage_error(op: &'static str, file: &str, e: std::io::Error) -> RunStoreError {
    RunStoreError::Storage {
        op,
        file: file.to_string(),
        message: e.to_string(),
    }
}

/// Splits a file into lines; a last piece without its newline is read as torn.
fn lines_of(file: &str, bytes: &[u8]) -> Result<Vec<Line>, RunStoreError> {
    let mut lines = Vec::new();
    let mut offset = 0usize;
    while offset < bytes.len() {
        let number = lines.len() as u64 + 1;
        let (end, read) = match bytes[offset..].iter().position(|b| *b == b'\n') {
            Some(n) => (offset + n + 1, decode(&bytes[offset..offset + n])),
            None => (bytes.len(), Err("torn: no newline at the end".to_string())),
        };
        if let Ok(row) = &read {
            let home = run_file(&row.event.thread_id, &row.event.run_id);
            if home != file {
                let why = format!(
                    "a row of thread {:?}, run {:?} (its file is {home})",
                    row.event.thread_id, row.event.run_id
                );
                return Err(corrupt(file, number, why));
            }
        }
        lines.push(Line {
            offset: offset as u64,
            number,
            read,
        });
        // Each line ends past where it starts, so the loop runs at most once a byte.
        debug_assert!(offset < end && end <= bytes.len());
        offset = end;
    }
    // Post-condition: lines are numbered from 1 in file order and start inside the file; only
    // the last may be read as torn.
    debug_assert!(lines
        .iter()
        .enumerate()
        .all(|(i, l)| l.number == i as u64 + 1));
    debug_assert!(lines.windows(2).all(|w| w[0].offset < w[1].offset));
    debug_assert!(lines.last().is_none_or(|l| l.offset < bytes.len() as u64));
    Ok(lines)
}

/// The batches (by first write number) whose every row was read, each row once, or whose
/// missing rows a later deletion explains (`last_deletion`: the largest deletion's write
/// number): a crash can only cut the store's last write short, and a deletion came after it.
fn complete_batches(
    files: &BTreeMap<String, (u64, Vec<Line>)>,
    last_deletion: u64,
) -> Result<BTreeSet<u64>, RunStoreError> {
    let mut seen: BTreeMap<u64, (String, u64)> = BTreeMap::new();
    let mut rows_of: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for (file, (_, lines)) in files {
        for line in lines {
            let Some(written) = line.read.as_ref().ok().and_then(|r| r.written) else {
                continue;
            };
            if let Some((other, at)) = seen.insert(written.write, (file.clone(), line.number)) {
                let why = format!("write number {} is also {other} line {at}", written.write);
                return Err(corrupt(file, line.number, why));
            }
            *rows_of.entry(written.batch).or_default() += 1;
        }
    }
    let batches = rows_of.len();
    let complete: BTreeSet<u64> = rows_of
        .into_iter()
        .filter(|((first, rows), found)| rows == found || last_deletion >= first + rows)
        .map(|((first, _), _)| first)
        .collect();
    // Post-condition: a subset of the batches seen, each named by a write number read.
    debug_assert!(complete.len() <= batches && complete.len() <= seen.len());
    Ok(complete)
}

/// Reads every run file under the storage's `threads/` directory and decides what to keep.
pub(crate) fn load(storage: &dyn Storage) -> Result<Loaded, RunStoreError> {
    let names = storage
        .list(THREADS_DIR)
        .map_err(|e| storage_error("list", THREADS_DIR, e))?;
    let mut files = BTreeMap::new();
    let mut loaded = Loaded::default();
    for name in names.iter().filter(|n| is_deletions_file(n)) {
        let bytes = read_all(storage, name).map_err(|e| storage_error("read", name, e))?;
        let (deletions, dropped) = deletions_of(name, &bytes)?;
        loaded.deletions.extend(deletions);
        loaded.dropped.extend(dropped);
    }
    for name in names.into_iter().filter(|n| is_run_file(n)) {
        let bytes = read_all(storage, &name).map_err(|e| storage_error("read", &name, e))?;
        let lines = lines_of(&name, &bytes)?;
        files.insert(name, (bytes.len() as u64, lines));
    }
    let last_deletion = loaded.deletions.iter().map(|d| d.write).max().unwrap_or(0);
    let complete = complete_batches(&files, last_deletion)?;
    loaded.run_files = files.keys().cloned().collect();
    for (file, (len, lines)) in files {
        // A row upstream wrote is whole by itself; a row of ours, when its batch is.
        let kept = |l: &Line| {
            l.read
                .as_ref()
                .is_ok_and(|r| r.written.is_none_or(|w| complete.contains(&w.batch.0)))
        };
        let cut_at = lines.iter().position(|l| !kept(l)).unwrap_or(lines.len());
        if let Some(late) = lines[cut_at..].iter().find(|l| kept(l)) {
            let first = &lines[cut_at];
            let why = format!(
                "a row of a complete batch follows line {} ({}): not a torn tail",
                first.number,
                reason_of(first)
            );
            return Err(corrupt(&file, late.number, why));
        }
        if let Some(first) = lines.get(cut_at) {
            // A line starts before the end of its file, so a cut is never empty.
            debug_assert!(first.offset < len);
            loaded.dropped.push(DroppedTail {
                file: file.clone(),
                offset: first.offset,
                line: first.number,
                bytes: len - first.offset,
                reason: reason_of(first),
            });
        }
        loaded
            .rows
            .extend(lines.into_iter().take(cut_at).filter_map(|l| l.read.ok()));
    }
    loaded.rows = replay_order(std::mem::take(&mut loaded.rows), &mut loaded.deletions);
    let row_writes: BTreeSet<u64> = loaded
        .rows
        .iter()
        .filter_map(|r| r.written.map(|w| w.write))
        .collect();
    let last = row_writes
        .last()
        .copied()
        .max(loaded.deletions.last().map(|d| d.write));
    loaded.next_write = 1 + last.unwrap_or(0);
    debug_assert!(loaded.next_write_is_fresh());
    Ok(loaded)
}

/// The rows in the order a replay inserts them, with the deletions sorted by write number:
/// each row in the segment between the deletions around its write number, and inside a segment
/// per thread by seq, equal seqs (only a store without the unique guard writes them, R5) in
/// write order. That is the order the memory store's operations built its index in, so the
/// replay rebuilds the same index. A row upstream wrote (no write number) is taken as older
/// than every deletion of ours: upstream keeps no record of when it wrote, and a store it wrote
/// first and ours deleted from later is the case that needs an answer.
fn replay_order(rows: Vec<StoredLine>, deletions: &mut [Deletion]) -> Vec<StoredLine> {
    deletions.sort_by_key(|d| d.write);
    let n = rows.len();
    let mut keyed: Vec<(usize, StoredLine)> = rows
        .into_iter()
        .map(|r| {
            let segment = segment_of(&r, deletions);
            (segment, r)
        })
        .collect();
    keyed.sort_by(|(a, x), (b, y)| {
        let key = |r: &StoredLine| (r.event.seq, r.written.map(|w| w.write));
        (a, &x.event.thread_id, key(x)).cmp(&(b, &y.event.thread_id, key(y)))
    });
    // Post-condition: segments never go back, and inside one a thread's seqs never go down.
    debug_assert!(keyed.windows(2).all(|w| w[0].0 <= w[1].0));
    debug_assert!(keyed.windows(2).all(|w| w[0].0 != w[1].0
        || w[0].1.event.thread_id != w[1].1.event.thread_id
        || w[0].1.event.seq <= w[1].1.event.seq));
    debug_assert_eq!(keyed.len(), n, "the replay order lost or added rows");
    keyed.into_iter().map(|(_, r)| r).collect()
}

/// How many deletions come before a row (rows of one segment are replayed together).
pub(crate) fn segment_of(row: &StoredLine, deletions: &[Deletion]) -> usize {
    row.written
        .map_or(0, |w| deletions.partition_point(|d| d.write < w.write))
}

/// The deletions of a thread's deletions file, and the torn or unreadable last line to cut.
fn deletions_of(
    file: &str,
    bytes: &[u8],
) -> Result<(Vec<Deletion>, Option<DroppedTail>), RunStoreError> {
    let mut deletions = Vec::new();
    let mut offset = 0usize;
    let mut number = 0u64;
    while offset < bytes.len() {
        number += 1;
        let newline = bytes[offset..].iter().position(|b| *b == b'\n');
        let read = match newline {
            Some(n) => Deletion::decode(file, &bytes[offset..offset + n]),
            None => Err("torn: no newline at the end".to_string()),
        };
        let end = newline.map_or(bytes.len(), |n| offset + n + 1);
        debug_assert!(offset < end && end <= bytes.len());
        match read {
            Ok(d) => deletions.push(d),
            Err(reason) if end == bytes.len() => {
                let cut = DroppedTail {
                    file: file.to_string(),
                    offset: offset as u64,
                    line: number,
                    bytes: (bytes.len() - offset) as u64,
                    reason,
                };
                // Post-condition: every line before the cut was read, and the cut is not empty.
                debug_assert!(deletions.len() as u64 == number - 1 && cut.bytes > 0);
                return Ok((deletions, Some(cut)));
            }
            Err(reason) => {
                return Err(corrupt(
                    file,
                    number,
                    format!("{reason}, and lines follow it"),
                ))
            }
        }
        offset = end;
    }
    debug_assert!(deletions.len() as u64 == number);
    Ok((deletions, None))
}

fn reason_of(line: &Line) -> String {
    match &line.read {
        Err(why) => why.clone(),
        Ok(row) => {
            let (first, rows) = row.written.map_or((0, 1), |w| w.batch);
            format!("a row of batch [{first}, {rows}] whose other rows are missing")
        }
    }
}
