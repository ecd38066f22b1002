//! The in-memory SQLite store a thread keeps from one world to the next.
//!
//! A world's SQLite store is new and empty, so every world used to open a connection, create
//! the schema and prepare each statement again: about 2 M instructions a seed (callgrind, runs
//! 0..300: `sqlite3Prepare` 4.6 % and the schema 1.6 % of the workload), most of a short seed's
//! SQLite time. A thread plays one world at a time, so it keeps the store of its last world and
//! hands it, emptied by [`SqliteRunEventStore::clear`], to the next. A cleared store answers as
//! a new one (history's `a_cleared_store_answers_as_a_new_one`), so which thread played which
//! seed before changes nothing a world sees. A world that panics drops its store, and the next
//! opens a new one.

use history::runs::{RunStoreError, SqliteRunEventStore};
use history::Planted;
use std::cell::RefCell;

thread_local! {
    /// The store of this thread's last world, if it gave it back.
    static KEPT: RefCell<Option<SqliteRunEventStore>> = const { RefCell::new(None) };
}

/// An empty in-memory store with `planted`'s bugs: the one this thread kept, cleared, when it
/// has the same bugs (R5 changes the schema), else a new one.
pub(super) fn take(planted: Planted) -> Result<SqliteRunEventStore, RunStoreError> {
    if let Some(kept) = KEPT.take() {
        if kept.planted() == planted && kept.clear().is_ok() {
            return Ok(kept);
        }
    }
    SqliteRunEventStore::open_in_memory(planted)
}

/// Keeps `store` for this thread's next world.
pub(super) fn give_back(store: SqliteRunEventStore) {
    KEPT.set(Some(store));
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::runs::{Category, NewRunEvent, RunEventStore};

    fn event() -> NewRunEvent {
        NewRunEvent {
            thread_id: "t".into(),
            run_id: "r".into(),
            user_id: None,
            event_type: "human_message".into(),
            category: Category::Message,
            content: serde_json::json!({"type": "human", "content": "hi"}),
            metadata: serde_json::json!({}),
            created_at_ns: 1,
        }
    }

    #[test]
    fn a_given_back_store_comes_back_empty_and_only_for_the_same_bugs() {
        let first = take(Planted::none()).unwrap();
        first.put_batch(vec![event(), event()]).unwrap();
        give_back(first);
        let again = take(Planted::none()).unwrap();
        assert!(again.dump().unwrap().is_empty());
        assert_eq!(again.put_batch(vec![event()]).unwrap(), vec![1]);
        give_back(again);
        let other = Planted::only(history::BugId::R5);
        assert_eq!(take(other).unwrap().planted(), other);
        // The kept store was not the one asked for: nothing is kept now.
        assert!(KEPT.with_borrow(Option::is_none));
    }
}
