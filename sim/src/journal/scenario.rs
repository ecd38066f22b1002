//! The journal workload as data: sessions, each a script of journal operations, and the host
//! crashes the driver injects.
//!
//! A random seed is turned into one of these by [`super::generate`]; a scenario file holds one
//! written by hand or by the shrinker. The world ([`super::world`]) plays it. Operations name rows
//! by their position in the history as it is when the operation runs (a client sees positions,
//! not ids), and every count is clamped to what exists, so any script is playable, including one
//! the shrinker cut down.

use serde::{Deserialize, Serialize};
use strum::IntoStaticStr;

pub use crate::disk::corrupt::Corruption;

fn one() -> u32 {
    1
}

fn default_load_step() -> u32 {
    2
}

fn default_down_ms() -> u32 {
    10
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Sessions on their own hosts, and the crashes of those hosts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalScenario {
    /// Seed of turmoil's own randomness (below 2^63).
    #[serde(default)]
    pub network_seed: u64,
    /// Records a resume loads between two calls of its arrivals callback (at least 1).
    #[serde(default = "default_load_step")]
    pub load_step_records: u32,
    /// Slow mirrors: simulated ms after a shared mutation resolves before the host writes the
    /// mirror work still owed (a correct history owes none). 0: at once.
    #[serde(default)]
    pub mirror_settle_ms: u32,
    /// One host per session, `session-0` ...
    pub sessions: Vec<SessionScript>,
    /// Host crashes, each at a point of one session's script.
    #[serde(default)]
    pub crashes: Vec<Crash>,
    /// After the world: the first this-many mutations of the crash workload (`histsim crash`)
    /// run on the production file storage in a temporary directory, its file-system calls
    /// recorded, and every state a POSIX file system may leave after each call is checked
    /// (`histsim crash --storage recorded`, at most 4 states a point). 0: not run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recorded_storage_ops: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What one session does, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionScript {
    /// The subagents that write to the session's shared history with the main agent. Empty: the
    /// session has no shared history (and no `shared` operations).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<String>,
    /// Origins (`main` or a subagent) whose mirrors are attached when the session starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mirrors: Vec<String>,
    pub ops: Vec<Op>,
}

/// One operation and the wait after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Op {
    /// Simulated ms the session waits after the operation (at least 1 is waited, so a crash can
    /// land between two operations).
    #[serde(default = "one")]
    pub after_ms: u32,
    /// An injected disk fault: every append to the journal the operation writes fails with EIO
    /// (the session's recording; the target journal of a `switch`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fail: bool,
    pub action: Action,
}

/// A row as a script writes it. Text is padded to `pad_bytes` by repeating it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowSpec {
    pub speaker: SpeakerSpec,
    pub text: String,
    /// An AI row: the id of the tool call it makes. A tool row: the id of the call it answers
    /// (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pad_bytes: u32,
    /// `main` or a subagent; default: the origin of the operation (`main` for the session's own
    /// recording).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl RowSpec {
    /// A row of `speaker` saying `text`: no call, no padding, the operation's origin.
    pub fn plain(speaker: SpeakerSpec, text: String) -> RowSpec {
        RowSpec {
            speaker,
            text,
            call: None,
            pad_bytes: 0,
            origin: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeakerSpec {
    Human,
    Ai,
    Tool,
}

/// What a session does. Positions (`at`, `after`, `remove`, `rewrite`) are taken modulo the
/// number of rows in context when the operation runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, IntoStaticStr)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[strum(serialize_all = "snake_case")]
pub enum Action {
    /// Records rows (one append record).
    Append { rows: Vec<RowSpec> },
    /// A general replacement (a restore): begin, then each group as one `replace_rows` record
    /// with `gap_ms` between them, then commit. Right after the begin, another recorder hands
    /// `arrivals` to the journal's inbox (each row one append, under the row's own origin).
    Replace {
        groups: Vec<Vec<RowSpec>>,
        #[serde(default)]
        gap_ms: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        arrivals: Vec<RowSpec>,
    },
    /// Removes the last `rows` rows (clamped): one suffix-cut record.
    Rewind { rows: u64 },
    /// Removes every row: one clear record.
    Clear,
    /// The summarization middleware: everything but the last `keep` rows (more when a tool call
    /// and its results straddle the cut) becomes one summary row. One compression record.
    Compress { keep: u64 },
    /// Removes the rows at `remove` and rewrites those at `rewrite` with `rewrite_bytes` of text.
    Density {
        #[serde(default)]
        remove: Vec<u32>,
        #[serde(default)]
        rewrite: Vec<u32>,
        #[serde(default)]
        rewrite_bytes: u32,
    },
    /// Inserts `row` after the row at `after` (first when absent or when there are no rows).
    Insert {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<u32>,
        row: RowSpec,
    },
    /// The statistics pager reads the recording incrementally.
    Read,
    /// Token estimates of `texts` (each a list of pieces), counted concurrently: `schedule`
    /// names which counter takes its next piece (or ends its row) at each turn.
    Estimate {
        texts: Vec<Vec<String>>,
        schedule: Vec<u8>,
    },
    /// A request: last-resort truncation of tool results to `budget_percent` of the history's
    /// bytes, keeping `keep_bytes` of each cut result; the body is staged in scratch.
    Send { budget_percent: u8, keep_bytes: u32 },
    /// A checkpoint fork of the recording into `<name>.journal`, at the state `back` changes
    /// before the current one.
    Fork { name: String, back: u32 },
    /// A copy of the recording into `<name>.journal`.
    Clone { name: String },
    /// Resumes `<to>.journal` (a fork or clone) as the session's recording; `arrivals` are typed
    /// while it loads.
    Switch {
        to: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        arrivals: Vec<RowSpec>,
    },
    /// Resumes the current recording again.
    ResumeAgain,
    /// A mutation of the shared history by `origin`; the mirror of `fail_mirror` fails its
    /// appends meanwhile (an injected disk fault).
    Shared {
        origin: String,
        op: SharedAction,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_mirror: Option<String>,
    },
    /// Attaches a mirror for `origin` to the shared history (a recorder joining late).
    AttachMirror { origin: String },
    /// Resumes the shared history and its mirrors.
    SharedResume,
    /// Disposes of the process's journal store (the last operation of a script).
    Dispose {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fault: Option<DisposeFault>,
    },
}

/// A mutation of the shared history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, IntoStaticStr)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[strum(serialize_all = "snake_case")]
pub enum SharedAction {
    Append {
        rows: Vec<RowSpec>,
    },
    /// Removes the last `rows` rows, whatever their origins (clamped).
    Rewind {
        rows: u64,
    },
    Clear,
    /// The summarization middleware (see [`Action::Compress`]); the summary row has the
    /// operation's origin.
    Compress {
        keep: u64,
    },
    /// Rewrites the row at `at` in place (a row transform); it keeps its origin.
    Transform {
        at: u32,
    },
    /// Replaces the whole history (a restore).
    Restore {
        rows: Vec<RowSpec>,
    },
    Insert {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<u32>,
        row: RowSpec,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisposeFault {
    /// Removing the scratch area's owner marker fails.
    ScratchRemove,
    /// The sync of the store's recorder fails.
    RecorderSync,
}

/// A host crash at one point of a session's script.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    pub session: u32,
    pub op: u32,
    /// For a `replace`: crash after this many row groups were written (0: right after the begin;
    /// the group count: right before the commit). Absent: after the operation resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during: Option<u32>,
    /// What survives of the writes not yet synced.
    #[serde(default)]
    pub pending: Pending,
    /// Simulated ms until the host is started again.
    #[serde(default = "default_down_ms")]
    pub down_ms: u32,
    /// Rows the user types while the restarted session loads its recording.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arrivals: Vec<RowSpec>,
    /// A silent corruption of the recording's file while the host is down (a bit flip, one
    /// inside a row's text, a stale sector), in a record a complete record follows. The
    /// restarted session must report it by the record's offset; the model accepts the whole
    /// recording as lost from there (J10), and the session's script ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrupt: Option<Corruption>,
    /// The restarted process crashes again inside its recovery (a second crash), before the
    /// host starts it once more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryCrash>,
}

/// A crash inside the recovery of the recording after a crash: the process dies after
/// `after_writes` of the recovery's disk writes (appends, truncations, syncs), and the disk
/// keeps `pending` of what it had not synced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryCrash {
    pub after_writes: u32,
    #[serde(default)]
    pub pending: Pending,
}

/// What a crash keeps of every file's unsynced bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Pending {
    /// Only synced bytes survive (power loss).
    #[default]
    Lose,
    /// Everything written survives (the page cache reached the disk).
    Keep,
    /// A process kill: the page cache survives, so reads see every write, but what was not
    /// synced is still unsynced, and a later power cut loses it unless a sync came between.
    Kill,
    /// The first `bytes` unsynced bytes of each file survive: a write torn mid-way.
    Cut { bytes: u64 },
    /// A disk the `reorder` persistence model allows, drawn with `seed`: each file keeps any
    /// subset of its unsynced 512-byte sectors (the others hold their old bytes, zeros past the
    /// synced length), some torn, and a file never synced may lose its entry.
    Reorder { seed: u64 },
}

/// The pattern of the actions that mutate the session's recording (and can take a `fail`
/// fault): one list for [`Action::is_solo_mutation`] and the player's dispatch.
macro_rules! solo_mutation {
    () => {
        Action::Append { .. }
            | Action::Replace { .. }
            | Action::Rewind { .. }
            | Action::Clear
            | Action::Compress { .. }
            | Action::Density { .. }
            | Action::Insert { .. }
    };
}
pub(super) use solo_mutation;

impl Action {
    /// The action's name, as the trace and probes spell it.
    pub fn kind(&self) -> &'static str {
        self.into()
    }

    /// Whether the action mutates the session's recording (and can take a `fail` fault).
    pub fn is_solo_mutation(&self) -> bool {
        matches!(self, solo_mutation!())
    }
}

impl SharedAction {
    pub fn kind(&self) -> &'static str {
        self.into()
    }
}

/// The most sessions, operations per session, rows per operation and crashes a scenario holds:
/// bounds that keep a run small and every loop bounded.
pub const SESSIONS_MAX: usize = 8;
pub const OPS_MAX: usize = 400;
pub const ROWS_MAX: usize = 256;
pub const CRASHES_MAX: usize = 64;
/// The largest padded row and density rewrite, in bytes.
pub const PAD_BYTES_MAX: u32 = 256 * 1024;

impl JournalScenario {
    /// Every operation of every session.
    pub fn op_count(&self) -> usize {
        self.sessions.iter().map(|s| s.ops.len()).sum()
    }
}
