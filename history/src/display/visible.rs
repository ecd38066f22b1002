//! Step 0 of the projection: which displays the rows make visible. A row counts only on a display
//! that a `UserAgent` marker among the rows makes visible; a planted legacy reader had no such
//! filter.

use std::collections::BTreeSet;

use super::envelope::{self, EnvelopeFields};
use super::family::Family;
use super::USER_AGENT_CLASS;
use crate::{BugId, Planted};

/// Step 0: the displays that a `UserAgent` marker among the rows makes visible; `All` when a
/// planted legacy reader had no such filter.
pub(super) enum Visible<'p> {
    All,
    Displays(BTreeSet<&'p str>),
}

impl Visible<'_> {
    /// Whether the row lies on a visible display.
    pub(super) fn admits(&self, env: &EnvelopeFields<'_>) -> bool {
        match self {
            Visible::All => true,
            Visible::Displays(visible) => env
                .str_field(envelope::DISPLAY_ID)
                .is_some_and(|d| visible.contains(d)),
        }
    }
}

/// Step 0: rows (those that parse as an envelope with a class chain) count only on a display
/// that a `UserAgent` marker among them makes visible. A marker counts whatever its payload or
/// other fields hold (as in the store's first stage).
pub(super) fn visible_displays<'p>(
    parsed: &'p [EnvelopeFields<'_>],
    planted: Planted,
) -> Visible<'p> {
    if planted.is(BugId::P2) || planted.is(BugId::P9) {
        // planted P2, P9: the legacy reader trusted its query and had no visibility filter.
        return Visible::All;
    }
    Visible::Displays(
        parsed
            .iter()
            .filter(|p| {
                p.str_field(envelope::AGENT_CLASS) == Some(USER_AGENT_CLASS)
                    && Family::marks_visible(&p.parents, planted)
            })
            .filter_map(|p| p.str_field(envelope::DISPLAY_ID))
            .collect(),
    )
}
