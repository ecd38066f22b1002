//! Arbitrary bytes as a journal file (issue 5, item 10).
//!
//! The input is a valid prefix (a journal written by the real writer from fuzzer-chosen
//! mutations) followed by arbitrary bytes. Opening must never panic, and must never lose a record
//! the valid prefix committed: either the open succeeds and every record of the prefix is folded
//! (so its history is there, or later records built on it), or it fails naming an offset at or
//! after the end of the prefix. The arbitrary bytes alone must open or fail cleanly too.
#![no_main]

use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use history::journal::{Journal, JournalError, JournalOptions, MemStorage, Origin, Row, Speaker};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    Append(String),
    Cut(u8),
    Clear,
    Compress(String, u8),
    Insert(u8, String),
    Replace(Vec<String>, bool),
}

#[derive(Arbitrary, Debug)]
struct Input {
    ops: Vec<Op>,
    tail: Vec<u8>,
}

fn opts() -> JournalOptions {
    static OPTS: OnceLock<JournalOptions> = OnceLock::new();
    OPTS.get_or_init(JournalOptions::default).clone()
}

fn row(text: &str) -> Row {
    Row::text(Speaker::Human, Origin::Main, text)
}

/// Writes the ops with the real writer; returns the bytes and the writer's last sequence number.
fn valid_prefix(ops: &[Op]) -> (Vec<u8>, u64, Vec<Row>) {
    let mem = Arc::new(MemStorage::new());
    let mut j = Journal::create(mem.clone(), "j", opts(), None).expect("create in memory");
    for op in ops.iter().take(32) {
        let n = j.fold().in_context().len() as u64;
        // Invalid operations (a cut beyond the context, say) are refused; that is fine.
        let _ = match op {
            Op::Append(t) => j.append(Origin::Main, vec![row(t)]).map(|_| ()),
            Op::Cut(k) => j
                .suffix_cut(Origin::Main, u64::from(*k) % (n + 1))
                .map(|_| ()),
            Op::Clear => j.clear(Origin::Main).map(|_| ()),
            Op::Compress(t, k) => j
                .compress(Origin::Main, row(t), u64::from(*k) % (n + 1))
                .map(|_| ()),
            Op::Insert(k, t) => {
                let anchor = j.fold().in_context().get(*k as usize).map(|e| e.id);
                j.insert_after(Origin::Main, anchor, row(t)).map(|_| ())
            }
            Op::Replace(rows, commit) => j.begin_replace(Origin::Main).and_then(|mut g| {
                g.push_rows(rows.iter().take(8).map(|t| row(t)).collect())?;
                if *commit {
                    g.commit().map(|_| ())
                } else {
                    g.abort()
                }
            }),
        };
    }
    (mem.bytes("j"), j.fold().last_seq(), j.rows())
}

fn open(bytes: &[u8]) -> Result<Journal, JournalError> {
    Journal::open(Arc::new(MemStorage::with_file("j", bytes)), "j", opts())
}

fuzz_target!(|input: Input| {
    let _ = open(&input.tail);

    let (prefix, last_seq, rows) = valid_prefix(&input.ops);
    let mut bytes = prefix.clone();
    bytes.extend_from_slice(&input.tail);
    match open(&bytes) {
        Ok(j) => {
            assert!(
                j.fold().last_seq() >= last_seq,
                "a committed record was lost"
            );
            assert!(
                j.end_offset() >= prefix.len() as u64,
                "the valid prefix was cut"
            );
            if j.fold().last_seq() == last_seq {
                assert_eq!(j.rows(), rows, "the prefix's history changed");
            }
        }
        Err(e) => {
            let at = e.offset().expect("a failure on bytes names its offset");
            assert!(
                at >= prefix.len() as u64,
                "the valid prefix was reported bad: {e}"
            );
        }
    }
});
