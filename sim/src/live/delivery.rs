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
        let to = format!("replica-{replica}");
        let got_of = |step: u32| -> &[u64] {
            (fates.get(&step).and_then(|f| f.got_us.get(&replica))).map_or(&[], Vec::as_slice)
        };
        for step in scenario.steps().map(|s| s.id) {
            let got = got_of(step);
            if got.len() > 1 {
                faults.push(Fault::Duplicate {
                    step,
                    to: to.clone(),
                    copies: u8::try_from(got.len() - 1).unwrap_or(u8::MAX),
                });
            }
        }
        // Late: a step published later reached this replica first.
        let mut earliest_later: Option<u64> = None;
        let mut delays = Vec::new();
        for step in scenario
            .steps()
            .map(|s| s.id)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            let Some(&first) = got_of(step).first() else {
                continue;
            };
            if earliest_later.is_some_and(|later| later < first) {
                let late_us = first.saturating_sub(published_us.get(&step).copied().unwrap_or(0));
                let ms = (late_us as f64 / recording.us_per_scenario_ms.max(1.0)).ceil();
                delays.push(Fault::Delay {
                    step,
                    to: to.clone(),
                    ms: (ms as u32).max(1),
                });
            }
            earliest_later = Some(earliest_later.map_or(first, |e| e.min(first)));
        }
        faults.extend(delays.into_iter().rev());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::record::Emitted;
    use crate::live::recording::Published;

    fn scenario() -> DisplayScenario {
        let drop_2 = "[[faults]]\nkind = \"drop\"\nstep = 2\n";
        crate::live::fixtures::three_chunks(["main"; 3], drop_2)
    }

    fn recording(lines: Vec<(u8, ReplicaLine)>) -> Recording {
        let published = (1..=3)
            .map(|step| Published {
                emitted: Emitted {
                    step,
                    event_id: format!("e{step}"),
                    created_at_ns: 0,
                },
                at_us: u64::from(step) * 1000,
                refused: None,
            })
            .collect();
        Recording {
            published,
            lines,
            us_per_scenario_ms: 1000.0,
            ..Recording::default()
        }
    }

    fn got(r: u8, step: u32, at_us: u64) -> (u8, ReplicaLine) {
        (r, ReplicaLine::Got { at_us, step })
    }

    fn stored(r: u8, step: u32) -> (u8, ReplicaLine) {
        let line = ReplicaLine::Stored {
            at_us: 0,
            step,
            quarantined: false,
        };
        (r, line)
    }

    /// Replica `r` got `step` at `at_us` and stored it.
    fn kept(r: u8, step: u32, at_us: u64) -> [(u8, ReplicaLine); 2] {
        [got(r, step, at_us), stored(r, step)]
    }

    #[test]
    fn the_recorded_delivery_replaces_the_generated_faults() {
        // Replica 0 got every step, step 2 twice; replica 1 was down for steps 2 and 3.
        let rec = recording(
            [
                kept(0, 1, 1100),
                kept(1, 1, 1100),
                kept(0, 2, 2100),
                kept(0, 2, 2200),
                kept(0, 3, 3100),
            ]
            .concat(),
        );
        let copies = BTreeMap::from([(1, 2), (2, 2), (3, 1)]);
        let fates = fates(&rec, &copies);
        let replay = replay_scenario(&scenario(), &rec, &fates);
        assert_eq!(
            replay.faults,
            vec![
                Fault::Duplicate {
                    step: 2,
                    to: "replica-0".into(),
                    copies: 1
                },
                disconnect(1, 2, 3),
            ]
        );
        assert_eq!(replay.validate(), Ok(()));
    }

    #[test]
    fn a_step_committed_by_a_replica_killed_before_saying_so_counts_as_received() {
        let rec = recording(vec![got(1, 1, 1100), stored(0, 3)]);
        let committed = fates(&rec, &BTreeMap::from([(1, 1), (3, 1)]));
        assert_eq!(committed[&1].received_by(), BTreeSet::from([1]));
        // Received but never committed: lost, and the model is told so.
        let rec = recording(vec![got(1, 1, 1100)]);
        let lost = fates(&rec, &BTreeMap::new());
        assert!(!lost[&1].persisted());
    }

    #[test]
    fn an_overtaken_delivery_is_a_delay() {
        let rec = recording([kept(0, 2, 2100), kept(0, 1, 2500), kept(0, 3, 3100)].concat());
        let copies = BTreeMap::from([(1, 1), (2, 1), (3, 1)]);
        let mut s = scenario();
        s.replicas = 1;
        let replay = replay_scenario(&s, &rec, &fates(&rec, &copies));
        assert_eq!(
            replay.faults,
            vec![Fault::Delay {
                step: 1,
                to: "replica-0".into(),
                ms: 2
            }]
        );
    }
}
