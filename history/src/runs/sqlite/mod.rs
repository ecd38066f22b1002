//! The SQLite run-event store: the `run_events` table of the seed, with UNIQUE(thread_id, seq)
//! and the two indexes the reads need.
//!
//! Each write is one IMMEDIATE transaction, so `seq` assignment (max + 1 inside the transaction)
//! cannot race; the unique constraint is the second line of defence (R5). Every read returns the
//! same rows as the in-memory store, NULL `user_id` rows included (R9).

mod fence;
mod reads;
mod schema;
mod writes;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::types::Value as SqlValue;
use rusqlite::{params_from_iter, Connection};

use super::invariants::debug_assert_seqs_follow;
use reads::{count_where, max_seq_in, query, query_where, seq_arg, Conditions};
use schema::COLUMNS;
use writes::{delete_keeping_mark, insert_row};

use super::current::{MIDDLEWARE_PREFIX, VISIBLE_AI_EVENT_TYPES};
use super::error::RunStoreError;
use super::event::{check_room, NewRunEvent, AI_TOOL_CALL};
use super::query::{EventFilter, UserScope};
use super::store::RunEventStore;
use crate::planted::{BugId, Planted};

/// The SQLite backend (one connection behind a mutex).
#[derive(Debug)]
pub struct SqliteRunEventStore {
    conn: Mutex<Connection>,
    planted: Planted,
}

impl SqliteRunEventStore {
    /// Opens (and creates if needed) a database file. `planted` may switch on R5 (table without
    /// the unique guard), R9 (reads drop NULL-user rows; `Both` cursors page backwards), R12
    /// (write-behind acknowledgements), or R13 to R16 as the memory store documents them.
    pub fn open(path: &Path, planted: Planted) -> Result<SqliteRunEventStore, RunStoreError> {
        // `synchronous = FULL`: in WAL mode, NORMAL skips the sync at each commit, so a power
        // cut may roll back commits already acknowledged (SQLite's own documentation), and a run
        // that ended must have every event stored (R4).
        SqliteRunEventStore::open_with_sync(path, planted, "FULL")
    }

    /// [`SqliteRunEventStore::open`] for a store that must survive the death of its process
    /// (a kill, a crash), not of its machine: `synchronous = OFF`. A commit has handed its
    /// frames to the operating system before it returns, so a killed process loses no
    /// acknowledged write (SQLite's documentation: "If the application running SQLite crashes,
    /// the data will be safe"); a power cut or an OS crash may lose writes or corrupt the file,
    /// since nothing is ever synced. The saving is every sync: at each commit, each checkpoint
    /// and the creation of the file.
    pub fn open_surviving_process_death(
        path: &Path,
        planted: Planted,
    ) -> Result<SqliteRunEventStore, RunStoreError> {
        SqliteRunEventStore::open_with_sync(path, planted, "OFF")
    }

    fn open_with_sync(
        path: &Path,
        planted: Planted,
        synchronous: &str,
    ) -> Result<SqliteRunEventStore, RunStoreError> {
        let conn = Connection::open(path).map_err(|e| RunStoreError::sqlite("open", e))?;
        // A 64 MiB page cache (the default is 2 MiB): a full history read of a long thread
        // touches every page of it, and a cache smaller than the thread turns each read into
        // re-reads from the OS.
        // The sync level first: switching a new file to WAL is a write of its own.
        conn.execute_batch(&format!(
            "PRAGMA synchronous = {synchronous}; PRAGMA journal_mode = WAL; \
             PRAGMA cache_size = -65536;"
        ))
        .map_err(|e| RunStoreError::sqlite("pragma", e))?;
        SqliteRunEventStore::with_connection(conn, planted)
    }

    /// A private in-memory database.
    pub fn open_in_memory(planted: Planted) -> Result<SqliteRunEventStore, RunStoreError> {
        let conn = Connection::open_in_memory().map_err(|e| RunStoreError::sqlite("open", e))?;
        SqliteRunEventStore::with_connection(conn, planted)
    }

    /// The planted bugs this store was opened with.
    pub fn planted(&self) -> Planted {
        self.planted
    }

    /// Empties the store and keeps its connection: the schema, the settings and the prepared
    /// statements stay, so the next use prepares nothing again. What it answers afterwards is
    /// what a store just opened answers: no rows, no high-water marks, and the row ids
    /// (`AUTOINCREMENT`, the tie-break of equal seqs) counted from 1 again. A transaction left
    /// open (planted R12's pending batch) is rolled back first, as closing the store would.
    pub fn clear(&self) -> Result<(), RunStoreError> {
        let conn = self.lock();
        if !conn.is_autocommit() {
            conn.execute_batch("ROLLBACK")
                .map_err(|e| RunStoreError::sqlite("roll back before clearing", e))?;
        }
        conn.execute_batch(
            "DELETE FROM run_events; DELETE FROM run_event_seq_marks; \
             DELETE FROM run_event_fences; DELETE FROM sqlite_sequence;",
        )
        .map_err(|e| RunStoreError::sqlite("clear", e))?;
        // Post-condition: nothing left, and no transaction open.
        debug_assert!(conn.is_autocommit());
        debug_assert_eq!(
            conn.query_row("SELECT COUNT(*) FROM run_events", [], |r| r
                .get::<_, i64>(0))
                .ok(),
            Some(0)
        );
        Ok(())
    }

    fn with_connection(
        conn: Connection,
        planted: Planted,
    ) -> Result<SqliteRunEventStore, RunStoreError> {
        schema::create(&conn, planted)?;
        Ok(SqliteRunEventStore {
            conn: Mutex::new(conn),
            planted,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // SQLite transactions roll back when dropped, so a poisoned lock guards a consistent
        // database.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The extra condition of every read. Empty unless planted R9.
    fn user_filter(&self) -> &'static str {
        if self.planted.is(BugId::R9) {
            // planted R9: the DB store filtered reads by user, so NULL-user (legacy) rows vanished.
            " AND user_id IS NOT NULL"
        } else {
            ""
        }
    }

    /// `c` restricted to `user`'s rows for a user-scoped message read.
    fn scoped_read(&self, c: Conditions, user: Option<&str>) -> Conditions {
        // planted R19: the legacy scoped read took rows without a user for everybody's.
        c.and_user_or_shared(user, self.planted.is(BugId::R19))
    }
}

impl RunEventStore for SqliteRunEventStore {
    run_store_methods! {
        fn put_batch(&self, events) {
            for e in &events {
                e.validate()?;
            }
            self.write(|tx| {
                fence::admit(tx, events.iter().map(|e| (&*e.thread_id, &*e.run_id)))?;
                check_room(&events, |t| max_seq_in(tx, t))?;
                let mut next: BTreeMap<String, u64> = BTreeMap::new();
                // Each thread's maximum before the write, for the post-condition.
                let mut prior: BTreeMap<String, u64> = BTreeMap::new();
                let threads: Vec<String> = events.iter().map(|e| e.thread_id.clone()).collect();
                let mut seqs = Vec::with_capacity(events.len());
                for e in events {
                    let seq = match next.get(&e.thread_id) {
                        Some(s) => *s,
                        None => {
                            let max = max_seq_in(tx, &e.thread_id)?;
                            prior.insert(e.thread_id.clone(), max);
                            max + 1
                        }
                    };
                    next.insert(e.thread_id.clone(), seq + 1);
                    insert_row(tx, &e.with_seq(seq))?;
                    seqs.push(seq);
                }
                debug_assert_seqs_follow(&threads, &seqs, &prior);
                Ok(seqs)
            })
        }

        fn insert_numbered(&self, events) {
            for e in &events {
                NewRunEvent::validate_numbered(e)?;
            }
            self.write(|tx| {
                fence::admit(tx, events.iter().map(|e| (&*e.thread_id, &*e.run_id)))?;
                let mut max_by_thread: BTreeMap<String, u64> = BTreeMap::new();
                for e in &events {
                    let max = match max_by_thread.get(&e.thread_id) {
                        Some(m) => *m,
                        None => max_seq_in(tx, &e.thread_id)?,
                    };
                    // planted R5: the legacy writer trusted its own max+1 and nothing checked it.
                    if e.seq <= max && !self.planted.is(BugId::R5) {
                        return Err(RunStoreError::SeqConflict {
                            thread_id: e.thread_id.clone(),
                            seq: e.seq,
                            max_seq: max,
                        });
                    }
                    max_by_thread.insert(e.thread_id.clone(), max.max(e.seq));
                    insert_row(tx, e)?;
                }
                // Post-condition: each thread's maximum covers the rows just written.
                debug_assert!(max_by_thread
                    .iter()
                    .all(|(t, m)| max_seq_in(tx, t).is_ok_and(|now| now >= *m)));
                Ok(())
            })
        }

        fn max_seq(&self, thread_id) {
            max_seq_in(&self.lock(), thread_id)
        }

        fn list_messages(&self, thread_id, limit, cursor) {
            self.message_page(Conditions::thread(thread_id), limit, cursor)
        }

        fn count_messages(&self, thread_id) {
            self.count_messages_as(thread_id, &UserScope::All)
        }

        fn count_events(&self, thread_id) {
            count_where(&self.lock(), &Conditions::thread(thread_id))
        }

        fn count_events_by_run(&self, thread_id, run_id) {
            let run = [SqlValue::Text(run_id.to_string())];
            count_where(
                &self.lock(),
                &Conditions::thread(thread_id).and("run_id = ?", run),
            )
        }

        fn list_events(&self, thread_id, run_id) {
            self.list_events_filtered(
                thread_id,
                run_id,
                &EventFilter::everything(),
                &UserScope::All,
            )
        }

        fn put_if_absent(&self, event) {
            event.validate()?;
            self.write(|tx| {
                fence::admit(tx, [(&*event.thread_id, &*event.run_id)])?;
                let mut c = Conditions::thread(&event.thread_id)
                    .and("event_type = ?", [SqlValue::Text(event.event_type.clone())]);
                // planted R14: the legacy lookup keyed on (thread, event type), any run.
                if !self.planted.is(BugId::R14) {
                    c = c.and("run_id = ?", [SqlValue::Text(event.run_id.clone())]);
                }
                let sql = format!(
                    "SELECT {COLUMNS} FROM run_events WHERE {} ORDER BY seq ASC, id ASC LIMIT 1",
                    c.sql
                );
                if let Some(first) = query_where(tx, &sql, c.args)?.pop() {
                    return Ok((first, false));
                }
                check_room(std::slice::from_ref(&event), |t| max_seq_in(tx, t))?;
                let seq = max_seq_in(tx, &event.thread_id)? + 1;
                let record = event.with_seq(seq);
                insert_row(tx, &record)?;
                // Post-condition: the record written is the thread's newest.
                debug_assert_eq!(max_seq_in(tx, &record.thread_id).ok(), Some(seq));
                Ok((record, true))
            })
        }

        fn delete_by_thread(&self, thread_id, user) {
            let user = user.resolve("delete_by_thread")?;
            self.write(|tx| {
                let mut c = Conditions::thread(thread_id).and_user(user);
                if !self.planted.is(BugId::R28) {
                    // planted R28 takes no fence: a late writer's rows land after the deletion.
                    fence::fence_rows(tx, &c)?;
                }
                if self.planted.is(BugId::R23) {
                    // planted R23: the legacy thread deletion dropped the message rows only.
                    c = c.and("category = 'message'", []);
                }
                let n = delete_keeping_mark(tx, thread_id, &c, Planted::none())?;
                // A thread left with no row is forgotten: its numbering restarts at 1.
                if count_where(tx, &Conditions::thread(thread_id))? == 0 {
                    tx.execute(
                        "DELETE FROM run_event_seq_marks WHERE thread_id = ?1",
                        [thread_id],
                    )
                    .map_err(|e| RunStoreError::sqlite("forget the seq mark", e))?;
                    debug_assert_eq!(max_seq_in(tx, thread_id).ok(), Some(0));
                }
                Ok(n)
            })
        }

        fn delete_by_run(&self, thread_id, run_id, user) {
            let user = user.resolve("delete_by_run")?;
            self.write(|tx| {
                let mut c = Conditions::thread(thread_id)
                    .and("run_id = ?", [SqlValue::Text(run_id.to_string())])
                    .and_user(user);
                if self.planted.is(BugId::R15) {
                    // planted R15: the legacy deletion dropped the run's message rows only.
                    c = c.and("category = 'message'", []);
                }
                delete_keeping_mark(tx, thread_id, &c, self.planted)
            })
        }

        fn list_messages_as(&self, thread_id, limit, cursor, user) {
            let user = user.resolve("list_messages")?;
            let c = self.scoped_read(Conditions::thread(thread_id), user);
            self.message_page(c, limit, cursor)
        }

        fn count_messages_as(&self, thread_id, user) {
            let user = user.resolve("count_messages")?;
            let c = Conditions::thread(thread_id).and("category = 'message'", []);
            let mut c = self.scoped_read(c, user);
            c.sql.push_str(self.user_filter());
            count_where(&self.lock(), &c)
        }

        fn list_messages_by_run(&self, thread_id, run_id, limit, cursor, user) {
            let user = user.resolve("list_messages_by_run")?;
            #[cfg(feature = "planted")]
            if self.planted.is(BugId::R24) {
                // planted R24: the legacy per-run page looked the run up first and failed on a run
                // with no message row (deleted, or not started) instead of answering no row.
                let of_run = Conditions::thread(thread_id)
                    .and("run_id = ?", [SqlValue::Text(run_id.to_string())])
                    .and("category = 'message'", []);
                if count_where(&self.lock(), &of_run)? == 0 {
                    return Err(RunStoreError::LegacyNoSuchRun {
                        op: "list_messages_by_run",
                        run_id: run_id.to_string(),
                    });
                }
            }
            if self.planted.is(BugId::R16) {
                // planted R16: the legacy read cut the thread's page first, then kept the run's
                // rows.
                let thread = Conditions::thread(thread_id).and_user(user);
                let mut rows = self.message_page(thread, limit, cursor)?;
                rows.retain(|e| e.run_id == run_id);
                return Ok(rows);
            }
            let c = Conditions::thread(thread_id)
                .and("run_id = ?", [SqlValue::Text(run_id.to_string())])
                .and_user(user);
            self.message_page(c, limit, cursor)
        }

        fn list_events_filtered(&self, thread_id, run_id, filter, user) {
            let user = user.resolve("list_events")?;
            let mut c = Conditions::thread(thread_id)
                .and("run_id = ?", [SqlValue::Text(run_id.to_string())])
                .and_user(user);
            if self.planted.is(BugId::R17) {
                // planted R17: the legacy read selected `limit` rows after the cursor and filtered
                // them in code, so a page holds fewer than `limit` matches; and it matched a task
                // by its text, the number 5 for `"5"`.
                if let Some(after) = filter.after_seq {
                    c = c.and("seq > ?", [seq_arg(after)]);
                }
                let mut rows = self.event_page(c, filter.limit)?;
                rows.retain(|e| filter.admits_by_text(e));
                return Ok(rows);
            }
            if let Some(types) = &filter.event_types {
                let types: Vec<&str> = types.iter().map(String::as_str).collect();
                c = c.and_in("event_type", &types);
            }
            if let Some(task) = &filter.task_id {
                // Strings only, as `EventFilter::admits` (a number 5 never equals the text '5').
                c = c.and(
                    "COALESCE(json_type(event_metadata, '$.task_id'), '') = 'text' \
                     AND json_extract(event_metadata, '$.task_id') = ?",
                    [SqlValue::Text(task.clone())],
                );
            }
            if let Some(after) = filter.after_seq {
                c = c.and("seq > ?", [seq_arg(after)]);
            }
            self.event_page(c, filter.limit)
        }

        fn get_last_visible_ai_seq_by_run(&self, thread_id, run_ids, user) {
            let user = user.resolve("get_last_visible_ai_seq_by_run")?;
            if run_ids.is_empty() {
                return Ok(BTreeMap::new());
            }
            let runs: Vec<&str> = run_ids.iter().map(String::as_str).collect();
            let mut types = VISIBLE_AI_EVENT_TYPES.to_vec();
            let legacy = self.planted.is(BugId::R18);
            if legacy {
                // planted R18: the legacy read matched every AI message type (`ai_%`), the
                // tool-calling turn (not shown as an answer) included, and never read the caller
                // (below): a middleware's AI message was taken for the run's answer too.
                types.push(AI_TOOL_CALL);
            }
            let mut c = Conditions::thread(thread_id)
                .and("category = 'message'", [])
                .and_in("event_type", &types)
                .and_in("run_id", &runs)
                .and_user(user);
            // Case-sensitive, as `current::is_visible_ai` (LIKE would not be).
            if !legacy {
                c = c.and(
                    "NOT (COALESCE(json_type(event_metadata, '$.caller'), '') = 'text' \
                     AND substr(json_extract(event_metadata, '$.caller'), 1, ?) = ?)",
                    [
                        SqlValue::Integer(MIDDLEWARE_PREFIX.len() as i64),
                        SqlValue::Text(MIDDLEWARE_PREFIX.to_string()),
                    ],
                );
            }
            let sql = format!(
                "SELECT run_id, MAX(seq) FROM run_events WHERE {}{} GROUP BY run_id",
                c.sql,
                self.user_filter()
            );
            let conn = self.lock();
            let mut stmt = conn
                .prepare_cached(&sql)
                .map_err(|e| RunStoreError::sqlite("prepare", e))?;
            let rows = stmt
                .query_map(params_from_iter(c.args), |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
                })
                .map_err(|e| RunStoreError::sqlite("query", e))?;
            let mut last = BTreeMap::new();
            for row in rows {
                let (run, seq) = row.map_err(|e| RunStoreError::sqlite("step", e))?;
                last.insert(run, u64::try_from(seq).unwrap_or(0));
            }
            // Post-condition: only runs asked about, each with a seq of a stored row.
            debug_assert!(last.iter().all(|(r, s)| run_ids.contains(r) && *s > 0));
            Ok(last)
        }

        fn dump(&self) {
            let sql = format!("SELECT {COLUMNS} FROM run_events ORDER BY thread_id, seq, id");
            query(&self.lock(), &sql, [])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::event::{Category, MessageCursor, RunEvent};
    use serde_json::json;

    fn ev(thread: &str, user: Option<&str>) -> NewRunEvent {
        NewRunEvent {
            thread_id: thread.into(),
            run_id: "r1".into(),
            user_id: user.map(str::to_string),
            event_type: "human_message".into(),
            category: Category::Message,
            content: json!({"type": "human", "content": "m", "n": 1.5}).into(),
            metadata: json!({"k": [1, 2]}),
            created_at_ns: -3,
        }
    }

    #[test]
    fn rows_round_trip_with_null_users() {
        let s = SqliteRunEventStore::open_in_memory(Planted::none()).unwrap();
        let seqs = s
            .put_batch(vec![ev("t", None), ev("t", Some("u"))])
            .unwrap();
        assert_eq!(seqs, vec![1, 2]);
        let rows = s.list_messages("t", 10, MessageCursor::None).unwrap();
        assert_eq!(
            rows,
            vec![ev("t", None).with_seq(1), ev("t", Some("u")).with_seq(2)]
        );
        assert_eq!(s.count_messages("t").unwrap(), 2);
    }

    /// What a store answers to one short history: seqs, the thread's max, the rows, their ids.
    fn answers_to_a_history(s: &SqliteRunEventStore) -> (Vec<u64>, u64, Vec<RunEvent>, Vec<i64>) {
        let seqs = s
            .put_batch(vec![ev("t", None), ev("t", Some("u")), ev("v", None)])
            .unwrap();
        let ids: Vec<i64> = s
            .lock()
            .prepare("SELECT id FROM run_events ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        (seqs, s.max_seq("t").unwrap(), s.dump().unwrap(), ids)
    }

    #[test]
    fn a_cleared_store_answers_as_a_new_one() {
        let used = SqliteRunEventStore::open_in_memory(Planted::none()).unwrap();
        used.put_batch(vec![ev("t", None), ev("t", None), ev("v", None)])
            .unwrap();
        // A deletion leaves a high-water mark, and a transaction is left open.
        assert_eq!(used.delete_by_run("t", "r1", &UserScope::All).unwrap(), 2);
        used.lock()
            .execute_batch("BEGIN IMMEDIATE; DELETE FROM run_events;")
            .unwrap();
        used.clear().unwrap();
        assert!(
            used.lock().is_autocommit(),
            "the open transaction was ended"
        );
        assert_eq!(used.max_seq("t").unwrap(), 0, "no mark is left");
        let new = SqliteRunEventStore::open_in_memory(Planted::none()).unwrap();
        let answers = answers_to_a_history(&new);
        assert_eq!(answers.0, vec![1, 2, 1]);
        assert_eq!(answers.3, vec![1, 2, 3]);
        assert_eq!(answers_to_a_history(&used), answers);
    }

    #[test]
    fn the_unique_guard_rejects_a_duplicate_seq() {
        let s = SqliteRunEventStore::open_in_memory(Planted::none()).unwrap();
        s.put_batch(vec![ev("t", None)]).unwrap();
        let dup = ev("t", None).with_seq(1);
        assert!(matches!(
            s.insert_numbered(vec![dup.clone()]),
            Err(RunStoreError::SeqConflict { seq: 1, .. })
        ));
        assert_eq!(s.dump().unwrap().len(), 1);
        // A batch failing at its second row keeps none of it, and ends its transaction.
        let fresh = ev("v", None).with_seq(7);
        assert!(s.insert_numbered(vec![fresh, dup]).is_err());
        assert_eq!(s.dump().unwrap().len(), 1);
        assert!(s.lock().is_autocommit());
        assert_eq!(s.put_batch(vec![ev("v", None)]).unwrap(), vec![1]);
    }

    #[test]
    fn a_corrupt_row_is_an_error_naming_the_field() {
        let s = SqliteRunEventStore::open_in_memory(Planted::none()).unwrap();
        s.put_batch(vec![ev("t", None)]).unwrap();
        s.lock()
            .execute("UPDATE run_events SET content = '{not json'", [])
            .unwrap();
        match s.list_messages("t", 10, MessageCursor::None) {
            Err(RunStoreError::Decode { field, seq, .. }) => {
                assert_eq!((field, seq), ("content", 1));
            }
            other => panic!("expected a decode error, got {other:?}"),
        }
    }

    #[test]
    fn a_json_column_that_is_no_text_is_the_error_a_string_read_gives() {
        let s = SqliteRunEventStore::open_in_memory(Planted::none()).unwrap();
        s.put_batch(vec![ev("t", None)]).unwrap();
        // What another program may have written: a BLOB (a TEXT column keeps it as one) and
        // text that is not UTF-8.
        for (value, kind) in [
            ("X'FF00'", "Invalid column type Blob at index: 6"),
            (
                "CAST(X'FF00' AS TEXT)",
                "invalid utf-8 sequence of 1 bytes from index 0 at",
            ),
        ] {
            let conn = s.lock();
            conn.execute(
                &format!("UPDATE run_events SET event_metadata = {value}"),
                [],
            )
            .unwrap();
            let by_string_read = conn
                .query_row("SELECT event_metadata FROM run_events", [], |r| {
                    r.get::<_, String>(0)
                })
                .unwrap_err()
                .to_string()
                .replacen("index: 0", "index: 6", 1)
                .replacen("at index 0", "at index 6", 1);
            drop(conn);
            match s.list_messages("t", 10, MessageCursor::None) {
                Err(RunStoreError::Sqlite { op, message }) => {
                    assert_eq!(op, "read row");
                    assert!(message.starts_with(kind), "{value}: {message}");
                    assert_eq!(message, by_string_read, "{value}");
                }
                other => panic!("{value}: expected a read error, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_file_database_reopens_with_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        {
            let s = SqliteRunEventStore::open(&path, Planted::none()).unwrap();
            s.put_batch(vec![ev("t", None), ev("t", None)]).unwrap();
        }
        let s = SqliteRunEventStore::open(&path, Planted::none()).unwrap();
        assert_eq!(s.put_batch(vec![ev("t", None)]).unwrap(), vec![3]);
    }

    /// Writes two batches, drops the store without a close (what a killed process leaves) and
    /// reopens the file: the seqs the reopened store holds.
    fn seqs_after_a_restart(planted: Planted) -> Vec<u64> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        let s = SqliteRunEventStore::open(&path, planted).unwrap();
        assert_eq!(s.put_batch(vec![ev("t", None)]).unwrap(), vec![1]);
        assert_eq!(
            s.put_batch(vec![ev("t", None), ev("t", None)]).unwrap(),
            vec![2, 3]
        );
        // Before the restart every acknowledged row reads back, planted or not.
        assert_eq!(s.count_messages("t").unwrap(), 3);
        drop(s);
        let s = SqliteRunEventStore::open(&path, planted).unwrap();
        s.dump().unwrap().iter().map(|r| r.seq).collect()
    }

    #[test]
    fn every_acknowledged_batch_survives_a_restart() {
        assert_eq!(seqs_after_a_restart(Planted::none()), vec![1, 2, 3]);
    }

    #[test]
    fn unsynced_commits_survive_the_process_and_read_back_as_synced_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        let s = SqliteRunEventStore::open_surviving_process_death(&path, Planted::none()).unwrap();
        let level: i64 = s
            .lock()
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(level, 0, "synchronous = OFF");
        assert_eq!(s.put_batch(vec![ev("t", None)]).unwrap(), vec![1]);
        drop(s);
        let s = SqliteRunEventStore::open(&path, Planted::none()).unwrap();
        assert_eq!(s.put_batch(vec![ev("t", None)]).unwrap(), vec![2]);
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_r12_loses_the_last_acknowledged_batch_in_a_restart() {
        assert_eq!(seqs_after_a_restart(Planted::only(BugId::R12)), vec![1]);
    }
}
