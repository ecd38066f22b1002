//! The store a live worker's journals write through: the shared store, with every write
//! call announced on stdout before it reaches the store and its answer after (so a kill between
//! the two leaves a call whose rows only the store can tell about).

use super::line::{say, CallRows, WorkerLine};
use crate::live::line::wall_us;
use crate::workload::StoreKind;
use history::runs::{
    JsonlRunEventStore, MessageCursor, NewRunEvent, RunEvent, RunEventStore, RunStoreError,
    SqliteRunEventStore,
};
use history::Planted;
use std::path::Path;

/// Opens the shared store of kind `kind` at `path`: the SQLite file (WAL, a busy timeout: any
/// number of processes) or the JSONL store's directory (one process: the store's index is the
/// opening process's own; a reopened store cuts the tail a killed writer left).
pub fn open_store(
    kind: StoreKind,
    path: &Path,
    planted: Planted,
) -> Result<Box<dyn RunEventStore>, String> {
    let fail = |e: RunStoreError| format!("{}: {e}", path.display());
    Ok(match kind {
        StoreKind::Jsonl => Box::new(JsonlRunEventStore::open_dir(path, planted).map_err(fail)?),
        _ => Box::new(
            SqliteRunEventStore::open_surviving_process_death(path, planted).map_err(fail)?,
        ),
    })
}

/// The shared store, announcing each write of run `run_of(run_id)`.
pub struct LiveTap {
    pub store: Box<dyn RunEventStore>,
    /// The scenario's run ids, by index.
    pub run_ids: Vec<String>,
}

impl LiveTap {
    fn run_of(&self, run_id: &str) -> usize {
        self.run_ids
            .iter()
            .position(|r| r == run_id)
            .unwrap_or(usize::MAX)
    }

    fn answered<T>(&self, run: usize, call: &str, answer: &Result<T, RunStoreError>) {
        if let Err(e) = answer {
            say(&WorkerLine::Failed {
                run,
                at_us: wall_us(),
                call: call.to_string(),
                conflict: matches!(e, RunStoreError::SeqConflict { .. }),
                message: e.to_string(),
            });
        }
    }
}

impl RunEventStore for LiveTap {
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
        let run = self.run_of(events.first().map_or("", |e| e.run_id.as_str()));
        say(&WorkerLine::Call {
            run,
            at_us: wall_us(),
            rows: CallRows::Batch {
                events: events.clone(),
            },
        });
        let answer = self.store.put_batch(events);
        self.answered(run, "put_batch", &answer);
        if let Ok(seqs) = &answer {
            let seqs = seqs.clone();
            say(&WorkerLine::Wrote {
                run,
                at_us: wall_us(),
                seqs,
            });
        }
        answer
    }

    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
        let run = self.run_of(events.first().map_or("", |e| e.run_id.as_str()));
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        say(&WorkerLine::Call {
            run,
            at_us: wall_us(),
            rows: CallRows::Numbered {
                events: events.clone(),
            },
        });
        let answer = self.store.insert_numbered(events);
        self.answered(run, "insert_numbered", &answer);
        if answer.is_ok() {
            say(&WorkerLine::Wrote {
                run,
                at_us: wall_us(),
                seqs,
            });
        }
        answer
    }

    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        let answer = self.store.max_seq(thread_id);
        self.answered(usize::MAX, "max_seq", &answer);
        answer
    }

    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.store.list_messages(thread_id, limit, cursor)
    }

    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        self.store.count_messages(thread_id)
    }

    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError> {
        self.store.list_events(thread_id, run_id)
    }

    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
        self.store.dump()
    }
}
