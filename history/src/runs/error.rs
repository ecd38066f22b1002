//! The errors of the run-event store and of everything built on it.

/// Why a store operation failed. Nothing is written when a write fails (batches are atomic).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunStoreError {
    /// An event was rejected before anything was written.
    #[error("invalid run event: field `{field}` {reason}")]
    InvalidEvent { field: &'static str, reason: String },
    /// A writer numbered an event with a `seq` the thread already has (or below its maximum):
    /// the unique guard that catches racing writers (R5).
    #[error(
        "seq conflict on thread `{thread_id}`: seq {seq} is not above the stored maximum {max_seq}"
    )]
    SeqConflict {
        thread_id: String,
        seq: u64,
        max_seq: u64,
    },
    /// A stored row could not be decoded (a legacy or corrupt row): names the row and the field.
    #[error("stored row thread `{thread_id}` seq {seq}: field `{field}` {reason}")]
    Decode {
        thread_id: String,
        seq: i64,
        field: &'static str,
        reason: String,
    },
    /// A write carries a run that a deletion of its thread removed: the deletion fenced the
    /// run, and no row of it may land on the thread again (R28). Nothing is written.
    #[error(
        "thread deleted: thread `{thread_id}` was deleted with run `{run_id}`, which may not write to it again"
    )]
    ThreadDeleted { thread_id: String, run_id: String },
    /// The store does not offer this operation (a wrapper or a system under test that does not
    /// declare it). `op` names it.
    #[error("the store does not offer `{op}`")]
    Unsupported { op: &'static str },
    /// A user-scoped operation was called with the default scope ([`super::UserScope::Current`])
    /// but no current user: it refuses rather than read every user's rows.
    #[error("{op} called with the default user scope but no current user; pass a user or UserScope::All")]
    NoUserContext { op: &'static str },
    /// The SQLite backend failed; `op` says which operation.
    #[error("sqlite {op}: {message}")]
    Sqlite { op: &'static str, message: String },
    /// The JSONL backend's storage failed; `op` says which operation, `file` on which file.
    #[error("jsonl store: {op} {file}: {message}")]
    Storage {
        op: &'static str,
        file: String,
        message: String,
    },
    /// A JSONL run file holds a line no crash can explain (see `JsonlRunEventStore`): names the
    /// file and the 1-based line.
    #[error("jsonl store: {file} line {line}: {reason}")]
    CorruptLine {
        file: String,
        line: u64,
        reason: String,
    },
    /// Only the planted R24 legacy path: the per-run page looked the run up first and failed
    /// when the thread had no message row of it (a deleted or unstarted run), where the contract
    /// answers an empty page.
    #[cfg(feature = "planted")]
    #[error("{op}: internal error: no run `{run_id}`")]
    LegacyNoSuchRun { op: &'static str, run_id: String },
    /// A fault injected by [`super::FaultyRunStore`] (tests and simulation only).
    #[cfg(any(test, feature = "testing"))]
    #[error("injected fault on write call {call}")]
    Injected { call: u64 },
    /// The refusal of a store under test in another process (the simulator's SUT protocol):
    /// only its message crosses the boundary.
    #[cfg(any(test, feature = "testing"))]
    #[error("{message}")]
    Answered {
        /// The refusal's kind on the wire (`invalid`, `conflict`, `thread_deleted`,
        /// `unsupported`, `internal`);
        /// `internal` for what histsim says of a breach or a host that is down.
        kind: String,
        message: String,
    },
}

impl RunStoreError {
    /// Whether this is a deletion's fence refusing a write (R28): [`RunStoreError::ThreadDeleted`],
    /// or a store under test's refusal of kind `thread_deleted`.
    pub fn is_thread_deleted(&self) -> bool {
        match self {
            RunStoreError::ThreadDeleted { .. } => true,
            #[cfg(any(test, feature = "testing"))]
            RunStoreError::Answered { kind, .. } => kind == "thread_deleted",
            _ => false,
        }
    }

    pub(crate) fn sqlite(op: &'static str, e: rusqlite::Error) -> RunStoreError {
        RunStoreError::Sqlite {
            op,
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_field_and_row() {
        let e = RunStoreError::Decode {
            thread_id: "t1".into(),
            seq: 4,
            field: "content",
            reason: "not JSON".into(),
        };
        assert_eq!(
            e.to_string(),
            "stored row thread `t1` seq 4: field `content` not JSON"
        );
    }
}
