//! The client of the display world: one request a turn to the turn's replica, waiting for the
//! turn's last stop on its live subscription (or a pause the scenario names); once every run
//! emitted, rounds of reads of every replica until all show the settled history or the liveness
//! bound runs out.

use super::live::LiveSteps;
use super::scenario::{DisplayScenario, Event, LIVE_STOP_WAIT_MS};
use super::state::Shared;
use super::wire::{read_frame, subscribe, write_frame, Frame, REPLICA_PORT};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;
use turmoil::net::TcpStream;

/// After the faults heal, how long the client polls for the replicas to converge on the model
/// before it declares a liveness failure.
const LIVENESS_BOUND_MS: u64 = 1_000;
/// Between two rounds of polls.
const POLL_INTERVAL_MS: u64 = 5;

/// Appends `client live step={step} copy={copy}`.
pub(super) fn live_line(line: &mut String, step: u32, copy: u8) {
    let mut number = itoa::Buffer::new();
    line.push_str("client live step=");
    line.push_str(number.format(step));
    line.push_str(" copy=");
    line.push_str(number.format(copy));
}

/// The step the client waits to see live after a request: the turn's last stop by the primary on
/// the client's display.
fn live_stop_step(scenario: &DisplayScenario, turn: usize) -> Option<u32> {
    scenario.turns.get(turn)?.steps.iter().rev().find_map(|s| {
        (s.agent == scenario.primary
            && s.display == scenario.client_display
            && matches!(s.event, Event::Stop { .. }))
        .then_some(s.id)
    })
}

/// The client's connections to the replicas, one a replica, opened at its first request and
/// kept, as an HTTP client keeps its connections alive: a connection's handshake is two network
/// steps, and a request on a new one waited for them every turn.
#[derive(Default)]
struct Requests {
    open: BTreeMap<u8, TcpStream>,
}

impl Requests {
    async fn request(&mut self, replica: u8, turn: u32, dispatch: bool) -> std::io::Result<()> {
        let stream = match self.open.entry(replica) {
            std::collections::btree_map::Entry::Occupied(open) => open.into_mut(),
            std::collections::btree_map::Entry::Vacant(new) => {
                let host = format!("replica-{replica}");
                new.insert(TcpStream::connect((host.as_str(), REPLICA_PORT)).await?)
            }
        };
        write_frame(stream, &Frame::Request { turn, dispatch }).await?;
        match read_frame(stream).await? {
            Some(Frame::Answer { .. }) => Ok(()),
            other => Err(std::io::Error::other(format!(
                "expected an answer from replica-{replica}, got {other:?}"
            ))),
        }
    }
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// A system under test that broke the protocol ends the world (the breach is its failure).
fn stop_if_broken(shared: &Shared) -> turmoil::Result {
    if shared.broken() {
        return Err("the system under test broke the protocol".into());
    }
    Ok(())
}

pub(super) async fn client(shared: Rc<Shared>) -> turmoil::Result {
    let scenario = &shared.scenario;
    let prefix = shared.subject(&scenario.client_display);
    // Subscribe before anything is dispatched, as the live endpoint does (while the replicas
    // subscribe too), then wait for the replicas to listen.
    let mut live = subscribe("client", &prefix).await?;
    let replicas = u32::from(scenario.replicas);
    shared.until(|s| s.replicas_ready.get() == replicas).await;
    let live_steps: Rc<LiveSteps> = Rc::default();
    let reader_steps = live_steps.clone();
    let reader_shared = shared.clone();
    tokio::task::spawn_local(async move {
        while let Ok(Some(frame)) = read_frame(&mut live).await {
            if let Frame::Deliver { step, copy, .. } = frame {
                reader_shared.record_with(|line| live_line(line, step, copy));
                reader_steps.saw(step);
            }
        }
    });
    let mut requests = Requests::default();
    for (k, turn) in scenario.turns.iter().enumerate() {
        stop_if_broken(&shared)?;
        requests.request(turn.replica, k as u32, true).await?;
        match turn.wait_ms {
            Some(ms) => sleep_ms(u64::from(ms)).await,
            None => {
                if let Some(stop) = live_stop_step(scenario, k) {
                    live_steps
                        .wait_for(stop, u64::from(LIVE_STOP_WAIT_MS))
                        .await;
                }
            }
        }
    }
    // The fault phase ends when every run has emitted: nothing new is published, disconnected
    // subscriptions are back, and only held deliveries are still in flight. From here the
    // replicas must converge on the model's history within a bound (liveness). The harness, not
    // the client, knows that history: it computes it from the ground truth.
    let turns = scenario.turns.len() as u32;
    shared.until(|s| s.turns_done.get() == turns).await;
    poll_until_converged(&shared, &mut requests).await
}

/// After healing: every replica is asked in rounds until all answer what the model says, or
/// the liveness bound runs out; the last round is the settled history.
async fn poll_until_converged(shared: &Shared, requests: &mut Requests) -> turmoil::Result {
    let scenario = &shared.scenario;
    let healed_at = turmoil::sim_elapsed().unwrap_or_default();
    let bound = LIVENESS_BOUND_MS + u64::from(shared.plan.settle_ms());
    loop {
        stop_if_broken(shared)?;
        let round_start = shared.reads.borrow().len();
        for r in 0..scenario.replicas {
            requests.request(r, u32::MAX, false).await?;
        }
        let waited_ms = (turmoil::sim_elapsed().unwrap_or_default() - healed_at).as_millis() as u64;
        // Handed in between the step in which the last run ended and the next: a round of
        // requests takes a step at least.
        let settled = shared.settled.get();
        debug_assert!(
            settled.is_some(),
            "the settled history is known after a round"
        );
        let converged =
            shared.reads.borrow()[round_start..]
                .iter()
                .all(|read| match &read.result {
                    Ok(p) => settled.is_some_and(|history| history.shown_by(p)),
                    Err(_) => false,
                });
        if converged || waited_ms >= bound {
            for read in shared.reads.borrow_mut()[round_start..].iter_mut() {
                read.settled = true;
            }
            if converged {
                shared.converged_after_ms.set(Some(waited_ms));
            }
            break;
        }
        sleep_ms(POLL_INTERVAL_MS).await;
    }
    Ok(())
}
