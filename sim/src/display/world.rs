//! The simulated deployment on turmoil: a NATS-Core-like bus, API replicas with persisters on a
//! fan-out subscription, the agents, and the client.
//!
//! Hosts: `bus`, `replica-0..N`, `agents`; the client is turmoil's client and ends the run. The
//! world plays a [`DisplayScenario`]: the client sends one follow-up request per turn to the
//! turn's replica; the replica reconstructs the history from the shared store, answers, and
//! dispatches the run to the agents; the agents publish the run's events on the bus; the bus fans
//! every message out to every subscriber (each replica's persister and the client's live
//! subscription), injecting the scenario's duplicates, delays, drops and disconnects. After the
//! last turn and a settling pause, the client reads the history once from every replica.
//!
//! The world records, beside the trace, what the harness needs and a client could not know: the
//! emission log (ground truth, with each event's id and created_at) and every answer.

use super::digest::answer_digest;
use super::faults::FaultPlan;
use super::scenario::{DisplayScenario, Subscriber};
use super::stored_rows::{project_stored, row_of};
use super::system::{DisplaySystem, InProcess, OverProtocol};
use super::wire::{
    read_frame, subscribe, write_frame, write_queued, Frame, FrameReader, BUS_PORT, REPLICA_PORT,
};
use crate::trace::Trace;
use crate::turmoil_clock::Clock;
use history::display::AgentIdentity;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::mpsc;
use turmoil::net::{TcpListener, TcpStream};

const AGENTS_PORT: u16 = 7000;
/// Seconds since the Unix epoch at simulated time zero (2023-11-14): created_at values are
/// deterministic.
const EPOCH_SECS: u64 = 1_700_000_000;

/// One turmoil step. Hosts' timers keep millisecond resolution inside a step; the network delivers
/// at step boundaries. Larger steps mean fewer host polls per simulated second. Public for the
/// floor bench, whose bare world steps alike.
pub const TICK_MS: u64 = 10;
/// Upper bound on simulated time: a world that has not finished by then is a liveness failure.
const SIMULATION_SECS: u64 = 600;

pub use crate::workload::{StoreKind, WorldConfig};

pub use super::record::{Emitted, Read, WorldRecord};

use super::bus::bus_host;
use super::state::{any_addr, now_us, Shared};

/// The system under test the config names: a child process over the SUT protocol, or histsim's
/// own replicas in this process.
fn system_of(
    scenario: &DisplayScenario,
    config: &WorldConfig,
) -> Result<Box<dyn DisplaySystem>, String> {
    match &config.sut {
        Some(options) => OverProtocol::start((**options).clone(), config)
            .map(|s| Box::new(s) as Box<dyn DisplaySystem>)
            .map_err(|e| e.to_string()),
        None => InProcess::new(scenario.replicas, config)
            .map(|s| Box::new(s) as Box<dyn DisplaySystem>)
            .map_err(|e| format!("cannot open the store: {e}")),
    }
}

/// The bytes of a child's stderr a failing seed's report keeps.
const SUT_LOG_BYTES_MAX: usize = 1024 * 1024;

/// The request's primary agent, as the client names it.
fn primary_identity(scenario: &DisplayScenario) -> AgentIdentity {
    scenario
        .agents
        .get(&scenario.primary)
        .map(|a| AgentIdentity {
            agent_class: a.class.clone(),
            agent_id: a.id.clone(),
        })
        .unwrap_or_else(|| AgentIdentity {
            agent_class: String::new(),
            agent_id: String::new(),
        })
}

/// A world being played: the turmoil simulation and the state its hosts share. It plays and
/// records what it observes; it never models. [`World::start`], then
/// [`World::until_every_run_emitted`], [`World::settle_on`] the history the caller modelled from
/// what was published by then, and [`World::finish`]. Deterministic: the same scenario, config
/// and settled history give the same record.
pub(crate) struct World {
    sim: turmoil::Sim<'static>,
    shared: Rc<Shared>,
    /// How the simulation ended, once it has (every client done, or a host's error).
    ended: Option<turmoil::Result>,
}

impl World {
    /// Opens the system under test and builds the hosts of `scenario` under `plan` (its
    /// [`FaultPlan`]); nothing has run yet. A system that cannot start is a broken world's
    /// record.
    pub fn start(
        scenario: Rc<DisplayScenario>,
        plan: Rc<FaultPlan>,
        config: &WorldConfig,
    ) -> Result<World, Box<WorldRecord>> {
        let system =
            system_of(&scenario, config).map_err(|e| Box::new(WorldRecord::broken(e, 0)))?;
        let shared = Rc::new(Shared {
            primary: primary_identity(&scenario),
            scenario: scenario.clone(),
            settled: std::cell::OnceCell::new(),
            plan,
            trace: RefCell::new(Trace::new(config.keep_trace)),
            emissions: RefCell::new(Vec::new()),
            reads: RefCell::new(Vec::new()),
            next_event: Cell::new(1),
            next_op: Cell::new(0),
            first_stored: RefCell::new(BTreeMap::new()),
            first_received: RefCell::new(BTreeMap::new()),
            append_errors: RefCell::new(Vec::new()),
            turns_done: Cell::new(0),
            replicas_ready: Cell::new(0),
            progress: tokio::sync::Notify::new(),
            coverage: RefCell::new(crate::coverage::Coverage::default()),
            converged_after_ms: Cell::new(None),
            declared: system.declared(),
            system: RefCell::new(system),
            alike_up_to: config.alike_up_to.clone(),
            subjects: super::state::subjects(&scenario),
            breach: RefCell::new(None),
        });
        let sim = build_sim(&scenario, &shared);
        Ok(World {
            sim,
            shared,
            ended: None,
        })
    }

    /// Plays until every run has emitted, from when nothing more is published: `true` then,
    /// `false` if the world ended first. Steps as `turmoil::Sim::run` would, so stopping here
    /// changes nothing of the play.
    pub fn until_every_run_emitted(&mut self) -> bool {
        let turns = self.shared.scenario.turns.len() as u32;
        while self.ended.is_none() {
            if self.shared.turns_done.get() == turns {
                return true;
            }
            match self.sim.step() {
                Ok(false) => {}
                Ok(true) => self.ended = Some(Ok(())),
                Err(e) => self.ended = Some(Err(e)),
            }
        }
        false
    }

    /// What the agents published so far, in emission order.
    pub fn published(&self) -> std::cell::Ref<'_, [Emitted]> {
        std::cell::Ref::map(self.shared.emissions.borrow(), Vec::as_slice)
    }

    /// The known differences the system under test declares.
    pub fn declared(&self) -> &model::display::Declared {
        &self.shared.declared
    }

    /// The history the replicas must converge on after healing; the world polls until every
    /// replica shows it, or the liveness bound runs out. Given once, before the first poll.
    pub fn settle_on(&self, history: super::view::SettledHistory) {
        let first = self.shared.settled.set(history).is_ok();
        debug_assert!(first, "the settled history is given once");
        debug_assert!(
            self.shared.reads.borrow().iter().all(|r| r.turn.is_some()),
            "given before the first poll after healing"
        );
    }

    /// Plays to the end and leaves the record.
    pub fn finish(mut self) -> WorldRecord {
        let ended = match self.ended.take() {
            Some(ended) => ended,
            None => self.sim.run(),
        };
        let shared = self.shared;
        // A breach of the protocol is why the world broke, whatever the hosts then reported.
        let failure = shared
            .breach
            .borrow()
            .as_ref()
            .map(|b| b.to_string())
            .or(ended.err().map(|e| e.to_string()));
        let sim_elapsed_ms = self.sim.elapsed().as_millis() as u64;
        drop(self.sim);
        let projected = match failure {
            None => project_stored(&shared, sim_elapsed_ms * 1000),
            Some(_) => None,
        };
        let failure = failure.or_else(|| shared.breach.borrow().as_ref().map(|b| b.to_string()));
        let shared = match Rc::try_unwrap(shared) {
            Ok(s) => s,
            Err(_) => {
                return WorldRecord::broken(
                    "the world still holds its state after the simulation ended".into(),
                    sim_elapsed_ms,
                )
            }
        };
        let mut record = record_of(shared, failure, sim_elapsed_ms);
        record.projected = projected;
        record
    }
}

/// What the played world leaves for the checkers.
fn record_of(shared: Shared, failure: Option<String>, sim_elapsed_ms: u64) -> WorldRecord {
    let sut_log = shared.system.borrow().stderr_log(SUT_LOG_BYTES_MAX);
    let answers = shared.system.borrow().answers();
    WorldRecord {
        sut_log,
        answers,
        declared: shared.declared,
        emissions: shared.emissions.into_inner(),
        first_stored: shared.first_stored.into_inner(),
        first_received: shared.first_received.into_inner(),
        append_errors: shared.append_errors.into_inner(),
        reads: shared.reads.into_inner(),
        trace: shared.trace.into_inner(),
        failure,
        sim_elapsed_ms,
        coverage: shared.coverage.into_inner(),
        converged_after_ms: shared.converged_after_ms.get(),
        projected: None,
    }
}

/// The turmoil simulation with every host of the deployment and the client.
fn build_sim(scenario: &DisplayScenario, shared: &Rc<Shared>) -> turmoil::Sim<'static> {
    let clock = Clock::new(EPOCH_SECS, SIMULATION_SECS, Duration::from_millis(TICK_MS));
    let mut sim = clock.networked_simulation(scenario.network_seed);

    let s = shared.clone();
    sim.host("bus", move || bus_host(s.clone()));
    for k in 0..scenario.replicas {
        let s = shared.clone();
        sim.host(format!("replica-{k}"), move || replica_host(k, s.clone()));
    }
    let s = shared.clone();
    sim.host("agents", move || agents_host(s.clone()));
    sim.client("client", super::client::client(shared.clone()));

    sim
}

// ---- replicas ----

async fn replica_host(k: u8, shared: Rc<Shared>) -> turmoil::Result {
    // The replica's dispatches go out on one connection it keeps, opened while it subscribes, as
    // the client's requests come in on one the client keeps (see `Requests`).
    let name = Subscriber::Replica(k).name();
    let (bus, agents) = tokio::join!(
        subscribe(&name, "display."),
        TcpStream::connect(("agents", AGENTS_PORT))
    );
    let mut bus = FrameReader::new(bus?);
    let agents = Rc::new(RefCell::new(Some(agents?)));
    let persister_shared = shared.clone();
    tokio::task::spawn_local(async move {
        while let Ok(Some(frames)) = bus.read_batch().await {
            let deliveries: Vec<(u32, u8, Rc<[u8]>)> = frames
                .into_iter()
                .filter_map(|f| match f {
                    Frame::Deliver { step, copy, row } => Some((step, copy, row)),
                    _ => None,
                })
                .collect();
            if deliveries.is_empty() {
                continue;
            }
            let rows: Vec<&[u8]> = deliveries.iter().map(|(_, _, row)| &row[..]).collect();
            let Some(answers) = persister_shared.call(|s| s.deliver(k, &rows)) else {
                break;
            };
            assert_eq!(answers.len(), rows.len(), "one answer a row");
            // One instant for the batch: nothing below awaits.
            let at_us = now_us();
            for (&(step, copy, _), admitted) in deliveries.iter().zip(answers) {
                let outcome = persister_shared.admitted(k, step, copy, admitted);
                persister_shared
                    .record_with_at(at_us, |line| persist_line(line, k, step, copy, &outcome));
            }
        }
    });
    let listener = TcpListener::bind(any_addr(REPLICA_PORT)).await?;
    shared.progressed(&shared.replicas_ready);
    loop {
        let (stream, _) = listener.accept().await?;
        let (shared, agents) = (shared.clone(), agents.clone());
        tokio::task::spawn_local(async move {
            let _ = serve_requests(k, stream, shared, agents).await;
        });
    }
}

// The world's three most frequent trace lines (a persister's, an agent's emission, the client's
// live delivery), written piece by piece: formatting them cost 1.4 % of the display workload's
// instructions more. The tests hold each to the line its format wrote.

/// Appends `replica-{k} persist step={step} copy={copy} {outcome}`.
fn persist_line(line: &mut String, k: u8, step: u32, copy: u8, outcome: &str) {
    let mut number = itoa::Buffer::new();
    line.push_str("replica-");
    line.push_str(number.format(k));
    line.push_str(" persist step=");
    line.push_str(number.format(step));
    line.push_str(" copy=");
    line.push_str(number.format(copy));
    line.push(' ');
    line.push_str(outcome);
}

/// The id of the agents' `counter`-th event, `{EPOCH_SECS:08x}{counter:016x}` (an ObjectId's
/// shape), written a digit at a time: `format!` cost 1,600 instructions an emission.
fn event_id(counter: u64) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    const _: () = assert!(EPOCH_SECS <= 0xffff_ffff, "the epoch fits 8 hex digits");
    let mut id = String::with_capacity(24);
    for (value, digits) in [(EPOCH_SECS, 8), (counter, 16)] {
        for k in (0..digits).rev() {
            id.push(char::from(HEX[((value >> (4 * k)) & 0xf) as usize]));
        }
    }
    id
}

/// Appends `agents emit step={step} event_id={event_id} bytes={bytes}`.
fn emit_line(line: &mut String, step: u32, event_id: &str, bytes: usize) {
    let mut number = itoa::Buffer::new();
    line.push_str("agents emit step=");
    line.push_str(number.format(step));
    line.push_str(" event_id=");
    line.push_str(event_id);
    line.push_str(" bytes=");
    line.push_str(number.format(bytes));
}

/// Serves a connection's requests in turn until it ends.
async fn serve_requests(
    k: u8,
    mut stream: TcpStream,
    shared: Rc<Shared>,
    agents: Rc<RefCell<Option<TcpStream>>>,
) -> std::io::Result<()> {
    while let Some(Frame::Request { turn, dispatch }) = read_frame(&mut stream).await? {
        if !serve_request(k, &mut stream, turn, dispatch, &shared, &agents).await? {
            break;
        }
    }
    Ok(())
}

/// Answers one request and dispatches its turn; `false` when the system under test broke and
/// the connection must end unanswered.
async fn serve_request(
    k: u8,
    stream: &mut TcpStream,
    turn: u32,
    dispatch: bool,
    shared: &Shared,
    agents: &RefCell<Option<TcpStream>>,
) -> std::io::Result<bool> {
    let op = shared.next_op();
    let thread_id = &shared.scenario.thread_id;
    // A broken system gets no answer sent: the client's request fails and the world ends.
    let Some(result) = shared.call(|s| s.reconstruct(k, thread_id, &shared.primary)) else {
        return Ok(false);
    };
    // The client only waits for the answer, and the checks read it from the world's record
    // (`Read::result`, the same value), so the frame carries whether the read succeeded and an
    // error's text, not the projection: writing it as JSON for a client that never read it was
    // 1.5 % of the display workload's instructions. turmoil delivers a frame in one segment
    // whatever its length (its latency and buffers count segments), so no trace changes.
    let (ok, body) = match &result {
        Ok(_) => (true, Vec::new()),
        Err(e) => (false, e.clone().into_bytes()),
    };
    let turn_label = if dispatch {
        turn.to_string()
    } else {
        "settled".to_string()
    };
    shared.record(format_args!(
        "replica-{k} answer turn={turn_label} ok={ok} shows={:016x}",
        answer_digest(&result, &shared.alike_up_to)
    ));
    shared.reads.borrow_mut().push(Read {
        turn: dispatch.then_some(turn),
        settled: false,
        op,
        replica: k,
        at_us: now_us(),
        result,
    });
    write_frame(stream, &Frame::Answer { ok, body }).await?;
    if dispatch {
        // Only this connection's task dispatches (the client keeps one connection a replica),
        // and no borrow is held across an await: the stream is taken out and put back.
        let taken = agents.borrow_mut().take();
        let mut to_agents = match taken {
            Some(stream) => stream,
            None => TcpStream::connect(("agents", AGENTS_PORT)).await?,
        };
        write_frame(&mut to_agents, &Frame::Dispatch { turn }).await?;
        *agents.borrow_mut() = Some(to_agents);
        shared.record(format_args!("replica-{k} dispatch turn={turn}"));
    }
    Ok(true)
}

// ---- agents ----

async fn agents_host(shared: Rc<Shared>) -> turmoil::Result {
    let listener = TcpListener::bind(any_addr(AGENTS_PORT)).await?;
    let bus = bus_publisher(shared.clone());
    loop {
        let (mut stream, _) = listener.accept().await?;
        let (shared, bus) = (shared.clone(), bus.clone());
        tokio::task::spawn_local(async move {
            while let Ok(Some(Frame::Dispatch { turn })) = read_frame(&mut stream).await {
                let (shared, bus) = (shared.clone(), bus.clone());
                tokio::task::spawn_local(async move {
                    play_turn(turn, &shared, &bus).await;
                    shared.progressed(&shared.turns_done);
                });
            }
        });
    }
}

/// The agents' one connection to the bus, opened when the agents start and kept: runs playing
/// at once hand their frames to its one writer, in the order they publish. (A connection a turn
/// waited two network steps for its handshake every turn.)
fn bus_publisher(shared: Rc<Shared>) -> mpsc::UnboundedSender<Frame> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Frame>();
    tokio::task::spawn_local(async move {
        let published = async {
            let mut bus = TcpStream::connect(("bus", BUS_PORT)).await?;
            write_queued(&mut bus, &mut rx).await
        };
        if let Err(e) = published.await {
            shared.record(format_args!("agents publishing failed: {e}"));
        }
    });
    tx
}

async fn play_turn(turn: u32, shared: &Shared, bus: &mpsc::UnboundedSender<Frame>) {
    let Some(spec) = shared.scenario.turns.get(turn as usize) else {
        return;
    };
    let scenario = &shared.scenario;
    for step in &spec.steps {
        if step.after_ms > 0 {
            tokio::time::sleep(Duration::from_millis(u64::from(step.after_ms))).await;
        }
        let counter = shared.next_event.get();
        shared.next_event.set(counter + 1);
        let event_id = event_id(counter);
        let created_at_ns = turmoil::since_epoch()
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        let row = row_of(scenario, step, &event_id, created_at_ns);
        shared.emissions.borrow_mut().push(Emitted {
            step: step.id,
            event_id: event_id.clone(),
            created_at_ns,
        });
        shared.record_with(|line| emit_line(line, step.id, &event_id, row.len()));
        let subject = shared.subject(&step.display);
        // Fails only once the writer has stopped, which it has traced.
        let _ = bus.send(Frame::Publish {
            step: step.id,
            subject,
            row,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::client::live_line;
    use super::*;

    #[test]
    fn event_ids_are_the_formatted_ones() {
        for counter in [0, 9, 10, 0xabc, u64::from(u32::MAX) + 1, u64::MAX] {
            assert_eq!(
                event_id(counter),
                format!("{:08x}{:016x}", EPOCH_SECS, counter)
            );
        }
    }

    #[test]
    fn emission_and_live_lines_are_the_formatted_ones() {
        for (step, event_id, bytes, copy) in [
            (0u32, "", 0usize, 0u8),
            (4_294_967_295, "6553f1000000000000000009", 1_234_567, 255),
        ] {
            let mut line = String::new();
            emit_line(&mut line, step, event_id, bytes);
            assert_eq!(
                line,
                format!("agents emit step={step} event_id={event_id} bytes={bytes}")
            );
            line.clear();
            live_line(&mut line, step, copy);
            assert_eq!(line, format!("client live step={step} copy={copy}"));
        }
    }

    #[test]
    fn a_persist_line_is_the_formatted_one() {
        for (k, step, copy, outcome) in [
            (0u8, 0u32, 0u8, "stored"),
            (2, 4_294_967_295, 255, "quarantined"),
            (1, 17, 3, "error the store refused: {x}"),
        ] {
            let mut line = String::from("      42us ");
            persist_line(&mut line, k, step, copy, outcome);
            assert_eq!(
                line,
                format!("      42us replica-{k} persist step={step} copy={copy} {outcome}")
            );
        }
    }
}
