//! What a workload hands a picture beside its trace: its reads with the model's expectation,
//! its records' bytes at a crash (or, where no crash falls, when they were made durable), and
//! the histories a restart or a reader recovered.

/// Everything a workload shows of one played world beyond its trace lines.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub reads: Vec<ReadBox>,
    pub strips: Vec<Strip>,
    pub recovered: Vec<Recovered>,
}

/// One read: what the system answered and what the model expected, one line each message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadBox {
    pub at_us: u64,
    /// The lane of the host that answered (`replica-1`, `client`).
    pub lane: String,
    /// What was read (`turn 3`, `/history of t0`).
    pub label: String,
    pub answer: Vec<String>,
    /// What the expectation is (`the model's transcript`, `the rows stored by then`).
    pub expected_label: String,
    pub expected: Vec<String>,
    /// Whether the answer departed from the model, as the workload's checks judge it (an
    /// answer may differ from the one history shown and still be one the model allows).
    pub departs: bool,
}

impl ReadBox {
    /// Whether the answer departed from the model's expectation.
    pub fn departs(&self) -> bool {
        self.departs
    }
}

/// One file's bytes at a crash, or at the moment its workload made them durable, as
/// consecutive parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strip {
    pub at_us: u64,
    /// What the strip shows the file at: `crash at 1.250 ms`, `sealed before its send (no
    /// crash: …)`.
    pub moment: String,
    /// Placed after this many trace events, where simulated time cannot place it (a crash
    /// happens outside every host's clock).
    pub after_events: Option<u64>,
    pub lane: String,
    pub file: String,
    pub parts: Vec<StripPart>,
    /// Where each record begins (frame starts), for tick marks.
    pub record_starts: Vec<u64>,
}

/// A run of bytes of a file at a crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StripPart {
    Synced(u64),
    /// Written after the last sync and kept by the crash.
    Unsynced(u64),
    /// Bytes after the last good record: a torn tail.
    Torn(u64),
    /// Written before the crash and gone after it.
    Lost(u64),
}

impl StripPart {
    pub fn bytes(self) -> u64 {
        match self {
            StripPart::Synced(n)
            | StripPart::Unsynced(n)
            | StripPart::Torn(n)
            | StripPart::Lost(n) => n,
        }
    }

    pub fn class(self) -> &'static str {
        match self {
            StripPart::Synced(_) => "synced",
            StripPart::Unsynced(_) => "unsynced",
            StripPart::Torn(_) => "torn",
            StripPart::Lost(_) => "lost",
        }
    }
}

/// A history a restart recovered, beside the one the model holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    pub at_us: u64,
    /// As [`Strip::after_events`].
    pub after_events: Option<u64>,
    pub lane: String,
    pub label: String,
    pub recovered: Vec<String>,
    pub model_label: String,
    pub model: Vec<String>,
}
