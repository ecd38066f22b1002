//! The store a live worker's journals write through: the shared store, with every write
//! call announced on stdout before it reaches the store and its answer after (so a kill between
//! the two leaves a call whose rows only the store can tell about).

use super::line::{say, CallRows, WorkerLine};
use crate::live::line::wall_us;
use crate::workload::StoreKind;
use history::define_run_store_methods;
use history::runs::{JsonlRunEventStore, RunEventStore, RunStoreError, SqliteRunEventStore};
use history::Planted;
use std::path::Path;

history::run_store_ops!(define_run_store_methods {$});

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

impl LiveTap {
    /// Write call `call` of run `run`: announced with its `rows` before it reaches the store,
    /// its error or the seqs its rows were stored at (`stored_at` of its answer) after.
    fn announced<T>(
        &self,
        (run, call, rows): (usize, &str, CallRows),
        write: impl FnOnce(&dyn RunEventStore) -> Result<T, RunStoreError>,
        stored_at: impl FnOnce(&T) -> Vec<u64>,
    ) -> Result<T, RunStoreError> {
        say(&WorkerLine::Call {
            run,
            at_us: wall_us(),
            rows,
        });
        let answer = write(&*self.store);
        self.answered(run, call, &answer);
        if let Ok(answered) = &answer {
            say(&WorkerLine::Wrote {
                run,
                at_us: wall_us(),
                seqs: stored_at(answered),
            });
        }
        answer
    }
}

impl RunEventStore for LiveTap {
    run_store_methods! {
        fn put_batch(&self, events) {
            let run = self.run_of(events.first().map_or("", |e| e.run_id.as_str()));
            let rows = CallRows::Batch {
                events: events.clone(),
            };
            self.announced(
                (run, "put_batch", rows),
                |store| store.put_batch(events),
                Vec::clone,
            )
        }

        fn insert_numbered(&self, events) {
            let run = self.run_of(events.first().map_or("", |e| e.run_id.as_str()));
            let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
            let rows = CallRows::Numbered {
                events: events.clone(),
            };
            self.announced(
                (run, "insert_numbered", rows),
                |store| store.insert_numbered(events),
                |()| seqs,
            )
        }

        fn max_seq(&self, thread_id) {
            let answer = self.store.max_seq(thread_id);
            self.answered(usize::MAX, "max_seq", &answer);
            answer
        }

        fn list_messages(&self, thread_id, limit, cursor) {
            self.store.list_messages(thread_id, limit, cursor)
        }

        fn count_messages(&self, thread_id) {
            self.store.count_messages(thread_id)
        }

        fn list_events(&self, thread_id, run_id) {
            self.store.list_events(thread_id, run_id)
        }

        fn dump(&self) {
            self.store.dump()
        }
    }
}
