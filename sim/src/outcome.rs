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
