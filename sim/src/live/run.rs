//! One live run on this machine, loopback only: nats-server, the replica processes, the agents
//! publishing the scenario at a compressed real pace, the faults at their wall times, clients
//! reading through random replicas during and after; everything recorded. Every child is stopped
//! and reaped at the end, on a failure, and on Ctrl-C or SIGTERM.

use super::line::wall_us;
use super::plan::{LiveFault, TimedFault};
use super::recording::{InjectedFault, Published, Recording};
use super::schedule::{created_at_ns, event_id, row, schedule};
use super::settle::settle;
pub use super::setup::{LiveSetup, Nats};
use super::state::{connect, read_once, Live};
use crate::display::record::Emitted;
use rand::{Rng, SeedableRng};
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

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
    drive(
        || Live::new(setup).map(Rc::new),
        play,
        |live, _| async move {
            live.stop_everything().await;
            let recording = live.recording.borrow().clone();
            Ok(recording)
        },
    )
}

/// The child loop of every live run: makes the run's state on a current-thread runtime (its
/// tasks share it through `Rc`), plays `play` unless Ctrl-C or SIGTERM comes first, and
/// stops every child with `stop` either way (told whether the play ended well), which
/// answers what the run recorded; or why the run ended early. Everything the run holds is
/// dropped on the runtime.
pub fn drive<S, T, P, F, X, G>(
    state: impl FnOnce() -> Result<Rc<S>, String>,
    play: P,
    stop: X,
) -> Result<T, Ended>
where
    P: FnOnce(Rc<S>) -> F,
    F: Future<Output = Result<(), String>>,
    X: FnOnce(Rc<S>, bool) -> G,
    G: Future<Output = Result<T, String>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Ended::Broken(e.to_string()))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let state = state().map_err(Ended::Broken)?;
        let ended = tokio::select! {
            played = play(state.clone()) => played.map_err(Ended::Broken),
            () = interrupted() => Err(Ended::Interrupted),
        };
        let recorded = stop(state, ended.is_ok()).await;
        ended?;
        recorded.map_err(Ended::Broken)
    })
}

/// Ctrl-C or SIGTERM.
pub async fn interrupted() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
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

/// A client reading through a random replica every few hundred milliseconds, while writes land.
async fn read_in_background(live: Rc<Live>, reading: Rc<std::cell::Cell<bool>>) {
    let replicas = usize::from(live.setup.scenario.replicas);
    every_few_hundred_ms(live.setup.seed, reading, replicas, |k| {
        read_once(&live, k as u8, None, false)
    })
    .await;
}

/// While `going`, every 200 to 700 ms (drawn from `seed`): `act` on one of `targets`, drawn
/// too (a background client's reads).
pub async fn every_few_hundred_ms<F: Future<Output = ()>>(
    seed: u64,
    going: Rc<std::cell::Cell<bool>>,
    targets: usize,
    mut act: impl FnMut(usize) -> F,
) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    while going.get() && targets > 0 {
        tokio::time::sleep(Duration::from_millis(rng.random_range(200..700))).await;
        act(rng.random_range(0..targets)).await;
    }
}

/// The plan's faults, each at its wall time, each healed before the next.
async fn inject_faults(live: Rc<Live>, started_us: u64) {
    let faults = live.setup.plan.faults.clone();
    let recorded = |f| live.recording.borrow_mut().faults.push(f);
    inject_all(&faults, started_us, |fault| inject(&live, fault), recorded).await;
}

/// Each of `faults` at its wall time after `started_us`, through `inject`, each healed before
/// the next; every one `recorded` with when it started and healed and any trouble.
pub async fn inject_all<F: Future<Output = Result<(), String>>>(
    faults: &[TimedFault],
    started_us: u64,
    inject: impl Fn(LiveFault) -> F,
    recorded: impl Fn(InjectedFault),
) {
    for timed in faults {
        sleep_until_ms(started_us, timed.at_ms).await;
        let from_us = wall_us();
        let trouble = inject(timed.fault).await.err();
        recorded(InjectedFault {
            fault: timed.fault,
            from_us,
            healed_us: wall_us(),
            trouble,
        });
    }
}

async fn inject(live: &Live, fault: LiveFault) -> Result<(), String> {
    match fault {
        LiveFault::KillRestart { replica, down_ms } => {
            let (stop, start) = (live.stop_replica(replica), live.start_replica(replica));
            kill_restart(stop, down_ms, start).await
        }
        LiveFault::Pause { replica, ms } => {
            let port = live.ports.borrow_mut()[usize::from(replica)].take();
            let paused = pause(|signal| live.signal_replica(replica, signal), ms).await;
            live.ports.borrow_mut()[usize::from(replica)] = port;
            paused
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

/// A process fault of a live run (a replica's, a worker's): `stop` it, leave it down
/// `down_ms`, then `start` it again.
pub async fn kill_restart(
    stop: impl Future<Output = ()>,
    down_ms: u64,
    start: impl Future<Output = Result<(), String>>,
) -> Result<(), String> {
    stop.await;
    tokio::time::sleep(Duration::from_millis(down_ms)).await;
    start.await
}

/// A process fault of a live run: SIGSTOP through `signal`, `ms` later SIGCONT (not sent when
/// the process could not be stopped).
pub async fn pause(
    signal: impl Fn(rustix::process::Signal) -> Result<(), String>,
    ms: u64,
) -> Result<(), String> {
    use rustix::process::Signal;
    signal(Signal::STOP)?;
    tokio::time::sleep(Duration::from_millis(ms)).await;
    signal(Signal::CONT)
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
