//! The histsim SUT protocol, version 1: the messages, as `docs/sut-protocol.md` specifies them.
//!
//! One JSON object a line each way: a request `{"id":N,"op":"...",...}` on the system's stdin,
//! one response `{"id":N,"ok":...}` or `{"id":N,"err":{"kind":...,"message":...}}` on its
//! stdout, in request order. Rows cross as JSON strings holding the row's bytes, so a malformed
//! row reaches the system byte for byte. Nothing the system needs from a clock or a random source
//! is left to it: requests carry every such value.

use history::runs::{
    run_store_op, MessageCursor, OpKind, RunEvent, RunStoreError, RunStoreOp, UserScope,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The protocol version this build speaks.
pub(crate) const PROTOCOL_VERSION: u32 = 1;

/// The protocol's messages: the run-event store's requests are generated from its operation
/// table ([`history::run_store_ops!`]), the display system's from its own
/// ([`super::display_ops::display_ops!`]), the session's are listed below.
macro_rules! protocol_requests {
    ({$($extra:tt)*} $($(#[$doc:meta])* $kind:ident fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty,
        default $default:tt; wire $variant:ident { $($field:ident: $fty:ty = $enc:expr),* }
        $(every user ($all:ident))?; serve ($($dec:expr),*) answer $answer:ident; errors $errors:ident;)*) => {
        /// A request, tagged by `op`. The run-event store's are its operations
        /// ([`history::runs::RunEventStore`]), each `op` named as its method.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
        pub enum Request {
            $($extra)*
            $($(#[$doc])* $variant { $($field: $fty),* },)*
        }

        impl Request {
            /// The run-event store operation this request asks, if it asks one.
            pub fn run_store_op(&self) -> Option<&'static RunStoreOp> {
                match self {
                    $(Request::$variant { .. } => run_store_op(stringify!($name)),)*
                    _ => None,
                }
            }

            $(
                #[doc = concat!("The request of `RunEventStore::", stringify!($name), "`.")]
                pub fn $name($($arg: $ty),*) -> Result<Request, RunStoreError> {
                    $(every_user($all, stringify!($name))?;)?
                    Ok(Request::$variant { $($field: $enc),* })
                }
            )*
        }
    };
}

/// The display system's requests, generated from its operation table
/// ([`super::display_ops::display_ops!`]), join the others: the run-event store's and the
/// session's own.
macro_rules! display_requests {
    ({$($extra:tt)*} $($(#[$doc:meta])* fn $name:ident $variant:ident {
        $($field:ident: $fty:ty),* };)*) => {
        history::run_store_ops!(protocol_requests {
            $($extra)*
            $($(#[$doc])* $variant { $($field: $fty),* },)*
        });

        /// The display system's ops, in the table's order.
        pub const DISPLAY_PROTOCOL_OPS: &[&str] = &[$(stringify!($name)),*];

        impl Request {
            /// The display op this request asks, if it asks one.
            pub fn display_op(&self) -> Option<&'static str> {
                match self {
                    $(Request::$variant { .. } => Some(stringify!($name)),)*
                    _ => None,
                }
            }
        }
    };
}

super::display_ops::display_ops!(display_requests {
    /// First request: which protocol histsim speaks. The answer is [`Hello`].
    Hello { protocol: u32 },
    /// Open the system on `data_dir` (created by histsim, kept across a simulated crash).
    Open {
        data_dir: String,
        options: OpenOptions,
    },
    /// Close cleanly (a simulated crash kills the process instead).
    Close {},
    /// The run journal's callbacks, for a system that hosts the journal ([`super::journal_ops`]).
    JournalChainStart {
        thread_id: String,
        run_id: String,
        invocation: super::journal_wire::WireInvocation,
        content: serde_json::Value,
        created_at_ns: i64,
    },
    JournalModelStart {
        thread_id: String,
        run_id: String,
        caller: Option<String>,
        messages: Vec<super::journal_wire::WireCallMessage>,
        created_at_ns: i64,
    },
    JournalChainEnd {
        thread_id: String,
        run_id: String,
        invocation: super::journal_wire::WireInvocation,
        created_at_ns: i64,
    },
    JournalChainError {
        thread_id: String,
        run_id: String,
        invocation: super::journal_wire::WireInvocation,
        error: String,
        created_at_ns: i64,
    },
});

/// The ops of a session with any system: greet, open, close.
pub(crate) const SESSION_OPS: [&str; 3] = ["hello", "open", "close"];

impl Request {
    /// Whether the request only reads and may be sent to the twin store ahead of its own call
    /// (asking it once more changes nothing the store holds, unless the store is faulty, e.g.
    /// planted R3's reads that write).
    pub fn reads_only(&self) -> bool {
        self.run_store_op()
            .is_some_and(|op| op.kind == OpKind::Read)
    }

    /// The `op` name, as capabilities list it.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "hello",
            Request::Open { .. } => "open",
            Request::Close {} => "close",
            other => other
                .display_op()
                .or_else(|| other.run_store_op().map(|op| op.name))
                .or_else(|| other.journal_op())
                .unwrap_or(""),
        }
    }
}

/// The protocol's reads and deletions other than `list_messages_as` and `count_messages_as`
/// take every user's rows: another scope does not cross it.
fn every_user(user: &UserScope, op: &'static str) -> Result<(), RunStoreError> {
    match user {
        UserScope::All => Ok(()),
        _ => Err(RunStoreError::Unsupported { op }),
    }
}

/// A user-scoped op's `user_id`: the scope's user, `null` for every user's.
fn resolved(user: &UserScope, op: &'static str) -> Result<Option<String>, RunStoreError> {
    Ok(user.resolve(op)?.map(str::to_string))
}

/// `list_messages`' cursor as the protocol's `before` and `after`.
fn before_after(cursor: MessageCursor) -> (Option<u64>, Option<u64>) {
    match cursor {
        MessageCursor::None => (None, None),
        MessageCursor::Before(b) => (Some(b), None),
        MessageCursor::After(a) => (None, Some(a)),
        MessageCursor::Both { before, after } => (Some(before), Some(after)),
    }
}

/// `open`'s options: every one is always sent (no default crosses the boundary).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenOptions {
    /// `memory` or `sqlite`, for a system that has both; others ignore it.
    pub store: String,
    /// A catalog ID whose legacy behaviour a system that declares `planted` in `hello` (histsim's
    /// own reference system) switches on; other systems ignore it.
    pub planted: Option<String>,
    /// Whether histsim may crash this system's host in the session: `false` promises it never
    /// will, so a store may then keep its data in memory (and declare the durability it has).
    /// Missing (a client before this option) reads as `true`, the reading that promises nothing.
    #[serde(default = "may_crash")]
    pub crashes: bool,
}

fn may_crash() -> bool {
    true
}

/// What a store keeps across a simulated crash of its host (SIGKILL, then a new process
/// opened on the same data directory), as its `open` answer declares it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// Memory only: a restarted store starts empty (and histsim then leaves its crashes out).
    #[default]
    None,
    /// Every acknowledged write survives a kill and a restart on the same data directory.
    Restart,
}

/// The answer to `open`: `{}` (durability `none`) or `{"durability":"restart"}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Opened {
    #[serde(default)]
    pub durability: Durability,
}

/// A request line: the id and the request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct RequestLine {
    pub id: u64,
    #[serde(flatten)]
    pub request: Request,
}

/// A request line as the client writes it, the request borrowed.
#[derive(Serialize)]
pub(crate) struct RequestLineOut<'a> {
    pub id: u64,
    #[serde(flatten)]
    pub request: &'a Request,
}

impl<'de> Deserialize<'de> for RequestLine {
    /// By hand: serde's `flatten` would let unknown fields through, and a system must refuse a
    /// request it does not fully understand.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut fields = serde_json::Map::deserialize(d)?;
        let id = fields
            .remove("id")
            .ok_or_else(|| D::Error::missing_field("id"))?
            .as_u64()
            .ok_or_else(|| D::Error::custom("`id` is not an unsigned integer"))?;
        let request =
            Request::deserialize(serde_json::Value::Object(fields)).map_err(D::Error::custom)?;
        Ok(RequestLine { id, request })
    }
}

/// The answer to `hello`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The system's name, e.g. `histsim-display` or `aihub-projector`.
    pub system: String,
    pub version: String,
    pub protocol: u32,
    /// The ops it supports (capabilities); a workload generates only these.
    pub ops: Vec<String>,
    /// The known differences it has (IDs of docs/display-projection.md, e.g. `D1`): where one
    /// applies, the model expects the system's documented behaviour and the report says so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<String>,
    /// It implements histsim's planted switches: `open`'s `planted` turns that catalog ID's
    /// legacy behaviour on in it (histsim's own `histsim serve` does). Without it, `histsim
    /// bugs` can plant only the bugs whose switch lives in histsim's world, not in the system.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub planted: bool,
}

/// The answer to `append`: what the store did with each row, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Appended {
    /// Per row: `"stored"`, `"quarantined"`, or `{"failed": "why"}` when the store failed on
    /// that row (the persister goes on with the next, as the service's does).
    pub admitted: Vec<Admitted>,
}

/// The answer to `stored_rows`: the rows the store holds and the rows it quarantined, each in
/// the order they were committed, as the JSON strings `append` sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoredRows {
    pub rows: Vec<String>,
    pub quarantined: Vec<String>,
}

/// What the store did with one row of an `append`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Admitted {
    Stored,
    Quarantined,
    Failed(String),
}

/// The answer to a run-event store operation: made of the method's answer (the server's
/// side), and made into it again (the client's).
pub(crate) trait StoreAnswer: Serialize + DeserializeOwned {
    /// The method's answer.
    type Output;
    fn of(output: Self::Output) -> Self;
    /// The method's answer to `request`; `Err` when the answer cannot be one (an `internal`
    /// error naming why).
    fn output(self, request: &Request) -> Result<Self::Output, RunStoreError>;
}

/// The answer to `put_batch`: the seq given to each event, in batch order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Seqs {
    pub seqs: Vec<u64>,
}

impl StoreAnswer for Seqs {
    type Output = Vec<u64>;
    fn of(seqs: Vec<u64>) -> Self {
        Seqs { seqs }
    }
    /// One seq for each event of the batch.
    fn output(self, request: &Request) -> Result<Vec<u64>, RunStoreError> {
        let n = match request {
            Request::PutBatch { events } => events.len(),
            _ => self.seqs.len(),
        };
        if self.seqs.len() != n {
            let message = format!("put_batch answered {} seqs for {n} events", self.seqs.len());
            return Err(RunStoreError::Answered {
                kind: "internal".to_string(),
                message,
            });
        }
        Ok(self.seqs)
    }
}

/// The answer `{}` of a write that answers nothing else (`insert_numbered`); the client takes
/// any JSON value for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Done;

impl Serialize for Done {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        s.serialize_map(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for Done {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Done)
    }
}

/// An answer that is one field holding the method's answer.
macro_rules! one_field_answer {
    ($(#[$doc:meta])* $answer:ident { $field:ident: $output:ty }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $answer {
            pub $field: $output,
        }

        impl $crate::sut::protocol::StoreAnswer for $answer {
            type Output = $output;
            fn of($field: $output) -> Self {
                $answer { $field }
            }
            fn output(
                self,
                _: &$crate::sut::protocol::Request,
            ) -> Result<$output, ::history::runs::RunStoreError> {
                Ok(self.$field)
            }
        }
    };
}
pub(crate) use one_field_answer;

one_field_answer! {
    /// The answer to `max_seq`.
    MaxSeq { max_seq: u64 }
}
one_field_answer! {
    /// The answer to the counts (`count_messages`, `count_messages_as`) and the deletions (rows
    /// deleted).
    Count { count: u64 }
}
one_field_answer! {
    /// The answer to the reads of rows (`list_messages`, `list_events`, `dump`, ...).
    Events { events: Vec<RunEvent> }
}
one_field_answer! {
    /// The answer to `get_last_visible_ai_seq_by_run`: run id to seq, runs without one absent.
    LastSeqs { seqs: BTreeMap<String, u64> }
}

impl StoreAnswer for Done {
    type Output = ();
    fn of((): ()) -> Self {
        Done
    }
    fn output(self, _: &Request) -> Result<(), RunStoreError> {
        Ok(())
    }
}

/// The answer to `put_if_absent`: the record the store holds for the key, and whether this
/// request wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Kept {
    pub event: RunEvent,
    pub created: bool,
}

impl StoreAnswer for Kept {
    type Output = (RunEvent, bool);
    fn of((event, created): (RunEvent, bool)) -> Self {
        Kept { event, created }
    }
    fn output(self, _: &Request) -> Result<(RunEvent, bool), RunStoreError> {
        Ok((self.event, self.created))
    }
}

/// Why the system refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request is malformed for this system.
    Invalid,
    /// The request conflicts with the system's state.
    Conflict,
    /// A write of a run a deletion of its thread fenced (R28): refused, nothing written.
    ThreadDeleted,
    /// The system does not implement this op.
    Unsupported,
    /// The system failed.
    Internal,
}

impl ErrorKind {
    /// The kind as it is spelled on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Invalid => "invalid",
            ErrorKind::Conflict => "conflict",
            ErrorKind::ThreadDeleted => "thread_deleted",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Internal => "internal",
        }
    }
}

/// An `err` body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
}

/// A response line: exactly one of `ok` and `err`. The client reads [`RawResponseLine`]; tests
/// decode whole lines.
#[cfg(test)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResponseLine {
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub err: Option<ErrorBody>,
}

/// A response line as the client reads it: the `ok` value kept as its text, so an answer is
/// parsed once, straight into the type the request expects.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResponseLine {
    pub id: u64,
    #[serde(default)]
    pub ok: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    pub err: Option<ErrorBody>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_flat_objects_tagged_by_op() {
        let line = RequestLine {
            id: 7,
            request: Request::Append {
                node: 1,
                rows: vec!["{\"a\":1}".into()],
            },
        };
        let text = serde_json::to_string(&line).expect("serializes");
        assert_eq!(
            text,
            r#"{"id":7,"op":"append","node":1,"rows":["{\"a\":1}"]}"#
        );
        let back: RequestLine = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, line);
        assert_eq!(back.request.op(), "append");
        let close: RequestLine = serde_json::from_str(r#"{"id":2,"op":"close"}"#).expect("close");
        assert_eq!(close.request, Request::Close {});
    }

    #[test]
    fn an_unknown_op_or_field_is_refused() {
        assert!(serde_json::from_str::<RequestLine>(r#"{"id":1,"op":"drop_all"}"#).is_err());
        assert!(serde_json::from_str::<RequestLine>(r#"{"id":1,"op":"close","x":1}"#).is_err());
        assert!(serde_json::from_str::<ResponseLine>(r#"{"id":1,"ok":1,"extra":2}"#).is_err());
    }

    #[test]
    fn an_open_answer_without_durability_declares_none() {
        let opened: Opened = serde_json::from_str("{}").expect("parses");
        assert_eq!(opened.durability, Durability::None);
        let opened: Opened = serde_json::from_str(r#"{"durability":"restart"}"#).expect("parses");
        assert_eq!(opened.durability, Durability::Restart);
        assert!(serde_json::from_str::<Opened>(r#"{"durability":"forever"}"#).is_err());
    }

    #[test]
    fn error_kinds_are_the_four_named() {
        let body: ErrorBody =
            serde_json::from_str(r#"{"kind":"conflict","message":"m"}"#).expect("parses");
        assert_eq!(body.kind, ErrorKind::Conflict);
        assert!(serde_json::from_str::<ErrorBody>(r#"{"kind":"oops","message":"m"}"#).is_err());
    }
}
