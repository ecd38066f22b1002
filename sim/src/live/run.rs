//! One live run on this machine, loopback only: nats-server, the replica processes, the agents
//! publishing the scenario at a compressed real pace, the faults at their wall times, clients
//! reading through random replicas during and after; everything recorded. Every child is stopped
//! and reaped at the end, on a failure, and on Ctrl-C or SIGTERM.

use super::children::{free_port, start_nats, start_replica, ReplicaCommand, Tracked};
use super::line::wall_us;
use super::plan::{LiveFault, LivePlan};
use super::read::read_through;
use super::recording::{InjectedFault, LiveRead, Published, Recording};
use super::schedule::{created_at_ns, event_id, row, schedule};
use super::settle::settle;
use crate::display::record::Emitted;
use crate::display::scenario::DisplayScenario;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Where the bus comes from.
#[derive(Clone, Debug)]
pub enum Nats {
    /// Start this nats-server binary (and restart it as the plan says).
    Server(PathBuf),
    /// Use the server at this URL (never restarted).
    Url(String),
}

/// What a live run is asked to do.
#[derive(Clone, Debug)]
pub struct LiveSetup {
    pub seed: u64,
    pub scenario: DisplayScenario,
    pub plan: LivePlan,
    pub nats: Nats,
    /// The run's directory: the shared store and every child's log.
    pub dir: PathBuf,
    /// How to start a replica, given its index.
    pub replica_args: fn(&LiveSetup, u8, &str) -> ReplicaCommand,
    pub planted: history::Planted,
    /// The subject prefix of this run.
    pub subject: String,
}

impl LiveSetup {
    pub fn store(&self) -> PathBuf {
        self.dir.join("display.sqlite")
    }
}

/// A read gets no answer after this long (a paused replica).
pub const READ_TIMEOUT_MS: u64 = 3_000;

/// The run's shared state: the setup, the processes, and the recording.
pub(super) struct Live {
    pub setup: LiveSetup,
    pub url: String,
    nats_port: u16,
    pub recording: Rc<RefCell<Recording>>,
    nats: RefCell<Option<Tracked>>,
    replicas: RefCell<Vec<Option<Tracked>>>,
    /// Each replica's read port while it is up and running (not while killed or paused).
    pub ports: RefCell<Vec<Option<u16>>>,
    readers: RefCell<Vec<JoinHandle<()>>>,
}

/// Why a run ended early.
#[derive(Debug)]
pub enum Ended {
    /// The environment could not be set up or broke (exit 3).
    Broken(String),
    /// Ctrl-C or SIGTERM (every child stopped).
    Interrupted,
}

/// Runs `setup` and returns what it recorded.
pub fn run(setup: LiveSetup) -> Result<Recording, Ended> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Ended::Broken(e.to_string()))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let live = Rc::new(Live::new(setup)?);
        let ended = tokio::select! {
            played = play(live.clone()) => played.map_err(Ended::Broken),
            () = interrupted() => Err(Ended::Interrupted),
        };
        live.stop_everything().await;
        ended?;
        let recording = live.recording.borrow().clone();
        Ok(recording)
    })
}

/// Ctrl-C or SIGTERM.
async fn interrupted() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

impl Live {
    fn new(setup: LiveSetup) -> Result<Self, Ended> {
        let (url, nats_port) = match &setup.nats {
            Nats::Server(_) => {
                let port = free_port().map_err(|e| Ended::Broken(e.to_string()))?;
                (format!("nats://127.0.0.1:{port}"), port)
            }
            Nats::Url(url) => (url.clone(), 0),
        };
        let replicas = usize::from(setup.scenario.replicas);
        Ok(Live {
            setup,
            url,
            nats_port,
            recording: Rc::default(),
            nats: RefCell::default(),
            replicas: RefCell::new((0..replicas).map(|_| None).collect()),
            ports: RefCell::new(vec![None; replicas]),
            readers: RefCell::default(),
        })
    }

    async fn start_server(&self) -> Result<(), String> {
        if let Nats::Server(program) = &self.setup.nats {
            let server = start_nats(program, self.nats_port, &self.setup.dir).await?;
            *self.nats.borrow_mut() = Some(server);
        }
        Ok(())
    }

    async fn start_replica(&self, k: u8) -> Result<(), String> {
        let command = (self.setup.replica_args)(&self.setup, k, &self.url);
        let started = start_replica(k, &command, &self.setup.dir).await?;
        {
            let mut recording = self.recording.borrow_mut();
            for line in started.early {
                recording.lines.push((k, line));
            }
        }
        self.ports.borrow_mut()[usize::from(k)] = Some(started.port);
        self.replicas.borrow_mut()[usize::from(k)] = Some(started.tracked);
        let mut lines = started.lines;
        let recording = self.recording.clone();
        let reader = tokio::task::spawn_local(async move {
            while let Ok(Some(text)) = lines.next_line().await {
                recording.borrow_mut().replica_said(k, &text);
            }
        });
        self.readers.borrow_mut().push(reader);
        Ok(())
    }

    async fn stop_replica(&self, k: u8) {
        self.ports.borrow_mut()[usize::from(k)] = None;
        let taken = self.replicas.borrow_mut()[usize::from(k)].take();
        if let Some(tracked) = taken {
            tracked.stop().await;
        }
    }

    fn signal_replica(&self, k: u8, signal: rustix::process::Signal) -> Result<(), String> {
        match &self.replicas.borrow()[usize::from(k)] {
            Some(tracked) => tracked.signal(signal).map_err(|e| e.to_string()),
            None => Err(format!("replica-{k} is not running")),
        }
    }

    /// Stops and reaps every child, then lets each replica's reader take the lines left.
    async fn stop_everything(&self) {
        for k in 0..self.setup.scenario.replicas {
            self.stop_replica(k).await;
        }
        let server = self.nats.borrow_mut().take();
        if let Some(server) = server {
            server.stop().await;
        }
        let readers: Vec<_> = self.readers.borrow_mut().drain(..).collect();
        for reader in readers {
            let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
        }
    }
}

/// The whole run: start everything, publish under faults, settle; the caller stops everything.
async fn play(live: Rc<Live>) -> Result<(), String> {
    live.start_server().await?;
    for k in 0..live.setup.scenario.replicas {
        live.start_replica(k).await?;
    }
    let publisher = connect(&live.url).await?;
    let started_us = wall_us();
    live.recording.borrow_mut().started_us = started_us;
    let faults = tokio::task::spawn_local(inject_faults(live.clone(), started_us));
    let reading = Rc::new(std::cell::Cell::new(true));
    let background = tokio::task::spawn_local(read_in_background(live.clone(), reading.clone()));
    publish(&live, &publisher, started_us).await;
    let _ = faults.await;
    reading.set(false);
    let _ = background.await;
    // Everything published is handed to the server before the replicas are asked to settle.
    let _ = tokio::time::timeout(Duration::from_secs(10), publisher.flush()).await;
    settle(&live).await
}

/// A client of the bus that reconnects at once and for ever.
pub(super) async fn connect(url: &str) -> Result<async_nats::Client, String> {
    async_nats::ConnectOptions::new()
        .retry_on_initial_connect()
        .max_reconnects(None)
        .reconnect_delay_callback(|_| Duration::from_millis(50))
        .connect(url)
        .await
        .map_err(|e| format!("cannot connect to {url}: {e}"))
}

async fn sleep_until_ms(started_us: u64, at_ms: u64) {
    let due_us = started_us + at_ms * 1000;
    let now = wall_us();
    if due_us > now {
        tokio::time::sleep(Duration::from_micros(due_us - now)).await;
    }
}

/// The agents: every step of the scenario, at its scenario time scaled onto the publishing
/// window; each turn begins with the client's request (a read through the turn's replica).
async fn publish(live: &Live, publisher: &async_nats::Client, started_us: u64) {
    let scenario = &live.setup.scenario;
    let (steps, turn_starts, length_ms) = schedule(scenario);
    let scale = live.setup.plan.publish_ms as f64 / length_ms as f64;
    live.recording.borrow_mut().us_per_scenario_ms = scale * 1000.0;
    let wall_ms = |scenario_ms: u64| (scenario_ms as f64 * scale) as u64;
    let mut next_turn = 0usize;
    for (counter, scheduled) in steps.iter().enumerate() {
        while next_turn <= scheduled.turn as usize {
            sleep_until_ms(started_us, wall_ms(turn_starts[next_turn])).await;
            let replica = scenario.turns[next_turn].replica;
            read_once(live, replica, Some(next_turn as u32), false).await;
            next_turn += 1;
        }
        sleep_until_ms(started_us, wall_ms(scheduled.at_scenario_ms)).await;
        let emitted = Emitted {
            step: scheduled.step.id,
            event_id: event_id(counter as u64 + 1),
            created_at_ns: created_at_ns(scheduled.at_scenario_ms),
        };
        let bytes = row(
            scenario,
            scheduled.step,
            &emitted.event_id,
            emitted.created_at_ns,
        );
        let subject = format!("{}.{}", live.setup.subject, emitted.step);
        let at_us = wall_us();
        let refused = (publisher.publish(subject, bytes.into()).await).err();
        live.recording.borrow_mut().published.push(Published {
            emitted,
            at_us,
            refused: refused.map(|e| e.to_string()),
        });
    }
    sleep_until_ms(started_us, live.setup.plan.publish_ms).await;
}

/// One read through replica `k`, recorded (an unanswered one too).
pub(super) async fn read_once(live: &Live, k: u8, turn: Option<u32>, settled: bool) {
    let port = live.ports.borrow().get(usize::from(k)).copied().flatten();
    let started_us = wall_us();
    let answer = match port {
        Some(port) => read_through(port, READ_TIMEOUT_MS).await.map_err(|e| e.0),
        None => Err(format!("replica-{k} is down or paused")),
    };
    live.recording.borrow_mut().reads.push(LiveRead {
        replica: k,
        turn,
        started_us,
        ended_us: wall_us(),
        answer,
        settled,
    });
}

/// A client reading through a random replica every few hundred milliseconds, while writes land.
async fn read_in_background(live: Rc<Live>, reading: Rc<std::cell::Cell<bool>>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(live.setup.seed);
    while reading.get() {
        tokio::time::sleep(Duration::from_millis(rng.random_range(200..700))).await;
        let k = rng.random_range(0..live.setup.scenario.replicas);
        read_once(&live, k, None, false).await;
    }
}

/// The plan's faults, each at its wall time, each healed before the next.
async fn inject_faults(live: Rc<Live>, started_us: u64) {
    for timed in live.setup.plan.faults.clone() {
        sleep_until_ms(started_us, timed.at_ms).await;
        let from_us = wall_us();
        let trouble = inject(&live, timed.fault).await.err();
        live.recording.borrow_mut().faults.push(InjectedFault {
            fault: timed.fault,
            from_us,
            healed_us: wall_us(),
            trouble,
        });
    }
}

async fn inject(live: &Live, fault: LiveFault) -> Result<(), String> {
    use rustix::process::Signal;
    match fault {
        LiveFault::KillRestart { replica, down_ms } => {
            live.stop_replica(replica).await;
            tokio::time::sleep(Duration::from_millis(down_ms)).await;
            live.start_replica(replica).await
        }
        LiveFault::Pause { replica, ms } => {
            let port = live.ports.borrow_mut()[usize::from(replica)].take();
            live.signal_replica(replica, Signal::STOP)?;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            let resumed = live.signal_replica(replica, Signal::CONT);
            live.ports.borrow_mut()[usize::from(replica)] = port;
            resumed
        }
        LiveFault::ServerRestart { down_ms } => {
            let server = live.nats.borrow_mut().take();
            if let Some(server) = server {
                server.stop().await;
            }
            tokio::time::sleep(Duration::from_millis(down_ms)).await;
            live.start_server().await?;
            wait_resubscribed(live).await;
            Ok(())
        }
    }
}

/// Waits until every running replica confirmed its subscription after the server came back.
async fn wait_resubscribed(live: &Live) {
    let since_us = wall_us();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let running: Vec<u8> = (0..live.setup.scenario.replicas)
            .filter(|&k| live.replicas.borrow()[usize::from(k)].is_some())
            .collect();
        let all = running.iter().all(|&k| {
            (live.recording.borrow().lines.iter()).any(|(r, line)| {
                *r == k
                    && matches!(line, super::line::ReplicaLine::Subscribed { at_us } if *at_us >= since_us)
            })
        });
        if all || tokio::time::Instant::now() > deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
