//! `histsim serve runs`: histsim's run-event store (`history::runs`) behind the SUT protocol,
//! the reference adapter of the runs workload. One process serves one store, the backend
//! `open` names (`memory`, `sqlite` or `jsonl`, the latter two in files under the data
//! directory when histsim may crash them); the runs world opens two of them, the pair whose
//! answers R9 compares.

use super::protocol::{
    Count, Durability, ErrorBody, ErrorKind, Events, Kept, LastSeqs, MaxSeq, OpenOptions, Opened,
    Request, Seqs,
};
use super::serve::{done, greeting_answer, hello, ok, refuse, Answer, PlantedSwitch, Served};
use history::journal::MemStorage;
use history::runs::{
    EventFilter, JsonlRunEventStore, MemoryRunEventStore, MessageCursor, RunEvent, RunEventStore,
    RunStoreError, SqliteRunEventStore, UserScope,
};
use history::{BugId, Planted};
use std::path::Path;
use std::sync::Arc;

/// The runs ops histsim's run-event store serves.
pub const RUNS_OPS: [&str; 18] = [
    "hello",
    "open",
    "close",
    "put_batch",
    "insert_numbered",
    "max_seq",
    "list_messages",
    "count_messages",
    "list_events",
    "dump",
    "delete_by_run",
    "put_if_absent",
    "list_messages_by_run",
    "list_events_filtered",
    "get_last_visible_ai_seq_by_run",
    "list_messages_as",
    "count_messages_as",
    "delete_by_thread",
];

struct Open {
    store: Box<dyn RunEventStore>,
    planted: Planted,
}

/// The reference run-event store: closed until `open`.
#[derive(Default)]
pub struct RunsServer {
    open: Option<Open>,
    /// `store` of the command line, when given: overrides `open`'s.
    store_override: Option<String>,
    switch: PlantedSwitch,
}

/// A store's refusal, by kind: a seq conflict is a conflict, a rejected event is invalid.
fn refused(e: RunStoreError) -> ErrorBody {
    let kind = match e {
        RunStoreError::SeqConflict { .. } => ErrorKind::Conflict,
        RunStoreError::InvalidEvent { .. } => ErrorKind::Invalid,
        _ => ErrorKind::Internal,
    };
    refuse(kind, e.to_string())
}

/// The scope of a user-scoped op's `user_id`: that user's rows, or every user's for `null`.
fn scope(user_id: Option<String>) -> UserScope {
    user_id.map_or(UserScope::All, UserScope::Only)
}

/// The cursor of `list_messages`' `before` and `after`.
fn cursor_of(before: Option<u64>, after: Option<u64>) -> MessageCursor {
    match (before, after) {
        (None, None) => MessageCursor::None,
        (Some(before), None) => MessageCursor::Before(before),
        (None, Some(after)) => MessageCursor::After(after),
        (Some(before), Some(after)) => MessageCursor::Both { before, after },
    }
}

/// Opens the `kind` store. The memory store keeps nothing across a kill; the SQLite store
/// commits every batch to its file in the data directory before it answers (WAL), so a restart
/// on the same directory holds every acknowledged write. `restart` promises no more than that
/// (the process's death, not the machine's), so the file is never synced. The JSONL store keeps
/// its files under the data directory (`threads/...`, DeerFlow's layout) and syncs every write
/// before it answers, which keeps more than `restart` asks. When histsim promises no crash
/// (`crashes: false`) no restart will read the directory: the SQLite store then lives in memory
/// and the JSONL one on in-memory files (the same code without the file system's writes), and
/// each declares what it then keeps, nothing.
fn open_store(
    kind: &str,
    data_dir: &str,
    crashes: bool,
    planted: Planted,
) -> Result<(Box<dyn RunEventStore>, Durability), ErrorBody> {
    Ok(match kind {
        "memory" => (
            Box::new(MemoryRunEventStore::new(planted)),
            Durability::None,
        ),
        "sqlite" if !crashes => (
            Box::new(SqliteRunEventStore::open_in_memory(planted).map_err(refused)?),
            Durability::None,
        ),
        "sqlite" => (
            Box::new(
                SqliteRunEventStore::open_surviving_process_death(
                    &Path::new(data_dir).join("runs.sqlite"),
                    planted,
                )
                .map_err(refused)?,
            ),
            Durability::Restart,
        ),
        "jsonl" if !crashes => (
            Box::new(
                JsonlRunEventStore::open(Arc::new(MemStorage::new()), planted).map_err(refused)?,
            ),
            Durability::None,
        ),
        "jsonl" => (
            Box::new(JsonlRunEventStore::open_dir(data_dir, planted).map_err(refused)?),
            Durability::Restart,
        ),
        other => {
            return Err(refuse(
                ErrorKind::Invalid,
                format!("store `{other}`: expected memory, sqlite or jsonl"),
            ))
        }
    })
}

impl RunsServer {
    pub fn new(store_override: Option<String>) -> Self {
        RunsServer {
            open: None,
            store_override,
            switch: PlantedSwitch::FromOpen,
        }
    }

    /// The answer to `hello`: `planted` declared when `open` switches it.
    fn greet(&self, protocol: u32) -> Answer {
        let mut greeting = hello("histsim-runs", &RUNS_OPS, protocol)?;
        greeting.planted = self.switch.declared();
        greeting_answer(&greeting)
    }

    /// This server, taking `open`'s planted bug as `switch` says.
    pub fn with_planted(self, switch: PlantedSwitch) -> Self {
        RunsServer { switch, ..self }
    }

    fn open(&mut self, data_dir: &str, options: OpenOptions) -> Answer {
        let planted = self.switch.of(&options)?;
        let kind = self.store_override.clone().unwrap_or(options.store);
        let (store, durability) = open_store(&kind, data_dir, options.crashes, planted)?;
        self.open = Some(Open { store, planted });
        ok(&Opened { durability })
    }

    fn store(&self) -> Result<&Open, ErrorBody> {
        self.open
            .as_ref()
            .ok_or_else(|| refuse(ErrorKind::Conflict, "not open: send `open` first"))
    }

    fn list_messages(
        &self,
        thread_id: &str,
        limit: u64,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, ErrorBody> {
        let open = self.store()?;
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        if open.planted.is(BugId::R3) {
            // planted R3 across the boundary: the legacy read helper wrote ids into the rows
            // the store handed out, so this read changes what the store holds.
            let mut page = Vec::new();
            let live = open
                .store
                .legacy_edit_messages(thread_id, limit, cursor, &mut |row| {
                    history::runs::legacy_fill_ids(row);
                    page.push(row.clone());
                })
                .map_err(refused)?;
            if live {
                return Ok(page);
            }
        }
        open.store
            .list_messages(thread_id, limit, cursor)
            .map_err(refused)
    }
}

impl RunsServer {
    /// The ops of the store's wider API (deletion, receipts, per-run pages, filtered event
    /// reads), every user's rows.
    fn wider(&self, request: Request) -> Answer {
        let store = &self.store()?.store;
        match request {
            Request::DeleteByRun { thread_id, run_id } => {
                let count = store
                    .delete_by_run(&thread_id, &run_id, &UserScope::All)
                    .map_err(refused)?;
                ok(&Count { count })
            }
            Request::DeleteByThread { thread_id } => {
                let count = store
                    .delete_by_thread(&thread_id, &UserScope::All)
                    .map_err(refused)?;
                ok(&Count { count })
            }
            Request::PutIfAbsent { event } => {
                let (event, created) = store.put_if_absent(event).map_err(refused)?;
                ok(&Kept { event, created })
            }
            Request::ListMessagesByRun {
                thread_id,
                run_id,
                limit,
                before,
                after,
            } => {
                let limit = usize::try_from(limit).unwrap_or(usize::MAX);
                let cursor = cursor_of(before, after);
                let events = store
                    .list_messages_by_run(&thread_id, &run_id, limit, cursor, &UserScope::All)
                    .map_err(refused)?;
                ok(&Events { events })
            }
            Request::ListEventsFiltered {
                thread_id,
                run_id,
                event_types,
                task_id,
                after_seq,
                limit,
            } => {
                let filter = EventFilter {
                    event_types,
                    task_id,
                    after_seq,
                    limit: usize::try_from(limit).unwrap_or(usize::MAX),
                };
                let events = store
                    .list_events_filtered(&thread_id, &run_id, &filter, &UserScope::All)
                    .map_err(refused)?;
                ok(&Events { events })
            }
            Request::GetLastVisibleAiSeqByRun { thread_id, run_ids } => {
                let run_ids = run_ids.into_iter().collect();
                let seqs = store
                    .get_last_visible_ai_seq_by_run(&thread_id, &run_ids, &UserScope::All)
                    .map_err(refused)?;
                ok(&LastSeqs { seqs })
            }
            other => Err(refuse(
                ErrorKind::Unsupported,
                format!("`{}` is not a runs op", other.op()),
            )),
        }
    }
}

impl RunsServer {
    /// The user-scoped message reads, in the scope asked.
    fn user_scoped(&self, request: Request) -> Answer {
        let store = &self.store()?.store;
        match request {
            Request::ListMessagesAs {
                thread_id,
                limit,
                before,
                after,
                user_id,
            } => {
                let limit = usize::try_from(limit).unwrap_or(usize::MAX);
                let events = store
                    .list_messages_as(&thread_id, limit, cursor_of(before, after), &scope(user_id))
                    .map_err(refused)?;
                ok(&Events { events })
            }
            Request::CountMessagesAs { thread_id, user_id } => {
                let count = store
                    .count_messages_as(&thread_id, &scope(user_id))
                    .map_err(refused)?;
                ok(&Count { count })
            }
            other => Err(refuse(
                ErrorKind::Unsupported,
                format!("`{}` is not a user-scoped op", other.op()),
            )),
        }
    }
}

impl Served for RunsServer {
    fn answer(&mut self, request: Request) -> Answer {
        match request {
            Request::Hello { protocol } => self.greet(protocol),
            Request::Open { data_dir, options } => self.open(&data_dir, options),
            Request::Close {} => {
                self.open = None;
                done()
            }
            Request::PutBatch { events } => {
                let seqs = self.store()?.store.put_batch(events).map_err(refused)?;
                ok(&Seqs { seqs })
            }
            Request::InsertNumbered { events } => {
                self.store()?
                    .store
                    .insert_numbered(events)
                    .map_err(refused)?;
                done()
            }
            Request::MaxSeq { thread_id } => {
                let max_seq = self.store()?.store.max_seq(&thread_id).map_err(refused)?;
                ok(&MaxSeq { max_seq })
            }
            Request::ListMessages {
                thread_id,
                limit,
                before,
                after,
            } => {
                let events = self.list_messages(&thread_id, limit, cursor_of(before, after))?;
                ok(&Events { events })
            }
            Request::CountMessages { thread_id } => {
                let count = self
                    .store()?
                    .store
                    .count_messages(&thread_id)
                    .map_err(refused)?;
                ok(&Count { count })
            }
            Request::ListEvents { thread_id, run_id } => {
                let events = self
                    .store()?
                    .store
                    .list_events(&thread_id, &run_id)
                    .map_err(refused)?;
                ok(&Events { events })
            }
            Request::Dump {} => {
                let events = self.store()?.store.dump().map_err(refused)?;
                ok(&Events { events })
            }
            other @ (Request::DeleteByRun { .. }
            | Request::PutIfAbsent { .. }
            | Request::ListMessagesByRun { .. }
            | Request::ListEventsFiltered { .. }
            | Request::GetLastVisibleAiSeqByRun { .. }
            | Request::DeleteByThread { .. }) => self.wider(other),
            other @ (Request::ListMessagesAs { .. } | Request::CountMessagesAs { .. }) => {
                self.user_scoped(other)
            }
            other => Err(refuse(
                ErrorKind::Unsupported,
                format!("`{}` is not a runs op", other.op()),
            )),
        }
    }
}
