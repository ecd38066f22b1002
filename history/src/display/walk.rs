//! Steps 3 and 4 of the projector: the walk over the ordered rows, keeping per display the text
//! streamed since the last user turn (which a primary stop can complete, P5, P6), and the merging
//! of consecutive contributions of one role on one display.

use std::collections::BTreeMap;

use super::chat::{ChatMessage, ContentPart, Role};
use super::envelope::{self, EnvelopeFields};
use super::family::Family;
use super::identity::AgentIdentity;
use super::json;
use super::payload::{self, PayloadCell, Reading};
use super::warning::{with_raw_data, Warning, WarningCode};
use super::USER_AGENT_CLASS;
use crate::{BugId, Planted};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// A row of a family on a visible display whose identity is complete and whose `created_at` is
/// an integer, ready for the walk. It borrows the row's envelope: the steps pass small handles
/// of rows, never the rows themselves.
#[derive(Clone, Copy)]
pub(super) struct Ordered<'p, 'a> {
    pub(super) created_at: i128,
    pub(super) family: Family,
    /// The envelope; each of its 8 identity fields is a non-empty string.
    pub(super) env: &'p EnvelopeFields<'a>,
    pub(super) payload: Option<&'a RawValue>,
    /// Where a kept row keeps what its payload says.
    pub(super) reading: Option<&'a PayloadCell>,
}

impl<'a> Ordered<'_, 'a> {
    pub(super) fn identity(&self) -> &[Option<Cow<'a, str>>; 8] {
        &self.env.identity
    }
    fn field(&self, index: usize) -> &str {
        self.env.str_field(index).unwrap_or_default()
    }
    pub(super) fn agent_class(&self) -> &str {
        self.field(envelope::AGENT_CLASS)
    }
    pub(super) fn agent_id(&self) -> &str {
        self.field(envelope::AGENT_ID)
    }
    pub(super) fn display_id(&self) -> &str {
        self.field(envelope::DISPLAY_ID)
    }
    pub(super) fn event_id(&self) -> &str {
        self.field(envelope::EVENT_ID)
    }
    /// The payload as a non-empty string: a chunk's content, a question's text (an empty one is
    /// malformed, the published projector's rule).
    fn payload_text(&self) -> Option<Cow<'a, str>> {
        self.payload
            .and_then(json::as_str)
            .filter(|s| !s.is_empty())
    }
    /// The whole `event_data`, only for planted bug P10's warning text.
    pub(super) fn data(&self) -> Option<&'a RawValue> {
        self.env.data
    }
}

/// Whether `message`'s last part is text ending with `text`.
fn ends_with_text(message: &ChatMessage, text: &str) -> bool {
    matches!(message.content.last(), Some(ContentPart::Text { text: last }) if last.ends_with(text))
}

/// Step 3 and 4: the walk over ordered rows and the merging of contributions.
pub(super) struct Walk<'p> {
    pub(super) primary: Option<&'p AgentIdentity>,
    pub(super) planted: Planted,
    /// Each message with the display it came from (messages of two displays never merge).
    pub(super) messages: Vec<(ChatMessage, String)>,
    /// Per display: chunk, HITL question and recovered stop text since the last user turn on it.
    pub(super) streamed: BTreeMap<String, String>,
    pub(super) warnings: Vec<Warning>,
}

impl Walk<'_> {
    pub(super) fn apply(&mut self, row: &Ordered<'_, '_>) {
        let (messages_before, warnings_before) = (self.messages.len(), self.warnings.len());
        let user_turn = matches!(row.family, Family::UserMessage | Family::HitlResponse);
        // planted P9: the legacy reader took a user turn from whoever wrote it.
        if user_turn && row.agent_class() != USER_AGENT_CLASS && !self.planted.is(BugId::P9) {
            // Only the client's own agent speaks for the user: another agent's user-message or
            // HITL-answer row is not a user turn, and its payload is never read.
            return;
        }
        let result = match row.family {
            Family::UserMessage => self.user_message(row),
            Family::HitlResponse => self.hitl_response(row),
            Family::Chunk => self.chunk(row),
            Family::HitlRequest => self.hitl_request(row),
            Family::Stop => self.stop(row),
        };
        if result.is_err() {
            self.warn(row, WarningCode::BadPayload, row.family.payload_field());
        }
        // Post-condition: a row adds to the history and the warnings, never takes away (what an
        // earlier row made stays); and it starts one message at most (P3 renders a HITL row as
        // both roles).
        debug_assert!(self.messages.len() >= messages_before);
        debug_assert!(
            self.messages.len() <= messages_before + 1
                || (self.planted.is(BugId::P3) && self.messages.len() == messages_before + 2)
        );
        debug_assert!(self.warnings.len() >= warnings_before);
    }

    fn warn(&mut self, row: &Ordered<'_, '_>, code: WarningCode, field: &str) {
        let w = Warning::new(
            code,
            Some(row.event_id().to_owned()),
            Some(row.display_id().to_owned()),
            Some(field),
        );
        self.warnings
            .push(with_raw_data(w, row.data(), self.planted));
        // Post-condition: a walk's warning names its row (the identity is complete here).
        debug_assert!(self
            .warnings
            .last()
            .is_some_and(|w| w.event_id.as_deref() == Some(row.event_id())));
    }

    /// A user turn: the display's streamed text starts over whether or not the payload is
    /// well-formed (the marker is the turn; a malformed payload only loses its parts).
    fn user_message(&mut self, row: &Ordered<'_, '_>) -> Result<(), ()> {
        self.streamed.remove(row.display_id());
        let reading = payload::read_once(row.reading, self.planted, || {
            Reading::User(payload::user_turn(row.payload, self.planted))
        });
        let Reading::User(turn) = reading.as_ref() else {
            unreachable!("a user message's reading is a user turn");
        };
        let turn = turn.as_ref().map_err(|&()| ())?;
        for &field in &turn.bad_media {
            self.warn(row, WarningCode::BadMedia, field);
        }
        self.emit(Role::User, row.display_id(), turn.parts.clone());
        // Post-condition: a user turn leaves nothing streamed on its display for a stop.
        debug_assert!(!self.streamed.contains_key(row.display_id()));
        Ok(())
    }

    /// A user turn: the streamed text starts over even when the answer is malformed. An empty
    /// answer is no answer (the published projector's rule): `bad_payload`, after the reset.
    fn hitl_response(&mut self, row: &Ordered<'_, '_>) -> Result<(), ()> {
        self.streamed.remove(row.display_id());
        let payload = row.payload.ok_or(())?;
        let text = match (row.payload_text(), json::as_bool(payload)) {
            (Some(s), _) => s.into_owned(),
            (None, Some(b)) => b.to_string(),
            (None, None) => return Err(()),
        };
        self.emit_text(Role::User, row.display_id(), &text);
        if self.planted.is(BugId::P3) {
            // planted P3: the legacy union also rendered every answer as assistant text.
            self.emit_text(Role::Assistant, row.display_id(), &text);
        }
        debug_assert!(!self.streamed.contains_key(row.display_id()));
        Ok(())
    }

    fn chunk(&mut self, row: &Ordered<'_, '_>) -> Result<(), ()> {
        let content = row.payload_text().ok_or(())?;
        if self.planted.is(BugId::P11) && self.primary.is_some_and(|p| !self.is_agent(row, p)) {
            // planted P11: the legacy filter kept only the selected agent's chunks.
            return Ok(());
        }
        self.stream(row.display_id(), &content);
        Ok(())
    }

    /// Whether `display`'s streamed text ends with `text` (what was just streamed).
    fn streamed_ends_with(&self, display: &str, text: &str) -> bool {
        self.streamed
            .get(display)
            .is_some_and(|s| s.ends_with(text))
    }

    /// A question is assistant text the client saw streamed: a primary stop repeating it adds
    /// nothing. An empty question is malformed, as an empty chunk is (the published projector's
    /// rule).
    fn hitl_request(&mut self, row: &Ordered<'_, '_>) -> Result<(), ()> {
        let question = row.payload_text().ok_or(())?;
        self.stream(row.display_id(), &question);
        if self.planted.is(BugId::P3) {
            // planted P3: the legacy union also rendered every question as user text.
            self.emit_text(Role::User, row.display_id(), &question);
        }
        Ok(())
    }

    fn stop(&mut self, row: &Ordered<'_, '_>) -> Result<(), ()> {
        if self.planted.is(BugId::P5) {
            // planted P5: the legacy history ignored stop events altogether.
            return Ok(());
        }
        let from_primary = self.primary.is_some_and(|p| self.is_agent(row, p));
        // planted P6: the legacy path took a stop from any agent.
        if !from_primary && !self.planted.is(BugId::P6) {
            return Ok(());
        }
        let reading = payload::read_once(row.reading, self.planted, || {
            Reading::Stop(payload::stop_answer(row.payload))
        });
        let Reading::Stop(answer) = reading.as_ref() else {
            unreachable!("a stop's reading is its answer");
        };
        let answer = answer.as_deref().map_err(|&()| ())?;
        let streamed = self
            .streamed
            .get(row.display_id())
            .map_or("", String::as_str);
        if let Some(rest) = answer.strip_prefix(streamed) {
            let rest = rest.to_owned();
            self.stream(row.display_id(), &rest);
            // Post-condition: the stop completed the display's streamed text to its answer.
            debug_assert!(
                self.streamed
                    .get(row.display_id())
                    .map_or("", String::as_str)
                    == answer
            );
        }
        Ok(())
    }

    /// Assistant text on `display` that counts as streamed for the stop-suffix rule.
    fn stream(&mut self, display: &str, text: &str) {
        self.emit_text(Role::Assistant, display, text);
        match self.streamed.get_mut(display) {
            Some(streamed) => streamed.push_str(text),
            None => {
                self.streamed.insert(display.to_owned(), text.to_owned());
            }
        }
        // Post-condition: what was streamed shows, as the end of the display's last assistant
        // message, and the stop-suffix rule sees it.
        debug_assert!(self.streamed_ends_with(display, text));
        debug_assert!(
            text.is_empty()
                || self.messages.last().is_some_and(|(m, d)| {
                    m.role == Role::Assistant && d == display && ends_with_text(m, text)
                })
        );
    }

    fn is_agent(&self, row: &Ordered<'_, '_>, agent: &AgentIdentity) -> bool {
        row.agent_class() == agent.agent_class && row.agent_id() == agent.agent_id
    }

    fn emit_text(&mut self, role: Role, display: &str, text: &str) {
        if text.is_empty() {
            return;
        }
        let messages_before = self.messages.len();
        // Assistant text continuing the same display's trailing text part: what `emit` does
        // with it, without building a part to fold in (most chunks of a stream take this path).
        if let Some((message, on)) = self.messages.last_mut() {
            if role == Role::Assistant && message.role == role && on == display {
                if let Some(ContentPart::Text { text: last }) = message.content.last_mut() {
                    last.push_str(text);
                    debug_assert_eq!(self.messages.len(), messages_before, "continued in place");
                    return;
                }
            }
        }
        self.emit(
            role,
            display,
            vec![ContentPart::Text {
                text: text.to_owned(),
            }],
        );
    }

    /// Appends a contribution: onto the last message when role and display match, else as a new
    /// message. Nothing is emitted for an empty contribution. User parts stay side by side (two
    /// user contributions are two parts, as two text blocks are); assistant text concatenates onto
    /// a trailing text part.
    fn emit(&mut self, role: Role, display: &str, parts: Vec<ContentPart>) {
        if parts.is_empty() {
            return;
        }
        let continues = self
            .messages
            .last()
            .is_some_and(|(m, d)| m.role == role && d == display);
        if !continues {
            let message = ChatMessage {
                role,
                content: Vec::new(),
            };
            self.messages.push((message, display.to_owned()));
        }
        if let Some((message, _)) = self.messages.last_mut() {
            for part in parts {
                debug_assert!(
                    self.planted.is(BugId::P13)
                        || !matches!(&part, ContentPart::Text { text } if text.is_empty())
                );
                match role {
                    Role::User => message.content.push(part),
                    Role::Assistant => message.push_part(part),
                }
            }
        }
        // Post-condition: the parts went to a message of `role` on `display` (messages of two
        // displays never merge).
        debug_assert!(self
            .messages
            .last()
            .is_some_and(|(m, d)| m.role == role && d == display));
    }
}
