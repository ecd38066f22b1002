//! Who got which event: the recorded deliveries read per step, and the same delivery written as
//! the display scenario's own faults, so that the simulation can play what the real bus did.
//!
//! The scenario format says, per step and replica, whether the replica's persister received the
//! step (`disconnect` for each one it did not), how many extra copies it got (`duplicate`), and
//! how late a delivery overtaken by a later step came (`delay`, in the scenario's milliseconds).
//! It cannot say which process was killed or paused, or when: a fault shows only through the
//! deliveries it cost.

use super::line::ReplicaLine;
use super::recording::Recording;
use crate::display::scenario::{DisplayScenario, Fault};
use std::collections::{BTreeMap, BTreeSet};

/// What became of one published step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fate {
    /// When each replica's persister received it (every copy).
    pub got_us: BTreeMap<u8, Vec<u64>>,
    /// The replicas whose store confirmed it committed.
    pub stored_by: BTreeSet<u8>,
    /// Rows (and quarantined rows) of it in the shared store at the end.
    pub copies_in_store: u32,
}

impl Fate {
    /// The replicas whose persister is taken to have received the step: every one that
    /// confirmed the commit; when none did but the store holds it (a replica killed between its
    /// commit and its confirmation), the ones that received it.
    pub fn received_by(&self) -> BTreeSet<u8> {
        if !self.stored_by.is_empty() || self.copies_in_store == 0 {
            return self.stored_by.clone();
        }
        self.got_us.keys().copied().collect()
    }

    /// The step reached the store.
    pub fn persisted(&self) -> bool {
        !self.received_by().is_empty()
    }
}

/// Every published step's fate, by step id.
pub fn fates(recording: &Recording, copies_in_store: &BTreeMap<u32, u32>) -> BTreeMap<u32, Fate> {
    let mut fates: BTreeMap<u32, Fate> = (recording.published.iter())
        .map(|p| (p.emitted.step, Fate::default()))
        .collect();
    for (replica, line) in &recording.lines {
        match line {
            ReplicaLine::Got { at_us, step } => {
                if let Some(f) = fates.get_mut(step) {
                    f.got_us.entry(*replica).or_default().push(*at_us);
                }
            }
            ReplicaLine::Stored { step, .. } => {
                if let Some(f) = fates.get_mut(step) {
                    f.stored_by.insert(*replica);
                }
            }
            _ => {}
        }
    }
    for (step, f) in fates.iter_mut() {
        f.copies_in_store = copies_in_store.get(step).copied().unwrap_or(0);
    }
    fates
}

/// `scenario` with the recorded delivery as its faults (the generator's own bus faults are the
/// simulated bus's and play no part in a live run).
pub fn replay_scenario(
    scenario: &DisplayScenario,
    recording: &Recording,
    fates: &BTreeMap<u32, Fate>,
) -> DisplayScenario {
    let mut faults = Vec::new();
    let published_us: BTreeMap<u32, u64> = (recording.published.iter())
        .map(|p| (p.emitted.step, p.at_us))
        .collect();
    for replica in 0..scenario.replicas {
        faults.extend(cut_off_ranges(scenario, fates, replica));
        let mut latest_got: Option<u64> = None;
        for step in scenario.steps().map(|s| s.id) {
            let Some(fate) = fates.get(&step) else {
                continue;
            };
            let to = format!("replica-{replica}");
            let got = fate.got_us.get(&replica).map(Vec::as_slice).unwrap_or(&[]);
            if got.len() > 1 {
                faults.push(Fault::Duplicate {
                    step,
                    to: to.clone(),
                    copies: u8::try_from(got.len() - 1).unwrap_or(u8::MAX),
                });
            }
            let Some(&first) = got.first() else { continue };
            // Overtaken: an earlier-published step reached this replica later.
            if latest_got.is_some_and(|latest| first < latest) {
                let late_us = first.saturating_sub(published_us.get(&step).copied().unwrap_or(0));
                let ms = (late_us as f64 / recording.us_per_scenario_ms.max(1.0)).ceil();
                faults.push(Fault::Delay {
                    step,
                    to,
                    ms: (ms as u32).max(1),
                });
            }
            latest_got = latest_got.max(Some(first));
        }
    }
    DisplayScenario {
        faults,
        ..scenario.clone()
    }
}

/// The runs of consecutive steps `replica` did not receive, as disconnects by step id.
fn cut_off_ranges(
    scenario: &DisplayScenario,
    fates: &BTreeMap<u32, Fate>,
    replica: u8,
) -> Vec<Fault> {
    let mut out = Vec::new();
    let mut open: Option<(u32, u32)> = None;
    for step in scenario.steps().map(|s| s.id) {
        let missed = fates
            .get(&step)
            .is_none_or(|f| !f.received_by().contains(&replica));
        match (&mut open, missed) {
            (Some((_, to)), true) if *to + 1 == step => *to = step,
            (_, true) => {
                out.extend(open.take().map(|(from, to)| disconnect(replica, from, to)));
                open = Some((step, step));
            }
            (_, false) => out.extend(open.take().map(|(from, to)| disconnect(replica, from, to))),
        }
    }
    out.extend(open.map(|(from, to)| disconnect(replica, from, to)));
    out
}

fn disconnect(replica: u8, from_step: u32, to_step: u32) -> Fault {
    Fault::Disconnect {
        replica,
        from_step,
        to_step,
    }
}
