//! The merge workload as data: a client session, step by step. The client starts with thread 0
//! open; a step's messages are named by the step (`m<step>`), so a scenario file needs no ids.

use crate::scenario_file::bounds::{entries_within, within};
use serde::{Deserialize, Serialize};

/// One client session against a server holding a few threads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeScenario {
    /// Threads `t0` to `t<threads - 1>`.
    pub threads: u8,
    pub steps: Vec<Step>,
}

/// Who wrote an agent's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentRole {
    Ai,
    Tool,
}

/// One thing that happens in the session. The steps that concern "the run" act on the open
/// thread's newest run and do nothing while it has none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// The client switches to thread `thread`.
    Open { thread: u8 },
    /// The user sends `text`: a new run whose human message the server persists; the client
    /// shows an optimistic copy first when `optimistic`, and the stream echoes the server's
    /// copy at once when `echo` (else later: an `echo`, a replay or a page).
    Send {
        text: String,
        optimistic: bool,
        echo: bool,
    },
    /// The stream delivers the run's human message.
    Echo,
    /// The agent writes a message (persisted at once), streamed in `frames` growing frames;
    /// with `page_mid_stream`, the thread's latest page of that many messages loads after the
    /// first frame, so the later frames replace a message whose seq the page told.
    Emit {
        role: AgentRole,
        text: String,
        frames: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        page_mid_stream: Option<u8>,
    },
    /// The dynamic-context middleware's copy of the run's human message, under a derived id.
    Inject,
    /// Summarization: the stream's state is removed, then the thread's last `keep` messages
    /// and a summary arrive.
    Reset { keep: u8 },
    /// The stream reconnects and replays the run from step `from_step`, its human message
    /// last when `human_last`.
    Reconnect { from_step: u8, human_last: bool },
    /// A history page of the open thread (of its run `run`, counted from its first, when
    /// given): the latest `limit` messages, below the oldest one loaded in that scope when
    /// `older`.
    Load {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<u8>,
        limit: u8,
        older: bool,
    },
    /// The client reopens the open thread (a reload): it holds nothing, the stream restores
    /// the thread's state (its last `keep` messages, live), then the latest page of `limit`
    /// messages loads: the same messages under the same ids, twice.
    Reopen { keep: u8, limit: u8 },
    /// A frame of thread `thread`'s stream (the agent writes `text` there) reaches the client,
    /// whichever thread is open.
    Stray { thread: u8, text: String },
}

/// Bounds that keep a session small.
pub const THREADS_MAX: u8 = 4;
pub const STEPS_MAX: usize = 600;
pub const FRAMES_MAX: u8 = 4;
pub const LIMIT_MAX: u8 = 60;
pub const TEXT_BYTES_MAX: usize = 256 * 1024;

impl Step {
    /// The op's name, as a scenario file spells it.
    pub fn op(&self) -> &'static str {
        match self {
            Step::Open { .. } => "open",
            Step::Send { .. } => "send",
            Step::Echo => "echo",
            Step::Emit { .. } => "emit",
            Step::Inject => "inject",
            Step::Reset { .. } => "reset",
            Step::Reconnect { .. } => "reconnect",
            Step::Load { .. } => "load",
            Step::Stray { .. } => "stray",
            Step::Reopen { .. } => "reopen",
        }
    }

    /// What a file can get wrong in this step, naming the field.
    fn problem(&self, threads: u8) -> Option<String> {
        match self {
            Step::Open { thread } | Step::Stray { thread, .. } if *thread >= threads => Some(
                format!("thread: expected 0 to {}, found {thread}", threads - 1),
            ),
            Step::Emit { frames, .. } if !(1..=FRAMES_MAX).contains(frames) => Some(format!(
                "frames: expected 1 to {FRAMES_MAX}, found {frames}"
            )),
            Step::Load { limit, .. } | Step::Reopen { limit, .. }
                if !(1..=LIMIT_MAX).contains(limit) =>
            {
                Some(format!("limit: expected 1 to {LIMIT_MAX}, found {limit}"))
            }
            Step::Emit {
                page_mid_stream: Some(limit),
                ..
            } if !(1..=LIMIT_MAX).contains(limit) => Some(format!(
                "page_mid_stream: expected 1 to {LIMIT_MAX}, found {limit}"
            )),
            Step::Send { text, .. } | Step::Emit { text, .. } | Step::Stray { text, .. }
                if text.len() > TEXT_BYTES_MAX =>
            {
                Some(format!("text: at most {TEXT_BYTES_MAX} bytes"))
            }
            _ => None,
        }
    }
}

impl MergeScenario {
    /// Checks what a file can get wrong, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        within("threads", self.threads, 1..=THREADS_MAX)?;
        entries_within("steps", self.steps.len(), STEPS_MAX)?;
        for (i, step) in self.steps.iter().enumerate() {
            if let Some(problem) = step.problem(self.threads) {
                return Err(format!("steps[{i}].{problem}"));
            }
        }
        Ok(())
    }
}

/// The name of thread `k` (`t0`, ...).
pub fn thread_name(k: u8) -> String {
    format!("t{k}")
}

/// The id of the message step `i` writes (its human message, the agent's message).
pub fn message_id(i: usize) -> String {
    format!("m{i}")
}

/// The id of the optimistic copy step `i` (a `send`) shows.
pub fn optimistic_id(i: usize) -> String {
    format!("opt{i}")
}

/// The id of the summary step `i` (a `reset`) puts at the head of the kept window.
pub fn summary_id(i: usize) -> String {
    format!("summary{i}")
}
