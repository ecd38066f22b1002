//! The worker hosts: each accepts run dispatches and plays each run in a task of its own.

use super::journal_calls::{close, delegate, lifecycle, nested_step, record, take_turn};
use super::journal_calls::{Callback, RunSide};
use super::state::*;
use super::tap::*;
use crate::runs::observations::Observation;
use crate::runs::record::*;
use crate::runs::scenario::RunsScenario;
use crate::runs::script::{emitted_count, Emission};
use history::runs::{
    Category, Checkpoint, JournalEntry, JournalError, MessageKind as Shape, RunJournal,
    RunJournalOptions, RunStoreError, SummarizationMiddleware, SummarizationOptions, RUN_START,
};
use model::runs::RunOutcome;
use serde_json::json;
use std::rc::Rc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

pub(in crate::runs) async fn worker_host(
    w: u8,
    world: Rc<World>,
    store: Rc<JournalStore>,
) -> turmoil::Result {
    let listener = TcpListener::bind(any_addr(WORKER_PORT)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let world = world.clone();
        let store = store.clone();
        tokio::task::spawn_local(async move {
            let _ = serve_dispatch(w, stream, world, store).await;
        });
    }
}

pub(in crate::runs) async fn serve_dispatch(
    w: u8,
    mut stream: TcpStream,
    world: Rc<World>,
    store: Rc<JournalStore>,
) -> std::io::Result<()> {
    let mut buf = [0u8; 4];
    stream.read_exact(&mut buf).await?;
    let run = u32::from_be_bytes(buf) as usize;
    if run >= world.scenario.runs.len() || world.progress.borrow().started(run) {
        return Ok(());
    }
    world.start_run(run, w);
    tokio::task::spawn_local(play_run(run, w, world.clone(), store));
    stream.write_all(&[1]).await
}

impl RunSide for World {
    type Store = JournalStore;

    fn scenario(&self) -> &RunsScenario {
        &self.scenario
    }

    fn now_ns(&self) -> i64 {
        now_ns()
    }

    fn emitted(&self, run: usize, entry: &JournalEntry, message: Option<(usize, &Emission)>) {
        self.emit(run, entry, message.map(|(_, e)| e));
    }

    fn flush_failed(&self, run: usize, error: &dyn std::fmt::Display) {
        self.record(format_args!(
            "{} flush failed: {error}",
            self.scenario.runs[run].id
        ));
    }

    async fn hear(
        &self,
        journal: &mut RunJournal<&JournalStore>,
        run: usize,
        callback: Callback<'_>,
        at_ns: i64,
    ) -> Result<(), JournalError> {
        super::journal_host::hear(self, journal, run, callback, at_ns).await
    }

    /// Retries a failed final flush until the store accepts it (every failing call fails once).
    async fn finish(
        &self,
        journal: &mut RunJournal<&JournalStore>,
        run: usize,
        first: Result<(), RunStoreError>,
    ) {
        let mut result = first;
        let mut attempts = 0;
        while let Err(e) = &result {
            self.record(format_args!(
                "{} final flush failed: {e}",
                self.scenario.runs[run].id
            ));
            attempts += 1;
            if attempts > self.scenario.failing_write_calls.len() + 1 {
                break;
            }
            sleep_ms(1).await;
            result = journal.flush().await.map(|_| ());
        }
    }
}

pub(in crate::runs) async fn play_run(
    run: usize,
    w: u8,
    world: Rc<World>,
    store: Rc<JournalStore>,
) {
    let spec = world.scenario.runs[run].clone();
    let emissions = world.scripts.run(run).to_vec();
    let thread_id = world.thread_id(&spec.thread);
    let mut journal = RunJournal::new(
        &*store,
        thread_id.clone(),
        spec.id.clone(),
        spec.user.clone(),
        RunJournalOptions {
            flush_threshold_events: world.scenario.flush_threshold_events,
            max_trace_content_bytes: world.scenario.max_trace_content_bytes,
            planted: world.planted,
        },
    );
    let middleware = spec.summarize.map(|s| {
        SummarizationMiddleware::new(SummarizationOptions {
            budget_tokens: s.budget_tokens,
            keep_messages: s.keep_messages,
            keep_current_request: true,
            planted: world.planted,
        })
    });
    let mut state = world.checkpointer.latest(&thread_id).unwrap_or_default();
    let root = crate::runs::nested::root(&spec);
    let content = json!({ "worker": w });
    let start = JournalEntry::other(Category::Lifecycle, RUN_START, content.clone(), now_ns());
    let call = Callback::ChainStart(&root, content);
    lifecycle(&*world, &mut journal, run, Some(start), call).await;
    let count = emitted_count(&spec, emissions.len());
    let mut turn = 0;
    for (i, e) in emissions[..count].iter().enumerate() {
        nested_step(&*world, &mut journal, run, i as u32, true).await;
        delegate(&*world, &mut journal, run, i).await;
        if e.after_ms > 0 {
            sleep_ms(u64::from(e.after_ms)).await;
        }
        if e.message.kind == Shape::Ai && !e.by_middleware() {
            // The middleware runs before each model call of the agent, as LangChain's does (a
            // middleware's own call, a title's, is not one: it does not summarize before it).
            if let Some(m) = &middleware {
                summarize(&world, &mut journal, run, m, &mut state).await;
            }
        }
        emit_message(&world, &mut journal, run, (i, e), &mut state, turn).await;
        if e.message.kind == Shape::Human {
            turn += 1;
        }
    }
    let all = count == emissions.len();
    nested_step(&*world, &mut journal, run, count as u32, all).await;
    delegate(&*world, &mut journal, run, count).await;
    let Some(outcome) = close(&*world, &mut journal, run, count as u32).await else {
        // The worker process dies: the buffer goes with it.
        drop(journal);
        world.stop_run(run, RunOutcome::Killed, now_us());
        return;
    };
    world.checkpointer.put(&thread_id, state);
    world.stop_run(run, outcome, now_us());
}

/// Lets the middleware summarize the thread's state; when it does, checkpoints the summary and
/// journals a note of it.
async fn summarize(
    world: &World,
    journal: &mut RunJournal<&JournalStore>,
    run: usize,
    middleware: &SummarizationMiddleware,
    state: &mut Checkpoint,
) {
    let Some(summarized) = middleware.apply(state) else {
        return;
    };
    let spec = &world.scenario.runs[run];
    let before = std::mem::replace(state, summarized).messages;
    world
        .checkpointer
        .put(&world.thread_id(&spec.thread), state.clone());
    let op = world.next_op();
    world.observe(Observation::Summary(SummaryRecord {
        op,
        at_us: super::state::now_us(),
        run,
        before,
        messages: state.messages.clone(),
    }));
    let kept = state.messages.len();
    world.record(format_args!("{} summarized, {kept} kept", spec.id));
    let note = JournalEntry::other(
        Category::Trace,
        "summarization",
        json!({ "kept": kept }),
        now_ns(),
    );
    record(world, journal, run, note, None).await;
}

/// Adds one scripted message to the state and the journal; an AI message is followed by its
/// `llm_response` trace event. A middleware's own AI message (a title) is journaled with its
/// caller, as DeerFlow's journal records every model call, but never enters the agent's state.
/// A user's turn (`turn`, from 0) reaches the journal through the model calls answering it.
async fn emit_message(
    world: &World,
    journal: &mut RunJournal<&JournalStore>,
    run: usize,
    (i, e): (usize, &Emission),
    state: &mut Checkpoint,
    turn: usize,
) {
    if !e.by_middleware() {
        state.messages.push(e.message.clone());
    }
    if e.message.kind == Shape::Human {
        return take_turn(world, journal, run, (i, e), &state.messages, turn).await;
    }
    let mut entry = JournalEntry::message(&e.message, now_ns());
    if let Some(caller) = &e.caller {
        entry.metadata = json!({ "caller": caller });
    }
    record(world, journal, run, entry, Some((i, e))).await;
    if e.message.kind == Shape::Ai {
        let content = llm_response(world, run, e.message.id.as_deref());
        let trace = JournalEntry::other(Category::Trace, "llm_response", content, now_ns());
        record(world, journal, run, trace, None).await;
    }
}

/// The `llm_response` trace content of the run's next AI message: its id, or the model's long
/// output where the scenario asks for one ([`crate::runs::long_traces`]).
fn llm_response(world: &World, run: usize, message_id: Option<&str>) -> serde_json::Value {
    let ai = world.log.borrow().emitted().get(run).map_or(0, |events| {
        events
            .iter()
            .filter(|e| e.event_type == "llm_response")
            .count()
    });
    let spec = &world.scenario.runs[run];
    let long = world
        .scenario
        .long_traces
        .iter()
        .find(|l| l.run == spec.id && l.ai as usize == ai);
    match long {
        Some(l) => crate::runs::long_traces::content(message_id, l.ai, l.bytes),
        None => json!({ "message": message_id }),
    }
}
