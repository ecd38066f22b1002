//! After the last fault healed and everything was published: the client polls every replica in
//! rounds until all of them answer the model's history (computed from the deliveries recorded
//! so far), or the bound runs out; the last round is the settled history the checks compare.

use super::judge::Expectation;
use super::line::wall_us;
use super::state::{read_once, Live};
use super::store_rows::stored_steps;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long the replicas may take to agree with the model once quiet. Generous: a verdict must
/// not flip on a busy machine.
pub const SETTLE_BOUND_MS: u64 = 30_000;
const POLL_INTERVAL_MS: u64 = 200;
/// Answers that stay wrong while nothing reaches the store or the replicas for this long are
/// final: the run stops waiting (and the checks name what is wrong).
const QUIET_MS: u64 = 2_000;

/// Polls until converged or out of time; the recording's `converged_after_ms` says which.
pub(super) async fn settle(live: &Live) -> Result<(), String> {
    let quiet_us = wall_us();
    let event_steps: BTreeMap<String, u32> = (live.recording.borrow().published.iter())
        .map(|p| (p.emitted.event_id.clone(), p.emitted.step))
        .collect();
    let mut last_change: Option<(BTreeMap<u32, u32>, usize, u64)> = None;
    loop {
        let stored = stored_steps(&live.setup.store(), &event_steps)?;
        let lines = live.recording.borrow().lines.len();
        let quiet_since_us = match &last_change {
            Some((copies, seen, since)) if *copies == stored.copies && *seen == lines => *since,
            _ => wall_us(),
        };
        last_change = Some((stored.copies.clone(), lines, quiet_since_us));
        let expectation = Expectation::of(&live.setup.scenario, &live.recording.borrow(), &stored);
        let round_start = live.recording.borrow().reads.len();
        for k in 0..live.setup.scenario.replicas {
            read_once(live, k, None, false).await;
        }
        let waited_ms = (wall_us() - quiet_us) / 1000;
        let quiet = (wall_us() - quiet_since_us) / 1000 >= QUIET_MS;
        if settled_round(live, round_start, &expectation, waited_ms, quiet) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(POLL_INTERVAL_MS)).await;
    }
}

/// Whether the round of reads from `round_start` ends the polling: all answered the model's
/// history, or nothing changes any more, or time is up. If so, it is marked as the settled one.
fn settled_round(
    live: &Live,
    round_start: usize,
    expectation: &Expectation,
    waited_ms: u64,
    quiet: bool,
) -> bool {
    let mut recording = live.recording.borrow_mut();
    let round = &mut recording.reads[round_start..];
    let converged = round
        .iter()
        .all(|r| matches!(&r.answer, Ok(Ok(p)) if expectation.matches(p)));
    if !(converged || quiet || waited_ms >= SETTLE_BOUND_MS) {
        return false;
    }
    for read in round.iter_mut() {
        read.settled = true;
    }
    recording.converged_after_ms = converged.then_some(waited_ms);
    true
}
