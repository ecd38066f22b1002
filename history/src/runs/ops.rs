//! The run-event store's operations, each defined once: [`run_store_ops!`] holds the table, and
//! everything that lists the operations is generated from it by a callback macro: the
//! [`super::RunEventStore`] trait, the forwarding of every wrapper ([`super::ForwardRunStore`]:
//! references, `Arc`, `Box`, the fault injector, the simulation's crashable hosts), the
//! [`RUN_STORE_OPS`] list, the signatures of the backends' and taps' methods
//! ([`define_run_store_methods!`](crate::define_run_store_methods)), and in `sim` the SUT
//! protocol's request variants, the client that speaks it and `histsim serve runs`' dispatch.
//!
//! A row of the table:
//!
//! ```text
//! /// What the operation does (the trait method's doc, and the protocol variant's).
//! <kind> fn <name>(<argument>: <type>, ...) -> <answer>, default <default>;
//!     wire <Variant> { <field>: <type> = <encoding from the arguments>, ... } <every user>;
//!     serve (<argument from the fields>, ...) answer <answer type>;
//!     errors <where the contract allows an error>;
//! ```
//!
//! - `kind`: `write`; `read` (asking it again changes nothing the store holds, so the protocol
//!   client may send it to the twin store ahead of time); `read_in_turn` (a read the client
//!   always asks in turn).
//! - `default`: `required` (every backend implements it), `unsupported` (the default answers
//!   [`RunStoreError::Unsupported`](super::RunStoreError::Unsupported): a system that does not
//!   offer it says so), or `(scope => other(args))` (every user's scope answered by `other`,
//!   any other scope unsupported).
//! - `wire`: the request's `op` is `<name>`, its other fields are the variant's, in this order
//!   (the order the JSON line shows them, docs/sut-protocol.md). `every user (user)`: the field
//!   list has no user, so the client refuses any scope but every user's, and `serve` passes
//!   every user's. Encodings and `serve`'s decodings are expressions over the arguments (the
//!   fields), and over the helpers of `sim`'s protocol client and server (`before_after`,
//!   `cursor_of`, `usize_of`, `scope`, `resolved`).
//! - `answer`: the protocol's answer type (`sim::sut::protocol`), which converts to and from
//!   the method's answer.
//! - `errors`: [`ContractErrors`], what the runs model accepts as an error answer there.
//!
//! Adding an operation is one row here, its bodies in the backends (memory, SQLite; JSONL
//! forwards its reads to its index), its section in docs/sut-protocol.md and its use in the
//! workload. A `read ... errors Never` whose answer follows from the rows the store must hold
//! needs no use of its own: its function in `model::runs::StoredRows` and a row of the
//! simulation's table reads (`sim/src/runs/table_reads.rs`) have the runs workload draw it, ask
//! it once the world ended, judge it and count its probe. Six files in all:
//!
//! ```text
//! history/src/runs/ops.rs          the row (trait, wrappers, protocol, serve runs derived)
//! history/src/runs/memory/mod.rs   its body
//! history/src/runs/sqlite/mod.rs   its body
//! model/src/runs/stored_rows.rs    the model's answer
//! sim/src/runs/table_reads.rs      how the simulation asks it, the ID of a wrong answer
//! docs/sut-protocol.md             its section
//! ```
//!
//! With `default unsupported`, systems that do not offer it keep working: they leave it out
//! of `hello`'s `ops`, and every ask of it is left out and counted (`--allow-left-out <op>`).

/// Whether an operation changes what the store holds, and how the protocol client may pipeline
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Changes what the store holds (the fault injector counts it among the write calls).
    Write,
    /// Only reads: asking it once more changes nothing, so the protocol client may send it to
    /// the twin store before that store's own call.
    Read,
    /// Only reads, but the protocol client asks it in turn, never ahead.
    ReadInTurn,
}

impl OpKind {
    /// Whether the operation leaves what the store holds unchanged.
    pub fn reads(self) -> bool {
        self != OpKind::Write
    }
}

/// Where the contract (and the runs model) allows an operation to answer an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContractErrors {
    /// Never: an error is a finding (R24).
    Never,
    /// A `conflict` when a racing writer took a seq first: the unique guard (R5).
    Conflict,
    /// A refusal of the default scope of a request acting for a run without a user (R19).
    NoUser,
    /// A `thread_deleted` refusal of a write carrying a run a deletion of its thread fenced
    /// (R28).
    Fenced,
    /// A `conflict` (R5) or a `thread_deleted` refusal (R28).
    ConflictOrFenced,
}

/// One operation of the table, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStoreOp {
    /// The method's name, and the protocol's `op`.
    pub name: &'static str,
    pub kind: OpKind,
    pub errors: ContractErrors,
}

/// The operation called `name`, if the table has one.
pub fn run_store_op(name: &str) -> Option<&'static RunStoreOp> {
    RUN_STORE_OPS.iter().find(|op| op.name == name)
}

macro_rules! op_list {
    ({} $($(#[$doc:meta])* $kind:ident fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty,
        default $default:tt; wire $variant:ident { $($field:ident: $fty:ty = $enc:expr),* }
        $(every user ($all:ident))?; serve ($($dec:expr),*) answer $answer:ident; errors $errors:ident;)*) => {
        /// Every operation of the table, in its order (the order `histsim serve runs` lists
        /// them in `hello`).
        pub const RUN_STORE_OPS: &[RunStoreOp] = &[$(RunStoreOp {
            name: stringify!($name),
            kind: $crate::__run_store_kind!($kind),
            errors: ContractErrors::$errors,
        }),*];
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __run_store_kind {
    (write) => {
        $crate::runs::OpKind::Write
    };
    (read) => {
        $crate::runs::OpKind::Read
    };
    (read_in_turn) => {
        $crate::runs::OpKind::ReadInTurn
    };
}

crate::run_store_ops!(op_list {});

/// Defines `run_store_methods!` where it is invoked (`run_store_ops!(define_run_store_methods
/// {$})`, the `$` the defined macro's own): methods of [`crate::runs::RunEventStore`] written
/// with their arguments' names only, each method's types taken from its row of the table (or,
/// for the trait's helpers that no protocol carries, from here), so a backend or a wrapper
/// states only its bodies:
///
/// ```text
/// run_store_methods! {
///     fn max_seq(&self, thread_id) { ... }
///     #[cfg(feature = "planted")]
///     fn legacy_edit_messages(&self, thread_id, limit, cursor, edit) { ... }
/// }
/// ```
///
/// A method's arguments are named in the row's order; attributes (docs, `cfg`) go with it.
#[macro_export]
macro_rules! define_run_store_methods {
    ({$d:tt} $($(#[$doc:meta])* $kind:ident fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty,
        default $default:tt; wire $variant:ident { $($field:ident: $fty:ty = $enc:expr),* }
        $(every user ($all:ident))?; serve ($($dec:expr),*) answer $answer:ident; errors $errors:ident;)*) => {
        macro_rules! run_store_methods {
            () => {};
            $(($d(#[$d attr:meta])* fn $name(&$d this:tt $(, $d $arg:ident)*) $d body:block
                $d($d rest:tt)*) => {
                $d(#[$d attr])*
                fn $name(&$d this $(, $d $arg: $ty)*) -> Result<$ret, $crate::runs::RunStoreError>
                    $d body
                run_store_methods! { $d($d rest)* }
            };)*
            ($d(#[$d attr:meta])* fn put_batch_records(&$d this:tt, $d events:ident) $d body:block
                $d($d rest:tt)*) => {
                $d(#[$d attr])*
                fn put_batch_records(
                    &$d this,
                    $d events: Vec<$crate::runs::NewRunEvent>,
                ) -> Result<Vec<$crate::runs::RunEvent>, $crate::runs::RunStoreError> $d body
                run_store_methods! { $d($d rest)* }
            };
            ($d(#[$d attr:meta])* fn put(&$d this:tt, $d event:ident) $d body:block
                $d($d rest:tt)*) => {
                $d(#[$d attr])*
                fn put(
                    &$d this,
                    $d event: $crate::runs::NewRunEvent,
                ) -> Result<$crate::runs::RunEvent, $crate::runs::RunStoreError> $d body
                run_store_methods! { $d($d rest)* }
            };
            ($d(#[$d attr:meta])* fn legacy_edit_messages(
                &$d this:tt, $d thread_id:ident, $d limit:ident, $d cursor:ident, $d edit:ident
            ) $d body:block $d($d rest:tt)*) => {
                $d(#[$d attr])*
                fn legacy_edit_messages(
                    &$d this,
                    $d thread_id: &str,
                    $d limit: usize,
                    $d cursor: $crate::runs::MessageCursor,
                    $d edit: &mut dyn FnMut(&mut $crate::runs::RunEvent),
                ) -> Result<bool, $crate::runs::RunStoreError> $d body
                run_store_methods! { $d($d rest)* }
            };
        }
    };
}

/// The table of the run-event store's operations (see the module doc of `history::runs::ops`
/// for a row's grammar). `run_store_ops!(callback { extra tokens })` expands to
/// `callback! { { extra tokens } rows }`.
#[macro_export]
macro_rules! run_store_ops {
    ($callback:ident { $($extra:tt)* }) => { $callback! { { $($extra)* }

        /// Writes a batch atomically and returns the `seq` assigned to each event, in batch
        /// order. Events of one thread get consecutive numbers above the thread's maximum, in
        /// batch order. On error nothing is written; an event of a run a deletion of its thread
        /// fenced is refused, `RunStoreError::ThreadDeleted` (R28).
        write fn put_batch(events: Vec<$crate::runs::NewRunEvent>) -> Vec<u64>, default required;
            wire PutBatch { events: Vec<$crate::runs::NewRunEvent> = events };
            serve (events) answer Seqs;
            errors Fenced;

        /// Writes events the caller has numbered itself (imports, and the legacy journal of R5).
        /// Atomic; every `seq` must be above its thread's stored maximum (and above the batch's
        /// earlier events of that thread), otherwise `RunStoreError::SeqConflict`: the unique
        /// guard.
        write fn insert_numbered(events: Vec<$crate::runs::RunEvent>) -> (), default required;
            wire InsertNumbered { events: Vec<$crate::runs::RunEvent> = events };
            serve (events) answer Done;
            errors ConflictOrFenced;

        /// The thread's high-water mark: the largest `seq` it has held since it was last
        /// emptied by `delete_by_thread` (0 for a new thread). `delete_by_run` never lowers it
        /// (R13).
        read fn max_seq(thread_id: &str) -> u64, default required;
            wire MaxSeq { thread_id: String = thread_id.to_string() };
            serve (&thread_id) answer MaxSeq;
            errors Never;

        /// Message rows (`category == Message`) of a thread, ascending by `seq`, at most
        /// `limit` of them, starting where `cursor` says (see `MessageCursor` for the exact
        /// semantics; on the wire `before` and `after`, exclusive, each `null` when not set).
        read fn list_messages(
            thread_id: &str,
            limit: usize,
            cursor: $crate::runs::MessageCursor
        ) -> Vec<$crate::runs::RunEvent>, default required;
            wire ListMessages {
                thread_id: String = thread_id.to_string(),
                limit: u64 = limit as u64,
                before: Option<u64> = before_after(cursor).0,
                after: Option<u64> = before_after(cursor).1
            };
            serve (&thread_id, usize_of(limit), cursor_of(before, after)) answer Events;
            errors Never;

        /// The number of message rows of a thread.
        read fn count_messages(thread_id: &str) -> u64, default required;
            wire CountMessages { thread_id: String = thread_id.to_string() };
            serve (&thread_id) answer Count;
            errors Never;

        /// Every event of one run, all categories, ascending by `seq`.
        read fn list_events(thread_id: &str, run_id: &str) -> Vec<$crate::runs::RunEvent>,
            default required;
            wire ListEvents {
                thread_id: String = thread_id.to_string(),
                run_id: String = run_id.to_string()
            };
            serve (&thread_id, &run_id) answer Events;
            errors Never;

        /// Every stored row, ordered by (thread_id, seq, write order): what before/after
        /// comparisons of the whole store use (R3, R5, R9).
        read fn dump() -> Vec<$crate::runs::RunEvent>, default required;
            wire Dump {};
            serve () answer Events;
            errors Never;

        /// Deletes one run's rows in `user`'s scope; returns how many. `max_seq` does not go
        /// down.
        write fn delete_by_run(
            thread_id: &str,
            run_id: &str,
            user: &$crate::runs::UserScope
        ) -> u64, default unsupported;
            wire DeleteByRun {
                thread_id: String = thread_id.to_string(),
                run_id: String = run_id.to_string()
            } every user (user);
            serve (&thread_id, &run_id, &$crate::runs::UserScope::All) answer Count;
            errors Never;

        /// Writes `event` unless its run already has an event of the same type: the key is
        /// (`thread_id`, `run_id`, `event_type`), whatever the user, category or content.
        /// Returns the stored record and whether it was written now; when it was not, the
        /// record is the run's FIRST event of that type (lowest seq), unchanged (R14). Atomic
        /// with every other write of the thread, so two callers never both write.
        write fn put_if_absent(event: $crate::runs::NewRunEvent) -> ($crate::runs::RunEvent, bool),
            default unsupported;
            wire PutIfAbsent { event: $crate::runs::NewRunEvent = event };
            serve (event) answer Kept;
            errors Fenced;

        /// Message rows of one run, with exactly the window semantics of `list_messages`
        /// applied to that run's messages.
        read fn list_messages_by_run(
            thread_id: &str,
            run_id: &str,
            limit: usize,
            cursor: $crate::runs::MessageCursor,
            user: &$crate::runs::UserScope
        ) -> Vec<$crate::runs::RunEvent>, default unsupported;
            wire ListMessagesByRun {
                thread_id: String = thread_id.to_string(),
                run_id: String = run_id.to_string(),
                limit: u64 = limit as u64,
                before: Option<u64> = before_after(cursor).0,
                after: Option<u64> = before_after(cursor).1
            } every user (user);
            serve (
                &thread_id,
                &run_id,
                usize_of(limit),
                cursor_of(before, after),
                &$crate::runs::UserScope::All
            ) answer Events;
            errors Never;

        /// The events of one run that pass `filter` (see `EventFilter`: conditions first, then
        /// the limit), ascending by `seq`. On the wire `task_id` is matched on
        /// `metadata.task_id`.
        read_in_turn fn list_events_filtered(
            thread_id: &str,
            run_id: &str,
            filter: &$crate::runs::EventFilter,
            user: &$crate::runs::UserScope
        ) -> Vec<$crate::runs::RunEvent>, default unsupported;
            wire ListEventsFiltered {
                thread_id: String = thread_id.to_string(),
                run_id: String = run_id.to_string(),
                event_types: Option<Vec<String>> = filter.event_types.clone(),
                task_id: Option<String> = filter.task_id.clone(),
                after_seq: Option<u64> = filter.after_seq,
                limit: u64 = filter.limit as u64
            } every user (user);
            serve (
                &thread_id,
                &run_id,
                &$crate::runs::EventFilter {
                    event_types,
                    task_id,
                    after_seq,
                    limit: usize_of(limit),
                },
                &$crate::runs::UserScope::All
            ) answer Events;
            errors Never;

        /// For each of `run_ids` that has one, the `seq` of its last message row that
        /// `current::is_visible_ai` admits; runs without one are absent.
        read_in_turn fn get_last_visible_ai_seq_by_run(
            thread_id: &str,
            run_ids: &std::collections::BTreeSet<String>,
            user: &$crate::runs::UserScope
        ) -> std::collections::BTreeMap<String, u64>, default unsupported;
            wire GetLastVisibleAiSeqByRun {
                thread_id: String = thread_id.to_string(),
                run_ids: Vec<String> = run_ids.iter().cloned().collect()
            } every user (user);
            serve (&thread_id, &run_ids.into_iter().collect(), &$crate::runs::UserScope::All)
                answer LastSeqs;
            errors Never;

        /// `list_messages` over the rows in `user`'s scope only: on the wire `user_id` a user
        /// (only rows whose `user_id` is exactly it) or `null` (every user's, rows without a
        /// user included).
        read fn list_messages_as(
            thread_id: &str,
            limit: usize,
            cursor: $crate::runs::MessageCursor,
            user: &$crate::runs::UserScope
        ) -> Vec<$crate::runs::RunEvent>, default (user => list_messages(thread_id, limit, cursor));
            wire ListMessagesAs {
                thread_id: String = thread_id.to_string(),
                limit: u64 = limit as u64,
                before: Option<u64> = before_after(cursor).0,
                after: Option<u64> = before_after(cursor).1,
                user_id: Option<String> = resolved(user, "list_messages_as")?
            };
            serve (&thread_id, usize_of(limit), cursor_of(before, after), &scope(user_id))
                answer Events;
            errors NoUser;

        /// `count_messages` over the rows in `user`'s scope only (as `list_messages_as`).
        read fn count_messages_as(thread_id: &str, user: &$crate::runs::UserScope) -> u64,
            default (user => count_messages(thread_id));
            wire CountMessagesAs {
                thread_id: String = thread_id.to_string(),
                user_id: Option<String> = resolved(user, "count_messages_as")?
            };
            serve (&thread_id, &scope(user_id)) answer Count;
            errors NoUser;

        /// Deletes the thread's rows in `user`'s scope; returns how many. A thread left empty
        /// starts over: its next row is numbered 1 (see `store`'s module doc). The runs whose
        /// rows it removed are fenced: a later write of one of them on the thread is refused,
        /// `RunStoreError::ThreadDeleted`, and a new run writes the thread's new era (R28).
        write fn delete_by_thread(thread_id: &str, user: &$crate::runs::UserScope) -> u64,
            default unsupported;
            wire DeleteByThread { thread_id: String = thread_id.to_string() } every user (user);
            serve (&thread_id, &$crate::runs::UserScope::All) answer Count;
            errors Never;

        /// The number of rows a thread holds, every category and every user's: what its
        /// `dump` rows would number. Deleted rows are not counted.
        read fn count_events(thread_id: &str) -> u64, default unsupported;
            wire CountEvents { thread_id: String = thread_id.to_string() };
            serve (&thread_id) answer Count;
            errors Never;

        /// The number of rows one run holds on a thread, every category and every user's:
        /// what its `list_events` rows would number. Deleted rows are not counted.
        read fn count_events_by_run(thread_id: &str, run_id: &str) -> u64, default unsupported;
            wire CountEventsByRun {
                thread_id: String = thread_id.to_string(),
                run_id: String = run_id.to_string()
            };
            serve (&thread_id, &run_id) answer Count;
            errors Never;
    } };
}
