//! The deletions of the JSONL run-event store: one line per deletion in the thread's
//! `threads/{thread_id}/deletions.jsonl`, beside (not inside) its `runs/` directory, so that
//! upstream's reader, which globs `runs/*.jsonl`, never takes one for an event.
//!
//! Why a line at all, when upstream only unlinks files: a deletion must survive a reopen with
//! everything it means. `delete_by_run` keeps the thread's high-water mark (R13), which the
//! remaining files no longer show once the file holding the largest seq is gone; a deletion in
//! one user's scope removes only some rows of a run's file, which the storage cannot rewrite
//! atomically (it has no rename); and `delete_by_thread` removes several files, a crash between
//! which would leave half a deletion. So the line is the deletion: it takes the store's next write
//! number and is synced before the deletion is acknowledged, and a reopened store replays rows and
//! deletions in write order, which rebuilds exactly the index the memory store's operations
//! built (the line keeps the thread's high-water mark from before the deletion, which the
//! rows still in the files may no longer show). Removing the files whose every row is gone is then only tidying, finished by the next
//! open when a crash interrupts it.

use serde::{Deserialize, Serialize};

use super::jsonl_line::{escape_id, THREADS_DIR};

/// The file of a thread's deletions.
pub(crate) fn deletions_file(thread_id: &str) -> String {
    format!("{THREADS_DIR}/{}/deletions.jsonl", escape_id(thread_id))
}

/// Whether a storage name is a thread's deletions file.
pub(crate) fn is_deletions_file(name: &str) -> bool {
    let parts: Vec<&str> = name.split('/').collect();
    parts.len() == 3 && parts[0] == THREADS_DIR && parts[2] == "deletions.jsonl"
}

/// One deletion as written: which rows (a thread's, or one run's of it), whose (`user_id`:
/// the scope resolved, `null` for every user's rows) and where in the store's writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Deletion {
    pub(crate) thread_id: String,
    /// `None`: `delete_by_thread`.
    pub(crate) run_id: Option<String>,
    pub(crate) user_id: Option<String>,
    /// The thread's high-water mark before the deletion: the rows that held it may be gone
    /// from the files, and a replay restores it before deleting (R13).
    pub(crate) max_seq: u64,
    /// The runs a thread deletion fenced (R28): rows of them are refused on the thread from
    /// now on. Absent from a run deletion's line and from a deletion that fenced none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) fenced: Vec<String>,
    pub(crate) write: u64,
}

impl Deletion {
    /// The line, newline included.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).expect("a deletion serializes");
        bytes.push(b'\n');
        bytes
    }

    /// Reads one line of `file` (without its newline); the error says what is wrong with it.
    pub(crate) fn decode(file: &str, line: &[u8]) -> Result<Deletion, String> {
        let d: Deletion =
            serde_json::from_slice(line).map_err(|e| format!("not a deletion ({e})"))?;
        if deletions_file(&d.thread_id) != file {
            return Err(format!(
                "a deletion of thread {:?} (its file is {})",
                d.thread_id,
                deletions_file(&d.thread_id)
            ));
        }
        if d.write == 0 {
            return Err("write number 0 (they start at 1)".into());
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deletion_round_trips_and_must_sit_in_its_thread_file() {
        let d = Deletion {
            thread_id: "t/1".into(),
            run_id: Some("r".into()),
            user_id: None,
            max_seq: 3,
            fenced: Vec::new(),
            write: 7,
        };
        let file = deletions_file("t/1");
        assert_eq!(file, "threads/t%2F1/deletions.jsonl");
        assert!(is_deletions_file(&file));
        assert!(!is_deletions_file("threads/t/runs/deletions.jsonl"));
        let line = d.encode();
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(Deletion::decode(&file, &line[..line.len() - 1]), Ok(d));
        let other = Deletion::decode("threads/u/deletions.jsonl", &line[..line.len() - 1]);
        assert!(other.unwrap_err().contains("its file is threads/t%2F1"));
        assert!(Deletion::decode(&file, b"{\"thread_id\":\"t/1\"")
            .unwrap_err()
            .starts_with("not a deletion"));
    }
}
