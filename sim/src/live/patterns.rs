//! Delivery patterns, measured the same way on a live recording and on a simulated world's
//! trace: duplicates per event, the longest reorder between two events of one display, losses
//! (per server restart), and how long the replicas took to converge after healing.

use super::delivery::Fate;
use super::plan::LiveFault;
use super::recording::Recording;
use crate::display::scenario::DisplayScenario;
use std::collections::BTreeMap;

/// Before a fault starts and after it heals, the margin in which a lost event is still put down
/// to it (a publish in flight when the server died; a delivery racing a resubscription).
pub const FAULT_MARGIN_US: u64 = 1_000_000;

/// One delivery to a replica's persister: which replica, which step, in arrival order.
pub type Delivery = (u8, u32);

/// What the deliveries of one run looked like.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Patterns {
    pub published: usize,
    pub deliveries: usize,
    /// Copies a replica received beyond its first, summed over events.
    pub duplicate_deliveries: usize,
    /// The most copies one event had in the shared store (every replica persists every event).
    pub store_copies_max: u32,
    /// The longest reorder: how many places an event of one display arrived before an event of
    /// the same display published earlier, at any replica.
    pub reorder_max: usize,
    /// Events no replica's persister received.
    pub lost: usize,
    /// Of those, the ones put down to a fault (`lost - lost_explained` were not).
    pub lost_explained: usize,
    pub server_restarts: usize,
    /// Lost events put down to a server restart.
    pub lost_in_restarts: usize,
    /// Events published while a server restart kept every replica unsubscribed.
    pub exposed: usize,
    /// After healing, until every replica answered the model's history.
    pub converged_after_ms: Option<u64>,
}

/// The longest reorder within a display over `deliveries` (each replica's own arrival order).
pub fn reorder_max(scenario: &DisplayScenario, deliveries: &[Delivery]) -> usize {
    let position: BTreeMap<u32, (usize, &str)> = (scenario.steps().enumerate())
        .map(|(i, s)| (s.id, (i, s.display.as_str())))
        .collect();
    let mut arrived: BTreeMap<u8, Vec<(usize, &str)>> = BTreeMap::new();
    let mut worst = 0;
    for (replica, step) in deliveries {
        let Some(&(at, display)) = position.get(step) else {
            continue;
        };
        let before = arrived.entry(*replica).or_default();
        for &(earlier_at, earlier_display) in before.iter() {
            if earlier_display == display && earlier_at > at {
                worst = worst.max(earlier_at - at);
            }
        }
        before.push((at, display));
    }
    worst
}

/// Which fault, if any, a loss of an event published at `at_us` is put down to.
pub fn fault_of(recording: &Recording, at_us: u64) -> Option<LiveFault> {
    (recording.faults.iter())
        .find(|f| {
            f.from_us.saturating_sub(FAULT_MARGIN_US) <= at_us
                && at_us <= f.healed_us + FAULT_MARGIN_US
        })
        .map(|f| f.fault)
}

/// The patterns of a live recording.
pub fn of_recording(
    scenario: &DisplayScenario,
    recording: &Recording,
    fates: &BTreeMap<u32, Fate>,
) -> Patterns {
    let deliveries: Vec<Delivery> = (recording.lines.iter())
        .filter_map(|(r, line)| match line {
            super::line::ReplicaLine::Got { step, .. } => Some((*r, *step)),
            _ => None,
        })
        .collect();
    let mut first: BTreeMap<Delivery, ()> = BTreeMap::new();
    let duplicate_deliveries = (deliveries.iter())
        .filter(|d| first.insert(**d, ()).is_some())
        .count();
    let mut p = Patterns {
        published: recording.published.len(),
        deliveries: deliveries.len(),
        duplicate_deliveries,
        store_copies_max: fates.values().map(|f| f.copies_in_store).max().unwrap_or(0),
        reorder_max: reorder_max(scenario, &deliveries),
        converged_after_ms: recording.converged_after_ms,
        ..Patterns::default()
    };
    let restarts: Vec<_> = (recording.faults.iter())
        .filter(|f| matches!(f.fault, LiveFault::ServerRestart { .. }))
        .collect();
    p.server_restarts = restarts.len();
    for published in &recording.published {
        let at = published.at_us;
        if restarts
            .iter()
            .any(|f| f.from_us <= at && at <= f.healed_us)
        {
            p.exposed += 1;
        }
        if fates
            .get(&published.emitted.step)
            .is_some_and(|f| f.persisted())
        {
            continue;
        }
        p.lost += 1;
        match fault_of(recording, at) {
            Some(LiveFault::ServerRestart { .. }) => {
                p.lost_explained += 1;
                p.lost_in_restarts += 1;
            }
            Some(_) => p.lost_explained += 1,
            None => {}
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> DisplayScenario {
        crate::live::fixtures::three_chunks(["main", "other", "main"], "")
    }

    #[test]
    fn a_reorder_counts_places_within_one_display() {
        let s = scenario();
        assert_eq!(reorder_max(&s, &[(0, 1), (0, 2), (0, 3)]), 0);
        // Step 3 before step 1 on the same display: two places.
        assert_eq!(reorder_max(&s, &[(0, 3), (0, 2), (0, 1)]), 2);
        // Another display's event overtaken is no reorder within a display.
        assert_eq!(reorder_max(&s, &[(1, 2), (1, 1), (1, 3)]), 0);
    }
}
