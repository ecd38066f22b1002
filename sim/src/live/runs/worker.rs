//! The hidden `histsim live-runs-worker`: one worker process of a live runs run. It plays each
//! run dispatched to it (a `run N` line on stdin) through history's real [`RunJournal`] and its
//! callbacks, as the runs world's workers do (the same script, nested invocations, subagent
//! tasks, model calls and stops), into the one SQLite file every worker shares (WAL, a busy
//! timeout), and reports every step on stdout ([`WorkerLine`]) before it takes it.
//!
//! Each run plays in a task of its own, so two runs of one worker are concurrent writers as in
//! the simulation; the other workers are concurrent writers in other processes. What the world
//! keeps in its shared state, the thread's checkpoint, is this process's own here: a run sees
//! the checkpoints of the runs this process played since it started.

use super::line::{outcome_word, say, WireEvent, WorkerLine};
use super::store_tap::LiveTap;
use crate::live::line::wall_us;
use crate::runs::play::journal_calls::{close, delegate, lifecycle, nested_step, record};
use crate::runs::play::journal_calls::{hear_itself, take_turn, Callback, RunSide};
use crate::runs::scenario::RunsScenario;
use crate::runs::script::{emitted_count, expand, Emission};
use history::runs::{
    Category, Checkpointer, JournalEntry, JournalError, MessageKind as Shape, RunJournal,
    RunJournalOptions, RunStoreError, RUN_START,
};
use history::Planted;
use model::runs::RunOutcome;
use serde_json::json;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// How a worker process is started.
pub struct WorkerSetup {
    pub index: u8,
    /// The live scenario, as JSON.
    pub scenario: PathBuf,
    /// The shared store: the SQLite file or the JSONL store's directory.
    pub store: PathBuf,
    pub store_kind: crate::workload::StoreKind,
    pub planted: Planted,
    /// Wall microseconds one scenario millisecond takes.
    pub us_per_ms: f64,
    /// Wall microseconds before each message of a run, beside its scripted delay: a run's
    /// messages then span the run's window, so kills, pauses and reads land inside runs.
    pub message_gap_us: u64,
}

fn now_ns() -> i64 {
    (wall_us() as i64) * 1000
}

/// What every run of this process shares.
struct Worker {
    scenario: RunsScenario,
    tap: LiveTap,
    checkpointer: Checkpointer,
    planted: Planted,
    us_per_ms: f64,
    message_gap_us: u64,
    index: u8,
}

type Journal<'a> = RunJournal<&'a LiveTap>;

/// Serves dispatches until stdin closes, then lets the runs under way finish.
pub fn serve(setup: WorkerSetup) -> Result<(), String> {
    // The worker dies with `histsim live` itself, SIGKILL included.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    let text = std::fs::read_to_string(&setup.scenario)
        .map_err(|e| format!("{}: {e}", setup.scenario.display()))?;
    let scenario: RunsScenario =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", setup.scenario.display()))?;
    let store = super::store_tap::open_store(setup.store_kind, &setup.store, setup.planted)?;
    let worker = Rc::new(Worker {
        tap: LiveTap {
            store,
            run_ids: scenario.runs.iter().map(|r| r.id.clone()).collect(),
        },
        scenario,
        checkpointer: Checkpointer::new(),
        planted: setup.planted,
        us_per_ms: setup.us_per_ms,
        message_gap_us: setup.message_gap_us,
        index: setup.index,
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        say(&WorkerLine::Ready { at_us: wall_us() });
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        let mut playing = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            let run = line
                .strip_prefix("run ")
                .and_then(|n| n.trim().parse().ok());
            match run {
                Some(run) if run < worker.scenario.runs.len() => {
                    playing.push(tokio::task::spawn_local(play_run(worker.clone(), run)));
                }
                _ => eprintln!("worker-{}: not a dispatch: {line}", worker.index),
            }
        }
        for task in playing {
            let _ = task.await;
        }
    });
    Ok(())
}

impl Worker {
    /// The wait before a message scripted `ms` scenario milliseconds after the previous event.
    async fn before_message(&self, ms: u32) {
        let us = (f64::from(ms) * self.us_per_ms) as u64 + self.message_gap_us;
        if us > 0 {
            tokio::time::sleep(Duration::from_micros(us)).await;
        }
    }
}

impl RunSide for Worker {
    type Store = LiveTap;

    fn scenario(&self) -> &RunsScenario {
        &self.scenario
    }

    fn now_ns(&self) -> i64 {
        now_ns()
    }

    fn emitted(&self, run: usize, entry: &JournalEntry, message: Option<(usize, &Emission)>) {
        emitted(run, entry, message.map(|(i, _)| i));
    }

    fn flush_failed(&self, run: usize, error: &dyn std::fmt::Display) {
        eprintln!("{} flush failed: {error}", self.scenario.runs[run].id);
    }

    async fn hear(
        &self,
        journal: &mut RunJournal<&LiveTap>,
        _run: usize,
        callback: Callback<'_>,
        at_ns: i64,
    ) -> Result<(), JournalError> {
        hear_itself(journal, callback, at_ns).await
    }

    /// Retries a failed final flush a few times (a busy store).
    async fn finish(
        &self,
        journal: &mut RunJournal<&LiveTap>,
        _run: usize,
        first: Result<(), RunStoreError>,
    ) {
        let mut result = first;
        for _ in 0..3 {
            if result.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            result = journal.flush().await.map(|_| ());
        }
    }
}

fn emitted(run: usize, entry: &JournalEntry, emission: Option<usize>) {
    say(&WorkerLine::Emit {
        run,
        at_us: wall_us(),
        event: WireEvent {
            event_type: entry.event_type.clone(),
            category: entry.category,
            content: serde_json::Value::clone(&entry.content),
            metadata: entry.metadata.clone(),
            created_at_ns: entry.created_at_ns,
        },
        emission,
    });
}

async fn play_run(worker: Rc<Worker>, run: usize) {
    let w = &*worker;
    let spec = &w.scenario.runs[run];
    let emissions = expand(spec);
    let thread_id = w
        .scenario
        .threads
        .get(&spec.thread)
        .cloned()
        .unwrap_or_default();
    say(&WorkerLine::Start {
        run,
        at_us: wall_us(),
    });
    let mut journal = RunJournal::new(
        &w.tap,
        thread_id.clone(),
        spec.id.clone(),
        spec.user.clone(),
        RunJournalOptions {
            flush_threshold_events: w.scenario.flush_threshold_events,
            max_trace_content_bytes: w.scenario.max_trace_content_bytes,
            planted: w.planted,
        },
    );
    let mut state = w.checkpointer.latest(&thread_id).unwrap_or_default();
    let root = crate::runs::nested::root(spec);
    let content = json!({ "worker": w.index });
    let start = JournalEntry::other(Category::Lifecycle, RUN_START, content.clone(), now_ns());
    lifecycle(
        w,
        &mut journal,
        run,
        Some(start),
        Callback::ChainStart(&root, content),
    )
    .await;
    let count = emitted_count(spec, emissions.len());
    let (mut turn, mut ai) = (0, 0);
    for (i, e) in emissions[..count].iter().enumerate() {
        nested_step(w, &mut journal, run, i as u32, true).await;
        delegate(w, &mut journal, run, i).await;
        w.before_message(e.after_ms).await;
        if !e.by_middleware() {
            state.messages.push(e.message.clone());
        }
        if e.message.kind == Shape::Human {
            take_turn(w, &mut journal, run, (i, e), &state.messages, turn).await;
            turn += 1;
        } else {
            emit_message(w, &mut journal, run, (i, e), ai).await;
            ai += usize::from(e.message.kind == Shape::Ai);
        }
    }
    let all = count == emissions.len();
    nested_step(w, &mut journal, run, count as u32, all).await;
    delegate(w, &mut journal, run, count).await;
    // A scripted kill drops the journal unflushed.
    let outcome = (close(w, &mut journal, run, count as u32).await).unwrap_or(RunOutcome::Killed);
    if outcome != RunOutcome::Killed {
        w.checkpointer.put(&thread_id, state);
    }
    say(&WorkerLine::Stop {
        run,
        at_us: wall_us(),
        outcome: outcome_word(outcome).into(),
    });
}

/// One scripted message that is not a user's turn; an AI message is followed by its
/// `llm_response` trace.
async fn emit_message(
    w: &Worker,
    journal: &mut Journal<'_>,
    run: usize,
    (i, e): (usize, &Emission),
    ai: usize,
) {
    let mut entry = JournalEntry::message(&e.message, now_ns());
    if let Some(caller) = &e.caller {
        entry.metadata = json!({ "caller": caller });
    }
    record(w, journal, run, entry, Some((i, e))).await;
    if e.message.kind == Shape::Ai {
        let content = llm_response(w, run, ai, e.message.id.as_deref());
        let trace = JournalEntry::other(Category::Trace, "llm_response", content, now_ns());
        record(w, journal, run, trace, None).await;
    }
}

/// The `llm_response` content of the run's AI message `ai` (from 0): the scenario's long
/// output where it asks for one.
fn llm_response(w: &Worker, run: usize, ai: usize, message_id: Option<&str>) -> serde_json::Value {
    let spec = &w.scenario.runs[run];
    let long = (w.scenario.long_traces.iter()).find(|l| l.run == spec.id && l.ai as usize == ai);
    match long {
        Some(l) => crate::runs::long_traces::content(message_id, l.ai, l.bytes),
        None => json!({ "message": message_id }),
    }
}
