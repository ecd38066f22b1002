//! What the world saw, for the checkers: per session, every operation's outcome with the values
//! it returned, every crash with the disk it left, every restart with what the reopened journals
//! showed. The world records; it judges nothing.

use history::journal::{Origin, Row, Statistics};
use std::collections::BTreeMap;

use crate::disk::corrupt::Injected;
use crate::journal::crash::ImageFacts;

/// The outcome of a mutation: written (with the number of records), skipped because it would
/// change nothing, or failed with the error the journal returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Written { records: usize },
    Skipped,
    Failed(String),
}

impl Outcome {
    pub fn is_written(&self) -> bool {
        matches!(self, Outcome::Written { .. })
    }
}

/// One mirror as seen right after a shared operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorSeen {
    pub origin: Origin,
    /// The rows the mirror's writer holds.
    pub rows: Vec<Row>,
    /// The rows a crash at this instant would leave (the mirror file's synced bytes, read back
    /// by the harness), or why they do not read.
    pub durable: Result<Vec<Row>, String>,
}

/// What one operation returned: one variant a kind of operation, each carrying what the rules
/// about that kind read ([`super::check::OP_RULES`] hands each rule its variant's record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    Solo(SoloSeen),
    Read(ReadSeen),
    Estimate { counts: Vec<u64> },
    Send(SendSeen),
    Copy(CopySeen),
    Switch(SwitchSeen),
    ResumeAgain(ResumeAgainSeen),
    Shared(SharedSeen),
    AttachMirror(AttachSeen),
    SharedResume(SharedRestart),
    Dispose(DisposeSeen),
}

/// A mutation of the recording `journal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoloSeen {
    pub journal: String,
    pub outcome: Outcome,
    /// Bytes the disk served while the mutation ran.
    pub bytes_read: u64,
    /// The recording's rows afterwards.
    pub rows: Vec<Row>,
}

/// An incremental read of the recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadSeen {
    pub result: Result<Statistics, String>,
    /// Bytes the read took from the disk.
    pub bytes_read: u64,
    /// Bytes appended to the file since the reader's previous read.
    pub appended: u64,
    /// The writer's statistics at the same instant.
    pub writer: Option<Statistics>,
}

/// A request sent: its truncations decided and the request staged in scratch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendSeen {
    pub rows: usize,
    pub rows_visited: u64,
    pub replacements: usize,
    pub staged: Result<(), String>,
}

/// A fork or clone into `journal`, copied at the source's event `checkpoint`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopySeen {
    pub source: String,
    pub journal: String,
    pub checkpoint: usize,
    pub result: Result<(), String>,
    /// The copy's open transaction as its new writer sees it, and as its bytes show.
    pub open_txn: Option<u64>,
    pub facts: ImageFacts,
    pub rows: Vec<Row>,
}

/// A switch of the session's recording to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSeen {
    pub previous: String,
    pub to: String,
    /// What opening the target (writing nothing) showed before the resume.
    pub loaded: Result<Vec<Row>, String>,
    pub result: Result<(), String>,
    /// The recording the session has afterwards.
    pub recording: Option<String>,
    pub rows: Vec<Row>,
    pub arrivals: Vec<Row>,
}

/// The recording resumed once more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeAgainSeen {
    pub result: Result<(), String>,
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// The recording's rows before (`None`: the session had no recording).
    pub rows_before: Option<Vec<Row>>,
    pub rows_after: Vec<Row>,
}

/// A mutation of the shared history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedSeen {
    pub outcome: Outcome,
    pub bytes_read: u64,
    pub primary: Vec<Row>,
    pub mirrors: Vec<MirrorSeen>,
}

/// A mirror attached to the shared history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachSeen {
    pub result: Result<(), String>,
    pub mirror: Option<MirrorSeen>,
}

/// The journal store disposed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisposeSeen {
    pub fault_injected: bool,
    pub result: Result<(), String>,
    pub scratch_left: Vec<String>,
}

/// The session's recording reopened after a crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoloRestart {
    pub journal: String,
    /// The crash image of the recording, as the production scanner reads it.
    pub facts_before: ImageFacts,
    /// What opening the journal (writing nothing) showed.
    pub shown: Result<Vec<Row>, String>,
    pub resumed: Result<(), String>,
    /// The transaction the resumed writer considers open.
    pub writer_open_txn: Option<u64>,
    /// The sequence number of the last record the resumed writer knows of.
    pub writer_last_seq: u64,
    pub rows_after: Vec<Row>,
    pub facts_after: ImageFacts,
    pub arrivals: Vec<Row>,
}

/// The shared history reopened (after a crash, or resumed on purpose).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedRestart {
    /// Each attached mirror's rows as its file holds them before the resume.
    pub mirrors_before: Vec<(Origin, Result<Vec<Row>, String>)>,
    pub resumed: Result<(), String>,
    pub primary: Vec<Row>,
    /// Each mirror's rows after the resume.
    pub mirrors: Vec<(Origin, Vec<Row>)>,
}

/// One thing that happened to a session, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Happened {
    /// Process `incarnation` started; `scratch` is every scratch file left after its sweep.
    Started {
        incarnation: u32,
        dead: Vec<String>,
        scratch: Vec<String>,
        sweep_error: Option<String>,
    },
    Op {
        op: usize,
        seen: Seen,
    },
    /// A crash hit operation `op` while it ran (a replacement that never committed).
    Interrupted {
        op: usize,
    },
    Crash {
        op: usize,
        during: Option<u32>,
        /// The disk the host came back to.
        image: BTreeMap<String, Vec<u8>>,
        /// Per file, the length that was synced and unchanged when the host crashed: bytes past
        /// it were written since.
        synced: BTreeMap<String, u64>,
        /// Per file, its length just before the crash (what a page shows as lost).
        written: BTreeMap<String, u64>,
    },
    Restart {
        solo: SoloRestart,
        shared: Option<SharedRestart>,
    },
    /// The restart after crash `op` met a silent corruption of the recording; the script ends.
    Corrupted {
        op: usize,
        restart: CorruptedRestart,
    },
}

/// What a restarted session made of a recording a silent corruption damaged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorruptedRestart {
    /// Where the corruption landed (the harness's record).
    pub injected: Injected,
    /// What reopening the recording showed: its rows, or the error and the offset it names.
    pub shown: Result<Vec<Row>, (String, Option<u64>)>,
    /// What resuming it did.
    pub resumed: Result<(), String>,
    /// The file's bytes before and after the reopen and the resume.
    pub bytes_before: Vec<u8>,
    pub bytes_after: Vec<u8>,
}

/// Everything one session did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionRecord {
    pub happened: Vec<Happened>,
    /// Every file at the end of the script (current bytes).
    pub final_image: BTreeMap<String, Vec<u8>>,
    /// The recording at the end of the script and the last record its writer wrote.
    pub final_recording: Option<(String, u64)>,
    /// The script ran to its end.
    pub finished: bool,
    /// When each of `happened` happened: simulated microseconds, and how many trace events
    /// were recorded by then (for its page).
    pub happened_at: Vec<(u64, u64)>,
}
