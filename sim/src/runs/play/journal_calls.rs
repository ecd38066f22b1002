//! A run's journal callbacks as its worker makes them, for the simulated world's workers and
//! live mode's worker processes alike (`histsim live --workload runs`): the root invocation's
//! and the nested invocations' chain callbacks, the subagent tasks due, the model calls
//! answering a user's turn, and the run's stop. What differs between the two is a
//! [`RunSide`]: where ground truth goes, what a failed flush does, the clock.

use crate::runs::scenario::{RunsScenario, Stop};
use crate::runs::script::Emission;
use history::runs::{
    Category, ChatMessage, Invocation, JournalEntry, JournalError, ModelCall, RunEventStore,
    RunJournal, RunStoreError, RUN_END, RUN_ERROR,
};
use model::runs::RunOutcome;
use serde_json::json;
use std::future::Future;

/// Where a worker's run journals write and report.
pub(crate) trait RunSide {
    /// The store the journals write through.
    type Store: RunEventStore;
    fn scenario(&self) -> &RunsScenario;
    /// The time a journal entry is stamped with.
    fn now_ns(&self) -> i64;
    /// `entry`, about to reach the journal, as ground truth; `message` is the script's emission
    /// it is, with its index among the run's.
    fn emitted(&self, run: usize, entry: &JournalEntry, message: Option<(usize, &Emission)>);
    /// A journal call whose flush the store refused (the journal keeps the rows).
    fn flush_failed(&self, run: usize, error: &dyn std::fmt::Display);
    /// Hands the journal one callback: to its own methods ([`hear_itself`]), or, in the
    /// simulated world with a system hosting the journal, to the system's
    /// (`super::journal_host`).
    fn hear(
        &self,
        journal: &mut RunJournal<&Self::Store>,
        run: usize,
        callback: Callback<'_>,
        at_ns: i64,
    ) -> impl Future<Output = Result<(), JournalError>>;
    /// Retries a failed final flush as the worker does.
    fn finish(
        &self,
        journal: &mut RunJournal<&Self::Store>,
        run: usize,
        first: Result<(), RunStoreError>,
    ) -> impl Future<Output = ()>;
}

/// Hands one event to the journal, reported as ground truth first.
pub(crate) async fn record<S: RunSide>(
    side: &S,
    journal: &mut RunJournal<&S::Store>,
    run: usize,
    entry: JournalEntry,
    message: Option<(usize, &Emission)>,
) {
    side.emitted(run, &entry, message);
    if let Err(e) = journal.record(entry).await {
        side.flush_failed(run, &e);
    }
}

/// Journals the run's subagent tasks due before its message `at` (`crate::runs::tasks`).
pub(crate) async fn delegate<S: RunSide>(
    side: &S,
    journal: &mut RunJournal<&S::Store>,
    run: usize,
    at: usize,
) {
    let spec = &side.scenario().runs[run];
    for task in crate::runs::tasks::due(&spec.tasks, at) {
        for entry in crate::runs::tasks::entries(task, side.now_ns()) {
            record(side, journal, run, entry, None).await;
        }
    }
}

/// The user's turn `e` (message `i`, turn `turn` from 0) arrives: it is ground truth as sent;
/// the journal hears the model calls answering it ([`crate::runs::model_input::model_calls`])
/// and records the turn from them.
pub(crate) async fn take_turn<S: RunSide>(
    side: &S,
    journal: &mut RunJournal<&S::Store>,
    run: usize,
    (i, e): (usize, &Emission),
    state: &[ChatMessage],
    turn: usize,
) {
    let entry = JournalEntry::message(&e.message, side.now_ns());
    side.emitted(run, &entry, Some((i, e)));
    let spec = &side.scenario().runs[run];
    for call in crate::runs::model_input::model_calls(spec, turn, state) {
        let heard = Callback::ModelStart(&call);
        if let Err(err) = side.hear(journal, run, heard, entry.created_at_ns).await {
            side.flush_failed(run, &err);
        }
    }
}

/// One callback of a run's journal: an invocation's ([`crate::runs::nested`]) start, end or
/// failure, or a model call's start.
pub(crate) enum Callback<'a> {
    ChainStart(&'a Invocation, serde_json::Value),
    ModelStart(&'a ModelCall),
    ChainEnd(&'a Invocation),
    ChainError(&'a Invocation, &'a str),
}

/// Hands `journal` the callback at `at_ns` through its own methods.
pub(crate) async fn hear_itself<S: RunEventStore>(
    journal: &mut RunJournal<&S>,
    callback: Callback<'_>,
    at_ns: i64,
) -> Result<(), JournalError> {
    match callback {
        Callback::ChainStart(i, content) => journal.on_chain_start(i, content, at_ns).await,
        Callback::ModelStart(call) => journal.on_model_start(call, at_ns).await,
        Callback::ChainEnd(i) => journal.on_chain_end(i, at_ns).await,
        Callback::ChainError(i, error) => journal.on_chain_error(i, error, at_ns).await,
    }
}

/// Hands the journal one invocation callback; `truth` is the lifecycle entry it must write
/// (the root's), reported as ground truth first.
pub(crate) async fn lifecycle<S: RunSide>(
    side: &S,
    journal: &mut RunJournal<&S::Store>,
    run: usize,
    truth: Option<JournalEntry>,
    call: Callback<'_>,
) {
    let at_ns = truth
        .as_ref()
        .map_or_else(|| side.now_ns(), |e| e.created_at_ns);
    if let Some(entry) = &truth {
        side.emitted(run, entry, None);
    }
    if let Err(e) = side.hear(journal, run, call, at_ns).await {
        side.flush_failed(run, &e);
    }
}

/// Ends the nested invocations due before message `at`, then (when `start`) starts those due
/// there.
pub(crate) async fn nested_step<S: RunSide>(
    side: &S,
    journal: &mut RunJournal<&S::Store>,
    run: usize,
    at: u32,
    start: bool,
) {
    let spec = &side.scenario().runs[run];
    if spec.nested.is_empty() {
        return;
    }
    let (ending, starting) = crate::runs::nested::due(spec, at);
    for k in ending {
        let invocation = crate::runs::nested::invocation(spec, k);
        lifecycle(side, journal, run, None, Callback::ChainEnd(&invocation)).await;
    }
    for k in starting.into_iter().filter(|_| start) {
        let invocation = crate::runs::nested::invocation(spec, k);
        let call = Callback::ChainStart(&invocation, json!({}));
        lifecycle(side, journal, run, None, call).await;
        if spec.nested[k].messages == 0 {
            lifecycle(side, journal, run, None, Callback::ChainEnd(&invocation)).await;
        }
    }
}

/// The nested invocations still open when the run stops after `count` messages fail with it.
async fn fail_open<S: RunSide>(
    side: &S,
    journal: &mut RunJournal<&S::Store>,
    run: usize,
    count: u32,
    error: &str,
) {
    let spec = &side.scenario().runs[run];
    for k in crate::runs::nested::open_at(spec, count) {
        let invocation = crate::runs::nested::invocation(spec, k);
        lifecycle(
            side,
            journal,
            run,
            None,
            Callback::ChainError(&invocation, error),
        )
        .await;
    }
}

/// Stops the run as its script says, after `count` messages, and returns how it stopped;
/// `None` for a kill, which the caller performs by dropping the journal unflushed.
pub(crate) async fn close<S: RunSide>(
    side: &S,
    journal: &mut RunJournal<&S::Store>,
    run: usize,
    count: u32,
) -> Option<RunOutcome> {
    let spec = &side.scenario().runs[run];
    let root = crate::runs::nested::root(spec);
    let outcome = match spec.stop {
        Stop::Kill { .. } => return None,
        Stop::End => {
            let end = JournalEntry::other(Category::Lifecycle, RUN_END, json!({}), side.now_ns());
            lifecycle(side, journal, run, Some(end), Callback::ChainEnd(&root)).await;
            let first = journal.end().await;
            side.finish(journal, run, first).await;
            RunOutcome::Ended
        }
        Stop::Error { .. } => {
            let error = "model call failed";
            fail_open(side, journal, run, count, error).await;
            let content = json!({ "error": error });
            let entry = JournalEntry::other(Category::Lifecycle, RUN_ERROR, content, side.now_ns());
            let call = Callback::ChainError(&root, error);
            lifecycle(side, journal, run, Some(entry), call).await;
            let first = journal.error().await;
            side.finish(journal, run, first).await;
            RunOutcome::Errored
        }
        Stop::Cancel { .. } => {
            fail_open(side, journal, run, count, "cancelled").await;
            let first = journal.cancel().await;
            side.finish(journal, run, first).await;
            RunOutcome::Cancelled
        }
    };
    Some(outcome)
}
