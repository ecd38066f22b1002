//! The run journal's callbacks over the SUT protocol (`docs/sut-protocol.md`, "Journal
//! operations"): a run-event system that hosts the run journal declares the four ops below in
//! `hello`; the runs world then hands it what the agent framework tells a journal (an
//! invocation's start, end and failure; a model call's start with its messages, hidden and
//! named ones included) and records what the system's journal answers it records of each, where
//! it would have asked histsim's own `RunJournal` (`history::runs::journal_callbacks`). The
//! buffering, the batches and the writes stay histsim's journal's, through the store ops as
//! before: what crosses is the journal's decision, which rows a callback makes (R25, R26).
//!
//! `histsim serve runs` answers them with history's own `RunJournal` ([`ServedJournals`]).

use super::journal_wire::WireCallMessage;
use super::protocol::{one_field_answer, ErrorBody, ErrorKind, Request};
use super::serve::{ok, refuse, Answer};
use history::runs::{
    CallMessage, Category, JournalEntry, MemoryRunEventStore, ModelCall, RunEventStore, RunJournal,
    RunJournalOptions, RunStoreError,
};
use history::Planted;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The journal's ops, in the order a run calls them first. A system hosts the journal when it
/// declares all four.
pub const JOURNAL_OPS: [&str; 4] = [
    "journal_chain_start",
    "journal_model_start",
    "journal_chain_end",
    "journal_chain_error",
];

/// One record a system's journal makes of a callback; histsim's journal stamps it with the
/// callback's `created_at_ns` and buffers it for the store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalRecord {
    pub event_type: String,
    pub category: Category,
    pub content: Value,
    pub metadata: Value,
}

one_field_answer! {
    /// The answer to every journal op: the records the callback made, in order (none is
    /// common).
    JournalRecords { records: Vec<JournalRecord> }
}

impl JournalRecord {
    /// The journal entry of this record at the callback's time.
    pub fn entry(self, created_at_ns: i64) -> JournalEntry {
        let mut entry =
            JournalEntry::other(self.category, self.event_type, self.content, created_at_ns);
        entry.metadata = self.metadata;
        entry
    }
}

fn model_call(caller: Option<String>, messages: Vec<WireCallMessage>) -> ModelCall {
    let messages = (messages.into_iter())
        .map(|m| CallMessage {
            message: m.message,
            hide_from_ui: m.hide_from_ui,
            original: m.original,
        })
        .collect();
    ModelCall { caller, messages }
}

impl Request {
    /// The journal op this request asks, if it asks one.
    pub fn journal_op(&self) -> Option<&'static str> {
        Some(match self {
            Request::JournalChainStart { .. } => JOURNAL_OPS[0],
            Request::JournalModelStart { .. } => JOURNAL_OPS[1],
            Request::JournalChainEnd { .. } => JOURNAL_OPS[2],
            Request::JournalChainError { .. } => JOURNAL_OPS[3],
            _ => return None,
        })
    }
}

/// The journals `histsim serve runs` hosts: history's own `RunJournal`, one a run, each over a
/// store of its own that keeps what it flushes (a threshold of one event: every record is
/// flushed at once), from which the records of each callback are answered.
#[derive(Default)]
pub struct ServedJournals {
    journals: BTreeMap<(String, String), Served>,
}

struct Served {
    journal: RunJournal<MemoryRunEventStore>,
    /// How many of its store's rows were answered already.
    answered: usize,
}

impl ServedJournals {
    /// The answer to a journal op; `None` when `request` is none.
    pub fn answer(&mut self, request: Request, planted: Planted) -> Option<Answer> {
        let (thread_id, run_id, at_ns) = match &request {
            Request::JournalChainStart {
                thread_id,
                run_id,
                created_at_ns,
                ..
            }
            | Request::JournalChainEnd {
                thread_id,
                run_id,
                created_at_ns,
                ..
            }
            | Request::JournalChainError {
                thread_id,
                run_id,
                created_at_ns,
                ..
            }
            | Request::JournalModelStart {
                thread_id,
                run_id,
                created_at_ns,
                ..
            } => (thread_id.clone(), run_id.clone(), *created_at_ns),
            _ => return None,
        };
        let served = self
            .journals
            .entry((thread_id.clone(), run_id.clone()))
            .or_insert_with(|| Served::new(thread_id, run_id, planted));
        Some(served.hear(request, at_ns))
    }
}

impl Served {
    fn new(thread_id: String, run_id: String, planted: Planted) -> Served {
        let options = RunJournalOptions {
            flush_threshold_events: 1,
            max_trace_content_bytes: None,
            planted,
        };
        let store = MemoryRunEventStore::new(Planted::none());
        Served {
            journal: RunJournal::new(store, thread_id, run_id, None, options),
            answered: 0,
        }
    }

    /// Hands the journal the callback, then answers the rows it flushed.
    fn hear(&mut self, request: Request, at_ns: i64) -> Answer {
        let journal = &mut self.journal;
        let heard = match request {
            Request::JournalChainStart {
                invocation,
                content,
                ..
            } => block_on(journal.on_chain_start(&invocation.into(), content, at_ns)),
            Request::JournalChainEnd { invocation, .. } => {
                block_on(journal.on_chain_end(&invocation.into(), at_ns))
            }
            Request::JournalChainError {
                invocation, error, ..
            } => block_on(journal.on_chain_error(&invocation.into(), &error, at_ns)),
            Request::JournalModelStart {
                caller, messages, ..
            } => block_on(journal.on_model_start(&model_call(caller, messages), at_ns)),
            _ => return Err(refuse(ErrorKind::Unsupported, "not a journal op")),
        };
        heard.map_err(|e| refuse(ErrorKind::Internal, e.to_string()))?;
        let rows = (journal.store().dump()).map_err(|e| internal(&e))?;
        let records = (rows.into_iter().skip(self.answered))
            .map(|row| JournalRecord {
                event_type: row.event_type,
                category: row.category,
                content: (*row.content).clone(),
                metadata: row.metadata,
            })
            .collect::<Vec<_>>();
        self.answered += records.len();
        ok(&JournalRecords { records })
    }
}

fn internal(e: &RunStoreError) -> ErrorBody {
    refuse(ErrorKind::Internal, e.to_string())
}

// Runs a journal call to its end: it waits on nothing outside itself (a planted legacy writer
// yields once), so polling again finishes it.
use history::runs::poll_to_end as block_on;
