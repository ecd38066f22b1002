//! `model::display`: what a client must see of a conversation (contract:
//! docs/display-projection.md).
//!
//! This is not a second projector over rows. It works on the ground truth as the simulator
//! generates it: typed [`Emission`]s in emission order, plus the simulation's own fault decisions
//! (`persisted`, `defect`). [`visible_displays`] fixes which displays the client sees;
//! [`ClientView`] then takes the emissions one at a time and ends in a [`Transcript`]: the
//! messages, the warnings the projector must report, and the losses the contract accepts, each
//! with its catalog ID.
//!
//! How the model reads points the contract leaves open (the projector must agree):
//! - Every emission is a display-event row (`event_type` `"display_event"`); a control-event row
//!   is an `Unrelated` emission.
//! - `BadIdentity` may name only agent_id, run_id, event_name or event_id (asserted): the other
//!   four identity fields route the row (quarantine, another thread/display/class/topic).
//! - `bad_created_at` names the field `created_at`.
//! - A stop that is not the primary's is never read: a bad payload there warns nothing; a bad
//!   identity or created_at still warns (those checks come before the walk).
//! - A chunk, HITL question or HITL answer with empty text is a bad payload (`content`,
//!   `question`, `response`), as the published projector has it; the answer still resets.
//! - A user message keeps one part per kept block, and consecutive user contributions on one
//!   display keep their parts side by side; assistant text (chunks, questions, stop suffixes)
//!   concatenates onto a trailing text part.
//! - A user turn that shows nothing (all blocks dropped, or a malformed payload)
//!   still resets the streamed text but does not end the previous message, so the next assistant
//!   text merges into it. A bad identity or created_at skips the row before any turn: no reset.
//! - Only `UserAgent` speaks for the user: a user-message or HITL-answer emission of any other
//!   class is no user turn and its payload is unread (no warning for a bad one).
//! - A HITL question is streamed text: a primary stop repeating it adds nothing.
//! - Expected warnings are one per emission; the projector may order them differently, and each
//!   stored copy of a bad-identity row (which has no identity to dedup on) may warn again.
//!
//! ```
//! use model::display::{client_transcript, Agent, Conversation, Emission, EmissionKind, Part, Role, UserBlock};
//!
//! let emission = |index: usize, agent: Agent, kind: EmissionKind, persisted: bool| Emission {
//!     index,
//!     event_id: format!("e{index}"),
//!     agent,
//!     display: "d1".to_string(),
//!     run: "r1".to_string(),
//!     kind,
//!     persisted,
//!     defect: None,
//! };
//! let lead = Agent::new("LeadAgent", "a1");
//! let conversation = Conversation {
//!     primary: Some(lead.clone()),
//!     emissions: vec![
//!         emission(0, Agent::new("UserAgent", "u1"), EmissionKind::UserMessage { blocks: vec![UserBlock::Text("hi".into())] }, true),
//!         emission(1, lead.clone(), EmissionKind::Chunk { text: "Hel".into() }, true),
//!         emission(2, lead.clone(), EmissionKind::Chunk { text: "lo".into() }, false), // lost to the race
//!         emission(3, lead.clone(), EmissionKind::Stop { answer: "Hello".into() }, true),
//!     ],
//! };
//! let transcript = client_transcript(&conversation);
//! assert_eq!(transcript.messages.len(), 2);
//! assert_eq!(transcript.messages[1].role, Role::Assistant);
//! assert_eq!(transcript.messages[1].parts, vec![Part::Text("Hello".into())]);
//! assert_eq!(transcript.accepted_losses[0].rule, "P5"); // chunk 2, recovered by the stop
//! ```

mod conversation;
mod differences;
mod media;
mod provenance;
mod transcript;
mod view;
mod visibility;

#[cfg(test)]
mod build;
#[cfg(test)]
mod tests;

pub use conversation::{
    Agent, AudioData, Conversation, Defect, Emission, EmissionKind, HitlAnswer, LegacyByte,
    UserBlock, DEFECTIVE_IDENTITY_FIELDS, IDENTITY_FIELDS, USER_AGENT_CLASS,
};
pub use differences::{Declared, KnownDifference};
pub use media::{convert_block, message_is_malformed, Converted, KNOWN_BLOCK_TYPES};
pub use provenance::{text_sources, TextSource};
pub use transcript::{code, AcceptedLoss, ExpectedWarning, Message, Part, Role, Transcript};
pub use view::ClientView;
pub use visibility::visible_displays;

/// What the client of `conversation` must see, with the expected warnings and accepted losses.
///
/// Panics when the conversation breaks a guarantee of the simulator (indices out of order, a
/// repeated event id, a defect the model cannot place): those are generator bugs.
pub fn client_transcript(conversation: &Conversation) -> Transcript {
    client_transcript_declaring(conversation, &Declared::new())
}

/// What the client must see of the first `stored.len()` emissions of `conversation` had
/// exactly those `stored` marks reached the store (`stored[i]` for emission `i`), whatever their
/// own `persisted` says: the model of a read taken while the store holds part of what it will.
/// The emissions after the prefix are not modelled: ones never stored after the last stored one
/// change no message, only accepted losses.
pub fn client_transcript_when_stored(conversation: &Conversation, stored: &[bool]) -> Transcript {
    let emissions = &conversation.emissions[..stored.len()];
    let visible = (emissions.iter().zip(stored))
        .filter(|(emission, &stored)| stored && emission.marks_its_display())
        .map(|(emission, _)| emission.display.clone())
        .collect();
    ClientView::new(conversation.primary.clone(), visible)
        .transcript_where(emissions, |emission| stored[emission.index])
}

/// [`client_transcript`] for a system that declares the known differences `declared`: where one
/// applies, the model expects the system's documented behaviour and records an accepted loss.
pub fn client_transcript_declaring(conversation: &Conversation, declared: &Declared) -> Transcript {
    ClientView::new(conversation.primary.clone(), visible_displays(conversation))
        .declaring(declared.clone())
        .transcript_of(&conversation.emissions)
}
