//! Known differences: where a real system's projection and histsim's contract part on purpose
//! (docs/display-projection.md, "Known differences with the published projector").
//!
//! A system under test declares the ones it has (the SUT protocol's `hello`); the model then
//! expects that system's documented behaviour instead of histsim's, and records each place it did
//! so as an accepted loss of the rule the difference weakens. The declaration is the system's
//! documented contract, never something read from its answers, so the model stays independent.

use std::collections::BTreeSet;

/// One documented difference, by its ID in docs/display-projection.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KnownDifference {
    /// D1: a user block of a class the projection does not convert (e.g. llama_index's `video`)
    /// is dropped without a warning; histsim drops it with `bad_media` (field `block_type`).
    /// Weakens P10 (no silent skip).
    UnconvertedBlockSilent,
    /// D2: an image block without a url (none, or empty) is dropped without a warning; histsim
    /// drops it with `bad_media` (field `url`). Weakens P10.
    UrlLessImageSilent,
    /// D3: a primary stop whose payload has no `output_messages` at all (an agent-in-the-loop
    /// envelope of the primary agent, whose chain reaches `StopEvent`) is read as an empty answer
    /// without a warning; histsim skips it with `bad_payload` (field `output_messages`). The
    /// messages agree. Weakens P10.
    AbsentStopAnswerSilent,
}

/// The differences one system declares.
pub type Declared = BTreeSet<KnownDifference>;

impl KnownDifference {
    /// Every known difference, in ID order.
    pub const ALL: [KnownDifference; 3] = [
        KnownDifference::UnconvertedBlockSilent,
        KnownDifference::UrlLessImageSilent,
        KnownDifference::AbsentStopAnswerSilent,
    ];

    /// Its ID in docs/display-projection.md.
    pub fn id(self) -> &'static str {
        match self {
            KnownDifference::UnconvertedBlockSilent => "D1",
            KnownDifference::UrlLessImageSilent => "D2",
            KnownDifference::AbsentStopAnswerSilent => "D3",
        }
    }

    /// The catalog ID of the rule it weakens.
    pub fn rule(self) -> &'static str {
        match self {
            KnownDifference::UnconvertedBlockSilent
            | KnownDifference::UrlLessImageSilent
            | KnownDifference::AbsentStopAnswerSilent => "P10",
        }
    }

    /// What the declaring system does, in a few words.
    pub fn summary(self) -> &'static str {
        match self {
            KnownDifference::UnconvertedBlockSilent => {
                "a block of a class the projection does not convert is dropped without a warning"
            }
            KnownDifference::UrlLessImageSilent => {
                "an image block without a url is dropped without a warning"
            }
            KnownDifference::AbsentStopAnswerSilent => {
                "a primary stop without output_messages is an empty answer, without a warning"
            }
        }
    }

    /// The field of the `bad_media` warning histsim gives where the declaring system drops a
    /// block silently; `None` for a difference about another warning.
    pub fn silenced_media_field(self) -> Option<&'static str> {
        match self {
            KnownDifference::UnconvertedBlockSilent => Some("block_type"),
            KnownDifference::UrlLessImageSilent => Some("url"),
            KnownDifference::AbsentStopAnswerSilent => None,
        }
    }

    /// The warning (code and field) histsim gives where the declaring system says nothing.
    pub fn silenced_warning(self) -> (&'static str, &'static str) {
        match self.silenced_media_field() {
            Some(field) => (super::transcript::code::BAD_MEDIA, field),
            None => (super::transcript::code::BAD_PAYLOAD, "output_messages"),
        }
    }

    /// The words an accepted loss of this difference starts with (see [`Self::of_loss`]).
    pub fn loss_why(self) -> String {
        format!("{}, declared by the system: {}", self.id(), self.summary())
    }

    /// The difference an accepted loss was recorded for, if any.
    pub fn of_loss(loss: &super::AcceptedLoss) -> Option<KnownDifference> {
        KnownDifference::ALL
            .into_iter()
            .find(|d| loss.rule == d.rule() && loss.why == d.loss_why())
    }

    /// The difference an ID names, or `None` for an ID the document does not define.
    pub fn parse(id: &str) -> Option<KnownDifference> {
        KnownDifference::ALL.into_iter().find(|d| d.id() == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_unknown_ids_are_refused() {
        for d in KnownDifference::ALL {
            assert_eq!(KnownDifference::parse(d.id()), Some(d));
        }
        assert_eq!(KnownDifference::parse("D0"), None);
        assert_eq!(KnownDifference::parse("d1"), None);
    }
}
