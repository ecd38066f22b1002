//! The simulated deployment on turmoil: worker hosts running lead-agent runs through
//! [`RunJournal`](history::runs::RunJournal)s into the shared run-event store, and the client that dispatches runs, reads the
//! views, pages through messages and rates answers.
//!
//! Hosts: `worker-0..N` (each accepts run dispatches and plays each run in a task of its own, so
//! two runs of one thread on one worker are concurrent writers); the client is turmoil's client
//! and ends the run. The "database" is outside the hosts, as a database server would be: BOTH
//! backends, a [`MemoryRunEventStore`] and a
//! [`SqliteRunEventStore`](history::runs::SqliteRunEventStore), receive every write (through
//! a tap that also records what was written and the seqs assigned), and every read is issued to
//! both, so the checkers can compare their answers (R9). The backend the client renders from and
//! rates through is the config's `store`. Failing batch writes are injected by a
//! [`FaultyRunStore`] in front of the tap; hard kills are the scenario's `kill` stops (the journal
//! dropped unflushed) and worker crashes, which the driving loop performs with `sim.crash`.
//! Crashes of the store's host are performed by the driving loop too, between two steps (so
//! between two store calls): the `sqlite` store is killed and reopened on its data
//! ([`super::host`]; in process it is then on a file), the `memory` store, its R9 twin, is not.
//!
//! The first store of the pair is the memory one, or the JSONL one when the seed draws it
//! (`jsonl_store`) or `--store jsonl` asks for it: then [`SimDiskJsonlStore`] plays that slot
//! on a simulated disk, named `jsonl` in the trace and in every finding, and a crash of the
//! store's host cuts that disk's power and reopens the store from its files too. Every check
//! that compares `memory` with `sqlite` then compares `jsonl` with `sqlite`.
//!
//! The world records, beside the trace, what the checkers need and a client could not know: the
//! ground truth (every run's start, every event it emitted, how it stopped, in one order with the
//! store operations), every accepted write, every answer of both backends, every rating with the
//! answer of a freshly refreshed mapper beside the client's, every summarized checkpoint, and
//! both stores' contents at the end.

use super::client::client;
use super::host::StoreHost;
use super::jsonl_host::SimDiskJsonlStore;
use super::sqlite_pool;
use super::state::*;
use super::system::{BreachSlot, OverProtocolStore};
use super::tap::*;
use super::worker::worker_host;
use crate::runs::observations::{Observation, ObservationLog, WorldRecord};
pub use crate::runs::record::*;
use crate::runs::scenario::RunsScenario;
use crate::runs::script::Scripts;
use crate::trace::Trace;
use crate::turmoil_clock::Clock;
use crate::workload::{StoreKind, WorldConfig};
use history::runs::{
    Checkpointer, FaultSchedule, FaultyRunStore, Feedback, FeedbackStore, MemoryRunEventStore,
    RunEventStore,
};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

/// The pair of stores of a world: histsim's two backends, or the system under test opened
/// twice (as its `memory` or `jsonl` and its `sqlite` store), each in a child process of its
/// own.
struct Stores {
    /// The first store (`memory`, or `jsonl`: [`Stores::first_slot`]).
    memory: Rc<dyn RunEventStore>,
    sqlite: Rc<dyn RunEventStore>,
    suts: Vec<Rc<OverProtocolStore>>,
    /// histsim's SQLite store, given back to [`sqlite_pool`] when the world ends.
    pooled_sqlite: Option<sqlite_pool::Lent>,
    /// The hosts the world may crash, by slot name.
    hosts: Vec<(&'static str, Rc<dyn StoreHost>)>,
    first_slot: StoreKind,
}

/// Which store plays the first slot: the JSONL one when `--store jsonl` asks for it, or when
/// the scenario does and the stores are histsim's own (a system under test may have no JSONL
/// store: it plays its `memory` one unless asked).
fn first_slot(scenario: &RunsScenario, config: &WorldConfig) -> StoreKind {
    let jsonl = config.store == StoreKind::Jsonl || (scenario.jsonl_store && config.sut.is_none());
    if jsonl {
        StoreKind::Jsonl
    } else {
        StoreKind::Memory
    }
}

/// histsim's backends: the first one in memory or the JSONL one on a simulated disk; the SQLite
/// one in memory, or on a file when the scenario crashes its host (a crash then drops it
/// unclosed and reopens the file).
fn in_process(config: &WorldConfig, scenario: &RunsScenario) -> Result<Stores, String> {
    let crashes_store = !scenario.store_crashes.is_empty();
    let first_slot = first_slot(scenario, config);
    let mut hosts: Vec<(&'static str, Rc<dyn StoreHost>)> = Vec::new();
    let memory: Rc<dyn RunEventStore> = if first_slot == StoreKind::Jsonl {
        let jsonl = Rc::new(SimDiskJsonlStore::open(config.planted)?);
        if crashes_store {
            hosts.push(("jsonl", jsonl.clone()));
        }
        jsonl
    } else {
        Rc::new(MemoryRunEventStore::new(config.planted))
    };
    let (sqlite, pooled_sqlite): (Rc<dyn RunEventStore>, _) = if crashes_store {
        let sqlite = Rc::new(sqlite_pool::take_file(config.planted)?);
        hosts.push(("sqlite", sqlite.clone()));
        (sqlite.clone(), sqlite_pool::Lent::File(sqlite))
    } else {
        let sqlite = Rc::new(
            sqlite_pool::take(config.planted)
                .map_err(|e| format!("cannot open the SQLite store: {e}"))?,
        );
        (sqlite.clone(), sqlite_pool::Lent::Memory(sqlite))
    };
    Ok(Stores {
        memory,
        sqlite,
        suts: Vec::new(),
        pooled_sqlite: Some(pooled_sqlite),
        hosts,
        first_slot,
    })
}

fn stores_of(
    scenario: &RunsScenario,
    config: &WorldConfig,
    trace: &Rc<RefCell<Trace>>,
    breach: &BreachSlot,
) -> Result<Stores, String> {
    let Some(options) = &config.sut else {
        return in_process(config, scenario);
    };
    // The `sqlite` store's host is crashed (and a `jsonl` one's), only when the scenario says so.
    let crashes = |kind: StoreKind| kind != StoreKind::Memory && !scenario.store_crashes.is_empty();
    let start = |kind: StoreKind| {
        OverProtocolStore::start(
            (**options).clone(),
            (kind, crashes(kind)),
            config.planted,
            trace.clone(),
            breach.clone(),
        )
        .map(Rc::new)
        .map_err(|e| e.to_string())
    };
    let first_slot = first_slot(scenario, config);
    let (memory, sqlite) = (start(first_slot)?, start(StoreKind::Sqlite)?);
    let mut hosts: Vec<(&'static str, Rc<dyn StoreHost>)> = Vec::new();
    if first_slot == StoreKind::Jsonl {
        hosts.push(("jsonl", memory.clone()));
    }
    hosts.push(("sqlite", sqlite.clone()));
    Ok(Stores {
        memory: memory.clone(),
        sqlite: sqlite.clone(),
        suts: vec![memory, sqlite.clone()],
        pooled_sqlite: None,
        hosts,
        first_slot,
    })
}

/// The bytes of each child's stderr a failing seed's report keeps.
const SUT_LOG_BYTES_MAX: usize = 512 * 1024;

/// Plays `scenario`, whose runs `scripts` expands, once. Deterministic: the same scenario and
/// config give the same record.
pub fn play(scenario: &RunsScenario, scripts: &Scripts, config: &WorldConfig) -> WorldRecord {
    let trace = Rc::new(RefCell::new(Trace::new(config.keep_trace)));
    let breach = BreachSlot::default();
    let mut stores = match stores_of(scenario, config, &trace, &breach) {
        Ok(s) => s,
        Err(e) => return broken_record(e),
    };
    let pooled_sqlite = stores.pooled_sqlite.take();
    let world = Rc::new(new_world(scenario, scripts, config, stores, trace, breach));
    let journal_store = Rc::new(FaultyRunStore::new(
        Tap {
            world: world.clone(),
        },
        FaultSchedule::failing(scenario.failing_write_calls.iter().copied()),
    ));
    let mut sim = build_sim(scenario, &world, &journal_store);
    let failure = drive(&mut sim, scenario, &world);
    let sim_elapsed_ms = sim.elapsed().as_millis() as u64;
    drop(sim);
    drop(journal_store);
    let record = final_record(&world, failure, sim_elapsed_ms);
    // The world's handles on the SQLite store go with it, so the store can be given back.
    drop(world);
    if let Some(lent) = pooled_sqlite {
        lent.give_back();
    }
    record
}

/// The record of a world that could not be set up: nothing happened, only the failure.
fn broken_record(failure: String) -> WorldRecord {
    WorldRecord {
        log: ObservationLog::default(),
        feedback: Vec::new(),
        dumps: Both::new(Ok(Vec::new()), Ok(Vec::new())),
        event_counts: None,
        trace: Trace::new(false),
        failure: Some(failure),
        sim_elapsed_ms: 0,
        sut_log: None,
        answers: Default::default(),
        first_slot: "memory",
    }
}

/// The shared state of a fresh world: both stores empty, nothing logged yet.
fn new_world(
    scenario: &RunsScenario,
    scripts: &Scripts,
    config: &WorldConfig,
    stores: Stores,
    trace: Rc<RefCell<Trace>>,
    breach: BreachSlot,
) -> World {
    World {
        scenario: scenario.clone(),
        scripts: scripts.clone(),
        primary: config.store,
        planted: config.planted,
        memory: stores.memory,
        sqlite: stores.sqlite,
        suts: stores.suts,
        hosts: stores.hosts,
        first_slot: stores.first_slot.as_str(),
        breach,
        checkpointer: Checkpointer::new(),
        feedback: FeedbackStore::with_planted(config.planted),
        trace,
        log: RefCell::new(ObservationLog::new(scenario.runs.len())),
        next_op: Cell::new(0),
        progress: RefCell::default(),
    }
}

/// One turmoil step, in simulated milliseconds. Public for the floor bench, whose bare world steps
/// alike.
pub const TICK_MS: u64 = 1;

/// The turmoil simulation with its worker hosts and the client registered.
fn build_sim(
    scenario: &RunsScenario,
    world: &Rc<World>,
    journal_store: &Rc<JournalStore>,
) -> turmoil::Sim<'static> {
    let clock = Clock::new(EPOCH_SECS, SIMULATION_SECS, Duration::from_millis(TICK_MS));
    let mut sim = clock.networked_simulation(scenario.network_seed);
    for w in 0..scenario.workers {
        let world = world.clone();
        let store = journal_store.clone();
        sim.host(format!("worker-{w}"), move || {
            worker_host(w, world.clone(), store.clone())
        });
    }
    sim.client("client", client(world.clone()));
    sim
}

/// The driving loop: step the world, crash and restart workers when the scenario says. Returns
/// the simulation's failure, if it had one.
fn drive(sim: &mut turmoil::Sim<'_>, scenario: &RunsScenario, world: &World) -> Option<String> {
    let mut crashes = crash_schedule(scenario);
    let mut store_crashes = store_crash_schedule(scenario);
    let mut down: BTreeMap<u8, u64> = BTreeMap::new();
    loop {
        let stepped = sim.step();
        // A breach of the protocol is why the world broke, whatever the hosts then reported.
        if let Some(breach) = world.breach.borrow().as_ref() {
            break Some(breach.to_string());
        }
        match stepped {
            Ok(true) => break None,
            Ok(false) => {}
            Err(e) => break Some(e.to_string()),
        }
        let now = sim.elapsed().as_micros() as u64;
        // Between two steps no store call is under way: the store's host dies between calls.
        while store_crashes.last().is_some_and(|at| *at <= now) {
            store_crashes.pop();
            if let Err(e) = world.crash_store(now) {
                return Some(e);
            }
        }
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
    }
}

/// The scenario's crashes as (at µs, worker, down µs), the earliest last so it pops first.
fn crash_schedule(scenario: &RunsScenario) -> Vec<(u64, u8, u64)> {
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
    crashes
}

/// The scenario's store crashes as µs, the earliest last so it pops first.
fn store_crash_schedule(scenario: &RunsScenario) -> Vec<u64> {
    let mut at: Vec<u64> = scenario
        .store_crashes
        .iter()
        .map(|c| u64::from(c.at_ms) * 1000)
        .collect();
    at.sort_unstable_by(|a, b| b.cmp(a));
    at
}

/// Each thread's `count_events` at the end (R3 compares them with the rows written), or, when
/// the system does not serve it, `None` and the count left out.
fn final_event_counts(world: &World) -> Option<crate::runs::observations::EventCounts> {
    const COUNT_EVENTS: &str = "count_events";
    if !world.serves(COUNT_EVENTS) {
        let left_out = format!("the final event counts (the system does not serve {COUNT_EVENTS})");
        world.observe(Observation::LeftOut(left_out));
        return None;
    }
    // A thread a declared difference keeps from the system is never asked of it.
    let threads: Vec<&String> = (world.scenario.threads.iter())
        .filter(|(key, _)| super::declared_calls::declared_for_thread(world, key).is_none())
        .map(|(_, id)| id)
        .collect();
    Some(world.both(|s| {
        let count = |t: &&String| Ok(((*t).clone(), s.count_events(t)?));
        threads.iter().map(count).collect()
    }))
}

/// What the world recorded, taken out of it once the simulation is over.
fn final_record(world: &World, failure: Option<String>, sim_elapsed_ms: u64) -> WorldRecord {
    let feedback: Vec<Feedback> = world
        .scenario
        .threads
        .values()
        .flat_map(|t| world.feedback.list_thread(t))
        .collect();
    let dumps = world.both(|s| s.dump());
    let event_counts = final_event_counts(world);
    super::table_read_calls::ask_table_reads(world, sim_elapsed_ms * 1000);
    // A breach in the final dumps breaks the world as much as one during the simulation.
    let failure = failure.or_else(|| world.breach.borrow().as_ref().map(|b| b.to_string()));
    let mut answers = crate::coverage::Coverage::default();
    for sut in &world.suts {
        answers.add(&sut.tally());
    }
    let sut_log = (!world.suts.is_empty()).then(|| {
        let logs: Vec<String> = world
            .suts
            .iter()
            .map(|s| s.stderr_log(SUT_LOG_BYTES_MAX))
            .collect();
        logs.join("\n")
    });
    WorldRecord {
        log: world.take_log(),
        feedback,
        dumps,
        event_counts,
        trace: world.trace.replace(Trace::new(false)),
        failure,
        sim_elapsed_ms,
        sut_log,
        answers,
        first_slot: world.first_slot,
    }
}
