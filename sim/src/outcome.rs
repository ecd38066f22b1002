//! What a run found: invariant violations, each naming its catalog ID.

use crate::divergence::{Divergence, TraceMark};
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
    /// The first request whose answer departs from the model, where the rule concerns requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_divergence: Option<Divergence>,
    /// Why a violation names no first wrong answer: its rule judges a whole state (the rows a
    /// store holds at the end, a disk image, a recording after a restart), not one request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_state: Option<String>,
    /// What marks the trace lines this violation concerns (its requests, the deliveries it
    /// names): what a failure shows of the trace.
    #[serde(skip)]
    pub trace_marks: Vec<TraceMark>,
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
            first_divergence: None,
            whole_state: None,
            trace_marks: Vec::new(),
        }
    }

    pub fn liveness(id: BugId, message: impl Into<String>) -> Self {
        Violation {
            id,
            kind: ViolationKind::Liveness,
            message: message.into(),
            first_divergence: None,
            whole_state: None,
            trace_marks: Vec::new(),
        }
    }

    /// This violation of a whole-state rule: `state` says what it judged.
    pub fn of_whole_state(self, state: impl Into<String>) -> Self {
        Violation {
            whole_state: Some(state.into()),
            ..self
        }
    }

    /// This violation with the first request whose answer departs from the model.
    pub fn diverged_at(self, divergence: Divergence) -> Self {
        Violation {
            first_divergence: Some(divergence),
            ..self
        }
    }

    /// What a failure says under this violation: its first wrong answer, or that its rule is a
    /// whole-state rule (and why); `None` when it names neither.
    pub fn first_wrong_answer(&self) -> Option<String> {
        match (&self.first_divergence, &self.whole_state) {
            (Some(d), _) => Some(d.to_string()),
            (None, Some(why)) => Some(format!("none, a whole-state rule: {why}")),
            (None, None) => None,
        }
    }

    /// The kind in a word, as a report says it: `safety` or `liveness`.
    pub fn kind_word(&self) -> &'static str {
        match self.kind {
            ViolationKind::Safety => "safety",
            ViolationKind::Liveness => "liveness",
        }
    }
}

/// With a system under test, the first wrong answers given by the system's own processes (those
/// `of_the_system` recognizes by the name a divergence gives them: a store, a replica) named
/// with the command the system runs as well (``the memory store (`python3 store.py`)``), so a
/// report says which program answered. Histsim's own parts keep their names.
pub fn name_the_system(
    violations: &mut [Violation],
    command: &str,
    of_the_system: impl Fn(&str) -> bool,
) {
    for d in violations
        .iter_mut()
        .filter_map(|v| v.first_divergence.as_mut())
        .filter(|d| of_the_system(&d.by))
    {
        d.by = format!("{} (`{command}`)", d.by);
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

/// Where a finding points: the request whose answer departed from the model, and the trace
/// lines the finding concerns.
#[derive(Clone, Debug, Default)]
pub struct Pointer {
    pub divergence: Option<Divergence>,
    pub marks: Vec<TraceMark>,
    /// A finding of a whole-state rule: what state it judged, in words.
    pub whole_state: Option<String>,
}

impl Pointer {
    /// A request whose answer departed, its trace lines marked by `mark`.
    pub fn request(divergence: Divergence, mark: TraceMark) -> Self {
        Pointer {
            divergence: Some(divergence),
            marks: vec![mark],
            whole_state: None,
        }
    }

    /// Trace lines a finding about no one request concerns.
    pub fn lines(marks: Vec<TraceMark>) -> Self {
        Pointer {
            divergence: None,
            marks,
            whole_state: None,
        }
    }

    /// A finding of a whole-state rule, which no single request answered: `state` says what
    /// it judged (`the rows each store holds at the end`).
    pub fn whole_state(state: impl Into<String>) -> Self {
        Pointer {
            whole_state: Some(state.into()),
            ..Pointer::default()
        }
    }

    /// This pointer as a whole-state rule's (its trace lines kept).
    pub fn of_whole_state(self, state: impl Into<String>) -> Self {
        Pointer {
            whole_state: Some(state.into()),
            ..self
        }
    }

    /// This pointer with the model's answer said otherwise (`expected`).
    pub fn answered_instead(mut self, expected: impl Into<String>) -> Self {
        if let Some(d) = &mut self.divergence {
            d.expected = expected.into();
        }
        self
    }

    /// This pointer with more trace lines marked.
    pub fn and(mut self, mark: TraceMark) -> Self {
        self.marks.push(mark);
        self
    }
}

/// One finding: its tier, ID, words and where it points.
#[derive(Debug)]
struct Found {
    tier: Tier,
    id: BugId,
    message: String,
    pointer: Pointer,
}

/// The findings of one ID as one violation: its messages, the earliest divergence among all of
/// them (the messages past the cap included) and every trace mark.
struct Group {
    tier: Tier,
    id: BugId,
    messages: Vec<String>,
    divergence: Option<Divergence>,
    /// The mark of the divergence's own request ([`Pointer::request`]'s first).
    divergence_mark: Option<TraceMark>,
    marks: Vec<TraceMark>,
    /// The first whole-state rule's words among the findings.
    whole_state: Option<String>,
}

impl Group {
    fn of(found: Found) -> Self {
        Group {
            tier: found.tier,
            id: found.id,
            divergence_mark: found
                .pointer
                .divergence
                .is_some()
                .then(|| found.pointer.marks.first().cloned())
                .flatten(),
            messages: vec![found.message],
            divergence: found.pointer.divergence,
            marks: found.pointer.marks,
            whole_state: found.pointer.whole_state,
        }
    }

    /// Every trace mark, the divergence's request's first.
    fn marks(self) -> Vec<TraceMark> {
        let mut marks = self.marks;
        if let Some(m) = self.divergence_mark {
            if !marks.contains(&m) {
                marks.insert(0, m);
            }
        }
        marks
    }

    /// Takes one more finding of this ID: its words and trace lines while fewer than `up_to`
    /// are shown (the trace lines shown are those the words name), its divergence if earlier.
    fn take(&mut self, found: Found, up_to: usize) {
        if let Some(d) = found.pointer.divergence {
            if self
                .divergence
                .as_ref()
                .is_none_or(|e| d.order() < e.order())
            {
                self.divergence = Some(d);
                self.divergence_mark = found.pointer.marks.first().cloned();
            }
        }
        if self.whole_state.is_none() {
            self.whole_state = found.pointer.whole_state;
        }
        if self.messages.len() >= up_to {
            return;
        }
        self.messages.push(found.message);
        for mark in found.pointer.marks {
            if !self.marks.contains(&mark) {
                self.marks.push(mark);
            }
        }
    }
}

/// What a workload's checker rules found in one world, in discovery order.
#[derive(Debug)]
pub struct Findings {
    attribution: &'static Attribution,
    found: Vec<Found>,
}

impl Findings {
    pub fn new(attribution: &'static Attribution) -> Self {
        Findings {
            attribution,
            found: Vec::new(),
        }
    }

    /// A violation of `id`'s own invariant, pointing at a request or at trace lines.
    pub fn add_at(&mut self, id: BugId, pointer: Pointer, message: impl Into<String>) {
        self.push(Tier::Specific, id, message.into(), pointer);
    }

    /// A violation of `id`'s own invariant by a whole state (no single request answered it):
    /// `state` says what was judged.
    pub fn add_whole_state(
        &mut self,
        id: BugId,
        state: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.add_at(id, Pointer::whole_state(state), message);
    }

    /// A finding most defects also cause (a skipped row no longer warned about because it is no
    /// longer skipped), pointing at a request or at trace lines: reported after every specific
    /// finding.
    pub fn secondary_at(&mut self, id: BugId, pointer: Pointer, message: impl Into<String>) {
        self.push(Tier::Secondary, id, message.into(), pointer);
    }

    /// A difference no specific invariant explains, in the area of `id`, pointing at a request or
    /// at trace lines.
    pub fn unexplained_at(&mut self, id: BugId, pointer: Pointer, message: impl Into<String>) {
        self.push(Tier::Unexplained, id, message.into(), pointer);
    }

    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// Whether a specific finding of `id` was made.
    pub fn has(&self, id: BugId) -> bool {
        self.found
            .iter()
            .any(|f| f.tier == Tier::Specific && f.id == id)
    }

    fn push(&mut self, tier: Tier, id: BugId, message: String, pointer: Pointer) {
        assert!(
            self.attribution.priority.contains(&id),
            "{id} is not in the workload's priority list"
        );
        self.found.push(Found {
            tier,
            id,
            message,
            pointer,
        });
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
        found.sort_by_key(|f| rank(f.tier, f.id));
        let mut groups: Vec<Group> = Vec::new();
        for f in found {
            let merge_up_to = match (f.tier, &a.unexplained) {
                (Tier::Unexplained, Unexplained::Each) => None,
                (Tier::Unexplained, Unexplained::Merged { up_to, .. }) => Some(*up_to),
                _ => a.merge_up_to,
            };
            let Some(up_to) = merge_up_to else {
                groups.push(Group::of(f));
                continue;
            };
            match groups.iter_mut().find(|g| g.tier == f.tier && g.id == f.id) {
                Some(g) => g.take(f, up_to),
                None => groups.push(Group::of(f)),
            }
        }
        groups
            .into_iter()
            .map(|g| {
                let prefix = match (g.tier, &a.unexplained) {
                    (Tier::Unexplained, Unexplained::Merged { prefix, .. }) => *prefix,
                    _ => "",
                };
                let message = format!("{prefix}{}", g.messages.join("; "));
                let id = g.id;
                Violation {
                    first_divergence: g.divergence.clone(),
                    // A request that answered wrong says more than a whole state.
                    whole_state: g.whole_state.clone().filter(|_| g.divergence.is_none()),
                    trace_marks: g.marks(),
                    ..Violation::safety(id, message)
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_processes_of_a_system_under_test_are_named_with_its_command() {
        let at = |by: &str| {
            Violation::safety(BugId::R9, "x")
                .diverged_at(Divergence::of("page", 1, 2, by).answers("a", "b"))
        };
        let mut v = vec![
            at("replica-2"),
            at("the client merge"),
            Violation::safety(BugId::R9, "y"),
        ];
        name_the_system(&mut v, "python3 display.py", |by| {
            by.starts_with("replica-")
        });
        let by: Vec<Option<&str>> = (v.iter())
            .map(|v| v.first_divergence.as_ref().map(|d| d.by.as_str()))
            .collect();
        assert_eq!(
            by,
            [
                Some("replica-2 (`python3 display.py`)"),
                Some("the client merge"),
                None
            ]
        );
    }
}
