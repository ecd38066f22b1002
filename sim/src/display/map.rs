//! The display generator's map: which agent role emits which row family on a display in which
//! state, each combination a cell with a coverage probe (`display.map.<role>.<family>.<state>`).
//!
//! The contract (docs/display-projection.md) makes a display visible only through a user
//! message or HITL answer of the `UserAgent` class, and shows nothing of a display that never
//! becomes visible. A generator that only ever has the user agent speak first on the client's
//! display, and other agents stream after it, leaves most of that rule untested: the user agent
//! streaming on a display it never marks, a proxy's user message on a visible display, a row on
//! a display that a HITL answer makes visible later. The map names every combination; the
//! probes classify the rows of a played scenario by looking at them (never by asking the
//! generator), so a cell counts only when such a row was really written.

use super::scenario::{DisplayScenario, Event};
use crate::coverage::{possible_cells, probe_cube, Coverage};
use std::collections::{BTreeMap, BTreeSet};
use strum::IntoStaticStr;

/// Who emits a row, by its agent's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Role {
    /// The `UserAgent` class: what the client itself said.
    User,
    /// The request's primary agent.
    Primary,
    /// Delegated agents (researcher, retriever, critic).
    SubAgent,
    /// An agent that relays user input without being the `UserAgent` class (`*Proxy*`).
    Proxy,
}

/// Which family a row belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Family {
    UserMessage,
    HitlAnswer,
    HitlQuestion,
    Chunk,
    Stop,
    /// Rows of no family the history shows: custom classes, look-alikes, envelopes.
    Control,
}

/// The state of the row's display just before the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum DisplayState {
    /// A user-agent marker came earlier and no other agent has spoken as the user since the
    /// user's last turn there.
    Visible,
    /// No marker yet, one at this row or later: the display is made visible later.
    VisibleLater,
    /// No marker on the display, ever.
    NeverVisible,
    /// Visible, and another agent has written a user message or HITL answer there since the
    /// user's last turn on it.
    AfterForeignTurn,
}

pub const ROLES: [Role; 4] = [Role::User, Role::Primary, Role::SubAgent, Role::Proxy];
pub const FAMILIES: [Family; 6] = [
    Family::UserMessage,
    Family::HitlAnswer,
    Family::HitlQuestion,
    Family::Chunk,
    Family::Stop,
    Family::Control,
];
pub const STATES: [DisplayState; 4] = [
    DisplayState::Visible,
    DisplayState::VisibleLater,
    DisplayState::NeverVisible,
    DisplayState::AfterForeignTurn,
];

/// Whether a cell can exist at all: a user-agent marker makes its own display visible, so it
/// is never a row of a display that is never visible.
pub const fn possible(role: Role, family: Family, state: DisplayState) -> bool {
    !(matches!(role, Role::User)
        && matches!(family, Family::UserMessage | Family::HitlAnswer)
        && matches!(state, DisplayState::NeverVisible))
}

// The probe names of the whole cube, `[role][family][state]`, in the order of [`ROLES`],
// [`FAMILIES`] and [`STATES`] (a test holds the names to the enums' snake_case names).
probe_cube!(
    const CUBE = "display.map",
    #[cfg(test)]
    ROLE_NAMES ["user", "primary", "sub_agent", "proxy"],
    #[cfg(test)]
    FAMILY_NAMES [
        "user_message",
        "hitl_answer",
        "hitl_question",
        "chunk",
        "stop",
        "control",
    ],
    #[cfg(test)]
    STATE_NAMES [
        "visible",
        "visible_later",
        "never_visible",
        "after_foreign_turn"
    ],
);

/// How many cells can exist.
pub const CELL_COUNT: usize = 4 * 6 * 4 - 2;

/// The probe of every possible cell.
pub const PROBES: [&str; CELL_COUNT] = possible_cells!(CUBE, CELL_COUNT, |r, f, s| possible(
    ROLES[r],
    FAMILIES[f],
    STATES[s]
));

/// The probe of one cell.
pub fn probe(role: Role, family: Family, state: DisplayState) -> &'static str {
    debug_assert!(possible(role, family, state));
    CUBE[role as usize][family as usize][state as usize]
}

/// The role of an agent of `class`; `primary` tells the request's primary agent apart.
pub fn role_of(class: &str, primary: bool) -> Role {
    if class == model::display::USER_AGENT_CLASS {
        Role::User
    } else if primary {
        Role::Primary
    } else if class.contains("Proxy") {
        Role::Proxy
    } else {
        Role::SubAgent
    }
}

/// The family of a generated event.
pub fn family_of(event: &Event) -> Family {
    match event {
        Event::UserMessage { .. } => Family::UserMessage,
        Event::HitlAnswer { .. } => Family::HitlAnswer,
        Event::HitlQuestion { .. } => Family::HitlQuestion,
        Event::Chunk { .. } => Family::Chunk,
        Event::Stop { .. } => Family::Stop,
        Event::Decoy { .. } | Event::Custom { .. } | Event::Envelope { .. } => Family::Control,
    }
}

/// Fires the cell of every row of `s`, in emission order.
pub fn map_probes(s: &DisplayScenario, cov: &mut Coverage) {
    let steps: Vec<_> = s.turns.iter().flat_map(|t| t.steps.iter()).collect();
    let role = |agent: &str| {
        let class = s.agents.get(agent).map_or("", |a| a.class.as_str());
        role_of(class, agent == s.primary)
    };
    let is_user_turn = |e: &Event| matches!(family_of(e), Family::UserMessage | Family::HitlAnswer);
    let marked: BTreeSet<&str> = steps
        .iter()
        .filter(|st| is_user_turn(&st.event) && role(&st.agent) == Role::User)
        .map(|st| st.display.as_str())
        .collect();
    // Per display: whether a marker came already; whether another agent spoke as the user since
    // the user's last turn there.
    let mut seen: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for step in steps {
        let who = role(&step.agent);
        let (visible, foreign) = seen.get(step.display.as_str()).copied().unwrap_or_default();
        let state = match (visible, foreign) {
            (true, true) => DisplayState::AfterForeignTurn,
            (true, false) => DisplayState::Visible,
            _ if marked.contains(step.display.as_str()) => DisplayState::VisibleLater,
            _ => DisplayState::NeverVisible,
        };
        cov.hit(probe(who, family_of(&step.event), state));
        if is_user_turn(&step.event) {
            let entry = seen.entry(step.display.as_str()).or_default();
            if who == Role::User {
                *entry = (true, false);
            } else if entry.0 {
                entry.1 = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_follow_the_enums() {
        for r in ROLES {
            for f in FAMILIES {
                for s in STATES {
                    let names: [&str; 3] = [r.into(), f.into(), s.into()];
                    let listed = [
                        ROLE_NAMES[r as usize],
                        FAMILY_NAMES[f as usize],
                        STATE_NAMES[s as usize],
                    ];
                    assert_eq!(names, listed);
                    let name = format!("display.map.{}", names.join("."));
                    assert_eq!(CUBE[r as usize][f as usize][s as usize], name);
                    assert_eq!(PROBES.contains(&name.as_str()), possible(r, f, s));
                }
            }
        }
    }
}
