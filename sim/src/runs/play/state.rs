//! The state every host of the runs world shares: both backends, the ground-truth log, and what
//! the driving loop and the client know about the runs.

use crate::runs::observations::{Observation, ObservationLog};
use crate::runs::record::*;
use crate::runs::scenario::RunsScenario;
use crate::runs::script::{Emission, Scripts};
use crate::trace::Trace;
use crate::workload::StoreKind;
use history::runs::{
    Checkpointer, FeedbackStore, JournalEntry, RunEvent, RunEventStore, RunStoreError, ViewOptions,
};
use history::Planted;
use model::runs::RunOutcome;
use serde::Serialize;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::net::{IpAddr, Ipv4Addr};
use std::rc::Rc;
use std::time::Duration;

pub(in crate::runs) const WORKER_PORT: u16 = 7100;
/// Seconds since the Unix epoch at simulated time zero: created_at values are deterministic.
pub(in crate::runs) const EPOCH_SECS: u64 = 1_700_000_000;
/// Upper bound on simulated time: a world that has not finished by then is broken.
pub(in crate::runs) const SIMULATION_SECS: u64 = 300;
/// How long the client waits for a worker to acknowledge a dispatch.
pub(in crate::runs) const DISPATCH_TIMEOUT_MS: u64 = 200;
/// Why a store crash is left out (the report adds ", which the system under test does not
/// serve").
pub(in crate::runs) const STORE_CRASH_LEFT_OUT: &str =
    "store crash: a restart that keeps the store's data (it declares no durability)";
/// A paginated read gives up after this many pages (a store whose cursor never ends).
pub(in crate::runs) const PAGES_MAX: usize = 100_000;

/// The limit of a read of everything (a whole thread, a whole run): above any thread's rows,
/// and the largest a SQL store binds (SQLite's integers are signed 64-bit; DeerFlow's DB store
/// passes the limit through, and Python's sqlite3 refuses a larger one with an OverflowError).
pub(crate) const WHOLE_READ: usize = i64::MAX as usize;

pub(in crate::runs) struct World {
    pub(in crate::runs) scenario: RunsScenario,
    /// Every run's messages, expanded once before the world was set up.
    pub(in crate::runs) scripts: Scripts,
    pub(in crate::runs) primary: StoreKind,
    pub(in crate::runs) planted: Planted,
    /// The pair of stores whose answers R9 compares: histsim's memory and SQLite backends, or
    /// a system under test opened twice, as its `memory` and its `sqlite` store.
    pub(in crate::runs) memory: Rc<dyn RunEventStore>,
    pub(in crate::runs) sqlite: Rc<dyn RunEventStore>,
    /// The stores in child processes, for their stderr logs.
    pub(in crate::runs) suts: Vec<Rc<super::system::OverProtocolStore>>,
    /// The hosts store crashes kill and restart, by slot name: the `sqlite` store's (none: an
    /// in-memory database, in a world that schedules no store crash), and the `jsonl` one's
    /// when it plays the first slot.
    pub(in crate::runs) hosts: Vec<(&'static str, Rc<dyn super::host::StoreHost>)>,
    /// The first store's name in the trace and in findings: `memory` or `jsonl`.
    pub(in crate::runs) first_slot: &'static str,
    /// The first protocol breach of a store in a child process: the world ends broken.
    pub(in crate::runs) breach: super::system::BreachSlot,
    pub(in crate::runs) checkpointer: Checkpointer,
    pub(in crate::runs) feedback: FeedbackStore,
    pub(in crate::runs) trace: Rc<RefCell<Trace>>,
    /// What play observed: appended through [`World::observe`], read back by nobody but the
    /// client's own bookkeeping and, once the world is over, the checks.
    pub(super) log: RefCell<ObservationLog>,
    pub(in crate::runs) next_op: Cell<u64>,
    /// Where each run stands while the world plays.
    pub(in crate::runs) progress: RefCell<super::progress::RunProgress>,
}

pub(in crate::runs) fn now_us() -> u64 {
    turmoil::sim_elapsed()
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

pub(in crate::runs) fn now_ns() -> i64 {
    turmoil::since_epoch()
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

pub(in crate::runs) fn any_addr(port: u16) -> (IpAddr, u16) {
    (IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
}

pub(in crate::runs) async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

pub(crate) fn text_of<T>(r: Result<T, RunStoreError>) -> Answer<T> {
    r.map_err(|e| {
        let text = e.to_string();
        // A system's fence refusal reads as histsim's own (R28 knows it by its start).
        if e.is_thread_deleted() && !text.starts_with(FENCE_REFUSED) {
            format!("{FENCE_REFUSED}{text}")
        } else {
            text
        }
    })
}

pub(in crate::runs) fn hash_of<T: Serialize>(a: &Answer<T>) -> u64 {
    match a {
        Ok(v) => crate::json_digest::json_xxh3(v),
        Err(e) => xxhash_rust::xxh3::xxh3_64(e.as_bytes()),
    }
}

impl World {
    /// A read's answers as the trace tells them: `rows=` the hash of the primary store's
    /// answer, `agree=` whether both stores answered alike.
    pub(in crate::runs) fn rows_words<T: Serialize>(&self, rows: &Both<Answer<T>>) -> String {
        format!(
            "rows={:016x} agree={}",
            hash_of(rows.primary(self.primary)),
            rows.agree()
        )
    }

    /// Appends one observation to the world's log.
    pub(in crate::runs) fn observe(&self, observation: Observation) {
        self.log.borrow_mut().push(observation);
    }

    /// Appends observations, in order.
    pub(in crate::runs) fn observe_all(&self, observations: impl IntoIterator<Item = Observation>) {
        self.log.borrow_mut().extend(observations);
    }

    /// The rows a client call stored at `op`: each the primary store accepted, and each the
    /// `sqlite` store acknowledged (kept only in worlds that crash its host: what must survive
    /// the crash).
    pub(in crate::runs) fn observe_stored(
        &self,
        (op, at_us): (u64, u64),
        accepted: impl IntoIterator<Item = RunEvent>,
        durable: impl IntoIterator<Item = RunEvent>,
    ) {
        let written = |event| Written { op, at_us, event };
        self.observe_all(accepted.into_iter().map(written).map(Observation::Written));
        if !self.scenario.store_crashes.is_empty() {
            let durable = durable.into_iter().map(written);
            self.observe_all(durable.map(Observation::DurableAcked));
        }
    }

    /// The log, taken out once the simulation is over.
    pub(in crate::runs) fn take_log(&self) -> ObservationLog {
        self.log.take()
    }

    pub(in crate::runs) fn next_op(&self) -> u64 {
        let op = self.next_op.get();
        self.next_op.set(op + 1);
        op
    }

    pub(in crate::runs) fn record(&self, event: std::fmt::Arguments<'_>) {
        self.trace.borrow_mut().record(now_us(), event);
    }

    pub(in crate::runs) fn record_at(&self, at_us: u64, event: std::fmt::Arguments<'_>) {
        self.trace.borrow_mut().record(at_us, event);
    }

    pub(in crate::runs) fn store(&self, kind: StoreKind) -> &dyn RunEventStore {
        match kind {
            StoreKind::Memory | StoreKind::Jsonl => &*self.memory,
            StoreKind::Sqlite => &*self.sqlite,
        }
    }

    pub(in crate::runs) fn both<T: PartialEq>(
        &self,
        f: impl Fn(&dyn RunEventStore) -> Result<T, RunStoreError>,
    ) -> Both<Answer<T>> {
        let (memory, sqlite) = super::system::ask_both(&self.suts, &*self.memory, &*self.sqlite, f);
        Both::new(text_of(memory), text_of(sqlite))
    }

    /// Whether every store of the pair serves `op` (histsim's own serve every op).
    pub(in crate::runs) fn serves(&self, op: &str) -> bool {
        self.suts.iter().all(|s| s.serves(op))
    }

    /// Whether the system under test declares the known difference `id` in `hello` (histsim's
    /// own stores declare none).
    pub(in crate::runs) fn declares(&self, id: &str) -> bool {
        self.suts.iter().any(|s| s.declares(id))
    }

    pub(in crate::runs) fn thread_id(&self, key: &str) -> String {
        self.scenario.threads.get(key).cloned().unwrap_or_default()
    }

    pub(in crate::runs) fn view_options(&self) -> ViewOptions {
        ViewOptions {
            page_size_events: self.scenario.page_size_events,
            planted: self.planted,
        }
    }

    pub(in crate::runs) fn truth(&self, run: usize, event: TruthEvent) {
        let op = self.next_op();
        self.observe(Observation::Truth { op, run, event });
    }

    pub(in crate::runs) fn start_run(&self, run: usize, worker: u8) {
        self.progress.borrow_mut().start(run, worker);
        self.truth(run, TruthEvent::Start);
        self.record(format_args!(
            "worker-{worker} start {}",
            self.scenario.runs[run].id
        ));
    }

    pub(in crate::runs) fn stop_run(&self, run: usize, outcome: RunOutcome, at_us: u64) {
        if !self.progress.borrow_mut().stop(run, outcome) {
            return;
        }
        self.truth(run, TruthEvent::Stop(outcome));
        self.record_at(
            at_us,
            format_args!("stop {} {outcome:?}", self.scenario.runs[run].id),
        );
    }

    /// A worker crashed: every run it was playing is killed.
    pub(in crate::runs) fn kill_worker(&self, worker: u8, at_us: u64) {
        let victims = self.progress.borrow().running_on(worker);
        self.record_at(
            at_us,
            format_args!("crash worker-{worker} kills {} runs", victims.len()),
        );
        for run in victims {
            self.stop_run(run, RunOutcome::Killed, at_us);
        }
    }

    /// A crash of the store's host, between two store calls: the `sqlite` store (and a `jsonl`
    /// one) is killed and opened again on its data, or, when it declares no durability, the
    /// crash is left out (counted and traced; a memory store would only show that memory is
    /// lost). `Err`: a store could not be brought back.
    pub(in crate::runs) fn crash_store(&self, at_us: u64) -> Result<(), String> {
        for (slot, host) in &self.hosts {
            if host.durability() == crate::sut::protocol::Durability::None {
                self.record_at(
                    at_us,
                    format_args!("store crash left out: the {slot} store declares no durability"),
                );
                self.observe(Observation::LeftOut(STORE_CRASH_LEFT_OUT.to_string()));
                continue;
            }
            let op = self.next_op();
            self.record_at(
                at_us,
                format_args!("store crash: the {slot} store's host killed, restarted on its data"),
            );
            self.observe(Observation::StoreRestart(StoreRestart { op, at_us, slot }));
            host.restart(at_us)?;
        }
        Ok(())
    }

    /// Ground truth of one event the run hands its journal.
    pub(in crate::runs) fn emit(
        &self,
        run: usize,
        entry: &JournalEntry,
        message: Option<&Emission>,
    ) {
        self.observe(Observation::Emitted {
            run,
            event: EmittedEvent {
                event_type: entry.event_type.clone(),
                category: entry.category,
                content: entry.content.clone(),
                metadata: entry.metadata.clone(),
                created_at_ns: entry.created_at_ns,
            },
        });
        if let Some(e) = message {
            self.truth(
                run,
                TruthEvent::Message {
                    kind: e.kind,
                    text: e.text.clone(),
                },
            );
            // The dump the client sees streamed is the entry's content (`JournalEntry::message`
            // of this message).
            debug_assert_eq!(*entry.content, e.message.to_content());
            (self.progress.borrow_mut()).stream(run, Value::clone(&entry.content));
        }
    }
}
