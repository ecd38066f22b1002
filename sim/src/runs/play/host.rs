//! The store's host, which the world crashes: the `sqlite` store of the pair (the one a
//! deployment keeps durable) is killed between two store calls, without a clean close, and
//! opened again on the same data. What it keeps is what it declared ([`Durability`](crate::sut::protocol::Durability)); a store
//! that declares none is not crashed at all (the crash is left out and counted), so no check
//! weakens in silence.
//!
//! What a crash may lose, per store (R12 states it): the `memory` store of the pair is never
//! crashed: it is R9's twin, the store every answer of the crashed one is compared with, and a
//! restart that keeps every acknowledged write leaves the two alike. (Crashing it too would only
//! ever show that memory is lost, which its durability already says.) The `sqlite` store loses
//! nothing it acknowledged. The `jsonl` store, when it plays the first slot
//! ([`super::jsonl_host`]), is crashed with the `sqlite` one and loses nothing it acknowledged
//! either (writes and deletions are synced before they are acknowledged), so the pair again
//! answers alike.

pub use super::hosted::StoreHost;
use super::hosted::{Hosted, Reopen};
use history::runs::SqliteRunEventStore;
use history::Planted;
use std::path::PathBuf;

/// histsim's SQLite store on a database file in a temporary directory, for a world that
/// crashes its host: a crash drops the store object (the connection closes with whatever
/// transaction it had open rolled back, as a killed process leaves it) and reopens the file.
/// Every batch is committed to the file before it is acknowledged (WAL); unsynced, as a crash
/// here is the death of the store's process, not of its machine.
pub type FileSqliteStore = Hosted<SqliteFile>;

/// The database file of a [`FileSqliteStore`].
pub struct SqliteFile {
    dir: tempfile::TempDir,
    planted: Planted,
}

impl SqliteFile {
    pub(in crate::runs) fn path(&self) -> PathBuf {
        self.dir.path().join("runs.sqlite")
    }
}

impl Reopen for SqliteFile {
    type Store = SqliteRunEventStore;

    fn reopen(&self) -> Result<SqliteRunEventStore, String> {
        SqliteRunEventStore::open_surviving_process_death(&self.path(), self.planted)
            .map_err(|e| format!("the SQLite store did not reopen after a crash: {e}"))
    }
}

impl Hosted<SqliteFile> {
    /// A new database file in a fresh temporary directory.
    pub fn open(planted: Planted) -> Result<FileSqliteStore, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("no data directory: {e}"))?;
        let file = SqliteFile { dir, planted };
        let store = SqliteRunEventStore::open_surviving_process_death(&file.path(), planted)
            .map_err(|e| e.to_string())?;
        Ok(Hosted::new(file, store))
    }
}

#[cfg(test)]
pub(in crate::runs) mod tests {
    use super::*;
    use history::runs::{Category, NewRunEvent, RunEventStore};

    /// A human message of thread `t`, run `r`.
    pub(in crate::runs) fn event(text: &str) -> NewRunEvent {
        event_of_run("r", text)
    }

    /// A human message of thread `t`, run `run`.
    pub(in crate::runs) fn event_of_run(run: &str, text: &str) -> NewRunEvent {
        NewRunEvent {
            thread_id: "t".into(),
            run_id: run.into(),
            user_id: None,
            event_type: "human_message".into(),
            category: Category::Message,
            content: serde_json::json!({"type": "human", "content": text}).into(),
            metadata: serde_json::json!({}),
            created_at_ns: 1,
        }
    }

    #[test]
    fn a_restart_keeps_every_acknowledged_write() {
        let store = FileSqliteStore::open(Planted::none()).expect("opens");
        assert_eq!(
            store.put_batch(vec![event("a"), event("b")]),
            Ok(vec![1, 2])
        );
        store.restart(0).expect("reopens");
        assert_eq!(store.count_messages("t"), Ok(2));
        assert_eq!(store.put_batch(vec![event("c")]), Ok(vec![3]));
    }

    #[test]
    fn planted_r12_loses_the_last_acknowledged_batch() {
        let store = FileSqliteStore::open(Planted::only(history::BugId::R12)).expect("opens");
        assert_eq!(store.put_batch(vec![event("a")]), Ok(vec![1]));
        assert_eq!(store.put_batch(vec![event("b")]), Ok(vec![2]));
        store.restart(0).expect("reopens");
        assert_eq!(store.count_messages("t"), Ok(1));
    }
}
