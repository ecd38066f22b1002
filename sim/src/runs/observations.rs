//! The one append-only log of a played runs world: play appends typed [`Observation`]s as they
//! happen (and nothing else changes them); the checks read them through the accessors, each
//! kind in the order it was appended.

use super::feedback_record::FeedbackEntry;
use super::record::{Answer, Both, ReadKind};
use super::record::{
    DeletionRecord, EmittedEvent, EverywhereDeletionRecord, LateWriteRecord, RatingRecord, Read,
    ReceiptRecord, StoreRestart, SummaryRecord, TableReadRecord, ThreadDeletionRecord, TruthEvent,
    WriteDisagreement, WriteError, Written,
};
use crate::coverage::Coverage;
use crate::trace::Trace;
use history::runs::{Feedback, MessageView, RunEvent, ThreadHistory};

/// What a played world leaves for the checkers: the log of what play observed, and the state
/// it read once the simulation was over.
pub struct WorldRecord {
    /// Every observation, appended while the world played.
    pub log: ObservationLog,
    /// The feedback store at the end, every thread.
    pub feedback: Vec<Feedback>,
    /// Both stores' rows at the end.
    pub dumps: Both<Answer<Vec<RunEvent>>>,
    /// Each thread's `count_events` at the end, as (thread id, count) in the scenario's order of
    /// threads; `None` when the system does not serve it (left out, counted).
    pub event_counts: Option<EventCounts>,
    pub trace: Trace,
    /// Set when the world did not finish (a hang, a host error).
    pub failure: Option<String>,
    pub sim_elapsed_ms: u64,
    /// What the stores under test in child processes wrote to their stderr.
    pub sut_log: Option<String>,
    /// What they answered, op by op, both stores summed ([`crate::sut::tally`]); empty in
    /// process.
    pub answers: crate::coverage::Coverage,
    /// The first store's name: `memory`, or `jsonl` when the JSONL store played it (the
    /// answers and dump of that slot are `Both::memory`).
    pub first_slot: &'static str,
}

/// Both stores' `/history` answers of a views read.
pub(crate) type HistoryAnswers = Both<Answer<Option<ThreadHistory>>>;
/// Both stores' `/messages` answers of a views read.
pub(crate) type ViewAnswers = Both<Answer<Vec<MessageView>>>;

/// Both stores' `count_events` of each thread, as (thread id, count).
pub(crate) type EventCounts = Both<Answer<Vec<(String, u64)>>>;

/// One thing play saw happen.
#[derive(Clone, Debug)]
pub enum Observation {
    /// Ground truth of a run (its start, a message it emitted, how it stopped, its deletion),
    /// at a position in the world's order of operations.
    Truth {
        op: u64,
        run: usize,
        event: TruthEvent,
    },
    /// An event a run handed its journal.
    Emitted {
        run: usize,
        event: EmittedEvent,
    },
    /// A row the primary store accepted, with its seq.
    Written(Written),
    /// A write the two stores of the pair answered differently.
    WriteDisagreement(WriteDisagreement),
    /// A journal-side store call a store answered with an error (R24).
    WriteError(WriteError),
    /// A row the `sqlite` store acknowledged, with its own seq (worlds that crash its host).
    DurableAcked(Written),
    /// A crash of the store's host performed.
    StoreRestart(StoreRestart),
    Read(Read),
    Rating(RatingRecord),
    Summary(SummaryRecord),
    Deletion(DeletionRecord),
    Receipt(ReceiptRecord),
    /// A call on the feedback store and its answer.
    Feedback(FeedbackEntry),
    ThreadDeletion(ThreadDeletionRecord),
    EverywhereDeletion(EverywhereDeletionRecord),
    LateWrite(LateWriteRecord),
    /// A table read asked once the world ended, with both answers.
    TableRead(TableReadRecord),
    /// Something the checks could not ask of the system under test, said in words.
    LeftOut(String),
    /// A run (by index) still playing when the liveness bound ran out after the last op.
    Stuck(usize),
    /// Every run had stopped this many simulated ms after the last op.
    AllStopped {
        after_ms: u64,
    },
}

/// Every observation of one world, kept by kind. Append-only: [`ObservationLog::push`] is the
/// only way in.
#[derive(Debug, Default)]
pub struct ObservationLog {
    truth: Vec<(u64, usize, TruthEvent)>,
    emitted: Vec<Vec<EmittedEvent>>,
    written: Vec<Written>,
    write_disagreements: Vec<WriteDisagreement>,
    write_errors: Vec<WriteError>,
    durable_acked: Vec<Written>,
    store_restarts: Vec<StoreRestart>,
    reads: Vec<Read>,
    ratings: Vec<RatingRecord>,
    summaries: Vec<SummaryRecord>,
    deletions: Vec<DeletionRecord>,
    receipts: Vec<ReceiptRecord>,
    feedback: Vec<FeedbackEntry>,
    thread_deletions: Vec<ThreadDeletionRecord>,
    everywhere_deletions: Vec<EverywhereDeletionRecord>,
    late_writes: Vec<LateWriteRecord>,
    table_reads: Vec<TableReadRecord>,
    left_out: Coverage,
    stuck_runs: Vec<usize>,
    stopped_after_ms: Option<u64>,
}

impl ObservationLog {
    /// An empty log of a world of `runs` runs.
    pub fn new(runs: usize) -> ObservationLog {
        ObservationLog {
            emitted: vec![Vec::new(); runs],
            ..ObservationLog::default()
        }
    }

    /// Appends one observation.
    pub fn push(&mut self, observation: Observation) {
        match observation {
            Observation::Truth { op, run, event } => {
                debug_assert!(
                    self.truth.last().is_none_or(|t| t.0 <= op),
                    "truth in op order"
                );
                self.truth.push((op, run, event));
            }
            Observation::Emitted { run, event } => {
                if self.emitted.len() <= run {
                    self.emitted.resize(run + 1, Vec::new());
                }
                self.emitted[run].push(event);
            }
            Observation::LeftOut(what) => self.left_out.hit(&what),
            Observation::Stuck(run) => self.stuck_runs.push(run),
            Observation::AllStopped { after_ms } => {
                debug_assert!(self.stopped_after_ms.is_none(), "the runs stop once");
                self.stopped_after_ms = Some(after_ms);
            }
            listed => self.push_listed(listed),
        }
    }

    /// (op, run index, event), in op order.
    pub fn truth(&self) -> &[(u64, usize, TruthEvent)] {
        &self.truth
    }
    /// Per run index: every event it handed its journal, in order.
    pub fn emitted(&self) -> &[Vec<EmittedEvent>] {
        &self.emitted
    }
    /// Every event run `run` handed its journal, in order (none for a run never played).
    pub fn emitted_by(&self, run: usize) -> &[EmittedEvent] {
        self.emitted.get(run).map_or(&[][..], Vec::as_slice)
    }
    pub fn written(&self) -> &[Written] {
        &self.written
    }
    /// Writes the two backends answered differently.
    pub fn write_disagreements(&self) -> &[WriteDisagreement] {
        &self.write_disagreements
    }
    /// The store calls of the journals' side (writes, and the reads a legacy writer makes)
    /// that a store answered with an error: R24 judges which the contract allows.
    pub fn write_errors(&self) -> &[WriteError] {
        &self.write_errors
    }
    /// Every row the `sqlite` store of the pair acknowledged, with its own seq (kept only in
    /// worlds that crash its host).
    pub fn durable_acked(&self) -> &[Written] {
        &self.durable_acked
    }
    /// The crashes of the store's host performed, in order.
    pub fn store_restarts(&self) -> &[StoreRestart] {
        &self.store_restarts
    }
    pub fn reads(&self) -> &[Read] {
        &self.reads
    }
    /// The views reads, in order, each with what both stores' `/history` and `/messages`
    /// answered.
    pub fn views_reads(&self) -> impl Iterator<Item = (&Read, &HistoryAnswers, &ViewAnswers)> {
        self.reads.iter().filter_map(|read| match &read.kind {
            ReadKind::Views {
                history, messages, ..
            } => Some((read, history, messages)),
            _ => None,
        })
    }
    pub fn ratings(&self) -> &[RatingRecord] {
        &self.ratings
    }
    pub fn summaries(&self) -> &[SummaryRecord] {
        &self.summaries
    }
    pub fn deletions(&self) -> &[DeletionRecord] {
        &self.deletions
    }
    pub fn receipts(&self) -> &[ReceiptRecord] {
        &self.receipts
    }
    /// Every call on the feedback store and its answer, in op order.
    pub fn feedback_log(&self) -> &[FeedbackEntry] {
        &self.feedback
    }
    pub fn thread_deletions(&self) -> &[ThreadDeletionRecord] {
        &self.thread_deletions
    }
    /// The deletions of threads through the API.
    pub fn everywhere_deletions(&self) -> &[EverywhereDeletionRecord] {
        &self.everywhere_deletions
    }
    /// The late writes of runs whose thread was deleted (R28).
    pub fn late_writes(&self) -> &[LateWriteRecord] {
        &self.late_writes
    }
    /// The table reads asked once the world ended, in the scenario's order.
    pub fn table_reads(&self) -> &[TableReadRecord] {
        &self.table_reads
    }
    /// What the checks did not ask of the system under test, counted.
    pub fn left_out(&self) -> &Coverage {
        &self.left_out
    }
    /// Runs (by index) that had not stopped within the liveness bound after the last op, when
    /// every crashed worker was back and every failing write had failed once.
    pub fn stuck_runs(&self) -> &[usize] {
        &self.stuck_runs
    }
    /// Simulated ms from the last op (every fault healed) until every run had stopped; `None`
    /// when some run never did (see `stuck_runs`) or the world broke down.
    pub fn stopped_after_ms(&self) -> Option<u64> {
        self.stopped_after_ms
    }
}

impl ObservationLog {
    /// This log with every observation passed through `edit`, kind by kind (the liveness
    /// observations and what was left out are kept as they are): for tests that stand for a
    /// store that answered otherwise.
    pub fn edited(mut self, mut edit: impl FnMut(&mut Observation)) -> ObservationLog {
        let mut out = ObservationLog {
            left_out: std::mem::take(&mut self.left_out),
            stuck_runs: std::mem::take(&mut self.stuck_runs),
            stopped_after_ms: self.stopped_after_ms,
            ..ObservationLog::new(self.emitted.len())
        };
        let truth = std::mem::take(&mut self.truth)
            .into_iter()
            .map(|(op, run, event)| Observation::Truth { op, run, event });
        let emitted = (std::mem::take(&mut self.emitted).into_iter().enumerate())
            .flat_map(|(run, events)| events.into_iter().map(move |event| (run, event)))
            .map(|(run, event)| Observation::Emitted { run, event });
        for mut o in truth.chain(emitted).chain(self.into_listed()) {
            edit(&mut o);
            out.push(o);
        }
        out
    }
}

/// The kinds kept each in a list of its own, as they come: `variant => field`. `push` files
/// them and `edited` replays them from this one table, kind by kind in its order.
macro_rules! listed_kinds {
    ($($variant:ident => $field:ident),+ $(,)?) => {
        impl ObservationLog {
            /// Files an observation of a listed kind (`push` files every other kind itself).
            fn push_listed(&mut self, observation: Observation) {
                match observation {
                    $(Observation::$variant(o) => self.$field.push(o),)+
                    other => unreachable!("not a listed kind: {other:?}"),
                }
            }

            /// Every observation of the listed kinds, kind by kind in the table's order.
            fn into_listed(self) -> impl Iterator<Item = Observation> {
                std::iter::empty()
                    $(.chain(self.$field.into_iter().map(Observation::$variant)))+
            }
        }
    };
}

listed_kinds! {
    Written => written,
    WriteDisagreement => write_disagreements,
    WriteError => write_errors,
    DurableAcked => durable_acked,
    StoreRestart => store_restarts,
    Read => reads,
    Rating => ratings,
    Summary => summaries,
    Deletion => deletions,
    Receipt => receipts,
    Feedback => feedback,
    ThreadDeletion => thread_deletions,
    EverywhereDeletion => everywhere_deletions,
    LateWrite => late_writes,
    TableRead => table_reads,
}

impl Extend<Observation> for ObservationLog {
    fn extend<I: IntoIterator<Item = Observation>>(&mut self, observations: I) {
        for o in observations {
            self.push(o);
        }
    }
}
