//! The histsim SUT protocol, version 1: the messages, as `docs/sut-protocol.md` specifies them.
//!
//! One JSON object a line each way: a request `{"id":N,"op":"...",...}` on the system's stdin,
//! one response `{"id":N,"ok":...}` or `{"id":N,"err":{"kind":...,"message":...}}` on its
//! stdout, in request order. Rows cross as JSON strings holding the row's bytes, so a malformed
//! row reaches the system byte for byte. Nothing the system needs from a clock or a random source
//! is left to it: requests carry every such value.

use history::display::AgentIdentity;
use history::runs::{NewRunEvent, RunEvent};
use serde::{Deserialize, Serialize};

/// The protocol version this build speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// A request, tagged by `op`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// First request: which protocol histsim speaks. The answer is [`Hello`].
    Hello { protocol: u32 },
    /// Open the system on `data_dir` (created by histsim, kept across a simulated crash).
    Open {
        data_dir: String,
        options: OpenOptions,
    },
    /// Close cleanly (a simulated crash kills the process instead).
    Close {},
    /// Display: replica `node`'s persister receives `rows` (one delivery batch, in order).
    Append { node: u32, rows: Vec<String> },
    /// Display: replica `node` answers a follow-up request: the thread's history.
    Reconstruct {
        node: u32,
        thread_id: String,
        primary: Option<AgentIdentity>,
    },
    /// Display, a pure projector without a store: the history of exactly these rows.
    Project {
        rows: Vec<String>,
        primary: Option<AgentIdentity>,
    },
    /// Runs: write a batch atomically; the store numbers it. The answer is [`Seqs`].
    PutBatch { events: Vec<NewRunEvent> },
    /// Runs: write events the caller numbered (imports, the legacy journal). The answer is `{}`.
    InsertNumbered { events: Vec<RunEvent> },
    /// Runs: the largest `seq` of a thread, 0 when empty. The answer is [`MaxSeq`].
    MaxSeq { thread_id: String },
    /// Runs: message rows of a thread ascending by seq, at most `limit`, from the cursor
    /// (`before` and `after` exclusive, each `null` when not set). The answer is [`Events`].
    ListMessages {
        thread_id: String,
        limit: u64,
        before: Option<u64>,
        after: Option<u64>,
    },
    /// Runs: the number of message rows of a thread. The answer is [`Count`].
    CountMessages { thread_id: String },
    /// Runs: every event of one run, ascending by seq. The answer is [`Events`].
    ListEvents { thread_id: String, run_id: String },
    /// Runs: every stored row by (thread_id, seq, write order). The answer is [`Events`].
    Dump {},
    /// Runs: delete every row of one run, every user's. The answer is [`Count`] (rows deleted).
    DeleteByRun { thread_id: String, run_id: String },
    /// Runs: write `event` unless its run has an event of its type. The answer is [`Kept`].
    PutIfAbsent { event: NewRunEvent },
    /// Runs: message rows of one run, with `list_messages`' cursor semantics. The answer is
    /// [`Events`].
    ListMessagesByRun {
        thread_id: String,
        run_id: String,
        limit: u64,
        before: Option<u64>,
        after: Option<u64>,
    },
    /// Runs: the events of one run that pass every condition given (`event_types`, `task_id`
    /// matched on `metadata.task_id`, `after_seq`), ascending by seq, then the first `limit`.
    /// The answer is [`Events`].
    ListEventsFiltered {
        thread_id: String,
        run_id: String,
        event_types: Option<Vec<String>>,
        task_id: Option<String>,
        after_seq: Option<u64>,
        limit: u64,
    },
    /// Runs: `list_messages` over the rows of one user's scope: `user_id` a user (only rows
    /// whose `user_id` is exactly it) or `null` (every user's, rows without a user included).
    /// The answer is [`Events`].
    ListMessagesAs {
        thread_id: String,
        limit: u64,
        before: Option<u64>,
        after: Option<u64>,
        user_id: Option<String>,
    },
    /// Runs: `count_messages` over the rows of `user_id`'s scope (as `list_messages_as`). The
    /// answer is [`Count`].
    CountMessagesAs {
        thread_id: String,
        user_id: Option<String>,
    },
    /// Runs: per run of `run_ids` that has one, the seq of its last visible AI message. The
    /// answer is [`LastSeqs`].
    GetLastVisibleAiSeqByRun {
        thread_id: String,
        run_ids: Vec<String>,
    },
    /// Runs: delete every row of one thread, every user's. The answer is [`Count`] (rows
    /// deleted). A thread left empty starts over: its next row is numbered 1.
    DeleteByThread { thread_id: String },
}

impl Request {
    /// Whether the request only reads (asking it once more changes nothing the store holds,
    /// unless the store is faulty, e.g. planted R3's reads that write).
    pub fn reads_only(&self) -> bool {
        matches!(
            self,
            Request::MaxSeq { .. }
                | Request::ListMessages { .. }
                | Request::CountMessages { .. }
                | Request::ListEvents { .. }
                | Request::Dump {}
                | Request::ListMessagesByRun { .. }
                | Request::ListMessagesAs { .. }
                | Request::CountMessagesAs { .. }
        )
    }

    /// The `op` name, as capabilities list it.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "hello",
            Request::Open { .. } => "open",
            Request::Close {} => "close",
            Request::Append { .. } => "append",
            Request::Reconstruct { .. } => "reconstruct",
            Request::Project { .. } => "project",
            Request::PutBatch { .. } => "put_batch",
            Request::InsertNumbered { .. } => "insert_numbered",
            Request::MaxSeq { .. } => "max_seq",
            Request::ListMessages { .. } => "list_messages",
            Request::CountMessages { .. } => "count_messages",
            Request::ListEvents { .. } => "list_events",
            Request::Dump {} => "dump",
            Request::DeleteByRun { .. } => "delete_by_run",
            Request::PutIfAbsent { .. } => "put_if_absent",
            Request::ListMessagesByRun { .. } => "list_messages_by_run",
            Request::ListEventsFiltered { .. } => "list_events_filtered",
            Request::ListMessagesAs { .. } => "list_messages_as",
            Request::CountMessagesAs { .. } => "count_messages_as",
            Request::GetLastVisibleAiSeqByRun { .. } => "get_last_visible_ai_seq_by_run",
            Request::DeleteByThread { .. } => "delete_by_thread",
        }
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
pub struct RequestLine {
    pub id: u64,
    #[serde(flatten)]
    pub request: Request,
}

/// A request line as the client writes it, the request borrowed.
#[derive(Serialize)]
pub struct RequestLineOut<'a> {
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
pub struct Appended {
    /// Per row: `"stored"`, `"quarantined"`, or `{"failed": "why"}` when the store failed on
    /// that row (the persister goes on with the next, as the service's does).
    pub admitted: Vec<Admitted>,
}

/// What the store did with one row of an `append`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Admitted {
    Stored,
    Quarantined,
    Failed(String),
}

/// The answer to `put_batch`: the seq given to each event, in batch order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Seqs {
    pub seqs: Vec<u64>,
}

/// The answer to `max_seq`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MaxSeq {
    pub max_seq: u64,
}

/// The answer to `count_messages`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Count {
    pub count: u64,
}

/// The answer to `list_messages`, `list_events` and `dump`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Events {
    pub events: Vec<RunEvent>,
}

/// The answer to `put_if_absent`: the record the store holds for the key, and whether this
/// request wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    pub event: RunEvent,
    pub created: bool,
}

/// The answer to `get_last_visible_ai_seq_by_run`: run id to seq, runs without one absent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LastSeqs {
    pub seqs: std::collections::BTreeMap<String, u64>,
}

/// Why the system refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request is malformed for this system.
    Invalid,
    /// The request conflicts with the system's state.
    Conflict,
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

/// A response line: exactly one of `ok` and `err`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResponseLine {
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
pub struct RawResponseLine {
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
