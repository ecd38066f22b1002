//! A live run from start to verdict: run it, read the shared store back, judge the recording,
//! measure its delivery patterns.

use super::judge::{judge, Expectation};
use super::line::ReplicaLine;
use super::patterns::{of_recording, Patterns};
use super::recording::Recording;
use super::run::{run, Ended, LiveSetup};
use super::store_rows::{stored_steps, StoredSteps, UNKNOWN_STEP};
use super::sut_store;
use crate::outcome::{Violation, ViolationKind};
use std::collections::BTreeMap;

/// What a live run found.
pub struct LiveOutcome {
    pub setup: LiveSetup,
    pub recording: Recording,
    pub stored: StoredSteps,
    pub expectation: Expectation,
    pub violations: Vec<Violation>,
    pub patterns: Patterns,
}

impl LiveOutcome {
    /// Some safety invariant was broken.
    pub fn unsafe_run(&self) -> bool {
        (self.violations.iter()).any(|v| v.kind == ViolationKind::Safety)
    }

    /// Events lost that no fault explains: the environment, not the system, misbehaved (or a
    /// margin was too small); never counted as an accepted loss.
    pub fn unexplained_losses(&self) -> usize {
        self.patterns.lost - self.patterns.lost_explained
    }

    /// Rows in the store whose event id nobody published.
    pub fn unknown_rows(&self) -> u32 {
        self.stored.copies.get(&UNKNOWN_STEP).copied().unwrap_or(0)
    }
}

/// Runs `setup` and judges what it recorded.
pub fn live_run(setup: LiveSetup) -> Result<LiveOutcome, Ended> {
    let recording = run(setup.clone())?;
    let event_steps: BTreeMap<String, u32> = (recording.published.iter())
        .map(|p| (p.emitted.event_id.clone(), p.emitted.step))
        .collect();
    if let Some(why) = broken_replica(&recording) {
        return Err(Ended::Broken(why));
    }
    let stored = match &setup.sut {
        Some(command) => sut_store::stored_steps(command, &setup.dir, setup.planted, &event_steps),
        None => stored_steps(&setup.store(), &event_steps),
    }
    .map_err(Ended::Broken)?;
    let (expectation, violations) = judge(&setup.scenario, &recording, &stored);
    let patterns = of_recording(&setup.scenario, &recording, &expectation.fates);
    Ok(LiveOutcome {
        setup,
        recording,
        stored,
        expectation,
        violations,
        patterns,
    })
}

/// The first replica whose system under test broke the protocol, and how.
fn broken_replica(recording: &Recording) -> Option<String> {
    recording.lines.iter().find_map(|(k, line)| match line {
        ReplicaLine::Broken { message } => Some(format!(
            "replica-{k}: the system under test broke the protocol: {message}"
        )),
        _ => None,
    })
}
