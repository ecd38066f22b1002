//! The pure projector: persisted rows and the request's primary agent in, chat history out.
//!
//! No I/O, no `Result`, no panics: a malformed relevant row is skipped with a metadata-only
//! warning, an irrelevant row is never parsed beyond its envelope (contract, "Projection").
//!
//! Steps: (0) keep only rows on displays that the given rows themselves mark visible (defence in
//! depth: the stores already query only those) [P2]; (1) keep rows of the five families, check
//! their 8-field identity and read `created_at` as a JSON integer [P8], then drop later copies of
//! an identity [P4] (validation first, so a malformed copy never hides a valid one); (2) sort by
//! `(created_at, event_id, identity)`; (3) walk the rows, keeping per display the text streamed
//! since the last user turn (chunks, HITL questions, recovered stop text), which a primary stop
//! can complete [P5, P6]; (4) merge consecutive contributions of one role on one display: user
//! parts side by side, assistant text concatenated.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::chat::{ChatMessage, ContentPart, Role};
use super::envelope::{self, Envelope, EnvelopeFields, FamilyData, KeptEnvelope, IDENTITY_FIELDS};
use super::family::Family;
use super::identity::AgentIdentity;
use super::json;
use super::payload::{self, PayloadCell, Reading};
use super::store::StoredRow;
use super::visible::{visible_displays, Visible};
use super::warning::{Warning, WarningCode};
use super::USER_AGENT_CLASS;
use crate::{BugId, Planted};

/// How to project.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProjectorOptions {
    /// Planted legacy behaviours (none in production).
    pub planted: Planted,
}

/// The reconstructed history and what was skipped on the way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    pub messages: Vec<ChatMessage>,
    /// Identity and `created_at` warnings in input order, then payload and media warnings in
    /// projection order.
    pub warnings: Vec<Warning>,
}

/// A row of a family on a visible display whose identity is complete and whose `created_at` is
/// an integer, ready for the walk. It borrows the row's envelope: the steps pass small handles
/// of rows, never the rows themselves.
#[derive(Clone, Copy)]
struct Ordered<'p, 'a> {
    created_at: i128,
    family: Family,
    /// The envelope; each of its 8 identity fields is a non-empty string.
    env: &'p EnvelopeFields<'a>,
    payload: Option<&'a RawValue>,
    /// Where a kept row keeps what its payload says.
    reading: Option<&'a PayloadCell>,
}

impl<'a> Ordered<'_, 'a> {
    fn identity(&self) -> &[Option<Cow<'a, str>>; 8] {
        &self.env.identity
    }
    fn field(&self, index: usize) -> &str {
        self.env.str_field(index).unwrap_or_default()
    }
    fn agent_class(&self) -> &str {
        self.field(envelope::AGENT_CLASS)
    }
    fn agent_id(&self) -> &str {
        self.field(envelope::AGENT_ID)
    }
    fn display_id(&self) -> &str {
        self.field(envelope::DISPLAY_ID)
    }
    fn event_id(&self) -> &str {
        self.field(envelope::EVENT_ID)
    }
    /// The whole `event_data`, only for planted bug P10's warning text.
    fn data(&self) -> Option<&'a RawValue> {
        self.env.data
    }
}

/// Projects `rows` (raw persisted bytes, any order, duplicates allowed) into a chat history.
pub fn project<R: AsRef<[u8]>>(
    rows: &[R],
    primary: Option<&AgentIdentity>,
    options: &ProjectorOptions,
) -> Projection {
    let mut parsed = Vec::with_capacity(rows.len());
    parsed.extend(rows.iter().filter_map(|row| read_envelope(row.as_ref())));
    let order: Vec<usize> = (0..parsed.len()).collect();
    project_envelopes(&parsed, &order, primary, options)
}

/// Projects stored rows as [`project`] projects their bytes, reading the envelope a store kept
/// with a row instead of parsing the row again.
pub(crate) fn project_stored(
    rows: &[StoredRow],
    primary: Option<&AgentIdentity>,
    options: &ProjectorOptions,
) -> Projection {
    // Each distinct envelope is read once; `order` names, row by row, the envelope each row has.
    // Stored copies of one row share their kept envelope (the in-memory store keeps one per
    // distinct bytes, and every replica stores its own copy of a delivery), and the steps decide
    // a row by its envelope alone, so a copy is decided as its original was (see
    // `project_envelopes`). The map is only asked membership; an address is a key that lives as
    // long as `rows`.
    let mut parsed = Vec::with_capacity(rows.len());
    let mut order = Vec::with_capacity(rows.len());
    let mut first_reading: HashMap<*const KeptEnvelope, usize, crate::fixed_hash::FixedState> =
        HashMap::default();
    for row in rows {
        match &row.kept {
            Some(kept) => {
                let next = parsed.len();
                let index = *first_reading.entry(Arc::as_ptr(kept)).or_insert(next);
                if index == next {
                    parsed.push(kept.fields());
                }
                order.push(index);
            }
            None => {
                if let Some(fields) = read_envelope(&row.bytes) {
                    order.push(parsed.len());
                    parsed.push(fields);
                }
            }
        }
    }
    // Post-condition: every row that parses is named once, and every envelope read is named by
    // the first row that has it.
    debug_assert!(order.len() <= rows.len() && parsed.len() <= order.len());
    debug_assert!(order.iter().all(|&i| i < parsed.len()));
    project_envelopes(&parsed, &order, primary, options)
}

/// The envelope of a row that parses as one and has a class chain.
fn read_envelope(bytes: &[u8]) -> Option<EnvelopeFields<'_>> {
    Envelope::parse(bytes).ok()?.fields()
}

/// How steps 0 and 1 decided a row's envelope, so that a later row with the same envelope (a
/// stored copy) is decided alike without reading it again.
#[derive(Clone, Copy)]
enum Decided {
    /// Not read yet.
    Unread,
    /// Skipped without a warning (not on a visible display, or of no family).
    Skipped,
    /// Warned about: the warning at this index of the identity or the `created_at` list.
    BadIdentity(usize),
    BadCreatedAt(usize),
    /// Kept for the walk, at this index of `ordered`.
    Kept(usize),
}

/// Steps 0 to 4 over the rows `order` names, each by the index of its envelope in `parsed`
/// (rows with the same envelope name the same index).
fn project_envelopes(
    parsed: &[EnvelopeFields<'_>],
    order: &[usize],
    primary: Option<&AgentIdentity>,
    options: &ProjectorOptions,
) -> Projection {
    debug_assert!(
        order.iter().all(|&i| i < parsed.len()),
        "order names parsed rows"
    );
    let planted = options.planted;
    let visible = visible_displays(parsed, planted);
    let (ordered, warnings) = admitted_rows(parsed, order, &visible, planted);
    let mut ordered = deduplicated(ordered, planted);
    ordered.sort_by(|a, b| {
        (a.created_at, a.event_id(), a.identity()).cmp(&(b.created_at, b.event_id(), b.identity()))
    });
    // Step 2's order: by created_at, then event id; two rows with one identity only where
    // planted P4 keeps copies.
    debug_assert!(ordered.windows(2).all(|pair| {
        (pair[0].created_at, pair[0].event_id()) <= (pair[1].created_at, pair[1].event_id())
            && (planted.is(BugId::P4) || pair[0].identity() != pair[1].identity())
    }));
    let mut walk = Walk {
        primary,
        planted,
        messages: Vec::new(),
        streamed: BTreeMap::new(),
        warnings,
    };
    for row in &ordered {
        walk.apply(row);
    }
    // Post-condition: no message comes from a display no `UserAgent` marker made visible (the
    // rows of step 0 are all local, so a hidden display is always known as such here).
    if let Visible::Displays(shown) = &visible {
        debug_assert!(
            walk.messages
                .iter()
                .all(|(_, d)| shown.contains(d.as_str())),
            "a message from a hidden display"
        );
    }
    // Post-condition: no message is empty, and two adjacent messages never share role and
    // display (step 4 merged them).
    debug_assert!(walk.messages.iter().all(|(m, _)| !m.content.is_empty()));
    debug_assert!(walk
        .messages
        .windows(2)
        .all(|pair| (pair[0].0.role, &pair[0].1) != (pair[1].0.role, &pair[1].1)));
    Projection {
        messages: walk.messages.into_iter().map(|(m, _)| m).collect(),
        warnings: walk.warnings,
    }
}

/// Steps 0, 1a and 1b over the rows `order` names: the rows kept for the walk, in input order,
/// and the warnings of the others (identity warnings of every row before `created_at` ones, the
/// steps' order).
fn admitted_rows<'p, 'a>(
    parsed: &'p [EnvelopeFields<'a>],
    order: &[usize],
    visible: &Visible<'_>,
    planted: Planted,
) -> (Vec<Ordered<'p, 'a>>, Vec<Warning>) {
    let mut identity_warnings: Vec<Warning> = Vec::new();
    let mut created_at_warnings: Vec<Warning> = Vec::new();
    let mut ordered: Vec<Ordered<'p, 'a>> = Vec::with_capacity(parsed.len());
    let mut decided = vec![Decided::Unread; parsed.len()];
    for &index in order {
        // A row whose envelope was read before is decided as that row was: every step here
        // reads the envelope and the planted bugs only. Its warning repeats where this row
        // stands. A kept copy is one step 1c drops (the earlier row comes first with the same
        // identity), so it goes on only where planted P4 keeps copies.
        match decided[index] {
            Decided::Unread => {}
            Decided::Skipped => continue,
            Decided::BadIdentity(w) => {
                identity_warnings.push(identity_warnings[w].clone());
                continue;
            }
            Decided::BadCreatedAt(w) => {
                created_at_warnings.push(created_at_warnings[w].clone());
                continue;
            }
            Decided::Kept(k) => {
                if planted.is(BugId::P4) {
                    ordered.push(ordered[k]);
                }
                continue;
            }
        }
        let env = &parsed[index];
        decided[index] = Decided::Skipped;
        if !visible.admits(env) {
            continue;
        }
        let warned = identity_warnings.len();
        let Some(family) = identified(env, planted, &mut identity_warnings) else {
            if identity_warnings.len() > warned {
                decided[index] = Decided::BadIdentity(warned);
            }
            continue;
        };
        let warned = created_at_warnings.len();
        match with_created_at(env, family, planted, &mut created_at_warnings) {
            Some(row) => {
                decided[index] = Decided::Kept(ordered.len());
                ordered.push(row);
            }
            None => decided[index] = Decided::BadCreatedAt(warned),
        }
    }
    // Post-condition: every kept row lies on a visible display, its identity complete (8
    // non-empty strings, which the walk reads without looking), and no row was both kept and
    // warned about.
    debug_assert!(ordered.iter().all(|r| visible.admits(r.env)));
    debug_assert!(ordered.iter().all(|r| r
        .identity()
        .iter()
        .all(|f| f.as_deref().is_some_and(|s| !s.is_empty()))));
    debug_assert!(
        ordered.len() + identity_warnings.len() + created_at_warnings.len() <= order.len(),
        "one outcome at most a row"
    );
    identity_warnings.append(&mut created_at_warnings);
    (ordered, identity_warnings)
}

/// Step 1a: the family of a row whose identity is complete (8 non-empty strings); `None`, and a
/// warning for a family row, otherwise.
fn identified(
    env: &EnvelopeFields<'_>,
    planted: Planted,
    warnings: &mut Vec<Warning>,
) -> Option<Family> {
    let family = Family::of_parents(&env.parents, planted)?;
    let present = |i: usize| env.identity[i].as_deref().filter(|s| !s.is_empty());
    let Some(bad) = (0..IDENTITY_FIELDS.len()).find(|&i| present(i).is_none()) else {
        return Some(family);
    };
    let warning = Warning::new(
        WarningCode::BadIdentity,
        present(envelope::EVENT_ID).map(str::to_owned),
        present(envelope::DISPLAY_ID).map(str::to_owned),
        Some(IDENTITY_FIELDS[bad]),
    );
    warnings.push(with_raw_data(warning, env.data, planted));
    None
}

/// Step 1c: the first valid row of each identity, in input order.
fn deduplicated<'p, 'a>(
    candidates: Vec<Ordered<'p, 'a>>,
    planted: Planted,
) -> Vec<Ordered<'p, 'a>> {
    if planted.is(BugId::P4) {
        // planted P4: the legacy reader trusted the store to hold each event once.
        return candidates;
    }
    // Only membership is asked of the set, never its order; the hasher's keys are fixed (no
    // OS randomness), so even its layout is the same at every run.
    // A kept row's envelope reaches the cell its payload's reading is kept in, which clippy
    // takes for a key that may change; `ByEventId` hashes and compares identity fields only.
    #[allow(clippy::mutable_key_type)]
    let mut seen: HashSet<ByEventId<'_, '_>, crate::fixed_hash::FixedState> =
        HashSet::with_capacity_and_hasher(candidates.len(), Default::default());
    let mut candidates = candidates;
    candidates.retain(|c| seen.insert(ByEventId(c.env)));
    // Post-condition: one row per identity.
    debug_assert_eq!(seen.len(), candidates.len());
    candidates
}

/// A complete identity in a hash set: equal when every field is, hashed by its event id only
/// (equal identities have equal event ids), which tells rows apart at a fraction of the hashing.
struct ByEventId<'p, 'a>(&'p EnvelopeFields<'a>);

impl PartialEq for ByEventId<'_, '_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.identity == other.0.identity
    }
}

impl Eq for ByEventId<'_, '_> {}

impl std::hash::Hash for ByEventId<'_, '_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.str_field(envelope::EVENT_ID).hash(state);
    }
}

/// Step 1b: `created_at` as a JSON integer, else the row is skipped with a warning.
fn with_created_at<'p, 'a>(
    env: &'p EnvelopeFields<'a>,
    family: Family,
    planted: Planted,
    warnings: &mut Vec<Warning>,
) -> Option<Ordered<'p, 'a>> {
    debug_assert_eq!(
        Family::of_parents(&env.parents, planted),
        Some(family),
        "the family step 1a found"
    );
    let data = match env.family_data {
        Some(kept) if kept.family == family => kept,
        _ => FamilyData::read(family, env.data),
    };
    let [raw_created_at, payload] = data.fields;
    let created_at = match data.created_at {
        Some(n) => n,
        // planted P8: the legacy sort coerced whatever it found to a number.
        None if planted.is(BugId::P8) => lenient_created_at(raw_created_at),
        None => {
            let field = |i: usize| env.str_field(i).map(str::to_owned);
            let warning = Warning::new(
                WarningCode::BadCreatedAt,
                field(envelope::EVENT_ID),
                field(envelope::DISPLAY_ID),
                Some("created_at"),
            );
            warnings.push(with_raw_data(warning, env.data, planted));
            return None;
        }
    };
    Some(Ordered {
        created_at,
        family,
        env,
        payload,
        reading: data.reading,
    })
}

/// The legacy coercion of planted bug P8: numeric strings parsed, bools 0/1, anything else 0.
fn lenient_created_at(raw: Option<&RawValue>) -> i128 {
    let Some(raw) = raw else { return 0 };
    json::as_str(raw)
        .and_then(|s| s.trim().parse::<i128>().ok())
        .or_else(|| json::as_bool(raw).map(i128::from))
        .unwrap_or(0)
}

/// Planted bug P10 appends the raw payload to a warning; otherwise the warning is unchanged.
fn with_raw_data(mut warning: Warning, data: Option<&RawValue>, planted: Planted) -> Warning {
    if planted.is(BugId::P10) {
        // planted P10: the legacy log line included the offending event's data.
        warning
            .text
            .push_str(&format!(" event_data={}", data.map_or("null", |d| d.get())));
    }
    warning
}

/// Whether `message`'s last part is text ending with `text`.
fn ends_with_text(message: &ChatMessage, text: &str) -> bool {
    matches!(message.content.last(), Some(ContentPart::Text { text: last }) if last.ends_with(text))
}

/// Step 3 and 4: the walk over ordered rows and the merging of contributions.
struct Walk<'p> {
    primary: Option<&'p AgentIdentity>,
    planted: Planted,
    /// Each message with the display it came from (messages of two displays never merge).
    messages: Vec<(ChatMessage, String)>,
    /// Per display: chunk, HITL question and recovered stop text since the last user turn on it.
    streamed: BTreeMap<String, String>,
    warnings: Vec<Warning>,
}

impl Walk<'_> {
    fn apply(&mut self, row: &Ordered<'_, '_>) {
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
        let text = json::as_str(payload).filter(|s| !s.is_empty());
        let text = match (text, json::as_bool(payload)) {
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
        let content = row
            .payload
            .and_then(json::as_str)
            .filter(|c| !c.is_empty())
            .ok_or(())?;
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
        let question = row
            .payload
            .and_then(json::as_str)
            .filter(|q| !q.is_empty())
            .ok_or(())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::json::tests::raw;
    use crate::display::{DisplayEventStore, MemoryDisplayStore};

    fn display_row(
        agent: (&str, &str),
        run: &str,
        event_id: &str,
        parents: &[&str],
        data: serde_json::Value,
    ) -> Vec<u8> {
        serde_json::json!({
            "agent_class": agent.0, "agent_id": agent.1, "thread_id": "t1", "display_id": "d1",
            "run_id": run, "event_type": "display_event", "event_name": parents[0],
            "event_id": event_id, "event_parents": parents, "event_data": data,
        })
        .to_string()
        .into_bytes()
    }

    /// Rows with copies of good and bad rows interleaved, as replicas store them.
    fn rows_with_copies() -> Vec<Vec<u8>> {
        let user = ("UserAgent", "u0");
        let lead = ("LeadAgent", "a1");
        let message = |t: &str| serde_json::json!([{"role": "user", "blocks": [{"block_type": "text", "text": t}]}]);
        let turn = display_row(
            user,
            "r0",
            "e1",
            &["UserMessageEvent"],
            serde_json::json!({"created_at": 1, "messages": message("hi")}),
        );
        // A chunk of the lead's: `created_at` as given (the string one is a bad row).
        let chunk_of = |run: &str, event_id: &str, created_at: serde_json::Value, text: &str| {
            let data = serde_json::json!({"created_at": created_at, "content": text});
            display_row(lead, run, event_id, &["ChunkEvent"], data)
        };
        let chunk = chunk_of("r1", "e2", 2.into(), "Hel");
        let no_run = chunk_of("", "e3", 3.into(), "x");
        let late = chunk_of("r1", "e4", "4".into(), "lo");
        let stop = display_row(
            lead,
            "r1",
            "e5",
            &["StopEvent"],
            serde_json::json!({"created_at": 5, "output_messages": []}),
        );
        let other = display_row(
            lead,
            "r1",
            "e6",
            &["SomethingElse"],
            serde_json::json!({"created_at": 6}),
        );
        vec![
            late.clone(),
            turn.clone(),
            no_run.clone(),
            chunk.clone(),
            turn.clone(),
            late.clone(),
            other.clone(),
            no_run.clone(),
            stop.clone(),
            chunk.clone(),
            late,
            other,
            stop,
            no_run,
            turn,
        ]
    }

    /// Copies that share their kept envelope are decided as the rows were: the same projection,
    /// warnings in the same places, as reading every row's bytes, with and without the planted
    /// bugs that see copies (P4), coerce `created_at` (P8) or print a warning's data (P10).
    #[test]
    fn copies_sharing_an_envelope_project_as_their_bytes_do() {
        let primary = AgentIdentity::new("LeadAgent", "a1");
        #[allow(unused_mut)]
        let mut settings = vec![Planted::none()];
        #[cfg(feature = "planted")]
        settings.extend([BugId::P4, BugId::P8, BugId::P10].map(Planted::only));
        for planted in settings {
            let store = MemoryDisplayStore::new(planted);
            let rows = rows_with_copies();
            for row in &rows {
                store.append(row).unwrap();
            }
            let stored = store.rows_on_displays("t1", &["d1".to_string()]).unwrap();
            // The store answers the rows of a family: all but the two of none.
            assert_eq!(stored.len(), rows.len() - 2);
            assert!(stored.iter().all(|r| r.kept.is_some()));
            let options = ProjectorOptions { planted };
            let from_kept = project_stored(&stored, Some(&primary), &options);
            let bytes: Vec<&[u8]> = stored.iter().map(|r| &*r.bytes).collect();
            let from_bytes = project(&bytes, Some(&primary), &options);
            assert_eq!(from_kept, from_bytes, "planted {planted:?}");
            let codes: Vec<WarningCode> = from_bytes.warnings.iter().map(|w| w.code).collect();
            let count = |code: WarningCode| codes.iter().filter(|&&c| c == code).count();
            assert_eq!(count(WarningCode::BadIdentity), 3, "{codes:?}");
            if !planted.is(BugId::P8) {
                assert_eq!(count(WarningCode::BadCreatedAt), 3, "{codes:?}");
            }
            assert!(!from_bytes.messages.is_empty());
        }
    }

    #[test]
    fn the_legacy_coercion_turns_anything_into_a_number() {
        assert_eq!(lenient_created_at(Some(&raw("\"42\""))), 42);
        assert_eq!(lenient_created_at(Some(&raw("\"soon\""))), 0);
        assert_eq!(lenient_created_at(Some(&raw("true"))), 1);
        assert_eq!(lenient_created_at(Some(&raw("1.5"))), 0);
        assert_eq!(lenient_created_at(None), 0);
    }

    #[test]
    fn warnings_keep_their_metadata_text_without_p10() {
        let w = Warning::new(
            WarningCode::BadPayload,
            Some("e".into()),
            None,
            Some("content"),
        );
        let data = raw(r#"{"content":"private"}"#);
        let same = with_raw_data(w.clone(), Some(&data), Planted::none());
        assert_eq!(same, w);
    }

    #[test]
    fn a_stop_answer_is_the_text_of_its_contents() {
        // A stop's answer is its last output message's.
        let answer = |m: &str| payload::stop_answer(Some(&raw(&format!("[{{}},{m}]"))));
        assert_eq!(
            answer(
                r#"{"role":"assistant","contents":[{"type":"text","text":"Hel"},{"type":"image","url":null},{"type":"text","text":"lo"}],"content":"Hello"}"#
            ),
            Ok("Hello".to_string())
        );
        assert_eq!(
            answer(r#"{"contents":null,"content":""}"#),
            Ok(String::new())
        );
        assert_eq!(answer(r#"{"contents": null }"#), Ok(String::new()));
        assert_eq!(answer(r#"{"content":"legacy"}"#), Ok("legacy".to_string()));
        for bad in [
            r#"{"contents":"x"}"#,
            r#"{"contents":[1]}"#,
            r#"{"contents":[{"type":"text","text":5}]}"#,
            r#"{"content":5}"#,
            r#"{}"#,
            r#""x""#,
        ] {
            assert_eq!(answer(bad), Err(()), "{bad}");
        }
    }

    #[test]
    fn rows_of_no_family_and_garbage_produce_nothing() {
        let rows: [&[u8]; 4] = [
            b"",
            b"{\"event_parents\":[\"Custom\"],\"event_data\":\"x\"}",
            b"{\"event_parents\":\"ChunkEvent\"}",
            b"[\"ChunkEvent\"]",
        ];
        let p = project(&rows, None, &ProjectorOptions::default());
        assert!(p.messages.is_empty() && p.warnings.is_empty());
    }
}
