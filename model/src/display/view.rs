//! The client's view as a state machine over emissions.
//!
//! [`ClientView`] starts from the set of visible displays and the primary agent, takes the
//! emissions one at a time in emission order ([`ClientView::apply`]), and ends in a
//! [`Transcript`] ([`ClientView::finish`]). Per display it keeps the *streamed text* (what the
//! client has seen streamed since its last turn on that display), which decides what the primary
//! stop may still add [P5]. It also tracks, per display, the chunks that never reached the store
//! since the last streamed contribution, to state for each whether the stop recovered it.

use std::collections::{BTreeMap, BTreeSet};

use super::conversation::{
    Agent, Defect, Emission, EmissionKind, UserBlock, DEFECTIVE_IDENTITY_FIELDS,
};
use super::media::{convert_block, Converted};
use super::transcript::{code, AcceptedLoss, ExpectedWarning, Message, Part, Role, Transcript};

/// The state of the client's view part-way through a conversation.
#[derive(Clone, Debug)]
pub struct ClientView {
    /// The request's primary agent; `None`: every stop is ignored.
    primary: Option<Agent>,
    /// Displays the client sees (fixed for the whole conversation).
    visible: BTreeSet<String>,
    /// The index the next applied emission must carry.
    next_index: usize,
    /// Event ids seen so far: the contract's identity is unique per emitted event.
    event_ids: BTreeSet<String>,
    /// Per visible display: chunk and recovered stop text since the last user turn there.
    streamed: BTreeMap<String, String>,
    /// Per visible display: unpersisted chunks since the last persisted contribution to the
    /// streamed text, in order. Only a stop can still recover them.
    pending_dropped: BTreeMap<String, Vec<usize>>,
    messages: Vec<Message>,
    warnings: Vec<ExpectedWarning>,
    losses: Vec<AcceptedLoss>,
}

impl ClientView {
    /// An empty view of a conversation whose visible displays are `visible`.
    pub fn new(primary: Option<Agent>, visible: BTreeSet<String>) -> ClientView {
        ClientView {
            primary,
            visible,
            next_index: 0,
            event_ids: BTreeSet::new(),
            streamed: BTreeMap::new(),
            pending_dropped: BTreeMap::new(),
            messages: Vec::new(),
            warnings: Vec::new(),
            losses: Vec::new(),
        }
    }

    /// The messages so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Takes the next emission.
    pub fn apply(&mut self, emission: &Emission) {
        self.check_emission(emission);
        self.next_index += 1;
        if !emission.persisted {
            self.not_persisted(emission);
            return;
        }
        if !emission.kind.is_family() {
            return; // P1, P7: never parsed, never shown.
        }
        if !self.visible.contains(&emission.display) {
            if self.visible.is_empty() {
                self.loss("P9", emission.index, "persisted, but the thread has no visible display, so it reads empty".into());
            }
            return; // P2: hidden output never reaches the client.
        }
        if let Some(defect) = &emission.defect {
            self.defective(emission, defect);
            return;
        }
        match &emission.kind {
            EmissionKind::UserMessage { blocks } => self.user_message(emission, blocks),
            EmissionKind::HitlAnswer { answer } => {
                self.reset(&emission.display);
                self.contribute(Role::User, &emission.display, text_parts(answer.render()));
            }
            EmissionKind::HitlQuestion { question } => {
                self.contribute(Role::Assistant, &emission.display, text_parts(question.clone()));
            }
            EmissionKind::Chunk { text } => self.chunk(emission, text),
            EmissionKind::Stop { answer } => self.stop(emission, answer),
            EmissionKind::Decoy { .. } | EmissionKind::Unrelated { .. } => {
                unreachable!("non-family emissions return above")
            }
        }
    }

    /// The final transcript.
    pub fn finish(mut self) -> Transcript {
        let pending = std::mem::take(&mut self.pending_dropped);
        for (display, indices) in pending {
            for index in indices {
                self.loss("P5", index, format!("chunk never persisted and no primary stop on display {display} recovered it before the end"));
            }
        }
        if self.visible.is_empty() {
            assert!(self.messages.is_empty() && self.warnings.is_empty());
            self.warnings.push(ExpectedWarning {
                code: code::NO_VISIBLE_DISPLAY,
                emission: None,
                field: None,
            });
        }
        self.losses.sort_by_key(|loss| loss.emission);
        Transcript {
            messages: self.messages,
            expected_warnings: self.warnings,
            accepted_losses: self.losses,
        }
    }

    /// Preconditions the simulator guarantees; a violation is a generator bug, not bad input.
    fn check_emission(&mut self, emission: &Emission) {
        assert_eq!(emission.index, self.next_index, "emissions must be applied in order");
        assert!(
            self.event_ids.insert(emission.event_id.clone()),
            "event_id {} repeats (emission {})",
            emission.event_id,
            emission.index
        );
        match &emission.defect {
            Some(Defect::BadIdentity { field }) => assert!(
                DEFECTIVE_IDENTITY_FIELDS.contains(&field.as_str()),
                "emission {}: BadIdentity on {field:?} would move the row off this display; \
                 the model supports only {DEFECTIVE_IDENTITY_FIELDS:?}",
                emission.index
            ),
            Some(Defect::BadPayload { field }) if emission.kind.is_family() => assert_eq!(
                Some(field.as_str()),
                emission.kind.payload_field(),
                "emission {}: BadPayload must name the family's payload field",
                emission.index
            ),
            _ => {}
        }
    }

    /// A persisted, defective family row on a visible display: skipped, with a warning unless it
    /// is a stop the projector never reads (P6: a non-primary stop's payload is unread).
    fn defective(&mut self, emission: &Emission, defect: &Defect) {
        let (code, field) = match defect {
            Defect::BadIdentity { field } => (code::BAD_IDENTITY, field.clone()),
            Defect::BadCreatedAt => (code::BAD_CREATED_AT, "created_at".to_string()),
            Defect::BadPayload { field } => {
                let is_stop = matches!(emission.kind, EmissionKind::Stop { .. });
                if is_stop && !self.is_primary(&emission.agent) {
                    return;
                }
                (code::BAD_PAYLOAD, field.clone())
            }
        };
        self.warn(code, emission.index, field);
    }

    fn user_message(&mut self, emission: &Emission, blocks: &[UserBlock]) {
        let mut parts = Vec::new();
        for block in blocks {
            match convert_block(block) {
                Converted::Part(part) => parts.push(part),
                Converted::Nothing => {}
                Converted::Dropped { field } => {
                    self.warn(code::BAD_MEDIA, emission.index, field.to_string())
                }
            }
        }
        // Even a message whose blocks all drop is a user turn: it resets.
        self.reset(&emission.display);
        self.contribute(Role::User, &emission.display, parts);
    }

    fn chunk(&mut self, emission: &Emission, text: &str) {
        if text.is_empty() {
            // The contract requires non-empty content: an empty chunk is a malformed row.
            self.warn(code::BAD_PAYLOAD, emission.index, "content".to_string());
            return;
        }
        let display = &emission.display;
        self.streamed.entry(display.clone()).or_default().push_str(text);
        for index in self.pending_dropped.remove(display).unwrap_or_default() {
            self.loss("P5", index, format!("chunk never persisted; lost: the later chunk {} on display {display} persisted, so the streamed text has a gap and is no prefix of any answer", emission.index));
        }
        self.contribute(Role::Assistant, display, text_parts(text.to_string()));
    }

    /// The primary stop supplies what the client has not seen, when what it saw is a prefix of
    /// the answer [P5]; any other stop changes nothing [P6].
    fn stop(&mut self, emission: &Emission, answer: &str) {
        if !self.is_primary(&emission.agent) {
            return;
        }
        let display = &emission.display;
        let streamed = self.streamed.entry(display.clone()).or_default();
        let Some(remainder) = answer.strip_prefix(streamed.as_str()) else {
            return; // Divergent: what was streamed stays.
        };
        if remainder.is_empty() {
            return;
        }
        let remainder = remainder.to_string();
        streamed.push_str(&remainder);
        for index in self.pending_dropped.remove(display).unwrap_or_default() {
            self.loss("P5", index, format!("chunk never persisted; recovered: part of the suffix the primary stop {} supplied on display {display}", emission.index));
        }
        self.contribute(Role::Assistant, display, text_parts(remainder));
    }

    fn not_persisted(&mut self, emission: &Emission) {
        let display = &emission.display;
        let index = emission.index;
        if !matches!(emission.kind, EmissionKind::Chunk { .. }) {
            let shown = emission.kind.is_family() && self.visible.contains(display);
            let effect = if shown {
                "the client does not see it"
            } else {
                "it would not have been shown anyway"
            };
            self.loss("P14", index, format!("never reached the store; {effect}"));
        } else if self.visible.contains(display) {
            self.pending_dropped.entry(display.clone()).or_default().push(index);
        } else {
            self.loss("P5", index, format!("chunk never persisted; display {display} is not visible, so it would not have been shown anyway"));
        }
    }

    /// A user turn on `display`: the streamed text starts over, and dropped chunks before it are
    /// past recovery.
    fn reset(&mut self, display: &str) {
        self.streamed.remove(display);
        for index in self.pending_dropped.remove(display).unwrap_or_default() {
            self.loss("P5", index, format!("chunk never persisted; lost: no primary stop on display {display} recovered it before the next user turn"));
        }
    }

    /// Adds a contribution, merging it into the last message when role and display match.
    fn contribute(&mut self, role: Role, display: &str, parts: Vec<Part>) {
        assert!(self.visible.contains(display));
        if parts.is_empty() {
            return;
        }
        match self.messages.last_mut() {
            Some(last) if last.role == role && last.display == display => {
                for part in parts {
                    append_part(&mut last.parts, part);
                }
            }
            _ => self.messages.push(Message {
                role,
                display: display.to_string(),
                parts,
            }),
        }
    }

    fn is_primary(&self, agent: &Agent) -> bool {
        self.primary.as_ref() == Some(agent)
    }

    fn warn(&mut self, code: &'static str, emission: usize, field: String) {
        self.warnings.push(ExpectedWarning {
            code,
            emission: Some(emission),
            field: Some(field),
        });
    }

    fn loss(&mut self, rule: &'static str, emission: usize, why: String) {
        self.losses.push(AcceptedLoss {
            rule,
            emission,
            why,
        });
    }
}

/// One text part, or none for the empty string (a text part is never empty).
fn text_parts(text: String) -> Vec<Part> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![Part::Text(text)]
    }
}

/// Appends `part`, concatenating text onto a trailing text part.
fn append_part(parts: &mut Vec<Part>, part: Part) {
    if let (Some(Part::Text(trailing)), Part::Text(text)) = (parts.last_mut(), &part) {
        trailing.push_str(text);
        return;
    }
    parts.push(part);
}
