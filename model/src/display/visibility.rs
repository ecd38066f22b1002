//! Which displays the client can see (P2, P9, P11).
//!
//! A display is visible when it holds a marker (see [`Emission::is_marker`]): the live client
//! subscribes to thread + display, and only a display on which the client itself spoke (a user
//! message or a HITL answer that reached the store) is one it subscribed to. Visibility is a
//! property of the whole conversation, not of a prefix: a display that becomes visible through a
//! later HITL answer shows its earlier output too.

use std::collections::BTreeSet;

use super::conversation::{Conversation, Emission};

/// The visible displays of `conversation`, ascending.
pub fn visible_displays(conversation: &Conversation) -> BTreeSet<String> {
    conversation
        .emissions
        .iter()
        .filter(|emission| emission.is_marker())
        .map(|emission: &Emission| emission.display.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::build::*;
    use super::*;

    #[test]
    fn only_persisted_user_agent_markers_count() {
        let conversation = Build::new()
            .emit(USER, "d1", user_text("hi"))
            .emit(USER, "d2", answer_text("ok"))
            .emit(USER, "d3", user_text("lost"))
            .lost()
            .emit(LEAD, "d4", user_text("not the client"))
            .emit(USER, "d5", question("a question is no marker"))
            .emit(USER, "d6", decoy("UserMessageEventLog"))
            .emit(USER, "d7", user_text("malformed still marks"))
            .defect(bad_payload("messages"))
            .done();
        let visible: Vec<String> = visible_displays(&conversation).into_iter().collect();
        assert_eq!(visible, vec!["d1", "d2", "d7"]);
    }
}
