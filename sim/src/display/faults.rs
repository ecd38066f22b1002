//! The fault plan as the bus consults it, and the persistence fate it implies.
//!
//! Faults are data in the scenario; this is the lookup the bus uses while it runs. The same plan
//! tells the model which emissions reached the store: the simulation's own fault decisions, never
//! a read of what the store holds.

use super::scenario::{DisplayScenario, Fault, Subscriber};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default)]
pub struct FaultPlan {
    dropped: BTreeSet<u32>,
    duplicates: BTreeMap<(u32, Subscriber), u8>,
    delays_ms: BTreeMap<(u32, Subscriber), u32>,
    /// (replica, from_step, to_step) inclusive by step id.
    disconnects: Vec<(u8, u32, u32)>,
    replicas: u8,
}

impl FaultPlan {
    pub fn new(scenario: &DisplayScenario) -> Self {
        let mut plan = FaultPlan {
            replicas: scenario.replicas,
            ..FaultPlan::default()
        };
        for fault in &scenario.faults {
            match fault {
                Fault::Duplicate { step, to, copies } => {
                    if let Some(sub) = Subscriber::parse(to) {
                        *plan.duplicates.entry((*step, sub)).or_default() += *copies;
                    }
                }
                Fault::Delay { step, to, ms } => {
                    if let Some(sub) = Subscriber::parse(to) {
                        *plan.delays_ms.entry((*step, sub)).or_default() += *ms;
                    }
                }
                Fault::Drop { step } => {
                    plan.dropped.insert(*step);
                }
                Fault::Disconnect {
                    replica,
                    from_step,
                    to_step,
                } => plan.disconnects.push((*replica, *from_step, *to_step)),
            }
        }
        plan
    }

    /// The publisher lost this step: nobody gets it.
    pub fn dropped(&self, step: u32) -> bool {
        self.dropped.contains(&step)
    }

    /// The replica's subscription was down when this step went out.
    pub fn cut_off(&self, replica: u8, step: u32) -> bool {
        self.disconnects
            .iter()
            .any(|&(r, a, b)| r == replica && (a..=b).contains(&step))
    }

    pub fn duplicates(&self, step: u32, to: Subscriber) -> u8 {
        self.duplicates.get(&(step, to)).copied().unwrap_or(0)
    }

    pub fn delay_ms(&self, step: u32, to: Subscriber) -> u32 {
        self.delays_ms.get(&(step, to)).copied().unwrap_or(0)
    }

    /// The longest a delivery can be held, extra copies included.
    pub fn settle_ms(&self) -> u32 {
        let delay = self.delays_ms.values().copied().max().unwrap_or(0);
        let copies = self.duplicates.values().copied().max().unwrap_or(0);
        delay + u32::from(copies) + 20
    }

    /// Whether at least one copy of `step` reaches the store once deliveries settle: some replica's
    /// persister received it.
    pub fn persisted(&self, step: u32) -> bool {
        !self.dropped(step) && (0..self.replicas).any(|r| !self.cut_off(r, step))
    }
}
