//! The store a live worker's journals write through: the shared SQLite file, with every write
//! call announced on stdout before it reaches the store and its answer after (so a kill between
//! the two leaves a call whose rows only the store can tell about).

use super::line::{say, CallRows, WorkerLine};
use crate::live::line::wall_us;
use history::runs::{
    MessageCursor, NewRunEvent, RunEvent, RunEventStore, RunStoreError, SqliteRunEventStore,
};

/// The shared store, announcing each write of run `run_of(run_id)`.
pub struct LiveTap {
    pub store: SqliteRunEventStore,
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
