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

/// What one operation returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// A mutation of the recording `journal`.
    Solo {
        journal: String,
        outcome: Outcome,
        /// Bytes the disk served while the mutation ran.
        bytes_read: u64,
        /// The recording's rows afterwards.
        rows: Vec<Row>,
    },
    Read {
        result: Result<Statistics, String>,
        /// Bytes the read took from the disk.
        bytes_read: u64,
        /// Bytes appended to the file since the reader's previous read.
        appended: u64,
        /// The writer's statistics at the same instant.
        writer: Option<Statistics>,
    },
    Estimate {
        counts: Vec<u64>,
    },
    Send {
        rows: usize,
        rows_visited: u64,
        replacements: usize,
        staged: Result<(), String>,
    },
    /// A fork or clone into `journal`, copied at the source's event `checkpoint`.
    Copy {
        source: String,
        journal: String,
        checkpoint: usize,
        result: Result<(), String>,
        /// The copy's open transaction as its new writer sees it, and as its bytes show.
        open_txn: Option<u64>,
        facts: ImageFacts,
        rows: Vec<Row>,
    },
    Switch {
        previous: String,
        to: String,
        /// What opening the target (writing nothing) showed before the resume.
        loaded: Result<Vec<Row>, String>,
        result: Result<(), String>,
        /// The recording the session has afterwards.
        recording: Option<String>,
        rows: Vec<Row>,
        arrivals: Vec<Row>,
    },
    ResumeAgain {
        result: Result<(), String>,
        bytes_before: u64,
        bytes_after: u64,
        /// The recording's rows before (`None`: the session had no recording).
        rows_before: Option<Vec<Row>>,
        rows_after: Vec<Row>,
    },
    Shared {
        outcome: Outcome,
        bytes_read: u64,
        primary: Vec<Row>,
        mirrors: Vec<MirrorSeen>,
    },
    AttachMirror {
        result: Result<(), String>,
        mirror: Option<MirrorSeen>,
    },
    SharedResume(SharedRestart),
    Dispose {
        fault_injected: bool,
        result: Result<(), String>,
        scratch_left: Vec<String>,
    },
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
