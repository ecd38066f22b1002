//! `histsim serve runs`: histsim's run-event store (`history::runs`) behind the SUT protocol,
//! the reference adapter of the runs workload. One process serves one store, the backend
//! `open` names (`memory`, `sqlite` or `jsonl`, the latter two in files under the data
//! directory when histsim may crash them); the runs world opens two of them, the pair whose
//! answers R9 compares.

use super::journal_ops::{ServedJournals, JOURNAL_OPS};
use super::protocol::{
    Count, Done, Durability, ErrorBody, ErrorKind, Events, Kept, LastSeqs, MaxSeq, OpenOptions,
    Opened, Request, Seqs, StoreAnswer, SESSION_OPS,
};
use super::serve::{
    done, greeting_answer, hello, ok, refuse, Answer, PlantedSwitch, ServeOptions, Served,
};
use history::journal::MemStorage;
use history::runs::{
    JsonlRunEventStore, MemoryRunEventStore, MessageCursor, RunEvent, RunEventStore, RunStoreError,
    SqliteRunEventStore, UserScope, RUN_STORE_OPS,
};
use history::{BugId, Planted};
use std::path::Path;
use std::sync::Arc;

/// The runs ops histsim's run-event store serves: the session's, every store operation, the
/// run journal's callbacks (it hosts history's own journal) and the capability `thread_fence`
/// (its thread deletions fence their writers, R28).
pub fn runs_ops() -> Vec<&'static str> {
    let store_ops = RUN_STORE_OPS.iter().map(|op| op.name);
    let capabilities = [history::runs::THREAD_FENCE];
    (SESSION_OPS.into_iter().chain(store_ops))
        .chain(JOURNAL_OPS)
        .chain(capabilities)
        .collect()
}

struct Open {
    store: Box<dyn RunEventStore>,
    planted: Planted,
    /// The run journals it hosts, one a run of the session.
    journals: ServedJournals,
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
        RunStoreError::ThreadDeleted { .. } => ErrorKind::ThreadDeleted,
        RunStoreError::InvalidEvent { .. } => ErrorKind::Invalid,
        _ => ErrorKind::Internal,
    };
    refuse(kind, e.to_string())
}

/// The scope of a user-scoped op's `user_id`: that user's rows, or every user's for `null`.
fn scope(user_id: Option<String>) -> UserScope {
    user_id.map_or(UserScope::All, UserScope::Only)
}

/// A `limit` of the wire as the store takes it.
fn usize_of(limit: u64) -> usize {
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// The cursor of `list_messages`' `before` and `after`.
fn cursor_of(before: Option<u64>, after: Option<u64>) -> MessageCursor {
    MessageCursor::from_bounds(before, after)
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

/// The runs workload's `Workload::SERVE`.
pub(crate) fn start(options: ServeOptions) -> Result<Box<dyn Served>, String> {
    if !options.emulated.is_empty() {
        return Err("--emulate-differences: the known differences are display ones".into());
    }
    let server = RunsServer::new(options.store_override).with_planted(options.switch);
    Ok(Box::new(server))
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
        let mut greeting = hello("histsim-runs", &runs_ops(), protocol)?;
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
        self.open = Some(Open {
            store,
            planted,
            journals: ServedJournals::default(),
        });
        ok(&Opened { durability })
    }

    fn store(&self) -> Result<&Open, ErrorBody> {
        self.open.as_ref().ok_or_else(not_open)
    }

    /// planted R3 across the boundary: the legacy read helper wrote ids into the rows the
    /// store handed out, so this read changes what the store holds.
    fn legacy_list_messages(
        &self,
        thread_id: &str,
        limit: u64,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, ErrorBody> {
        let open = self.store()?;
        let limit = usize_of(limit);
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
        open.store
            .list_messages(thread_id, limit, cursor)
            .map_err(refused)
    }
}

/// The refusal of a request before `open`.
fn not_open() -> ErrorBody {
    refuse(ErrorKind::Conflict, "not open: send `open` first")
}

/// The refusal of a request that is no runs op.
fn not_a_runs_op(request: &Request) -> ErrorBody {
    refuse(
        ErrorKind::Unsupported,
        format!("`{}` is not a runs op", request.op()),
    )
}

/// `serve runs`' answer to each operation of the store: the request's fields decoded into the
/// method's arguments, its answer encoded (generated from the table).
macro_rules! serve_store_op {
    ({} $($(#[$doc:meta])* $kind:ident fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty,
        default $default:tt; wire $variant:ident { $($field:ident: $fty:ty = $enc:expr),* }
        $(every user ($all:ident))?; serve ($($dec:expr),*) answer $answer:ident; errors $errors:ident;)*) => {
        /// The store's answer to `request` (refused when it is no store operation).
        fn serve_store_op(store: &dyn RunEventStore, request: Request) -> Answer {
            match request {
                $(Request::$variant { $($field),* } => match store.$name($($dec),*) {
                    Ok(output) => ok(&<$answer as StoreAnswer>::of(output)),
                    Err(e) => Err(refused(e)),
                },)*
                other => Err(not_a_runs_op(&other)),
            }
        }
    };
}

history::run_store_ops!(serve_store_op {});

impl Served for RunsServer {
    fn answer(&mut self, request: Request) -> Answer {
        match request {
            Request::Hello { protocol } => self.greet(protocol),
            Request::Open { data_dir, options } => self.open(&data_dir, options),
            Request::Close {} => {
                self.open = None;
                done()
            }
            Request::ListMessages {
                thread_id,
                limit,
                before,
                after,
            } if self.store()?.planted.is(BugId::R3) => {
                let events =
                    self.legacy_list_messages(&thread_id, limit, cursor_of(before, after))?;
                ok(&Events { events })
            }
            journal_op if journal_op.journal_op().is_some() => {
                let open = self.open.as_mut().ok_or_else(not_open)?;
                let answer = open.journals.answer(journal_op, open.planted);
                answer.expect("a journal op")
            }
            other if other.run_store_op().is_none() => Err(not_a_runs_op(&other)),
            store_op => serve_store_op(&*self.store()?.store, store_op),
        }
    }
}
