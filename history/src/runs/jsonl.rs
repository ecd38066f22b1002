//! The JSONL run-event store: the third backend, files laid out as the published DeerFlow
//! `JsonlRunEventStore` lays them out (one file per run under its thread, see
//! [`super::jsonl_line`]), over the journal's [`Storage`] so that the real filesystem, memory and
//! the simulator's crashing disk all carry it.
//!
//! Design: the files are the truth, an in-memory [`MemoryRunEventStore`] is the index. Opening
//! reads every file and replays its rows into the index in write order; every read is the index's
//! answer, so this backend answers exactly as the memory store does (R9) by construction, and a
//! read the trait gains is one line here. A write goes to the index first (which numbers and
//! checks it exactly as the memory store does), then to the files: each touched file gets its
//! lines in one append, then every touched file is synced, and only then is the write
//! acknowledged. A write whose append or sync fails is cut back from the files (truncated to
//! their earlier lengths and synced) and the index is read again from them, so an error leaves
//! nothing written. If even the cut fails, the store refuses every later operation until it is
//! opened again (its index holds the failed write); opening then finishes the cut (see [`super::jsonl_load`] for what a torn tail
//! means and what a reopened store keeps).
//!
//! Deletions (`delete_by_run`, `delete_by_thread`, in any user's scope) are one line in the
//! thread's deletions file ([`super::jsonl_deletion`]), written and synced like a row, after
//! which the run files left without a row are removed, as upstream removes them. A crash between
//! those removals, or before the directory holding them is synced, leaves files whose rows the
//! line already deletes: the reopened store replays the line over them (so it answers exactly
//! as before the crash, the thread's high-water mark included) and removes them again. Nothing
//! depends on when a removal becomes durable, since the store never removes a deletions file and
//! a run file that comes back is read through the lines. A crash before the line is synced
//! loses the deletion whole: it was not acknowledged.
//!
//! Durability: an acknowledged write survives a crash exactly as far as the storage's `sync`
//! promises. A write that was not acknowledged either survives whole or not at all: a reopened
//! store drops a batch some of whose rows a crash lost, and reports every cut
//! ([`JsonlRunEventStore::dropped_tails`]). One ambiguity is the storage's, not ours: a write
//! whose sync failed AND whose cut-back failed may be whole on disk, and then a reopened store
//! shows it although the write returned an error (as any database whose fsync failed may).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use super::error::RunStoreError;
use super::event::RunEvent;
use super::jsonl_deletion::{deletions_file, Deletion};
use super::jsonl_line::{encode, run_file, THREADS_DIR};
use super::jsonl_load::{load, segment_of, storage_error, DroppedTail};
use super::memory::MemoryRunEventStore;
use super::query::UserScope;
use super::store::RunEventStore;
use crate::journal::{FsStorage, SharedStorage, Storage};
use crate::planted::{BugId, Planted};

/// The JSONL backend.
#[derive(Debug)]
pub struct JsonlRunEventStore {
    storage: SharedStorage,
    planted: Planted,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    index: MemoryRunEventStore,
    /// The write number the next row gets (store-wide, from 1).
    next_write: u64,
    /// Set when a failed write could not be cut back from the files: the files may hold rows
    /// the index does not, so no further write is taken until the store is opened again.
    broken: Option<RunStoreError>,
    /// Every tail cut when the store was opened or read again after a failed write.
    dropped: Vec<DroppedTail>,
}

/// Why a write to the files failed, and whether the files are back as they were.
struct WriteFailure {
    error: RunStoreError,
    files_restored: bool,
}

/// The error every operation of a broken store returns.
fn must_reopen(cause: &RunStoreError) -> RunStoreError {
    RunStoreError::Storage {
        op: "use",
        file: THREADS_DIR.to_string(),
        message: format!(
            "the store must be opened again: a failed write could not be cut back from its \
             files ({cause})"
        ),
    }
}

/// The index a store's files hold, after cutting the tails a crash left and removing the run
/// files a deletion emptied (finishing a deletion a crash interrupted).
fn recover(
    storage: &dyn Storage,
    planted: Planted,
) -> Result<(MemoryRunEventStore, u64, Vec<DroppedTail>), RunStoreError> {
    let loaded = load(storage)?;
    for cut in &loaded.dropped {
        storage
            .truncate(&cut.file, cut.offset)
            .map_err(|e| storage_error("truncate", &cut.file, e))?;
        storage
            .sync(&cut.file)
            .map_err(|e| storage_error("sync", &cut.file, e))?;
    }
    let index = MemoryRunEventStore::new(planted);
    let mut pending: Vec<RunEvent> = Vec::new();
    let mut replayed = 0;
    for row in loaded.rows {
        let segment = segment_of(&row, &loaded.deletions);
        while replayed < segment {
            index.insert_numbered(std::mem::take(&mut pending))?;
            replay_deletion(&index, &loaded.deletions[replayed])?;
            replayed += 1;
        }
        pending.push(row.event);
    }
    index.insert_numbered(pending)?;
    for d in &loaded.deletions[replayed..] {
        replay_deletion(&index, d)?;
    }
    let live: BTreeSet<String> = index
        .dump()?
        .iter()
        .map(|e| run_file(&e.thread_id, &e.run_id))
        .collect();
    for file in loaded.run_files.iter().filter(|f| !live.contains(*f)) {
        storage
            .remove(file)
            .map_err(|e| storage_error("remove", file, e))?;
    }
    Ok((index, loaded.next_write, loaded.dropped))
}

/// Applies a written deletion to the index, as the operation did when it was made.
fn replay_deletion(index: &MemoryRunEventStore, d: &Deletion) -> Result<u64, RunStoreError> {
    let user = scope_of(d.user_id.clone());
    index.raise_max_seq(&d.thread_id, d.max_seq);
    let removed = match &d.run_id {
        Some(run) => index.delete_by_run(&d.thread_id, run, &user),
        None => index.delete_by_thread(&d.thread_id, &user),
    };
    // The fence the line names, whatever rows the files still held when it was replayed (R28).
    index.fence(&d.thread_id, &d.fenced.iter().cloned().collect());
    removed
}

/// The scope a resolved user stands for.
fn scope_of(user: Option<String>) -> UserScope {
    user.map_or(UserScope::All, UserScope::Only)
}

/// The run ids holding rows of a thread.
fn runs_of(
    index: &MemoryRunEventStore,
    thread_id: &str,
) -> Result<BTreeSet<String>, RunStoreError> {
    Ok(index
        .dump()?
        .into_iter()
        .filter(|e| e.thread_id == thread_id)
        .map(|e| e.run_id)
        .collect())
}

impl JsonlRunEventStore {
    /// Opens the store kept in `storage` (empty storage: an empty store), cutting and reporting
    /// the tails a crash left. Fails naming the file and line when a file holds what no crash
    /// explains. `planted` may switch on the memory store's bugs (its index is one) and R12
    /// (writes acknowledged unsynced, as the published store writes them).
    pub fn open(
        storage: SharedStorage,
        planted: Planted,
    ) -> Result<JsonlRunEventStore, RunStoreError> {
        let (index, next_write, dropped) = recover(storage.as_ref(), planted)?;
        Ok(JsonlRunEventStore {
            storage,
            planted,
            state: Mutex::new(State {
                index,
                next_write,
                broken: None,
                dropped,
            }),
        })
    }

    /// Opens the store in a directory of the real filesystem (created when missing): the
    /// directory upstream calls its base (`.deer-flow`), holding `threads/`.
    pub fn open_dir(
        dir: impl AsRef<Path>,
        planted: Planted,
    ) -> Result<JsonlRunEventStore, RunStoreError> {
        let dir = dir.as_ref();
        let fail = |e| storage_error("open", &dir.display().to_string(), e);
        std::fs::create_dir_all(dir).map_err(fail)?;
        let storage = FsStorage::new(dir).map_err(fail)?;
        JsonlRunEventStore::open(Arc::new(storage), planted)
    }

    /// The tails cut from the files since the store was opened (a crash's unfinished batch, or
    /// a failed write read again). Empty after a clean shutdown.
    pub fn dropped_tails(&self) -> Vec<DroppedTail> {
        self.lock().dropped.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every change to the state is made after the fallible steps, so a poisoned lock still
        // guards consistent data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The index, for a read; the error of a failed cut-back when the store is broken (its index
    /// then holds a write that failed).
    fn usable(&self) -> Result<MutexGuard<'_, State>, RunStoreError> {
        let state = self.lock();
        match &state.broken {
            Some(broken) => Err(broken.clone()),
            None => Ok(state),
        }
    }

    /// A write: `apply` changes the index and returns its answer and the rows it added, which
    /// then go to the files. On a file failure the index is read again from the files.
    fn write<T>(
        &self,
        apply: impl FnOnce(&MemoryRunEventStore) -> Result<(T, Vec<RunEvent>), RunStoreError>,
    ) -> Result<T, RunStoreError> {
        let mut state = self.usable()?;
        let (answer, rows) = apply(&state.index)?;
        if rows.is_empty() {
            return Ok(answer);
        }
        let first = state.next_write;
        let batch = (first, rows.len() as u64);
        let mut by_file: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (i, row) in rows.iter().enumerate() {
            let line = encode(row, first + i as u64, batch);
            by_file
                .entry(run_file(&row.thread_id, &row.run_id))
                .or_default()
                .extend(line);
        }
        self.commit(&mut state, &by_file, batch.1)?;
        // Post-condition: one write number a row written.
        debug_assert_eq!(state.next_write, first + batch.1);
        Ok(answer)
    }

    /// A deletion (`run_id` `None`: the thread's), in `user`'s scope: applied to the index,
    /// then written as one line of the thread's deletions file and synced, and only then are
    /// the run files it emptied removed (see [`super::jsonl_deletion`] for why the line).
    fn delete(
        &self,
        thread_id: &str,
        run_id: Option<&str>,
        user: &UserScope,
        op: &'static str,
    ) -> Result<u64, RunStoreError> {
        let user_id = user.resolve(op)?.map(str::to_string);
        let mut state = self.usable()?;
        let before = runs_of(&state.index, thread_id)?;
        let max_seq = state.index.max_seq(thread_id)?;
        let (removed, fenced) = match run_id {
            Some(run) => (
                state.index.delete_by_run(thread_id, run, user)?,
                BTreeSet::new(),
            ),
            None => state.index.delete_thread_fencing(thread_id, user)?,
        };
        if removed == 0 && state.index.max_seq(thread_id)? == max_seq {
            // Nothing changed: nothing to write. (A thread `delete_by_run` emptied keeps its
            // mark; `delete_by_thread` of it removes no row and still ends its numbering.)
            return Ok(0);
        }
        let deletion = Deletion {
            thread_id: thread_id.to_string(),
            run_id: run_id.map(str::to_string),
            user_id,
            max_seq,
            fenced: fenced.into_iter().collect(),
            write: state.next_write,
        };
        let by_file = BTreeMap::from([(deletions_file(thread_id), deletion.encode())]);
        self.commit(&mut state, &by_file, 1)?;
        let after = runs_of(&state.index, thread_id)?;
        // Post-condition: a deletion leaves no run that was not there before.
        debug_assert!(
            after.is_subset(&before),
            "{after:?} after, {before:?} before"
        );
        for run in before.difference(&after) {
            // Tidying only: the synced line already deletes the rows, and a file that stays
            // (this removal failed, or a crash came first) is removed by the next open.
            let _ = self.storage.remove(&run_file(thread_id, run));
        }
        Ok(removed)
    }

    /// Appends `by_file` (taking `writes` write numbers) and syncs it. On a file failure the
    /// files are cut back and the index read again from them, or, when even that fails, the
    /// store is marked broken.
    fn commit(
        &self,
        state: &mut State,
        by_file: &BTreeMap<String, Vec<u8>>,
        writes: u64,
    ) -> Result<(), RunStoreError> {
        debug_assert!(
            writes >= 1 && !by_file.is_empty(),
            "a commit writes something"
        );
        let Err(failure) = self.append_synced(by_file) else {
            state.next_write += writes;
            return Ok(());
        };
        let restored = if failure.files_restored {
            recover(self.storage.as_ref(), self.planted)
        } else {
            Err(failure.error.clone())
        };
        match restored {
            Ok((index, next_write, dropped)) => {
                state.index = index;
                state.next_write = next_write;
                state.dropped.extend(dropped);
            }
            Err(e) => state.broken = Some(must_reopen(&e)),
        }
        Err(failure.error)
    }

    /// Appends each file's bytes in one append, then syncs every touched file. On failure cuts
    /// every touched file back.
    fn append_synced(&self, by_file: &BTreeMap<String, Vec<u8>>) -> Result<(), WriteFailure> {
        let mut touched: Vec<(&str, u64)> = Vec::with_capacity(by_file.len());
        let written = (|| {
            for (file, bytes) in by_file {
                let before = self
                    .storage
                    .len(file)
                    .map_err(|e| storage_error("stat", file, e))?;
                touched.push((file, before.unwrap_or(0)));
                self.storage
                    .append(file, bytes)
                    .map_err(|e| storage_error("append", file, e))?;
            }
            // planted R12: the published store (deerflow-kernel 0.1.7) appends to its file and
            // closes it, never syncing: a write is acknowledged while only the page cache holds
            // it, and a power cut loses it.
            if self.planted.is(BugId::R12) {
                return Ok(());
            }
            for file in by_file.keys() {
                self.storage
                    .sync(file)
                    .map_err(|e| storage_error("sync", file, e))?;
            }
            Ok(())
        })();
        written.map_err(|error| WriteFailure {
            error,
            files_restored: self.cut_back(&touched),
        })
    }

    /// Truncates each file to its length before the failed write and syncs it; false when any
    /// step fails (the files may then hold part of the write).
    fn cut_back(&self, touched: &[(&str, u64)]) -> bool {
        touched
            .iter()
            .all(|&(file, before)| match self.storage.len(file) {
                Ok(None) => true,
                Ok(Some(len)) if len == before => true,
                Ok(Some(_)) => {
                    self.storage.truncate(file, before).is_ok() && self.storage.sync(file).is_ok()
                }
                Err(_) => false,
            })
    }
}

/// The JSONL store's reads, every one answered by its index.
macro_rules! reads_from_index {
    ({} $($(#[$doc:meta])* $kind:ident fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty,
        default $default:tt; wire $variant:ident { $($field:ident: $fty:ty = $enc:expr),* }
        $(every user ($all:ident))?; serve ($($dec:expr),*) answer $answer:ident; errors $errors:ident;)*) => {
        $(read_from_index! { $kind $name($($arg: $ty),*) -> $ret })*
    };
}

/// One read of the JSONL store (a write is written out by hand).
macro_rules! read_from_index {
    (write $($write:tt)*) => {};
    ($kind:ident $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        fn $name(&self, $($arg: $ty),*) -> Result<$ret, RunStoreError> {
            self.usable()?.index.$name($($arg),*)
        }
    };
}

impl RunEventStore for JsonlRunEventStore {
    crate::run_store_ops!(reads_from_index {});

    run_store_methods! {
        fn put_batch(&self, events) {
            self.write(|index| {
                let seqs = index.put_batch(events.clone())?;
                let rows = events
                    .into_iter()
                    .zip(&seqs)
                    .map(|(e, &s)| e.with_seq(s))
                    .collect();
                Ok((seqs, rows))
            })
        }

        fn insert_numbered(&self, events) {
            self.write(|index| {
                index.insert_numbered(events.clone())?;
                Ok(((), events))
            })
        }

        fn put_if_absent(&self, event) {
            self.write(|index| {
                let (record, written) = index.put_if_absent(event)?;
                let rows = if written {
                    vec![record.clone()]
                } else {
                    Vec::new()
                };
                Ok(((record, written), rows))
            })
        }

        fn delete_by_thread(&self, thread_id, user) {
            self.delete(thread_id, None, user, "delete_by_thread")
        }

        fn delete_by_run(&self, thread_id, run_id, user) {
            self.delete(thread_id, Some(run_id), user, "delete_by_run")
        }

        /// planted R3, as the memory store has it: the legacy read hands the index's own rows
        /// out, so a caller's edit changes what every later read of this process answers (the
        /// files keep what was written, and a reopened store forgets the edit).
        #[cfg(feature = "planted")]
        fn legacy_edit_messages(&self, thread_id, limit, cursor, edit) {
            self.usable()?
                .index
                .legacy_edit_messages(thread_id, limit, cursor, edit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::MemStorage;
    use crate::runs::event::human_message as ev;
    use crate::runs::event::Category;
    use crate::runs::event::MessageCursor;
    use crate::runs::EventFilter;
    use serde_json::json;

    #[test]
    fn rows_go_to_their_run_file_and_come_back_on_open() {
        let disk = Arc::new(MemStorage::new());
        let store = JsonlRunEventStore::open(disk.clone(), Planted::none()).unwrap();
        let seqs = store
            .put_batch(vec![ev("t", "r1"), ev("t", "r2"), ev("u", "r1")])
            .unwrap();
        assert_eq!(seqs, vec![1, 2, 1]);
        let files = disk.list("threads").unwrap();
        assert_eq!(
            files,
            vec![
                "threads/t/runs/r1.jsonl",
                "threads/t/runs/r2.jsonl",
                "threads/u/runs/r1.jsonl"
            ]
        );
        let before = store.dump().unwrap();
        drop(store);
        let again = JsonlRunEventStore::open(disk, Planted::none()).unwrap();
        assert_eq!(again.dump().unwrap(), before);
        assert!(again.dropped_tails().is_empty());
        assert_eq!(again.put_batch(vec![ev("t", "r1")]).unwrap(), vec![3]);
    }

    #[test]
    fn the_wider_reads_answer_as_the_memory_store_and_a_receipt_survives_reopen() {
        let disk = Arc::new(MemStorage::new());
        let jsonl = JsonlRunEventStore::open(disk.clone(), Planted::none()).unwrap();
        let memory = MemoryRunEventStore::new(Planted::none());
        let mut receipt = ev("t", "r1");
        receipt.event_type = "run.receipt".into();
        receipt.category = Category::Lifecycle;
        let mut task = ev("t", "r1");
        task.metadata = json!({"task_id": "k"});
        for store in [&jsonl as &dyn RunEventStore, &memory] {
            store
                .put_batch(vec![
                    ev("t", "r1"),
                    task.clone(),
                    ev("t", "r2"),
                    ev("t", "r1"),
                ])
                .unwrap();
            assert!(store.put_if_absent(receipt.clone()).unwrap().1);
            assert!(!store.put_if_absent(receipt.clone()).unwrap().1);
        }
        let runs: BTreeSet<String> = ["r1".to_string(), "r2".to_string()].into();
        let tasks = EventFilter {
            task_id: Some("k".into()),
            ..EventFilter::everything()
        };
        let answers = |s: &dyn RunEventStore| {
            (
                s.list_messages_by_run("t", "r1", 10, MessageCursor::After(1), &UserScope::All)
                    .unwrap(),
                s.list_events_filtered("t", "r1", &tasks, &UserScope::All)
                    .unwrap(),
                s.get_last_visible_ai_seq_by_run("t", &runs, &UserScope::All)
                    .unwrap(),
                s.count_messages_as("t", &UserScope::All).unwrap(),
                s.dump().unwrap(),
            )
        };
        assert_eq!(answers(&jsonl), answers(&memory));
        assert_eq!(answers(&jsonl).1.len(), 1);
        drop(jsonl);
        let again = JsonlRunEventStore::open(disk, Planted::none()).unwrap();
        assert!(!again.put_if_absent(receipt).unwrap().1);
        assert_eq!(answers(&again), answers(&memory));
    }
}
