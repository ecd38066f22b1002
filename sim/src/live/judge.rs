//! The recording judged by the display workload's own model and checks: the recorded delivery
//! becomes the scenario's faults ([`super::delivery`]), from which [`crate::display::truth`] and
//! the model say what every replica must answer, and [`crate::display::check`] compares the
//! recorded answers with it, rule by rule, catalog ID by catalog ID.

use super::delivery::{fates, replay_scenario, Fate};
use super::line::ReplicaLine;
use super::recording::Recording;
use super::store_rows::StoredSteps;
use crate::display::context::EarlyExpectation;
use crate::display::faults::FaultPlan;
use crate::display::record::{AppendError, Emitted, Read, WorldRecord};
use crate::display::scenario::DisplayScenario;
use crate::display::view::{view_of_model, view_of_projection, ViewMessage};
use crate::display::{check, truth};
use crate::outcome::Violation;
use model::display as m;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// What the model says every replica must answer, given the recorded delivery.
pub struct Expectation {
    pub replay: DisplayScenario,
    pub fates: BTreeMap<u32, Fate>,
    pub plan: FaultPlan,
    pub conversation: m::Conversation,
    pub transcript: m::Transcript,
}

impl Expectation {
    pub fn of(scenario: &DisplayScenario, recording: &Recording, stored: &StoredSteps) -> Self {
        let fates = fates(recording, &stored.copies);
        let replay = replay_scenario(scenario, recording, &fates);
        let plan = FaultPlan::new(&replay);
        let conversation = truth::conversation(&replay, &plan, &emissions(recording));
        // histsim's own components declare no known difference.
        let transcript = m::client_transcript_declaring(&conversation, &m::Declared::new());
        Expectation {
            replay,
            fates,
            plan,
            conversation,
            transcript,
        }
    }

    /// Whether an answer is the model's history.
    pub fn matches(&self, projection: &history::display::Projection) -> bool {
        crate::display::view::matches_model(projection, &self.conversation, &self.transcript)
    }
}

/// What the agents emitted, in publishing order (a publish the client refused included: its
/// fate says nobody got it).
pub fn emissions(recording: &Recording) -> Vec<Emitted> {
    (recording.published.iter())
        .map(|p| p.emitted.clone())
        .collect()
}

/// The recorded answers as the display checks read them (unanswered reads are counted apart),
/// in the order they started.
pub fn answered_reads(recording: &Recording) -> Vec<Read> {
    let mut reads: Vec<_> = recording.reads.iter().collect();
    reads.sort_by_key(|r| r.started_us);
    (reads.into_iter())
        .filter_map(|r| {
            let result = r.answer.clone().ok()?;
            Some((r, result))
        })
        .enumerate()
        .map(|(op, (r, result))| Read {
            turn: r.turn,
            settled: r.settled,
            op: op as u64,
            replica: r.replica,
            at_us: r.started_us.saturating_sub(recording.started_us),
            result,
        })
        .collect()
}

/// Every error a replica's store answered, for P15.
fn append_errors(recording: &Recording) -> Vec<AppendError> {
    let mut copies: BTreeMap<(u8, u32), u8> = BTreeMap::new();
    let mut errors = Vec::new();
    for (op, (replica, line)) in recording.lines.iter().enumerate() {
        match line {
            ReplicaLine::Got { step, .. } => {
                *copies.entry((*replica, *step)).or_default() += 1;
            }
            ReplicaLine::Error {
                at_us,
                step,
                message,
                ..
            } => errors.push(AppendError {
                op: op as u64,
                at_us: *at_us,
                replica: *replica,
                step: *step,
                copy: copies
                    .get(&(*replica, *step))
                    .map_or(0, |c| c.saturating_sub(1)),
                message: message.clone(),
            }),
            _ => {}
        }
    }
    errors
}

/// What each read before settling must show: the model of some prefix of the rows the store
/// committed (SQLite serializes writers and a read sees a committed prefix). The read passes if
/// it equals any of them; otherwise it is held to the model of the rows whose commit a replica
/// had confirmed when the read started, and the display checks name the difference.
fn early_expectations(
    expectation: &Expectation,
    stored: &StoredSteps,
    recording: &Recording,
    reads: &[Read],
) -> Vec<Option<EarlyExpectation>> {
    let model_of = |steps: &BTreeSet<u32>| -> Rc<Vec<ViewMessage>> {
        let mut conversation = expectation.conversation.clone();
        for (emission, p) in conversation.emissions.iter_mut().zip(&recording.published) {
            emission.persisted = steps.contains(&p.emitted.step);
        }
        Rc::new(view_of_model(&m::client_transcript(&conversation).messages))
    };
    let mut prefix: BTreeSet<u32> = stored.quarantined.iter().copied().collect();
    let mut prefixes = vec![model_of(&prefix)];
    if reads.iter().any(|r| !r.settled) {
        for step in &stored.commit_order {
            prefix.insert(*step);
            prefixes.push(model_of(&prefix));
        }
    }
    (reads.iter())
        .map(|read| {
            if read.settled {
                return None;
            }
            let answered = match &read.result {
                Ok(p) => view_of_projection(&p.messages),
                Err(_) => return None,
            };
            let shared = match prefixes.iter().find(|model| ***model == answered) {
                Some(model) => model.clone(),
                None => model_of(&confirmed_before(
                    recording,
                    recording.started_us + read.at_us,
                )),
            };
            Some(EarlyExpectation {
                own: shared.clone(),
                shared,
            })
        })
        .collect()
}

/// The steps whose commit some replica had confirmed before `at_us`.
fn confirmed_before(recording: &Recording, at_us: u64) -> BTreeSet<u32> {
    (recording.lines.iter())
        .filter_map(|(_, line)| match line {
            ReplicaLine::Stored { at_us: t, step, .. } if *t < at_us => Some(*step),
            _ => None,
        })
        .collect()
}

/// Every violation the display checks find in the recording, most specific first.
pub fn judge(
    scenario: &DisplayScenario,
    recording: &Recording,
    stored: &StoredSteps,
) -> (Expectation, Vec<Violation>) {
    let expectation = Expectation::of(scenario, recording, stored);
    let reads = answered_reads(recording);
    let early = early_expectations(&expectation, stored, recording, &reads);
    let record = WorldRecord::of_answers(
        reads,
        append_errors(recording),
        recording.converged_after_ms,
    );
    // The display checks' own verdicts, P14's liveness included (the replicas' convergence
    // after the last fault healed, from the recording).
    let violations = check::check(
        &expectation.replay,
        &expectation.plan,
        &expectation.conversation,
        &expectation.transcript,
        &record,
        &early,
    );
    (expectation, violations)
}
