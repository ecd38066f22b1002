//! The client's view as a state machine over emissions.
//!
//! [`ClientView`] starts from the set of visible displays and the primary agent, takes the
//! emissions one at a time in emission order ([`ClientView::apply`]), and ends in a
//! [`Transcript`] ([`ClientView::finish`]). Per display it keeps the *streamed text* (what the
//! client has seen streamed since its last turn on that display: chunks, HITL questions and text a
//! primary stop supplied), which decides what the primary stop may still add (P5). It also tracks, per display, the chunks that never reached the store
//! since the last streamed contribution, to state for each whether the stop recovered it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use super::conversation::{
    Agent, Defect, Emission, EmissionKind, UserBlock, DEFECTIVE_IDENTITY_FIELDS,
};
use super::differences::{Declared, KnownDifference};
use super::media::{convert_block, message_is_malformed, Converted};
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
    /// Per visible display: chunk, question and recovered stop text since the last user turn there.
    streamed: BTreeMap<String, String>,
    /// Per visible display: unpersisted chunks since the last persisted contribution to the
    /// streamed text, in order. Only a stop can still recover them.
    pending_dropped: BTreeMap<String, Vec<usize>>,
    messages: Vec<Message>,
    warnings: Vec<ExpectedWarning>,
    losses: Vec<AcceptedLoss>,
    /// The known differences the system declares (none: histsim's contract).
    declared: Declared,
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
            declared: Declared::new(),
        }
    }

    /// The same view for a system that declares the known differences `declared`.
    pub fn declaring(mut self, declared: Declared) -> ClientView {
        self.declared = declared;
        self
    }

    /// The messages so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Takes the next emission.
    pub fn apply(&mut self, emission: &Emission) {
        assert!(
            self.event_ids.insert(emission.event_id.clone()),
            "event_id {} repeats (emission {})",
            emission.event_id,
            emission.index
        );
        self.take(emission, emission.persisted);
    }

    /// The transcript of a whole conversation's emissions: [`ClientView::apply`] for each, in
    /// order, then [`ClientView::finish`], with the event ids' uniqueness checked once over the
    /// list instead of remembered one emission at a time. The simulator models the same
    /// conversation many times over with different emissions persisted, and copying every id
    /// into a set each time was a fortieth of the display workload's instructions.
    pub fn transcript_of(self, emissions: &[Emission]) -> Transcript {
        self.transcript_where(emissions, |emission| emission.persisted)
    }

    /// [`ClientView::transcript_of`] with the fault decisions given apart: `persisted(e)` says
    /// whether emission `e` reached the store, whatever its own `persisted` says. The model of
    /// a store that holds only part of what it will, without a copy of the conversation.
    pub fn transcript_where(
        mut self,
        emissions: &[Emission],
        persisted: impl Fn(&Emission) -> bool,
    ) -> Transcript {
        assert_eq!(
            self.next_index, 0,
            "a whole conversation starts at its first emission"
        );
        let mut ids: Vec<&str> = emissions.iter().map(|e| e.event_id.as_str()).collect();
        ids.sort_unstable();
        if let Some(pair) = ids.windows(2).find(|pair| pair[0] == pair[1]) {
            let repeat = emissions.iter().filter(|e| e.event_id == pair[0]).nth(1);
            panic!(
                "event_id {} repeats (emission {})",
                pair[0],
                repeat.map_or(0, |e| e.index)
            );
        }
        for emission in emissions {
            self.take(emission, persisted(emission));
        }
        self.finish()
    }

    /// [`ClientView::apply`] once the event id is known to be new; `persisted`: whether the
    /// emission reached the store.
    fn take(&mut self, emission: &Emission, persisted: bool) {
        self.check_emission(emission);
        self.next_index += 1;
        if !persisted {
            self.not_persisted(emission);
            return;
        }
        if !emission.kind.is_family() {
            return; // P1, P7: never parsed, never shown.
        }
        if !self.visible.contains(&emission.display) {
            if self.visible.is_empty() {
                self.loss(
                    "P9",
                    emission.index,
                    "unread: persisted, but the thread has no visible display, so it reads empty",
                );
            }
            return; // P2: hidden output never reaches the client.
        }
        if let Some(defect) = &emission.defect {
            self.defective(emission, defect);
            return;
        }
        if is_user_turn(&emission.kind) && !emission.agent.is_user_agent() {
            return; // Only the client's own agent speaks for the user.
        }
        match &emission.kind {
            EmissionKind::UserMessage { blocks } => self.user_message(emission, blocks),
            EmissionKind::HitlAnswer { answer } => self.hitl_answer(emission, answer.render()),
            EmissionKind::HitlQuestion { question } => self.question(emission, question),
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
                self.loss(
                    "P5",
                    index,
                    format!(
                        "lost: the chunk never reached the store and no primary stop on display \
                     {display} recovered it before the end"
                    ),
                );
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
    fn check_emission(&self, emission: &Emission) {
        assert_eq!(
            emission.index, self.next_index,
            "emissions must be applied in order"
        );
        match &emission.defect {
            Some(Defect::BadIdentity { field }) => assert!(
                DEFECTIVE_IDENTITY_FIELDS.contains(&field.as_str()),
                "emission {}: BadIdentity on {field:?} would move the row off this display; \
                 the model supports only {DEFECTIVE_IDENTITY_FIELDS:?}",
                emission.index
            ),
            Some(Defect::BadPayload { field } | Defect::AbsentPayload { field })
                if emission.kind.is_family() =>
            {
                assert_eq!(
                    Some(field.as_str()),
                    emission.kind.payload_field(),
                    "emission {}: BadPayload must name the family's payload field",
                    emission.index
                )
            }
            _ => {}
        }
    }

    /// A persisted, defective family row on a visible display: skipped, with a warning unless its
    /// payload is one the projector never reads (P6: a non-primary stop; a user message or HITL
    /// answer of an agent other than the client's). A client's user turn with a bad payload is
    /// still a turn: it shows nothing but the streamed text starts over. A bad identity or
    /// created_at skips the row before the walk, so nothing resets.
    fn defective(&mut self, emission: &Emission, defect: &Defect) {
        let (code, field) = match defect {
            Defect::BadIdentity { field } => (code::BAD_IDENTITY, field.clone()),
            Defect::BadCreatedAt => (code::BAD_CREATED_AT, "created_at".to_string()),
            Defect::BadPayload { field } | Defect::AbsentPayload { field } => {
                let is_stop = matches!(emission.kind, EmissionKind::Stop { .. });
                if is_stop && !self.is_primary(&emission.agent) {
                    return;
                }
                let absent = matches!(defect, Defect::AbsentPayload { .. });
                let d3 = KnownDifference::AbsentStopAnswerSilent;
                if is_stop && absent && self.declared.contains(&d3) {
                    // An empty answer adds nothing to what was streamed: only the warning goes.
                    self.loss(d3.rule(), emission.index, d3.loss_why());
                    return;
                }
                if is_user_turn(&emission.kind) {
                    if !emission.agent.is_user_agent() {
                        return;
                    }
                    self.reset(&emission.display);
                }
                (code::BAD_PAYLOAD, field.clone())
            }
        };
        self.warn(code, emission.index, field);
    }

    fn user_message(&mut self, emission: &Emission, blocks: &[UserBlock]) {
        if message_is_malformed(blocks) {
            // A bad legacy byte list fails the whole message; the turn still starts over.
            self.reset(&emission.display);
            self.warn(code::BAD_PAYLOAD, emission.index, "messages".to_string());
            return;
        }
        let mut parts = Vec::new();
        for block in blocks {
            match convert_block(block) {
                Converted::Part(part) => parts.push(part),
                Converted::Nothing => {}
                Converted::Dropped { field } => match self.silenced(field) {
                    Some(d) => self.loss(d.rule(), emission.index, d.loss_why()),
                    None => self.warn(code::BAD_MEDIA, emission.index, field.to_string()),
                },
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
        self.streamed_text(emission, text);
    }

    /// The client's answer is a user turn: the streamed text starts over whatever it says. The
    /// empty string is no answer: the row is malformed (`response`) and shows nothing.
    fn hitl_answer(&mut self, emission: &Emission, text: String) {
        self.reset(&emission.display);
        if text.is_empty() {
            self.warn(code::BAD_PAYLOAD, emission.index, "response".to_string());
            return;
        }
        self.contribute(Role::User, &emission.display, text_parts(text));
    }

    /// A question is streamed text; an empty one is malformed (`question`), as an empty chunk
    /// is, and streams nothing.
    fn question(&mut self, emission: &Emission, text: &str) {
        if text.is_empty() {
            self.warn(code::BAD_PAYLOAD, emission.index, "question".to_string());
            return;
        }
        self.streamed_text(emission, text);
    }

    /// Assistant text the client saw streamed (a chunk or a HITL question): it extends the
    /// display's streamed text, so a primary stop repeating it adds nothing.
    fn streamed_text(&mut self, emission: &Emission, text: &str) {
        debug_assert!(!text.is_empty(), "empty streamed text is a malformed row");
        let display = &emission.display;
        self.streamed
            .entry(display.clone())
            .or_default()
            .push_str(text);
        for index in self.pending_dropped.remove(display).unwrap_or_default() {
            self.loss(
                "P5",
                index,
                format!(
                    "lost: the chunk never reached the store and the later {} {} on display \
                 {display} did, so the streamed text has a gap that no stop fills",
                    emission.kind.name(),
                    emission.index
                ),
            );
        }
        self.contribute(Role::Assistant, display, text_parts(text.to_string()));
    }

    /// The primary stop supplies what the client has not seen, when what it saw is a prefix of
    /// the answer (P5); any other stop changes nothing (P6).
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
            self.loss(
                "P5",
                index,
                format!(
                    "recovered: the chunk never reached the store; it lies in the suffix the \
                 primary stop {} supplied on display {display}",
                    emission.index
                ),
            );
        }
        self.contribute(Role::Assistant, display, text_parts(remainder));
    }

    fn not_persisted(&mut self, emission: &Emission) {
        let display = &emission.display;
        let index = emission.index;
        if !matches!(emission.kind, EmissionKind::Chunk { .. }) {
            let shown = emission.kind.is_family() && self.visible.contains(display);
            let why = if shown {
                "unstored: never reached the store; the client does not see it"
            } else {
                "unstored: never reached the store; it would not have been shown anyway"
            };
            self.loss("P14", index, why);
        } else if self.visible.contains(display) {
            self.pending_dropped
                .entry(display.clone())
                .or_default()
                .push(index);
        } else {
            self.loss(
                "P5",
                index,
                format!(
                    "hidden: the chunk never reached the store; display {display} is not \
                 visible, so it would not have been shown anyway"
                ),
            );
        }
    }

    /// A user turn on `display`: the streamed text starts over, and dropped chunks before it are
    /// past recovery.
    fn reset(&mut self, display: &str) {
        self.streamed.remove(display);
        for index in self.pending_dropped.remove(display).unwrap_or_default() {
            self.loss(
                "P5",
                index,
                format!(
                    "lost: the chunk never reached the store and no primary stop on display \
                 {display} recovered it before the next user turn"
                ),
            );
        }
    }

    /// Adds a contribution, merging it into the last message when role and display match: a
    /// user contribution's parts go side by side (the client sent them as separate pieces),
    /// assistant text continues a trailing text part (it was one stream).
    fn contribute(&mut self, role: Role, display: &str, parts: Vec<Part>) {
        assert!(self.visible.contains(display));
        if parts.is_empty() {
            return;
        }
        match self.messages.last_mut() {
            Some(last) if last.role == role && last.display == display => match role {
                Role::User => last.parts.extend(parts),
                Role::Assistant => {
                    for part in parts {
                        append_part(&mut last.parts, part);
                    }
                }
            },
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

    /// The declared known difference that drops a block silently where histsim warns
    /// `bad_media` about `field`.
    fn silenced(&self, field: &str) -> Option<KnownDifference> {
        self.declared
            .iter()
            .copied()
            .find(|d| d.silenced_media_field() == Some(field))
    }

    fn warn(&mut self, code: &'static str, emission: usize, field: String) {
        self.warnings.push(ExpectedWarning {
            code,
            emission: Some(emission),
            field: Some(field),
        });
    }

    fn loss(&mut self, rule: &'static str, emission: usize, why: impl Into<Cow<'static, str>>) {
        self.losses.push(AcceptedLoss {
            rule,
            emission,
            why: why.into(),
        });
    }
}

/// Whether the emission's family is a user turn when the client's agent emits it.
fn is_user_turn(kind: &EmissionKind) -> bool {
    matches!(
        kind,
        EmissionKind::UserMessage { .. } | EmissionKind::HitlAnswer { .. }
    )
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

#[cfg(test)]
mod tests {
    use super::super::build::*;
    use super::super::client_transcript;
    use super::super::conversation::{AudioData, Conversation, LegacyByte, UserBlock};
    use super::*;

    /// A message as `role@display: part | part`, with media as `[image url]` and
    /// `[audio format base64]`.
    fn render(message: &Message) -> String {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let parts: Vec<String> = message
            .parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.clone(),
                Part::ImageUrl(url) => format!("[image {url}]"),
                Part::Audio {
                    data_base64,
                    format,
                } => format!("[audio {format} {data_base64}]"),
            })
            .collect();
        format!("{role}@{}: {}", message.display, parts.join(" | "))
    }

    /// Checks the messages and the expected warnings `(code, emission, field)`; returns the
    /// transcript for further checks.
    fn check(
        conversation: &Conversation,
        messages: &[&str],
        warnings: &[(&str, usize, &str)],
    ) -> Transcript {
        let transcript = client_transcript(conversation);
        let got: Vec<String> = transcript.messages.iter().map(render).collect();
        assert_eq!(got, messages, "messages");
        let got: Vec<(&str, usize, &str)> = transcript
            .expected_warnings
            .iter()
            .map(|w| {
                let emission = w.emission.expect("per-emission warning");
                (w.code, emission, w.field.as_deref().expect("a field"))
            })
            .collect();
        assert_eq!(got, warnings, "warnings");
        transcript
    }

    /// The accepted losses as `(rule, emission, verdict)`, the verdict being the word before the
    /// first colon of `why`.
    fn losses(transcript: &Transcript) -> Vec<(&'static str, usize, String)> {
        transcript
            .accepted_losses
            .iter()
            .map(|loss| {
                let verdict = loss.why.split(':').next().unwrap_or_default();
                (loss.rule, loss.emission, verdict.to_string())
            })
            .collect()
    }

    fn loss(rule: &'static str, emission: usize, verdict: &str) -> (&'static str, usize, String) {
        (rule, emission, verdict.to_string())
    }

    #[test]
    fn user_turns_and_consecutive_chunks() {
        let conversation = Build::new()
            .emit(USER, "d", user_text("hi"))
            .emit(LEAD, "d", chunk("Hel"))
            .emit(LEAD, "d", chunk("lo"))
            .emit(USER, "d", user_text("again"))
            .emit(USER, "d", user_text(" and again"))
            .emit(LEAD, "d", chunk("ok"))
            .done();
        check(
            &conversation,
            &[
                "user@d: hi",
                "assistant@d: Hello",
                "user@d: again |  and again",
                "assistant@d: ok",
            ],
            &[],
        );
    }

    #[test]
    fn hitl_question_is_assistant_answer_is_user_once_p3() {
        let conversation = Build::new()
            .emit(USER, "d", user_text("book it"))
            .emit(LEAD, "d", question("Sure?"))
            .emit(USER, "d", answer_bool(true))
            .emit(LEAD, "d", question("Really?"))
            .emit(USER, "d", answer_bool(false))
            .emit(LEAD, "d", question("Why?"))
            .emit(USER, "d", answer_text("because"))
            .done();
        check(
            &conversation,
            &[
                "user@d: book it",
                "assistant@d: Sure?",
                "user@d: true",
                "assistant@d: Really?",
                "user@d: false",
                "assistant@d: Why?",
                "user@d: because",
            ],
            &[],
        );
    }

    #[test]
    fn empty_question_and_empty_answer_are_malformed_but_the_answer_resets() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("go"))
            .emit(LEAD, "d", chunk("Hel"))
            .emit(LEAD, "d", question(""))
            .emit(USER, "d", answer_text(""))
            .emit(LEAD, "d", stop("Hello"))
            .done();
        // The empty answer shows nothing, so "Hello" merges onto "Hel"; but it reset the
        // streamed text, so the stop's whole answer counts as unseen.
        check(
            &conversation,
            &["user@d: go", "assistant@d: HelHello"],
            &[
                (code::BAD_PAYLOAD, 2, "question"),
                (code::BAD_PAYLOAD, 3, "response"),
            ],
        );
    }

    #[test]
    fn blank_question_and_blank_answer_are_text() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("go"))
            .emit(LEAD, "d", question(" "))
            .emit(USER, "d", answer_text("\r\n"))
            .done();
        check(
            &conversation,
            &["user@d: go", "assistant@d:  ", "user@d: \r\n"],
            &[],
        );
    }

    #[test]
    fn a_hitl_question_is_streamed_text() {
        // Chunks then a question: the stop's answer no longer extends what was streamed.
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("go"))
            .emit(LEAD, "d", chunk("Hel"))
            .emit(LEAD, "d", question("ok?"))
            .emit(LEAD, "d", stop("Hello"))
            .done();
        check(&conversation, &["user@d: go", "assistant@d: Helok?"], &[]);
        // A primary stop that repeats the question adds nothing (no "Proceed?Proceed?").
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("go"))
            .emit(LEAD, "d", question("Proceed?"))
            .emit(LEAD, "d", stop("Proceed?"))
            .done();
        check(&conversation, &["user@d: go", "assistant@d: Proceed?"], &[]);
        // One that extends it adds the rest.
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("go"))
            .emit(LEAD, "d", question("Proceed?"))
            .emit(LEAD, "d", stop("Proceed? Yes."))
            .done();
        check(
            &conversation,
            &["user@d: go", "assistant@d: Proceed? Yes."],
            &[],
        );
    }

    #[test]
    fn a_malformed_user_turn_of_the_client_still_resets() {
        for turn in [user_text("x"), answer_text("x")] {
            let conversation = Build::new()
                .primary(LEAD)
                .emit(USER, "d", user_text("go"))
                .emit(LEAD, "d", chunk("Hel"))
                .emit(USER, "d", turn.clone())
                .defect(bad_payload(turn.payload_field().expect("a family")))
                .emit(LEAD, "d", stop("Hello"))
                .done();
            let field = turn.payload_field().expect("a family");
            check(
                &conversation,
                &["user@d: go", "assistant@d: HelHello"],
                &[("bad_payload", 2, field)],
            );
        }
    }

    #[test]
    fn user_turns_of_other_agents_are_not_turns() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("go"))
            .emit(LEAD, "d", chunk("Hel"))
            .emit(LEAD, "d", user_text("proxy says"))
            .emit(LEAD, "d", answer_text("proxy answers"))
            .emit(LEAD, "d", answer_text("bad"))
            .defect(bad_payload("response"))
            .emit(LEAD, "d", stop("Hello"))
            .done();
        check(&conversation, &["user@d: go", "assistant@d: Hello"], &[]);
    }

    #[test]
    fn shared_and_hidden_delegation_at_depth_3_p2_p11() {
        // LEAD (d1) delegates to SUB sharing d1; SUB delegates to SUB2 on hidden d2; SUB2
        // delegates to LEAD-class agent "deep" on hidden d3 and to "deep-shared" back on d1.
        const DEEP: Who = ("LeadAgent", "deep");
        const DEEP_SHARED: Who = ("SearchAgent", "deep-shared");
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d1", user_text("find"))
            .emit(LEAD, "d1", chunk("Looking. "))
            .emit(SUB, "d1", chunk("[sub] "))
            .emit(SUB2, "d2", chunk("hidden-2 "))
            .emit(DEEP, "d3", chunk("hidden-3 "))
            .emit(DEEP_SHARED, "d1", chunk("[deep] "))
            .emit(DEEP, "d3", stop("hidden-3 done"))
            .emit(SUB2, "d2", question("hidden question?"))
            .emit(SUB, "d1", chunk("found. "))
            .emit(LEAD, "d1", chunk("Done."))
            .done();
        let transcript = check(
            &conversation,
            &[
                "user@d1: find",
                "assistant@d1: Looking. [sub] [deep] found. Done.",
            ],
            &[],
        );
        assert!(transcript.accepted_losses.is_empty());
    }

    #[test]
    fn hidden_display_becomes_visible_through_a_later_hitl_answer_p3() {
        let conversation = Build::new()
            .emit(USER, "d1", user_text("plan"))
            .emit(SUB, "d2", chunk("thinking"))
            .emit(SUB, "d2", question("Which city?"))
            .emit(LEAD, "d1", chunk("working"))
            .emit(USER, "d2", answer_text("Bern"))
            .emit(SUB, "d2", chunk("Bern it is"))
            .done();
        check(
            &conversation,
            &[
                "user@d1: plan",
                "assistant@d2: thinkingWhich city?",
                "assistant@d1: working",
                "user@d2: Bern",
                "assistant@d2: Bern it is",
            ],
            &[],
        );
    }

    #[test]
    fn recursive_same_agent_delegation_p11_p6() {
        // The lead class delegates to a fresh instance of itself on the shared display: its
        // output is kept, but its stop is not the primary's.
        const LEAD_CHILD: Who = ("LeadAgent", "lead2");
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("outer "))
            .emit(LEAD_CHILD, "d", chunk("inner"))
            .emit(LEAD_CHILD, "d", stop("outer inner and more"))
            .emit(LEAD, "d", stop("outer inner!"))
            .done();
        check(
            &conversation,
            &["user@d: q", "assistant@d: outer inner!"],
            &[],
        );
    }

    #[test]
    fn tied_order_is_the_emission_order_p8() {
        // Two rows with equal created_at: the simulator orders them by event_id, and so does
        // the emission order. The model follows the emission order exactly.
        let ab = Build::new()
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("a"))
            .emit(SUB, "d", chunk("b"))
            .done();
        let ba = Build::new()
            .emit(USER, "d", user_text("q"))
            .emit(SUB, "d", chunk("b"))
            .emit(LEAD, "d", chunk("a"))
            .done();
        check(&ab, &["user@d: q", "assistant@d: ab"], &[]);
        check(&ba, &["user@d: q", "assistant@d: ba"], &[]);
    }

    #[test]
    fn dropped_trailing_chunk_recovered_by_the_primary_stop_p5() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("Hel"))
            .emit(LEAD, "d", chunk("lo"))
            .lost()
            .emit(LEAD, "d", chunk(" world"))
            .lost()
            .emit(LEAD, "d", stop("Hello world"))
            .done();
        let transcript = check(
            &conversation,
            &["user@d: q", "assistant@d: Hello world"],
            &[],
        );
        assert_eq!(
            losses(&transcript),
            vec![loss("P5", 2, "recovered"), loss("P5", 3, "recovered")]
        );
    }

    #[test]
    fn dropped_middle_chunk_is_lost_p5() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("a"))
            .emit(LEAD, "d", chunk("b"))
            .lost()
            .emit(LEAD, "d", chunk("c"))
            .emit(LEAD, "d", stop("abc"))
            .done();
        let transcript = check(&conversation, &["user@d: q", "assistant@d: ac"], &[]);
        assert_eq!(losses(&transcript), vec![loss("P5", 2, "lost")]);
        assert!(transcript.accepted_losses[0].why.contains("later chunk 3"));
    }

    #[test]
    fn dropped_chunk_without_a_stop_is_lost_at_the_next_user_turn_or_the_end_p5() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("a"))
            .lost()
            .emit(USER, "d", user_text("q2"))
            .emit(LEAD, "d", stop("a"))
            .emit(LEAD, "d", chunk("b"))
            .lost()
            .done();
        // The stop after the user turn sees nothing streamed since, so its whole answer shows.
        let transcript = check(&conversation, &["user@d: q | q2", "assistant@d: a"], &[]);
        assert_eq!(
            losses(&transcript),
            vec![loss("P5", 1, "lost"), loss("P5", 4, "lost")]
        );
        assert!(transcript.accepted_losses[0].why.contains("next user turn"));
        assert!(transcript.accepted_losses[1].why.contains("before the end"));
    }

    #[test]
    fn nested_stop_with_superset_text_is_ignored_p6() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("Hello"))
            .emit(SUB, "d", stop("Hello and a nested answer"))
            .done();
        check(&conversation, &["user@d: q", "assistant@d: Hello"], &[]);
    }

    #[test]
    fn nothing_streamed_uses_the_whole_answer_p5() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("Hel"))
            .lost()
            .emit(LEAD, "d", stop("Hello"))
            .done();
        let transcript = check(&conversation, &["user@d: q", "assistant@d: Hello"], &[]);
        assert_eq!(losses(&transcript), vec![loss("P5", 1, "recovered")]);
    }

    #[test]
    fn divergent_text_keeps_what_was_streamed_p5() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("Hi there"))
            .emit(LEAD, "d", stop("Hello"))
            .done();
        check(&conversation, &["user@d: q", "assistant@d: Hi there"], &[]);
    }

    #[test]
    fn answer_equal_to_streamed_adds_nothing_and_a_second_stop_extends_p5() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("Hello"))
            .emit(LEAD, "d", stop("Hello"))
            .emit(LEAD, "d", stop("Hello!"))
            .done();
        check(&conversation, &["user@d: q", "assistant@d: Hello!"], &[]);
    }

    #[test]
    fn without_a_primary_every_stop_is_ignored() {
        let conversation = Build::new()
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", stop("Hello"))
            .emit(LEAD, "d", stop("x"))
            .defect(bad_payload("output_messages"))
            .done();
        check(&conversation, &["user@d: q"], &[]);
    }

    #[test]
    fn streamed_text_is_per_display() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d1", user_text("q"))
            .emit(USER, "d2", user_text("r"))
            .emit(LEAD, "d1", chunk("Hel"))
            .emit(LEAD, "d2", stop("Hello"))
            .emit(LEAD, "d1", stop("Hello"))
            .done();
        check(
            &conversation,
            &[
                "user@d1: q",
                "user@d2: r",
                "assistant@d1: Hel",
                "assistant@d2: Hello",
                "assistant@d1: lo",
            ],
            &[],
        );
    }

    #[test]
    fn a_user_message_whose_blocks_all_drop_still_resets() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("Hel"))
            .emit(
                USER,
                "d",
                user_blocks(vec![UserBlock::Other {
                    block_type: "video".into(),
                }]),
            )
            .emit(LEAD, "d", stop("Hello"))
            .done();
        // Nothing was shown for the user turn, so the stop's text merges onto "Hel"; the reset
        // made the streamed text empty, so the whole answer counts.
        check(
            &conversation,
            &["user@d: q", "assistant@d: HelHello"],
            &[("bad_media", 2, "block_type")],
        );
    }

    #[test]
    fn a_system_declaring_d3_reads_a_primary_stop_without_an_answer_silently() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("Hel"))
            .emit(LEAD, "d", stop(""))
            .defect(Defect::AbsentPayload {
                field: "output_messages".into(),
            })
            .emit(LEAD, "d", stop("Hello"))
            .done();
        let plain = client_transcript(&conversation);
        let warned = |t: &Transcript| -> Vec<(&str, Option<usize>)> {
            (t.expected_warnings.iter())
                .map(|w| (w.code, w.emission))
                .collect()
        };
        assert_eq!(warned(&plain), vec![("bad_payload", Some(2))]);
        let declared: Declared = [KnownDifference::AbsentStopAnswerSilent].into();
        let transcript = super::super::client_transcript_declaring(&conversation, &declared);
        // The same messages (the empty answer adds nothing, the later stop its suffix); the
        // warning becomes an accepted P10 loss.
        assert_eq!(transcript.messages, plain.messages);
        assert!(warned(&transcript).is_empty());
        assert_eq!(
            losses(&transcript),
            vec![("P10", 2, "D3, declared by the system".to_string())]
        );
    }

    #[test]
    fn a_system_declaring_d1_drops_an_unconverted_block_without_a_warning() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(
                USER,
                "d",
                user_blocks(vec![
                    UserBlock::Text("look".into()),
                    UserBlock::Other {
                        block_type: "video".into(),
                    },
                    audio(AudioData::Base64(vec![1]), "ogg"),
                ]),
            )
            .done();
        let declared: Declared = [KnownDifference::UnconvertedBlockSilent].into();
        let transcript = super::super::client_transcript_declaring(&conversation, &declared);
        // The same messages; the video block's warning becomes an accepted P10 loss; the bad
        // audio format, which D1 does not cover, still warns.
        assert_eq!(
            transcript.messages,
            client_transcript(&conversation).messages
        );
        let warned: Vec<(&str, Option<usize>)> = transcript
            .expected_warnings
            .iter()
            .map(|w| (w.code, w.emission))
            .collect();
        assert_eq!(warned, vec![("bad_media", Some(0))]);
        assert_eq!(
            transcript.expected_warnings[0].field.as_deref(),
            Some("format")
        );
        assert_eq!(
            losses(&transcript),
            vec![("P10", 0, "D1, declared by the system".to_string())]
        );
    }

    #[test]
    fn every_media_case_p13() {
        let blocks = vec![
            UserBlock::Text("look".into()),
            image(Some("https://x/a.png")),
            image(None),
            image(Some("")),
            UserBlock::Text(String::new()),
            audio(AudioData::Base64(vec![1, 2, 3]), "wav"),
            audio(AudioData::Base64(vec![1]), "ogg"),
            audio(
                AudioData::Legacy(vec![LegacyByte::Int(0), LegacyByte::Int(255)]),
                "mp3",
            ),
            audio(
                AudioData::Legacy("QUJD".bytes().map(|b| LegacyByte::Int(b.into())).collect()),
                "wav",
            ),
            UserBlock::Other {
                block_type: "file".into(),
            },
            UserBlock::Text("and".into()),
            UserBlock::Text(" this".into()),
        ];
        let mut build = Build::new().emit(USER, "d", user_blocks(blocks));
        // A bad legacy byte list fails its whole message, whatever the format or other blocks.
        for bad in [
            LegacyByte::Bool(true),
            LegacyByte::Float(1.0),
            LegacyByte::Int(256),
            LegacyByte::Int(-1),
        ] {
            let blocks = vec![
                UserBlock::Text("never shown".into()),
                audio(AudioData::Legacy(vec![LegacyByte::Int(1), bad]), "ogg"),
            ];
            build = build.emit(USER, "d", user_blocks(blocks));
        }
        // A new message keeps one part per kept block (the merge rule concatenates text only
        // when a later contribution is appended). Legacy bytes spelling base64 ("QUJD") stand
        // for what they encode.
        check(
            &build.done(),
            &["user@d: look | [image https://x/a.png] | [audio wav AQID] | [audio mp3 AP8=] | [audio wav QUJD] | and |  this"],
            &[
                ("bad_media", 0, "url"),
                ("bad_media", 0, "url"),
                ("bad_media", 0, "format"),
                ("bad_media", 0, "block_type"),
                ("bad_payload", 1, "messages"),
                ("bad_payload", 2, "messages"),
                ("bad_payload", 3, "messages"),
                ("bad_payload", 4, "messages"),
            ],
        );
    }

    #[test]
    fn user_parts_stay_apart_and_assistant_text_concatenates() {
        let conversation = Build::new()
            .emit(USER, "d", user_blocks(vec![UserBlock::Text("a".into())]))
            .emit(
                USER,
                "d",
                user_blocks(vec![UserBlock::Text("b".into()), image(Some("u"))]),
            )
            .emit(USER, "d", user_text("c"))
            .emit(USER, "d", answer_text("d"))
            .done();
        check(&conversation, &["user@d: a | b | [image u] | c | d"], &[]);
        // Assistant text is one stream: it continues a trailing text part.
        let conversation = Build::new()
            .emit(USER, "d", user_text("go"))
            .emit(LEAD, "d", chunk("a"))
            .emit(LEAD, "d", question("b"))
            .emit(LEAD, "d", chunk("c"))
            .done();
        check(&conversation, &["user@d: go", "assistant@d: abc"], &[]);
    }

    #[test]
    fn messages_from_different_displays_never_merge() {
        let conversation = Build::new()
            .emit(USER, "d1", user_text("a"))
            .emit(USER, "d2", user_text("b"))
            .emit(USER, "d1", user_text("c"))
            .emit(LEAD, "d1", chunk("x"))
            .emit(LEAD, "d2", chunk("y"))
            .done();
        check(
            &conversation,
            &[
                "user@d1: a",
                "user@d2: b",
                "user@d1: c",
                "assistant@d1: x",
                "assistant@d2: y",
            ],
            &[],
        );
    }

    #[test]
    fn marker_less_thread_is_empty_with_one_warning_p9() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(LEAD, "d", user_text("from a non-user agent"))
            .emit(LEAD, "d", chunk("a"))
            .emit(USER, "d", user_text("lost"))
            .lost()
            .emit(USER, "d", decoy("UserMessageEventLog"))
            .emit(LEAD, "d", stop("a"))
            .done();
        let transcript = client_transcript(&conversation);
        assert!(transcript.messages.is_empty());
        assert_eq!(
            transcript.expected_warnings,
            vec![ExpectedWarning {
                code: code::NO_VISIBLE_DISPLAY,
                emission: None,
                field: None
            }]
        );
        assert_eq!(
            losses(&transcript),
            vec![
                loss("P9", 0, "unread"),
                loss("P9", 1, "unread"),
                loss("P14", 2, "unstored"),
                loss("P9", 4, "unread"),
            ]
        );
        assert!(transcript.accepted_losses[0]
            .why
            .contains("no visible display"));
        let empty = client_transcript(&Build::new().done());
        assert_eq!(empty.expected_warnings.len(), 1);
        assert!(empty.messages.is_empty() && empty.accepted_losses.is_empty());
    }

    #[test]
    fn defective_rows_are_skipped_with_a_warning_p10() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("marks even though malformed"))
            .defect(bad_payload("messages"))
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("a"))
            .defect(bad_identity("agent_id"))
            .emit(LEAD, "d", chunk("b"))
            .defect(Defect::BadCreatedAt)
            .emit(LEAD, "d", chunk(""))
            .emit(LEAD, "d", question("unread"))
            .defect(bad_payload("question"))
            .emit(USER, "d", answer_text("x"))
            .defect(bad_identity("event_id"))
            .emit(SUB, "d", stop("unread"))
            .defect(bad_payload("output_messages"))
            .emit(SUB, "d", stop("checked before the walk"))
            .defect(Defect::BadCreatedAt)
            .emit(LEAD, "d", stop("read"))
            .defect(bad_payload("output_messages"))
            .emit(LEAD, "d", chunk("c"))
            .emit(SUB, "hidden", chunk("no warning off the visible displays"))
            .defect(Defect::BadCreatedAt)
            .emit(LEAD, "d", unrelated("Custom"))
            .defect(bad_payload("whatever"))
            .done();
        check(
            &conversation,
            &["user@d: q", "assistant@d: c"],
            &[
                ("bad_payload", 0, "messages"),
                ("bad_identity", 2, "agent_id"),
                ("bad_created_at", 3, "created_at"),
                ("bad_payload", 4, "content"),
                ("bad_payload", 5, "question"),
                ("bad_identity", 6, "event_id"),
                ("bad_created_at", 8, "created_at"),
                ("bad_payload", 9, "output_messages"),
            ],
        );
    }

    #[test]
    fn a_defective_user_message_does_not_reset() {
        // A bad created_at skips the row before the walk, unlike a malformed payload: no reset.
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("Hel"))
            .emit(USER, "d", user_text("skipped"))
            .defect(Defect::BadCreatedAt)
            .emit(LEAD, "d", stop("Hello"))
            .done();
        check(
            &conversation,
            &["user@d: q", "assistant@d: Hello"],
            &[("bad_created_at", 2, "created_at")],
        );
    }

    #[test]
    fn unpersisted_emissions_are_accepted_losses_p14() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(USER, "d", user_text("never stored"))
            .lost()
            .emit(LEAD, "d", question("unread"))
            .lost()
            .emit(LEAD, "d", chunk("a"))
            .emit(LEAD, "d", stop("ab"))
            .lost()
            .emit(SUB, "hidden", chunk("x"))
            .lost()
            .emit(LEAD, "d", unrelated("Custom"))
            .lost()
            .done();
        let transcript = check(&conversation, &["user@d: q", "assistant@d: a"], &[]);
        assert_eq!(
            losses(&transcript),
            vec![
                loss("P14", 1, "unstored"),
                loss("P14", 2, "unstored"),
                loss("P14", 4, "unstored"),
                loss("P5", 5, "hidden"),
                loss("P14", 6, "unstored"),
            ]
        );
    }

    #[test]
    fn decoys_and_unrelated_classes_are_never_shown_p1_p7() {
        let conversation = Build::new()
            .primary(LEAD)
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", decoy("XChunkEventY"))
            .emit(LEAD, "d", decoy("NoAnswerStopEvent"))
            .emit(USER, "d2", decoy("UserMessageEventLog"))
            .emit(SUB, "d", unrelated("RetrievalAgentInTheLoopResponseEvent"))
            .emit(LEAD, "d", stop("answer"))
            .done();
        check(&conversation, &["user@d: q", "assistant@d: answer"], &[]);
    }

    #[test]
    fn the_view_exposes_messages_as_it_goes() {
        let conversation = Build::new()
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("a"))
            .done();
        let visible = ["d".to_string()].into_iter().collect();
        let mut view = ClientView::new(None, visible);
        view.apply(&conversation.emissions[0]);
        assert_eq!(view.messages().len(), 1);
        view.apply(&conversation.emissions[1]);
        assert_eq!(view.messages().len(), 2);
    }

    /// Both ways of taking emissions refuse a repeated event id, naming it and its second use.
    #[test]
    fn a_repeated_event_id_is_refused_one_at_a_time_and_whole() {
        let mut conversation = Build::new()
            .emit(USER, "d", user_text("q"))
            .emit(LEAD, "d", chunk("a"))
            .emit(LEAD, "d", chunk("b"))
            .done();
        conversation.emissions[2].event_id = conversation.emissions[0].event_id.clone();
        let repeated = conversation.emissions[0].event_id.clone();
        let visible: BTreeSet<String> = ["d".to_string()].into_iter().collect();
        let one_at_a_time = std::panic::catch_unwind(|| {
            let mut view = ClientView::new(None, visible.clone());
            for emission in &conversation.emissions {
                view.apply(emission);
            }
        });
        let whole = std::panic::catch_unwind(|| {
            ClientView::new(None, visible.clone()).transcript_of(&conversation.emissions)
        });
        for outcome in [one_at_a_time.err(), whole.err()] {
            let message = outcome.expect("refused");
            let message = message
                .downcast_ref::<String>()
                .expect("a formatted message");
            assert_eq!(
                message,
                &format!("event_id {repeated} repeats (emission 2)")
            );
        }
        // Without the repeat, both give one transcript.
        conversation.emissions[2].event_id.push('x');
        let mut view = ClientView::new(None, visible.clone());
        for emission in &conversation.emissions {
            view.apply(emission);
        }
        assert_eq!(
            view.finish(),
            ClientView::new(None, visible).transcript_of(&conversation.emissions)
        );
    }
}
