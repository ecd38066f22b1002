//! The simulated deployment on turmoil: worker hosts running lead-agent runs through
//! [`RunJournal`]s into the shared run-event store, and the client that dispatches runs, reads the
//! views, pages through messages and rates answers.
//!
//! Hosts: `worker-0..N` (each accepts run dispatches and plays each run in a task of its own, so
//! two runs of one thread on one worker are concurrent writers); the client is turmoil's client
//! and ends the run. The "database" is outside the hosts, as a database server would be: BOTH
//! backends, a [`MemoryRunEventStore`] and a [`SqliteRunEventStore`], receive every write (through
//! a tap that also records what was written and the seqs assigned), and every read is issued to
//! both, so the checkers can compare their answers (R9). The backend the client renders from and
//! rates through is the config's `store`. Failing batch writes are injected by a
//! [`FaultyRunStore`] in front of the tap; hard kills are the scenario's `kill` stops (the journal
//! dropped unflushed) and worker crashes, which the driving loop performs with `sim.crash`.
//!
//! The world records, beside the trace, what the checkers need and a client could not know: the
//! ground truth (every run's start, every event it emitted, how it stopped, in one order with the
//! store operations), every accepted write, every answer of both backends, every rating with the
//! answer of a freshly refreshed mapper beside the client's, every summarized checkpoint, and
//! both stores' contents at the end.

use super::scenario::{Op, RunsScenario, Stop, Target};
use super::script::{emitted_count, expand, Emission};
use crate::display::{StoreKind, WorldConfig};
use crate::trace::Trace;
use history::runs::{
    content_text, thread_history, thread_messages, Category, ChatMessage, Checkpointer,
    FaultSchedule, FaultyRunStore, Feedback, FeedbackInput, FeedbackMapper, FeedbackStore,
    JournalEntry, MemoryRunEventStore, MessageCursor, MessageKind as Shape, MessageView,
    NewRunEvent, Rating as Thumb, RunEvent, RunEventStore, RunJournal, RunJournalOptions,
    RunStoreError, SqliteRunEventStore, SummarizationMiddleware, SummarizationOptions,
    ThreadHistory, ViewOptions, RUN_END, RUN_ERROR, RUN_START,
};
use history::Planted;
use model::runs::{MessageKind, RunOutcome};
use serde::Serialize;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};
use std::ops::Range;
use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

const WORKER_PORT: u16 = 7100;
/// Seconds since the Unix epoch at simulated time zero: created_at values are deterministic.
const EPOCH_SECS: u64 = 1_700_000_000;
/// Upper bound on simulated time: a world that has not finished by then is broken.
const SIMULATION_SECS: u64 = 300;
/// How long the client waits for a worker to acknowledge a dispatch.
const DISPATCH_TIMEOUT_MS: u64 = 200;
/// A paginated read gives up after this many pages (a store whose cursor never ends).
const PAGES_MAX: usize = 100_000;

/// What each backend answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Both<T> {
    pub memory: T,
    pub sqlite: T,
}

impl<T> Both<T> {
    /// The answer of the backend the client uses.
    pub fn primary(&self, kind: StoreKind) -> &T {
        match kind {
            StoreKind::Memory => &self.memory,
            StoreKind::Sqlite => &self.sqlite,
        }
    }
}

/// An answer, or the error it failed with.
pub type Answer<T> = Result<T, String>;

/// One read of the client.
#[derive(Clone, Debug)]
pub struct Read {
    /// Position in the world's total order of operations (truth events, writes, reads).
    pub op: u64,
    pub at_us: u64,
    /// Thread key.
    pub thread: String,
    pub kind: ReadKind,
}

#[derive(Clone, Debug)]
pub enum ReadKind {
    /// `/history`, `/messages` and `count_messages`, in one instant.
    Views {
        count: Both<Answer<u64>>,
        history: Both<Answer<Option<ThreadHistory>>>,
        messages: Both<Answer<Vec<MessageView>>>,
    },
    /// One raw page.
    Page {
        limit: usize,
        cursor: MessageCursor,
        rows: Both<Answer<Vec<RunEvent>>>,
    },
    /// Every message by paging (the client's own loop over the store's cursors), and the count.
    Paginate {
        limit: usize,
        backward: bool,
        count: Both<Answer<u64>>,
        rows: Both<Answer<Vec<RunEvent>>>,
    },
    /// `list_events` of one run (by index).
    Events {
        run: usize,
        rows: Both<Answer<Vec<RunEvent>>>,
    },
}

/// One rating the client made.
#[derive(Clone, Debug)]
pub struct RatingRecord {
    pub op: u64,
    /// Thread key.
    pub thread: String,
    pub user: String,
    pub up: bool,
    /// The rated message's text (unique on its thread).
    pub text: String,
    /// Where the client got the rated message from.
    pub source: RatedFrom,
    /// The run the client's mapper chose (the rating went there; `None`: it was dropped).
    pub client: Option<String>,
    /// The run a mapper refreshed at this instant chooses.
    pub fresh: Option<String>,
}

/// Where a rendered message came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RatedFrom {
    /// A view of the event store: it carries its run_id.
    View,
    /// The live stream of a run the client saw end: no run_id yet, an id the mapper must know
    /// once it refreshed at that run's end.
    Stream,
    /// The checkpoint, which /history falls back to while the store has no message of the
    /// thread: no run_id, and the mapper may not know it.
    Checkpoint,
}

/// A checkpoint the summarization middleware produced.
#[derive(Clone, Debug)]
pub struct SummaryRecord {
    pub op: u64,
    pub run: usize,
    pub messages: Vec<ChatMessage>,
}

/// What happened to a run, in the world's order of operations.
#[derive(Clone, Debug, PartialEq)]
pub enum TruthEvent {
    Start,
    Message { kind: MessageKind, text: String },
    Stop(RunOutcome),
}

/// One event a run handed its journal.
#[derive(Clone, Debug, PartialEq)]
pub struct EmittedEvent {
    pub event_type: String,
    pub category: Category,
    pub content: Value,
    pub created_at_ns: i64,
}

/// One row the primary store accepted, with its seq, and when.
#[derive(Clone, Debug)]
pub struct Written {
    pub op: u64,
    pub event: RunEvent,
}

/// What a played world leaves for the checkers.
pub struct WorldRecord {
    /// (op, run index, event), in op order.
    pub truth: Vec<(u64, usize, TruthEvent)>,
    /// Per run index: every event it handed its journal, in order.
    pub emitted: Vec<Vec<EmittedEvent>>,
    pub written: Vec<Written>,
    /// Writes the two backends answered differently.
    pub write_disagreements: Vec<String>,
    pub reads: Vec<Read>,
    pub ratings: Vec<RatingRecord>,
    pub summaries: Vec<SummaryRecord>,
    /// The feedback store at the end, every thread.
    pub feedback: Vec<Feedback>,
    /// Both stores' rows at the end.
    pub dumps: Both<Answer<Vec<RunEvent>>>,
    pub trace: Trace,
    /// Set when the world did not finish (a hang, a host error).
    pub failure: Option<String>,
    pub sim_elapsed_ms: u64,
    /// Runs (by index) that had not stopped within the liveness bound after the last op, when
    /// every crashed worker was back and every failing write had failed once.
    pub stuck_runs: Vec<usize>,
    /// Simulated ms from the last op (every fault healed) until every run had stopped; `None`
    /// when some run never did (see `stuck_runs`) or the world broke down.
    pub stopped_after_ms: Option<u64>,
}

#[derive(Default)]
struct Log {
    truth: Vec<(u64, usize, TruthEvent)>,
    emitted: Vec<Vec<EmittedEvent>>,
    written: Vec<Written>,
    write_disagreements: Vec<String>,
    reads: Vec<Read>,
    ratings: Vec<RatingRecord>,
    summaries: Vec<SummaryRecord>,
}

struct World {
    scenario: RunsScenario,
    expanded: Vec<Vec<Emission>>,
    primary: StoreKind,
    planted: Planted,
    memory: MemoryRunEventStore,
    sqlite: SqliteRunEventStore,
    checkpointer: Checkpointer,
    feedback: FeedbackStore,
    trace: RefCell<Trace>,
    log: RefCell<Log>,
    next_op: Cell<u64>,
    /// Runs playing now, with their worker.
    running: RefCell<BTreeMap<usize, u8>>,
    started: RefCell<BTreeSet<usize>>,
    outcomes: RefCell<BTreeMap<usize, RunOutcome>>,
    /// Runs whose dispatch attempt is over (acknowledged or not).
    settled: RefCell<BTreeSet<usize>>,
    /// Per run: the message dumps the client saw streamed live.
    streamed: RefCell<BTreeMap<usize, Vec<Value>>>,
    /// Runs still playing when the liveness bound ran out after the last op.
    stuck: RefCell<Vec<usize>>,
    /// Set when every run had stopped after the last op: the simulated ms it took.
    stopped_after_ms: Cell<Option<u64>>,
}

fn now_us() -> u64 {
    turmoil::sim_elapsed()
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

fn now_ns() -> i64 {
    turmoil::since_epoch()
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

fn any_addr(port: u16) -> (IpAddr, u16) {
    (IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

fn text_of<T>(r: Result<T, RunStoreError>) -> Answer<T> {
    r.map_err(|e| e.to_string())
}

fn hash_of<T: Serialize>(a: &Answer<T>) -> u64 {
    match a {
        Ok(v) => xxhash_rust::xxh3::xxh3_64(&serde_json::to_vec(v).unwrap_or_default()),
        Err(e) => xxhash_rust::xxh3::xxh3_64(e.as_bytes()),
    }
}

impl World {
    fn next_op(&self) -> u64 {
        let op = self.next_op.get();
        self.next_op.set(op + 1);
        op
    }

    fn record(&self, event: std::fmt::Arguments<'_>) {
        self.trace.borrow_mut().record(now_us(), event);
    }

    fn record_at(&self, at_us: u64, event: std::fmt::Arguments<'_>) {
        self.trace.borrow_mut().record(at_us, event);
    }

    fn store(&self, kind: StoreKind) -> &dyn RunEventStore {
        match kind {
            StoreKind::Memory => &self.memory,
            StoreKind::Sqlite => &self.sqlite,
        }
    }

    fn both<T>(
        &self,
        f: impl Fn(&dyn RunEventStore) -> Result<T, RunStoreError>,
    ) -> Both<Answer<T>> {
        Both {
            memory: text_of(f(&self.memory)),
            sqlite: text_of(f(&self.sqlite)),
        }
    }

    fn thread_id(&self, key: &str) -> String {
        self.scenario.threads.get(key).cloned().unwrap_or_default()
    }

    fn view_options(&self) -> ViewOptions {
        ViewOptions {
            page_size_events: self.scenario.page_size_events,
            planted: self.planted,
        }
    }

    fn truth(&self, run: usize, event: TruthEvent) {
        let op = self.next_op();
        self.log.borrow_mut().truth.push((op, run, event));
    }

    fn start_run(&self, run: usize, worker: u8) {
        self.started.borrow_mut().insert(run);
        self.running.borrow_mut().insert(run, worker);
        self.truth(run, TruthEvent::Start);
        self.record(format_args!(
            "worker-{worker} start {}",
            self.scenario.runs[run].id
        ));
    }

    fn stop_run(&self, run: usize, outcome: RunOutcome, at_us: u64) {
        if self.running.borrow_mut().remove(&run).is_none() {
            return;
        }
        self.outcomes.borrow_mut().insert(run, outcome);
        self.truth(run, TruthEvent::Stop(outcome));
        self.record_at(
            at_us,
            format_args!("stop {} {outcome:?}", self.scenario.runs[run].id),
        );
    }

    /// A worker crashed: every run it was playing is killed.
    fn kill_worker(&self, worker: u8, at_us: u64) {
        let victims: Vec<usize> = self
            .running
            .borrow()
            .iter()
            .filter(|(_, w)| **w == worker)
            .map(|(r, _)| *r)
            .collect();
        self.record_at(
            at_us,
            format_args!("crash worker-{worker} kills {} runs", victims.len()),
        );
        for run in victims {
            self.stop_run(run, RunOutcome::Killed, at_us);
        }
    }

    /// Ground truth of one event the run hands its journal.
    fn emit(&self, run: usize, entry: &JournalEntry, message: Option<&Emission>) {
        let mut log = self.log.borrow_mut();
        if log.emitted.len() <= run {
            log.emitted.resize(run + 1, Vec::new());
        }
        log.emitted[run].push(EmittedEvent {
            event_type: entry.event_type.clone(),
            category: entry.category,
            content: entry.content.clone(),
            created_at_ns: entry.created_at_ns,
        });
        drop(log);
        if let Some(e) = message {
            self.truth(
                run,
                TruthEvent::Message {
                    kind: e.kind,
                    text: e.text.clone(),
                },
            );
            self.streamed
                .borrow_mut()
                .entry(run)
                .or_default()
                .push(e.message.to_content());
        }
    }
}

/// The store the journals write to: both backends, with a record of every accepted write.
struct Tap {
    world: Rc<World>,
}

impl Tap {
    fn accepted(&self, rows: Vec<RunEvent>, how: &str) {
        let op = self.world.next_op();
        if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
            self.world.record(format_args!(
                "{how} {} {} n={} seqs={}..{}",
                first.thread_id,
                first.run_id,
                rows.len(),
                first.seq,
                last.seq
            ));
        }
        let mut log = self.world.log.borrow_mut();
        log.written
            .extend(rows.into_iter().map(|event| Written { op, event }));
    }

    fn disagree(&self, what: String) {
        self.world.record(format_args!("backends disagree: {what}"));
        self.world.log.borrow_mut().write_disagreements.push(what);
    }
}

impl RunEventStore for Tap {
    fn put_batch(&self, events: Vec<NewRunEvent>) -> Result<Vec<u64>, RunStoreError> {
        let w = &self.world;
        let m = w.memory.put_batch(events.clone());
        let s = w.sqlite.put_batch(events.clone());
        if m != s {
            self.disagree(format!("put_batch: memory {m:?}, sqlite {s:?}"));
        }
        let result = match w.primary {
            StoreKind::Memory => m,
            StoreKind::Sqlite => s,
        };
        if let Ok(seqs) = &result {
            let rows = events
                .into_iter()
                .zip(seqs)
                .map(|(e, seq)| e.with_seq(*seq))
                .collect();
            self.accepted(rows, "write");
        }
        result
    }

    fn insert_numbered(&self, events: Vec<RunEvent>) -> Result<(), RunStoreError> {
        let w = &self.world;
        let m = w.memory.insert_numbered(events.clone());
        let s = w.sqlite.insert_numbered(events.clone());
        if m != s {
            self.disagree(format!("insert_numbered: memory {m:?}, sqlite {s:?}"));
        }
        let result = match w.primary {
            StoreKind::Memory => m,
            StoreKind::Sqlite => s,
        };
        if result.is_ok() {
            self.accepted(events, "write-numbered");
        }
        result
    }

    fn max_seq(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        let w = &self.world;
        let (m, s) = (w.memory.max_seq(thread_id), w.sqlite.max_seq(thread_id));
        if m != s {
            self.disagree(format!("max_seq({thread_id}): memory {m:?}, sqlite {s:?}"));
        }
        w.store(w.primary).max_seq(thread_id)
    }

    fn list_messages(
        &self,
        thread_id: &str,
        limit: usize,
        cursor: MessageCursor,
    ) -> Result<Vec<RunEvent>, RunStoreError> {
        self.world
            .store(self.world.primary)
            .list_messages(thread_id, limit, cursor)
    }

    fn count_messages(&self, thread_id: &str) -> Result<u64, RunStoreError> {
        self.world
            .store(self.world.primary)
            .count_messages(thread_id)
    }

    fn list_events(&self, thread_id: &str, run_id: &str) -> Result<Vec<RunEvent>, RunStoreError> {
        self.world
            .store(self.world.primary)
            .list_events(thread_id, run_id)
    }

    fn dump(&self) -> Result<Vec<RunEvent>, RunStoreError> {
        self.world.store(self.world.primary).dump()
    }
}

type JournalStore = FaultyRunStore<Tap>;

/// Plays `scenario` once. Deterministic: the same scenario and config give the same record.
pub fn play(scenario: &RunsScenario, config: &WorldConfig) -> WorldRecord {
    let broken = |failure: String| WorldRecord {
        truth: Vec::new(),
        emitted: Vec::new(),
        written: Vec::new(),
        write_disagreements: Vec::new(),
        reads: Vec::new(),
        ratings: Vec::new(),
        summaries: Vec::new(),
        feedback: Vec::new(),
        dumps: Both {
            memory: Ok(Vec::new()),
            sqlite: Ok(Vec::new()),
        },
        trace: Trace::new(false),
        failure: Some(failure),
        sim_elapsed_ms: 0,
        stuck_runs: Vec::new(),
        stopped_after_ms: None,
    };
    let sqlite = match SqliteRunEventStore::open_in_memory(config.planted) {
        Ok(s) => s,
        Err(e) => return broken(format!("cannot open the SQLite store: {e}")),
    };
    let world = Rc::new(World {
        scenario: scenario.clone(),
        expanded: scenario.runs.iter().map(expand).collect(),
        primary: config.store,
        planted: config.planted,
        memory: MemoryRunEventStore::new(config.planted),
        sqlite,
        checkpointer: Checkpointer::new(),
        feedback: FeedbackStore::new(),
        trace: RefCell::new(Trace::new(config.keep_trace)),
        log: RefCell::new(Log {
            emitted: vec![Vec::new(); scenario.runs.len()],
            ..Log::default()
        }),
        next_op: Cell::new(0),
        running: RefCell::default(),
        stuck: RefCell::default(),
        stopped_after_ms: Cell::new(None),
        started: RefCell::default(),
        outcomes: RefCell::default(),
        settled: RefCell::default(),
        streamed: RefCell::default(),
    });
    let journal_store = Rc::new(FaultyRunStore::new(
        Tap {
            world: world.clone(),
        },
        FaultSchedule::failing(scenario.failing_write_calls.iter().copied()),
    ));
    let mut sim = turmoil::Builder::new()
        .rng_seed(scenario.network_seed)
        .epoch(UNIX_EPOCH + Duration::from_secs(EPOCH_SECS))
        .simulation_duration(Duration::from_secs(SIMULATION_SECS))
        .tick_duration(Duration::from_millis(1))
        .min_message_latency(Duration::from_micros(100))
        .max_message_latency(Duration::from_micros(900))
        .build();
    for w in 0..scenario.workers {
        let world = world.clone();
        let store = journal_store.clone();
        sim.host(format!("worker-{w}"), move || {
            worker_host(w, world.clone(), store.clone())
        });
    }
    sim.client("client", client(world.clone()));

    // The driving loop: step the world, crash and restart workers when the scenario says.
    let mut crashes: Vec<(u64, u8, u64)> = scenario
        .crashes
        .iter()
        .map(|c| {
            (
                u64::from(c.at_ms) * 1000,
                c.worker,
                u64::from(c.down_ms) * 1000,
            )
        })
        .collect();
    crashes.sort();
    crashes.reverse();
    let mut down: BTreeMap<u8, u64> = BTreeMap::new();
    let failure = loop {
        match sim.step() {
            Ok(true) => break None,
            Ok(false) => {}
            Err(e) => break Some(e.to_string()),
        }
        let now = sim.elapsed().as_micros() as u64;
        while crashes.last().is_some_and(|c| c.0 <= now) {
            let Some((_, w, down_us)) = crashes.pop() else {
                break;
            };
            if down.contains_key(&w) {
                continue;
            }
            sim.crash(format!("worker-{w}"));
            world.kill_worker(w, now);
            down.insert(w, now + down_us);
        }
        let back: Vec<u8> = down
            .iter()
            .filter(|(_, until)| **until <= now)
            .map(|(w, _)| *w)
            .collect();
        for w in back {
            down.remove(&w);
            sim.bounce(format!("worker-{w}"));
            world.record_at(now, format_args!("bounce worker-{w}"));
        }
    };
    let sim_elapsed_ms = sim.elapsed().as_millis() as u64;
    drop(sim);
    drop(journal_store);
    let feedback: Vec<Feedback> = world
        .scenario
        .threads
        .values()
        .flat_map(|t| world.feedback.list_thread(t))
        .collect();
    let dumps = world.both(|s| s.dump());
    let log = world.log.take();
    WorldRecord {
        truth: log.truth,
        emitted: log.emitted,
        written: log.written,
        write_disagreements: log.write_disagreements,
        reads: log.reads,
        ratings: log.ratings,
        summaries: log.summaries,
        feedback,
        dumps,
        trace: world.trace.replace(Trace::new(false)),
        failure,
        sim_elapsed_ms,
        stuck_runs: world.stuck.take(),
        stopped_after_ms: world.stopped_after_ms.get(),
    }
}

// ---- workers ----

async fn worker_host(w: u8, world: Rc<World>, store: Rc<JournalStore>) -> turmoil::Result {
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

async fn serve_dispatch(
    w: u8,
    mut stream: TcpStream,
    world: Rc<World>,
    store: Rc<JournalStore>,
) -> std::io::Result<()> {
    let mut buf = [0u8; 4];
    stream.read_exact(&mut buf).await?;
    let run = u32::from_be_bytes(buf) as usize;
    if run >= world.scenario.runs.len() || world.started.borrow().contains(&run) {
        return Ok(());
    }
    world.start_run(run, w);
    tokio::task::spawn_local(play_run(run, w, world.clone(), store));
    stream.write_all(&[1]).await
}

/// Hands one event to the journal, recording it as ground truth first.
async fn record(
    world: &World,
    journal: &mut RunJournal<&JournalStore>,
    run: usize,
    entry: JournalEntry,
    message: Option<&Emission>,
) {
    world.emit(run, &entry, message);
    if let Err(e) = journal.record(entry).await {
        world.record(format_args!(
            "{} flush failed: {e}",
            world.scenario.runs[run].id
        ));
    }
}

/// Retries a failed final flush until the store accepts it (every failing call fails once).
async fn finish(
    world: &World,
    journal: &mut RunJournal<&JournalStore>,
    run: usize,
    first: Result<(), RunStoreError>,
) {
    let mut result = first;
    let mut attempts = 0;
    while let Err(e) = &result {
        world.record(format_args!(
            "{} final flush failed: {e}",
            world.scenario.runs[run].id
        ));
        attempts += 1;
        if attempts > world.scenario.failing_write_calls.len() + 1 {
            break;
        }
        sleep_ms(1).await;
        result = journal.flush().await.map(|_| ());
    }
}

async fn play_run(run: usize, w: u8, world: Rc<World>, store: Rc<JournalStore>) {
    let spec = world.scenario.runs[run].clone();
    let emissions = world.expanded[run].clone();
    let thread_id = world.thread_id(&spec.thread);
    let mut journal = RunJournal::new(
        &*store,
        thread_id.clone(),
        spec.id.clone(),
        spec.user.clone(),
        RunJournalOptions {
            flush_threshold_events: world.scenario.flush_threshold_events,
            planted: world.planted,
        },
    );
    let middleware = spec.summarize.map(|s| {
        SummarizationMiddleware::new(SummarizationOptions {
            budget_tokens: s.budget_tokens,
            keep_messages: s.keep_messages,
            planted: world.planted,
        })
    });
    let mut state = world.checkpointer.latest(&thread_id).unwrap_or_default();
    let start = JournalEntry::other(
        Category::Lifecycle,
        RUN_START,
        json!({ "worker": w }),
        now_ns(),
    );
    record(&world, &mut journal, run, start, None).await;
    let count = emitted_count(&spec, emissions.len());
    for e in &emissions[..count] {
        if e.after_ms > 0 {
            sleep_ms(u64::from(e.after_ms)).await;
        }
        if e.message.kind == Shape::Ai {
            // The middleware runs before each model call, as LangChain's does.
            if let Some(summarized) = middleware.as_ref().and_then(|m| m.apply(&state)) {
                state = summarized;
                world.checkpointer.put(&thread_id, state.clone());
                let op = world.next_op();
                world.log.borrow_mut().summaries.push(SummaryRecord {
                    op,
                    run,
                    messages: state.messages.clone(),
                });
                let kept = state.messages.len();
                world.record(format_args!("{} summarized, {kept} kept", spec.id));
                let note = JournalEntry::other(
                    Category::Trace,
                    "summarization",
                    json!({ "kept": kept }),
                    now_ns(),
                );
                record(&world, &mut journal, run, note, None).await;
            }
        }
        state.messages.push(e.message.clone());
        let entry = JournalEntry::message(&e.message, now_ns());
        record(&world, &mut journal, run, entry, Some(e)).await;
        if e.message.kind == Shape::Ai {
            let trace = JournalEntry::other(
                Category::Trace,
                "llm_response",
                json!({ "message": e.message.id }),
                now_ns(),
            );
            record(&world, &mut journal, run, trace, None).await;
        }
    }
    let outcome = match spec.stop {
        Stop::Kill { .. } => {
            // The worker process dies: the buffer goes with it.
            drop(journal);
            world.stop_run(run, RunOutcome::Killed, now_us());
            return;
        }
        Stop::End => {
            let end = JournalEntry::other(Category::Lifecycle, RUN_END, json!({}), now_ns());
            record(&world, &mut journal, run, end, None).await;
            let first = journal.end().await;
            finish(&world, &mut journal, run, first).await;
            RunOutcome::Ended
        }
        Stop::Error { .. } => {
            let error = JournalEntry::other(
                Category::Lifecycle,
                RUN_ERROR,
                json!({ "error": "model call failed" }),
                now_ns(),
            );
            record(&world, &mut journal, run, error, None).await;
            let first = journal.error().await;
            finish(&world, &mut journal, run, first).await;
            RunOutcome::Errored
        }
        Stop::Cancel { .. } => {
            let first = journal.cancel().await;
            finish(&world, &mut journal, run, first).await;
            RunOutcome::Cancelled
        }
    };
    world.checkpointer.put(&thread_id, state);
    world.stop_run(run, outcome, now_us());
}

// ---- the client ----

#[derive(Default)]
struct Client {
    /// Per thread key: what the client renders.
    rendered: BTreeMap<String, Vec<Value>>,
    /// Per thread key: the rendered positions streamed by the run it waited for last.
    live: BTreeMap<String, Range<usize>>,
    /// Per thread key: every rendered position that came from a live stream.
    streamed: BTreeMap<String, BTreeSet<usize>>,
    mappers: BTreeMap<String, FeedbackMapper>,
}

async fn dispatch(worker: u8, run: usize) -> std::io::Result<()> {
    let host = format!("worker-{worker}");
    let mut stream = TcpStream::connect((host.as_str(), WORKER_PORT)).await?;
    stream.write_all(&(run as u32).to_be_bytes()).await?;
    let mut ack = [0u8; 1];
    stream.read_exact(&mut ack).await?;
    Ok(())
}

/// A message users can rate: a final AI answer (no tool calls).
fn is_final_ai(m: &Value) -> bool {
    m.get("type").and_then(Value::as_str) == Some("ai")
        && m.get("tool_calls")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

/// Every message by paging through the store's cursors, as a client of `list_messages` would.
fn paginate(
    store: &dyn RunEventStore,
    thread_id: &str,
    limit: usize,
    backward: bool,
) -> Result<Vec<RunEvent>, RunStoreError> {
    let mut pages: Vec<Vec<RunEvent>> = Vec::new();
    let mut cursor = if backward {
        MessageCursor::None
    } else {
        MessageCursor::After(0)
    };
    for _ in 0..PAGES_MAX {
        let page = store.list_messages(thread_id, limit, cursor)?;
        let full = page.len() >= limit;
        let next = if backward {
            page.first().map(|e| MessageCursor::Before(e.seq))
        } else {
            page.last().map(|e| MessageCursor::After(e.seq))
        };
        pages.push(page);
        match next {
            Some(n) if full && n != cursor => cursor = n,
            _ => break,
        }
    }
    if backward {
        pages.reverse();
    }
    Ok(pages.into_iter().flatten().collect())
}

impl Client {
    fn mapper(&mut self, world: &World, thread: &str) -> &mut FeedbackMapper {
        self.mappers.entry(thread.to_string()).or_insert_with(|| {
            let mut m = FeedbackMapper::new(world.thread_id(thread), world.view_options());
            let _ = m.refresh(world.store(world.primary));
            m
        })
    }

    fn push_read(&self, world: &World, op: u64, thread: &str, kind: ReadKind) {
        world.log.borrow_mut().reads.push(Read {
            op,
            at_us: now_us(),
            thread: thread.to_string(),
            kind,
        });
    }

    async fn play(&mut self, world: &World, op: &Op) {
        match op {
            Op::Start { run } => {
                let Some(r) = world.scenario.run_index(run) else {
                    return;
                };
                let worker = world.scenario.runs[r].worker;
                let result = tokio::time::timeout(
                    Duration::from_millis(DISPATCH_TIMEOUT_MS),
                    dispatch(worker, r),
                )
                .await;
                world.settled.borrow_mut().insert(r);
                let how = match result {
                    Ok(Ok(())) => "ok".to_string(),
                    Ok(Err(e)) => format!("failed: {e}"),
                    Err(_) => "timed out".to_string(),
                };
                world.record(format_args!("dispatch {run} to worker-{worker} {how}"));
            }
            Op::Wait { run } => {
                let Some(r) = world.scenario.run_index(run) else {
                    return;
                };
                while !world.settled.borrow().contains(&r)
                    || world.running.borrow().contains_key(&r)
                {
                    sleep_ms(1).await;
                }
                self.saw_run_end(world, r);
            }
            Op::Sleep { ms } => sleep_ms(u64::from(*ms)).await,
            Op::Views { thread } => self.views(world, thread),
            Op::Page {
                thread,
                limit,
                before,
                after,
            } => {
                let cursor = match (before, after) {
                    (None, None) => MessageCursor::None,
                    (Some(b), None) => MessageCursor::Before(*b),
                    (None, Some(a)) => MessageCursor::After(*a),
                    (Some(b), Some(a)) => MessageCursor::Both {
                        before: *b,
                        after: *a,
                    },
                };
                let tid = world.thread_id(thread);
                let op = world.next_op();
                let limit = *limit as usize;
                let rows = world.both(|s| s.list_messages(&tid, limit, cursor));
                world.record(format_args!(
                    "page {thread} limit={limit} {cursor:?} rows={:016x} agree={}",
                    hash_of(rows.primary(world.primary)),
                    rows.memory == rows.sqlite
                ));
                self.push_read(
                    world,
                    op,
                    thread,
                    ReadKind::Page {
                        limit,
                        cursor,
                        rows,
                    },
                );
            }
            Op::Paginate {
                thread,
                limit,
                backward,
            } => {
                let tid = world.thread_id(thread);
                let op = world.next_op();
                let limit = *limit as usize;
                let count = world.both(|s| s.count_messages(&tid));
                let rows = world.both(|s| paginate(s, &tid, limit, *backward));
                world.record(format_args!(
                    "paginate {thread} limit={limit} backward={backward} rows={:016x} agree={}",
                    hash_of(rows.primary(world.primary)),
                    rows.memory == rows.sqlite
                ));
                self.push_read(
                    world,
                    op,
                    thread,
                    ReadKind::Paginate {
                        limit,
                        backward: *backward,
                        count,
                        rows,
                    },
                );
            }
            Op::Events { run } => {
                let Some(r) = world.scenario.run_index(run) else {
                    return;
                };
                let spec = &world.scenario.runs[r];
                let tid = world.thread_id(&spec.thread);
                let op = world.next_op();
                let rows = world.both(|s| s.list_events(&tid, &spec.id));
                world.record(format_args!(
                    "events {run} rows={:016x} agree={}",
                    hash_of(rows.primary(world.primary)),
                    rows.memory == rows.sqlite
                ));
                self.push_read(world, op, &spec.thread, ReadKind::Events { run: r, rows });
            }
            Op::Rate {
                thread,
                user,
                up,
                target,
            } => self.rate(world, thread, user, *up, *target),
        }
    }

    /// The client saw the run's stream end: it renders what streamed (when the run finished)
    /// and tells its mapper that a run ended.
    fn saw_run_end(&mut self, world: &World, r: usize) {
        let thread = world.scenario.runs[r].thread.clone();
        let outcome = world.outcomes.borrow().get(&r).copied();
        world.record(format_args!(
            "wait {} -> {outcome:?}",
            world.scenario.runs[r].id
        ));
        if outcome.is_none() {
            return; // never started: nothing streamed
        }
        let rendered = self.rendered.entry(thread.clone()).or_default();
        match outcome {
            Some(o) if o.is_complete() => {
                let streamed = world.streamed.borrow().get(&r).cloned().unwrap_or_default();
                let from = rendered.len();
                rendered.extend(streamed);
                let to = rendered.len();
                self.streamed
                    .entry(thread.clone())
                    .or_default()
                    .extend(from..to);
                self.live.insert(thread.clone(), from..to);
            }
            _ => {
                self.live.remove(&thread);
            }
        }
        let primary = world.store(world.primary);
        let _ = self.mapper(world, &thread).on_run_end(primary);
    }

    fn views(&mut self, world: &World, thread: &str) {
        let tid = world.thread_id(thread);
        let options = world.view_options();
        let op = world.next_op();
        let count = world.both(|s| s.count_messages(&tid));
        let history = world.both(|s| thread_history(s, &world.checkpointer, &tid, &options));
        let messages = world.both(|s| thread_messages(s, &tid, &options));
        world.record(format_args!(
            "views {thread} count={:?} history={:016x} messages={:016x} agree={}",
            count.primary(world.primary),
            hash_of(history.primary(world.primary)),
            hash_of(messages.primary(world.primary)),
            count.memory == count.sqlite
                && history.memory == history.sqlite
                && messages.memory == messages.sqlite
        ));
        let rendered = match history.primary(world.primary) {
            Ok(Some(h)) => h.messages.clone(),
            _ => Vec::new(),
        };
        self.rendered.insert(thread.to_string(), rendered);
        self.live.remove(thread);
        self.streamed.remove(thread);
        self.push_read(
            world,
            op,
            thread,
            ReadKind::Views {
                count,
                history,
                messages,
            },
        );
    }

    fn rate(&mut self, world: &World, thread: &str, user: &str, up: bool, target: Target) {
        let rendered = self.rendered.get(thread).cloned().unwrap_or_default();
        let index = match target {
            Target::Live => self.live.get(thread).and_then(|range| {
                range
                    .clone()
                    .rev()
                    .find(|&i| rendered.get(i).is_some_and(is_final_ai))
            }),
            Target::Old(n) => {
                let finals: Vec<usize> = (0..rendered.len())
                    .filter(|&i| is_final_ai(&rendered[i]))
                    .collect();
                (!finals.is_empty()).then(|| finals[n as usize % finals.len()])
            }
        };
        let Some(index) = index else {
            world.record(format_args!("rate {thread} {target:?}: nothing to rate"));
            return;
        };
        let message = &rendered[index];
        let text = content_text(message.get("content").unwrap_or(&Value::Null));
        let source = if message.get("run_id").is_some() {
            RatedFrom::View
        } else if self
            .streamed
            .get(thread)
            .is_some_and(|s| s.contains(&index))
        {
            RatedFrom::Stream
        } else {
            RatedFrom::Checkpoint
        };
        let primary = world.store(world.primary);
        let client = self.mapper(world, thread).run_for(&rendered, index);
        let fresh = {
            let mut m = FeedbackMapper::new(world.thread_id(thread), world.view_options());
            let _ = m.refresh(primary);
            m.run_for(&rendered, index)
        };
        let op = world.next_op();
        world.record(format_args!(
            "rate {thread} {target:?} by {user} up={up} `{text}` -> {client:?} (fresh {fresh:?})"
        ));
        if let Some(run_id) = &client {
            let submitted = world.feedback.submit(FeedbackInput {
                thread_id: world.thread_id(thread),
                run_id: run_id.clone(),
                user_id: user.to_string(),
                message_id: message
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                rating: if up { Thumb::Up } else { Thumb::Down },
                comment: None,
                created_at_ns: now_ns(),
            });
            if let Err(e) = submitted {
                world.record(format_args!("rating refused: {e}"));
            }
        }
        world.log.borrow_mut().ratings.push(RatingRecord {
            op,
            thread: thread.to_string(),
            user: user.to_string(),
            up,
            text,
            source,
            client,
            fresh,
        });
    }
}

/// After the last op, how long every run has to stop (simulated ms) before it is a liveness failure.
const LIVENESS_BOUND_MS: u64 = 30_000;

async fn client(world: Rc<World>) -> turmoil::Result {
    let mut cx = Client::default();
    for op in &world.scenario.ops {
        cx.play(&world, op).await;
    }
    // Heal and settle: no op injects anything more; crashed workers come back after their down
    // time and each failing write fails once. Every run must then stop within a bound
    // (liveness); then the last look at every thread.
    let mut waited_ms = 0;
    loop {
        if world.running.borrow().is_empty() {
            world.stopped_after_ms.set(Some(waited_ms));
            break;
        }
        if waited_ms >= LIVENESS_BOUND_MS {
            let stuck: Vec<usize> = world.running.borrow().keys().copied().collect();
            world.record(format_args!(
                "liveness: runs {stuck:?} still running after {waited_ms} ms"
            ));
            *world.stuck.borrow_mut() = stuck;
            break;
        }
        sleep_ms(1).await;
        waited_ms += 1;
    }
    let threads: Vec<String> = world.scenario.threads.keys().cloned().collect();
    for thread in &threads {
        cx.views(&world, thread);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(n: usize) -> MemoryRunEventStore {
        let store = MemoryRunEventStore::new(Planted::none());
        let events = (0..n)
            .map(|i| NewRunEvent {
                thread_id: "t".into(),
                run_id: "r".into(),
                user_id: None,
                event_type: if i % 3 == 2 {
                    "llm_response"
                } else {
                    "human_message"
                }
                .into(),
                category: if i % 3 == 2 {
                    Category::Trace
                } else {
                    Category::Message
                },
                content: ChatMessage::human(format!("m{i}")).to_content(),
                metadata: json!({}),
                created_at_ns: i as i64,
            })
            .collect();
        store.put_batch(events).expect("writes");
        store
    }

    #[test]
    fn paging_reads_every_message_in_order_both_ways() {
        for n in [0, 1, 9, 10, 15] {
            let store = store_with(n);
            let all = store.count_messages("t").expect("counts") as usize;
            for limit in [1, 2, 3, 7, 500] {
                for backward in [false, true] {
                    let rows = paginate(&store, "t", limit, backward).expect("reads");
                    assert_eq!(rows.len(), all, "n {n} limit {limit} backward {backward}");
                    assert!(rows.windows(2).all(|w| w[0].seq < w[1].seq));
                }
            }
        }
    }

    #[test]
    fn only_final_ai_answers_are_rated() {
        assert!(is_final_ai(&json!({"type": "ai", "content": "x"})));
        assert!(is_final_ai(
            &json!({"type": "ai", "content": "x", "tool_calls": []})
        ));
        assert!(!is_final_ai(
            &json!({"type": "ai", "content": "x", "tool_calls": [{"id": "c"}]})
        ));
        assert!(!is_final_ai(&json!({"type": "human", "content": "x"})));
    }
}
