//! The five projectable event families and the membership test on a row's class chain.
//!
//! Membership is exact element equality on `event_parents` (contract, "Families and membership"):
//! a class named `NoAnswerStopEvent` or `XChunkEventY` belongs to no family. The legacy reader used
//! a regex substring match, which planted bug P7 restores.

use crate::{BugId, Planted};

/// A projectable event family. The order of the variants is the order a single class name is
/// tested against when the substring rule (P7) lets one name contain several family names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// `UserMessageEvent`: a user turn; from the `UserAgent` it marks the display visible.
    UserMessage,
    /// `HumanInTheLoopRequestEvent`: an agent's question to the human (assistant text).
    HitlRequest,
    /// `HumanInTheLoopResponseEvent`: the human's answer (user text); from the `UserAgent` it marks
    /// the display visible.
    HitlResponse,
    /// `ChunkEvent`: streamed assistant text.
    Chunk,
    /// `StopEvent`: the end of a run, carrying the final answer.
    Stop,
}

impl Family {
    /// Every family, in declaration order.
    pub const ALL: [Family; 5] = [
        Family::UserMessage,
        Family::HitlRequest,
        Family::HitlResponse,
        Family::Chunk,
        Family::Stop,
    ];

    /// The class name that `event_parents` carries for this family.
    pub fn class_name(self) -> &'static str {
        match self {
            Family::UserMessage => "UserMessageEvent",
            Family::HitlRequest => "HumanInTheLoopRequestEvent",
            Family::HitlResponse => "HumanInTheLoopResponseEvent",
            Family::Chunk => "ChunkEvent",
            Family::Stop => "StopEvent",
        }
    }

    /// The one `event_data` field the projector reads for this family (besides `created_at`).
    pub fn payload_field(self) -> &'static str {
        match self {
            Family::UserMessage => "messages",
            Family::HitlRequest => "question",
            Family::HitlResponse => "response",
            Family::Chunk => "content",
            Family::Stop => "output_messages",
        }
    }

    /// The family whose rules apply to a row: the first family named in its class chain (most
    /// specific first), or `None` when the chain names none.
    pub fn of_parents(parents: &[impl AsRef<str>], planted: Planted) -> Option<Family> {
        parents
            .iter()
            .find_map(|p| Family::of_class(p.as_ref(), planted))
    }

    /// The family a single class name denotes.
    pub fn of_class(class: &str, planted: Planted) -> Option<Family> {
        if planted.is(BugId::P7) {
            // planted P7: the legacy `__contains` regex matched any class containing a family name.
            return Family::ALL
                .into_iter()
                .find(|f| class.contains(f.class_name()));
        }
        Family::ALL.into_iter().find(|f| f.class_name() == class)
    }

    /// Whether `family` is an element of the chain (membership, whatever comes first).
    pub fn is_member(self, parents: &[impl AsRef<str>], planted: Planted) -> bool {
        parents.iter().any(|p| {
            let p = p.as_ref();
            if planted.is(BugId::P7) {
                // planted P7: substring membership, as in `of_class`.
                p.contains(self.class_name())
            } else {
                p == self.class_name()
            }
        })
    }

    /// Whether a row with this chain marks its display visible when the `UserAgent` emitted it:
    /// it belongs to `UserMessageEvent` or `HumanInTheLoopResponseEvent`.
    pub fn marks_visible(parents: &[impl AsRef<str>], planted: Planted) -> bool {
        Family::UserMessage.is_member(parents, planted)
            || Family::HitlResponse.is_member(parents, planted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_is_exact_element_equality() {
        let p = Planted::none();
        assert_eq!(
            Family::of_parents(&["CustomStopEvent", "StopEvent"], p),
            Some(Family::Stop)
        );
        assert_eq!(Family::of_parents(&["NoAnswerStopEvent"], p), None);
        assert_eq!(Family::of_parents(&["XChunkEventY", "BaseEvent"], p), None);
        assert_eq!(Family::of_parents(&["UserMessageEventLog"], p), None);
        let empty: [&str; 0] = [];
        assert_eq!(Family::of_parents(&empty, p), None);
        assert!(!Family::marks_visible(&["UserMessageEventLog"], p));
        assert!(Family::marks_visible(
            &["X", "HumanInTheLoopResponseEvent"],
            p
        ));
    }

    #[test]
    fn the_first_family_in_chain_order_wins() {
        let p = Planted::none();
        let chain = ["Custom", "ChunkEvent", "UserMessageEvent"];
        assert_eq!(Family::of_parents(&chain, p), Some(Family::Chunk));
        // Membership is still membership: the chain belongs to UserMessageEvent as well.
        assert!(Family::UserMessage.is_member(&chain, p));
        assert!(Family::marks_visible(&chain, p));
    }

    #[test]
    fn class_names_round_trip() {
        for f in Family::ALL {
            assert_eq!(Family::of_class(f.class_name(), Planted::none()), Some(f));
        }
    }
}
