//! What a run found: invariant violations, each naming its catalog ID.

use history::BugId;
use serde::Serialize;
use std::fmt;

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Violation {
    /// The catalog ID of the invariant (`docs/catalog.md`).
    pub id: BugId,
    /// Safety (checked during the run or after it settles) or liveness (after faults healed).
    pub kind: ViolationKind,
    /// What was seen, in one line: ids, counts and words of the generated text, never whole payloads.
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    Safety,
    Liveness,
}

impl Violation {
    pub fn safety(id: BugId, message: impl Into<String>) -> Self {
        Violation {
            id,
            kind: ViolationKind::Safety,
            message: message.into(),
        }
    }

    pub fn liveness(id: BugId, message: impl Into<String>) -> Self {
        Violation {
            id,
            kind: ViolationKind::Liveness,
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ViolationKind::Safety => "",
            ViolationKind::Liveness => " (liveness)",
        };
        write!(f, "[{}]{} {}", self.id, kind, self.message)
    }
}

/// How a workload turns its findings into violations: which catalog ID is reported first when
/// several fire, and how the differences no specific invariant explains are reported.
#[derive(Debug)]
pub struct Attribution {
    /// Every ID the workload checks, the one most specific to a defect first: a world with one
    /// defect reports that defect's ID first even when its effects also break broader invariants.
    pub priority: &'static [BugId],
    /// The order of secondary findings (signals most defects also cause), reported after every
    /// specific one; IDs not listed follow in catalog order.
    pub secondary: &'static [BugId],
    /// `Some(n)`: the findings of one ID become one violation of at most `n` messages; `None`:
    /// one violation per finding.
    pub merge_up_to: Option<usize>,
    pub unexplained: Unexplained,
}

/// How differences no specific invariant explains are reported (always after everything else).
#[derive(Debug)]
pub enum Unexplained {
    /// One violation each, under the ID whose area the difference is in, in discovery order.
    Each,
    /// One violation per ID: `prefix` and at most `up_to` messages.
    Merged { prefix: &'static str, up_to: usize },
}

/// How strongly a finding points at its ID; the order violations come out in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    Specific,
    Secondary,
    Unexplained,
}

/// What a workload's checker rules found in one world, in discovery order.
#[derive(Debug)]
pub struct Findings {
    attribution: &'static Attribution,
    found: Vec<(Tier, BugId, String)>,
}

/// One checker rule of a workload: its state `C` in, findings out.
pub type Rule<C> = fn(&C, &mut Findings);

impl Findings {
    pub fn new(attribution: &'static Attribution) -> Self {
        Findings {
            attribution,
            found: Vec::new(),
        }
    }

    /// A violation of `id`'s own invariant.
    pub fn add(&mut self, id: BugId, message: impl Into<String>) {
        self.push(Tier::Specific, id, message.into());
    }

    /// A finding most defects also cause (a skipped row no longer warned about because it is no
    /// longer skipped): reported after every specific finding.
    pub fn add_secondary(&mut self, id: BugId, message: impl Into<String>) {
        self.push(Tier::Secondary, id, message.into());
    }

    /// A difference no specific invariant explains, in the area of `id`.
    pub fn unexplained(&mut self, id: BugId, message: impl Into<String>) {
        self.push(Tier::Unexplained, id, message.into());
    }

    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// Whether a specific finding of `id` was made.
    pub fn has(&self, id: BugId) -> bool {
        self.found
            .iter()
            .any(|(tier, i, _)| *tier == Tier::Specific && *i == id)
    }

    fn push(&mut self, tier: Tier, id: BugId, message: String) {
        assert!(
            self.attribution.priority.contains(&id),
            "{id} is not in the workload's priority list"
        );
        self.found.push((tier, id, message));
    }

    /// The violations, most specific first; within one ID in discovery order.
    pub fn into_violations(self) -> Vec<Violation> {
        let a = self.attribution;
        // Unexplained differences keep their discovery order; unlisted secondary IDs follow the
        // listed ones in catalog order.
        let rank = |tier: Tier, id: BugId| -> (Tier, usize, Option<BugId>) {
            let listed = match tier {
                Tier::Specific => a.priority,
                Tier::Secondary => a.secondary,
                Tier::Unexplained => return (tier, 0, None),
            };
            match listed.iter().position(|i| *i == id) {
                Some(at) => (tier, at, None),
                None => (tier, listed.len(), Some(id)),
            }
        };
        let mut found = self.found;
        // Stable: discovery order within one rank.
        found.sort_by_key(|(tier, id, _)| rank(*tier, *id));
        let mut groups: Vec<(Tier, BugId, Vec<String>)> = Vec::new();
        for (tier, id, message) in found {
            let merge_up_to = match (tier, &a.unexplained) {
                (Tier::Unexplained, Unexplained::Each) => None,
                (Tier::Unexplained, Unexplained::Merged { up_to, .. }) => Some(*up_to),
                _ => a.merge_up_to,
            };
            let Some(up_to) = merge_up_to else {
                groups.push((tier, id, vec![message]));
                continue;
            };
            match groups.iter_mut().find(|(t, i, _)| *t == tier && *i == id) {
                Some((_, _, messages)) if messages.len() < up_to => messages.push(message),
                Some(_) => {}
                None => groups.push((tier, id, vec![message])),
            }
        }
        groups
            .into_iter()
            .map(|(tier, id, messages)| {
                let prefix = match (tier, &a.unexplained) {
                    (Tier::Unexplained, Unexplained::Merged { prefix, .. }) => *prefix,
                    _ => "",
                };
                Violation::safety(id, format!("{prefix}{}", messages.join("; ")))
            })
            .collect()
    }
}
