//! The SQLite stores a thread keeps from one world to the next.
//!
//! A world's SQLite store is new and empty, so every world used to open a connection, create
//! the schema and prepare each statement again: about 2 M instructions a seed (callgrind, runs
//! 0..300: `sqlite3Prepare` 4.6 % and the schema 1.6 % of the workload), most of a short seed's
//! SQLite time; a world that crashes the store's host also made a temporary directory and a
//! database file in WAL mode, and removed them. A thread plays one world at a time, so it keeps
//! the stores of its last world (the in-memory one, and the file with the connection a crash
//! last reopened) and hands them, emptied by [`SqliteRunEventStore::clear`], to the next. A
//! cleared store answers as a new one (history's `a_cleared_store_answers_as_a_new_one`), so
//! which thread played which seed before changes nothing a world sees. A world that panics drops
//! its stores, and the next opens new ones.

use super::host::{FileSqliteStore, SqliteFile};
use super::hosted::Hosted;
use history::runs::{RunStoreError, SqliteRunEventStore};
use history::Planted;
use std::cell::RefCell;
use std::rc::Rc;

thread_local! {
    /// The in-memory store of this thread's last world, if it gave it back.
    static KEPT: RefCell<Option<SqliteRunEventStore>> = const { RefCell::new(None) };
    /// The database file of this thread's last world that crashed the store's host, with the
    /// store open on it, if it gave them back.
    static KEPT_FILE: RefCell<Option<(SqliteFile, SqliteRunEventStore)>> =
        const { RefCell::new(None) };
}

/// An empty in-memory store with `planted`'s bugs: the one this thread kept, cleared, when it
/// has the same bugs (R5 changes the schema), else a new one.
pub(in crate::runs) fn take(planted: Planted) -> Result<SqliteRunEventStore, RunStoreError> {
    if let Some(kept) = KEPT.take() {
        if kept.planted() == planted && kept.clear().is_ok() {
            return Ok(kept);
        }
    }
    SqliteRunEventStore::open_in_memory(planted)
}

/// An empty database file with `planted`'s bugs and its store: the ones this thread kept,
/// cleared, or a new file in a fresh temporary directory.
pub(in crate::runs) fn take_file(planted: Planted) -> Result<FileSqliteStore, String> {
    match take_kept_file(planted) {
        Some((file, store)) => Ok(Hosted::new(file, store)),
        None => FileSqliteStore::open(planted),
    }
}

/// The database file this thread kept and its store, emptied, when they have `planted`'s bugs.
fn take_kept_file(planted: Planted) -> Option<(SqliteFile, SqliteRunEventStore)> {
    let (file, store) = KEPT_FILE.take()?;
    (store.planted() == planted && store.clear().is_ok()).then_some((file, store))
}

/// A store a world took, to give back when the world ends.
pub(in crate::runs) enum Lent {
    Memory(Rc<SqliteRunEventStore>),
    File(Rc<FileSqliteStore>),
}

impl Lent {
    /// Keeps the store for this thread's next world, once the world's handles on it are gone.
    /// One still held elsewhere would make it unsafe to share, so it is then dropped instead,
    /// and so is a file store whose host a failed restart left down.
    pub(in crate::runs) fn give_back(self) {
        match self {
            Lent::Memory(store) => {
                if let Ok(store) = Rc::try_unwrap(store) {
                    KEPT.set(Some(store));
                }
            }
            Lent::File(hosted) => {
                if let Ok(hosted) = Rc::try_unwrap(hosted) {
                    if let (file, Some(store)) = hosted.into_parts() {
                        KEPT_FILE.set(Some((file, store)));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::play::host::tests::event;
    use history::runs::RunEventStore;

    #[test]
    fn a_given_back_store_comes_back_empty_and_only_for_the_same_bugs() {
        let first = Rc::new(take(Planted::none()).unwrap());
        first.put_batch(vec![event("hi"), event("hi")]).unwrap();
        Lent::Memory(first).give_back();
        let again = Rc::new(take(Planted::none()).unwrap());
        assert!(again.dump().unwrap().is_empty());
        assert_eq!(again.put_batch(vec![event("hi")]).unwrap(), vec![1]);
        // A store still held elsewhere is not kept.
        Lent::Memory(again.clone()).give_back();
        assert!(KEPT.with_borrow(Option::is_none));
        drop(again);
        Lent::Memory(Rc::new(take(Planted::none()).unwrap())).give_back();
        let other = Planted::only(history::BugId::R5);
        assert_eq!(take(other).unwrap().planted(), other);
        // The kept store was not the one asked for: nothing is kept now.
        assert!(KEPT.with_borrow(Option::is_none));
    }

    #[test]
    fn a_given_back_file_comes_back_empty_on_the_same_file() {
        let first = Rc::new(take_file(Planted::none()).unwrap());
        first.put_batch(vec![event("hi"), event("hi")]).unwrap();
        let path = first.host.path();
        Lent::File(first).give_back();
        let again = Rc::new(take_file(Planted::none()).unwrap());
        assert!(again.dump().unwrap().is_empty());
        assert_eq!(again.put_batch(vec![event("hi")]).unwrap(), vec![1]);
        assert_eq!(again.host.path(), path);
        Lent::File(again).give_back();
        assert!(take_kept_file(Planted::only(history::BugId::R5)).is_none());
        assert!(KEPT_FILE.with_borrow(Option::is_none));
    }
}
