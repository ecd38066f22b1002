//! The invariant checkers of the display workload, P1 to P14.
//!
//! Checkers only check: they read the scenario (what the agents meant), the model's transcript
//! (what the client must see), and the replicas' answers, and name every difference by its
//! catalog ID. Text in generated scenarios is made of words unique to their step, so a word in an
//! answer names the step it came from; that is how a difference is attributed to an invariant.
//!
//! Violations come out in a fixed priority order, most specific first, so that a world with one
//! defect reports that defect's ID first even when its effects also break broader invariants.

use super::scenario::{DisplayScenario, Event, Step};
use super::world::Read;
use crate::outcome::Violation;
use history::display::{ChatMessage, ContentPart, Role};
use history::BugId;
use model::display as m;
use std::collections::{BTreeMap, BTreeSet};

/// What a read before settling must show.
pub struct EarlyExpectation {
    /// The model of the rows in the shared store by then: what the read must equal.
    pub shared: Vec<ViewMessage>,
    /// The model of the rows the reading replica's own persister had received by then: a read
    /// equal to this (and not to `shared`) came from a replica-local view (P12).
    pub own: Vec<ViewMessage>,
}

/// Whether `projection` warns with `code` about the row of `event_id` (a bad identity may have
/// lost the id itself, so any warning of that code will do).
fn warning_named(projection: &history::display::Projection, code: &str, event_id: &str) -> bool {
    projection.warnings.iter().any(|x| {
        x.code.as_str() == code
            && (x.event_id.as_deref() == Some(event_id) || code == m::code::BAD_IDENTITY)
    })
}

/// Whether an answer shows what the model says: the same messages, and a warning for every
/// malformed row the model expects one for. The liveness phase waits for this.
pub fn matches_model(
    projection: &history::display::Projection,
    conversation: &m::Conversation,
    transcript: &m::Transcript,
) -> bool {
    view_of_projection(&projection.messages) == view_of_model(&transcript.messages)
        && transcript
            .expected_warnings
            .iter()
            .all(|w| match w.emission {
                Some(i) => conversation
                    .emissions
                    .get(i)
                    .is_none_or(|e| warning_named(projection, w.code, &e.event_id)),
                None => projection
                    .warnings
                    .iter()
                    .any(|x| x.code.as_str() == w.code),
            })
}

/// A message reduced to what both sides can be compared on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewMessage {
    pub role: &'static str,
    pub parts: Vec<ViewPart>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewPart {
    Text(String),
    Image(String),
    Audio { data: String, format: String },
}

fn push_part(parts: &mut Vec<ViewPart>, part: ViewPart) {
    match (parts.last_mut(), part) {
        (Some(ViewPart::Text(last)), ViewPart::Text(t)) => last.push_str(&t),
        (_, part) => parts.push(part),
    }
}

pub fn view_of_projection(messages: &[ChatMessage]) -> Vec<ViewMessage> {
    messages
        .iter()
        .map(|msg| {
            let mut parts = Vec::new();
            for p in &msg.content {
                let part = match p {
                    ContentPart::Text { text } => ViewPart::Text(text.clone()),
                    ContentPart::ImageUrl { url } => ViewPart::Image(url.clone()),
                    ContentPart::InputAudio { data, format } => ViewPart::Audio {
                        data: data.clone(),
                        format: format.clone(),
                    },
                };
                push_part(&mut parts, part);
            }
            ViewMessage {
                role: match msg.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                },
                parts,
            }
        })
        .collect()
}

pub fn view_of_model(messages: &[m::Message]) -> Vec<ViewMessage> {
    messages
        .iter()
        .map(|msg| {
            let mut parts = Vec::new();
            for p in &msg.parts {
                let part = match p {
                    m::Part::Text(t) => ViewPart::Text(t.clone()),
                    m::Part::ImageUrl(u) => ViewPart::Image(u.clone()),
                    m::Part::Audio {
                        data_base64,
                        format,
                    } => ViewPart::Audio {
                        data: data_base64.clone(),
                        format: format.clone(),
                    },
                };
                push_part(&mut parts, part);
            }
            ViewMessage {
                role: match msg.role {
                    m::Role::User => "user",
                    m::Role::Assistant => "assistant",
                },
                parts,
            }
        })
        .collect()
}

/// Every (role, word) of a view's text, in order.
fn words(view: &[ViewMessage]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for msg in view {
        for part in &msg.parts {
            if let ViewPart::Text(t) = part {
                for token in t.split_whitespace() {
                    out.extend(split_glued(token).into_iter().map(|w| (msg.role, w)));
                }
            }
        }
    }
    out
}

/// Bool HITL answers render as `true`/`false` with no trailing space, so they can glue onto the
/// next text of the same role (`trueu12a`); splits them off again. Generated words end with a
/// space and never glue.
fn split_glued(token: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = token;
    while !rest.is_empty() {
        let bool_word = ["true", "false"].into_iter().find(|b| rest.starts_with(b));
        match bool_word {
            Some(b) if rest.len() > b.len() => {
                out.push(b.to_string());
                rest = &rest[b.len()..];
            }
            _ => {
                out.push(rest.to_string());
                break;
            }
        }
    }
    out
}

fn media(view: &[ViewMessage]) -> Vec<ViewPart> {
    view.iter()
        .flat_map(|m| m.parts.iter())
        .filter(|p| !matches!(p, ViewPart::Text(_)))
        .cloned()
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    UserText,
    Question,
    Answer,
    Chunk,
    Stop,
    Decoy,
    Custom,
    Envelope,
}

#[derive(Clone, Debug)]
struct Source {
    step: u32,
    kind: Kind,
    agent: String,
    display: String,
    bad_created_at: bool,
    /// The step's row is malformed: the projector skips it, so its text may only appear through
    /// a stop's answer.
    defective: bool,
    /// The fault plan lets at least one copy of the step reach the store.
    persisted: bool,
}

/// Where each word of the scenario's text comes from, and which payload strings a warning must
/// never carry.
struct Provenance {
    words: BTreeMap<String, Vec<Source>>,
    payload_strings: BTreeSet<String>,
}

fn provenance(scenario: &DisplayScenario) -> Provenance {
    let plan = super::faults::FaultPlan::new(scenario);
    let mut words: BTreeMap<String, Vec<Source>> = BTreeMap::new();
    let mut payload_strings = BTreeSet::new();
    let mut urls = Vec::new();
    for step in scenario.steps() {
        let mut add = |kind: Kind, text: &str| {
            for w in text.split_whitespace() {
                words.entry(w.to_string()).or_default().push(Source {
                    step: step.id,
                    kind,
                    agent: step.agent.clone(),
                    display: step.display.clone(),
                    bad_created_at: matches!(
                        step.defect,
                        Some(super::scenario::Defect::BadCreatedAt { .. })
                    ),
                    defective: step.defect.is_some(),
                    persisted: plan.persisted(step.id),
                });
                if is_tagged(w) {
                    payload_strings.insert(w.to_string());
                }
            }
        };
        match &step.event {
            Event::UserMessage { blocks } => {
                for b in blocks {
                    match b {
                        super::scenario::Block::Text { text } => add(Kind::UserText, text),
                        super::scenario::Block::Image { url: Some(u) } if u.len() > 12 => {
                            urls.push(u.clone());
                        }
                        _ => {}
                    }
                }
            }
            Event::HitlQuestion { question } => add(Kind::Question, question),
            Event::HitlAnswer { answer } => match answer {
                super::scenario::Answer::Text(t) => add(Kind::Answer, t),
                super::scenario::Answer::Bool(b) => {
                    add(Kind::Answer, if *b { "true" } else { "false" })
                }
            },
            Event::Chunk { text } => add(Kind::Chunk, text),
            Event::Stop { answer } => add(Kind::Stop, answer),
            Event::Decoy { text, .. } => add(Kind::Decoy, text),
            Event::Custom { text, .. } => add(Kind::Custom, text),
            Event::Envelope { text, .. } => add(Kind::Envelope, text),
        }
    }
    payload_strings.extend(urls);
    Provenance {
        words,
        payload_strings,
    }
}

/// A generated word: a letter, digits, a letter (`c17a`).
fn is_tagged(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() >= 3
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1].is_ascii_lowercase()
        && b[1..b.len() - 1].iter().all(u8::is_ascii_digit)
}

/// The priority of each finding: most specific first.
const PRIORITY: [BugId; 14] = [
    BugId::P1,
    BugId::P12,
    BugId::P10,
    BugId::P2,
    BugId::P7,
    BugId::P9,
    BugId::P11,
    BugId::P3,
    BugId::P6,
    BugId::P8,
    BugId::P4,
    BugId::P13,
    BugId::P5,
    BugId::P14,
];

/// Findings by ID, in discovery order within an ID; the catch-all goes last.
#[derive(Default)]
struct Findings {
    by_id: BTreeMap<BugId, Vec<String>>,
    /// Findings that follow from most defects (a skipped row no longer warned about because it is
    /// no longer skipped): reported after every specific finding.
    secondary: BTreeMap<BugId, Vec<String>>,
    catch_all: Vec<String>,
}

impl Findings {
    fn add(&mut self, id: BugId, message: String) {
        let list = self.by_id.entry(id).or_default();
        if list.len() < 3 {
            list.push(message);
        }
    }

    fn add_secondary(&mut self, id: BugId, message: String) {
        let list = self.secondary.entry(id).or_default();
        if list.len() < 3 {
            list.push(message);
        }
    }

    fn into_violations(mut self) -> Vec<Violation> {
        let mut out = Vec::new();
        for id in PRIORITY {
            if let Some(messages) = self.by_id.remove(&id) {
                out.push(Violation::safety(id, messages.join("; ")));
            }
        }
        // The weakest signals, strongest first.
        for id in [BugId::P12, BugId::P5, BugId::P10] {
            if let Some(messages) = self.secondary.remove(&id) {
                out.push(Violation::safety(id, messages.join("; ")));
            }
        }
        for (id, messages) in std::mem::take(&mut self.secondary) {
            out.push(Violation::safety(id, messages.join("; ")));
        }
        if !self.catch_all.is_empty() {
            // The broadest invariant: the settled history equals what the client must see (P2's
            // "history equals what the live thread+display subscriber saw").
            out.push(Violation::safety(
                BugId::P2,
                format!(
                    "settled history differs from the model: {}",
                    self.catch_all.join("; ")
                ),
            ));
        }
        out
    }
}

struct Context<'a> {
    scenario: &'a DisplayScenario,
    provenance: Provenance,
    /// Display keys visible per the model.
    visible: BTreeSet<String>,
    /// Display keys holding a look-alike marker.
    decoy_marker_displays: BTreeSet<String>,
    /// Display keys where the user spoke (a user message or a HITL answer, of any agent class).
    interactive_displays: BTreeSet<String>,
}

impl Context<'_> {
    fn sources(&self, word: &str) -> &[Source] {
        self.provenance
            .words
            .get(word)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// Checks one played world.
pub fn check(
    scenario: &DisplayScenario,
    conversation: &m::Conversation,
    transcript: &m::Transcript,
    reads: &[Read],
    early_expected: &[Option<EarlyExpectation>],
) -> Vec<Violation> {
    let visible_ids = m::visible_displays(conversation);
    let visible: BTreeSet<String> = scenario
        .displays
        .iter()
        .filter(|(_, id)| visible_ids.contains(*id))
        .map(|(k, _)| k.clone())
        .collect();
    let decoy_marker_displays = scenario
        .steps()
        .filter(|s| is_decoy_marker(scenario, s))
        .map(|s| s.display.clone())
        .collect();
    let interactive_displays = scenario
        .steps()
        .filter(|s| {
            matches!(
                s.event,
                Event::UserMessage { .. } | Event::HitlAnswer { .. }
            )
        })
        .map(|s| s.display.clone())
        .collect();
    let cx = Context {
        scenario,
        provenance: provenance(scenario),
        visible,
        decoy_marker_displays,
        interactive_displays,
    };
    let mut f = Findings::default();

    // P1: reconstruction never fails.
    for read in reads {
        if let Err(e) = &read.result {
            f.add(
                BugId::P1,
                format!(
                    "replica-{} failed to reconstruct ({}): {e}",
                    read.replica,
                    turn_label(read)
                ),
            );
        }
    }
    // P10: no payload text in any warning.
    for read in reads {
        if let Ok(p) = &read.result {
            for w in &p.warnings {
                let tokens: BTreeSet<&str> = w
                    .text
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|t| !t.is_empty())
                    .collect();
                if let Some(leak) = cx.provenance.payload_strings.iter().find(|s| {
                    if s.contains('/') {
                        w.text.contains(s.as_str())
                    } else {
                        tokens.contains(s.as_str())
                    }
                }) {
                    f.add(
                        BugId::P10,
                        format!(
                            "a {} warning ({}) carries payload text `{leak}`",
                            w.code.as_str(),
                            turn_label(read)
                        ),
                    );
                }
            }
        }
    }
    let settled: Vec<&Read> = reads.iter().filter(|r| r.settled).collect();
    let Some(first) = settled.first() else {
        f.catch_all.push("no settled read".into());
        return f.into_violations();
    };
    // P12: every replica answers the same. A settled answer that is the model's plus trailing
    // messages repeating earlier text is a live buffer that outlived its run (P14), not a replica
    // reading a different store.
    let expected_view = view_of_model(&transcript.messages);
    let stripped: Vec<Result<Vec<ViewMessage>, String>> = settled
        .iter()
        .map(|r| match &r.result {
            Ok(p) => {
                let view = view_of_projection(&p.messages);
                if let Some(extra) = overlay_tail(&cx, &view, &expected_view) {
                    f.add(
                        BugId::P14,
                        format!(
                            "settled answer of replica-{} ends with {extra} extra messages repeating earlier text",
                            r.replica
                        ),
                    );
                    Ok(expected_view.clone())
                } else {
                    Ok(view)
                }
            }
            Err(e) => Err(e.clone()),
        })
        .collect();
    for (i, other) in stripped.iter().enumerate().skip(1) {
        if stripped[0] != *other {
            f.add(
                BugId::P12,
                format!(
                    "replica-{} and replica-{} answer differently after settling",
                    settled[0].replica, settled[i].replica
                ),
            );
        }
    }
    let (Ok(projection), Ok(actual)) = (&first.result, &stripped[0]) else {
        return f.into_violations();
    };
    let actual = actual.clone();
    let expected = expected_view;

    // P9: fail closed.
    let expects_no_display = transcript
        .expected_warnings
        .iter()
        .any(|w| w.code == m::code::NO_VISIBLE_DISPLAY);
    if expects_no_display {
        let count = projection
            .warnings
            .iter()
            .filter(|w| w.code.as_str() == m::code::NO_VISIBLE_DISPLAY)
            .count();
        if !actual.is_empty() || count != 1 {
            f.add(
                BugId::P9,
                format!(
                    "a thread without a visible display answered {} messages and {count} no_visible_display warnings (expected 0 and 1)",
                    actual.len()
                ),
            );
        }
    }

    diff_words(&cx, &actual, &expected, &mut f);

    // P13: media parts.
    let (am, em) = (media(&actual), media(&expected));
    if am != em {
        f.add(
            BugId::P13,
            format!(
                "media parts differ: answered {} ({}), expected {} ({})",
                am.len(),
                describe_media(&am),
                em.len(),
                describe_media(&em)
            ),
        );
    }
    // P10: every skipped malformed row is warned about.
    for w in &transcript.expected_warnings {
        let Some(index) = w.emission else { continue };
        let Some(emission) = conversation.emissions.get(index) else {
            continue;
        };
        let named = warning_named(projection, w.code, &emission.event_id);
        let primary_stop = matches!(emission.kind, m::EmissionKind::Stop { .. })
            && conversation.primary.as_ref() == Some(&emission.agent);
        if !named && primary_stop {
            f.add_secondary(
                BugId::P5,
                format!(
                    "no {} warning for the primary agent's stop {}: stop events were not read",
                    w.code, emission.event_id
                ),
            );
        } else if !named {
            f.add_secondary(
                BugId::P10,
                format!(
                    "no {} warning for event {} (a malformed row skipped silently)",
                    w.code, emission.event_id
                ),
            );
        }
    }
    // P14: a read before settling shows exactly what the model computes from the rows stored by
    // then, which is an in-order subset of the settled history except where the primary stop
    // supplied a suffix early (accepted, P5: the stored chunks may later diverge from the answer).
    for (read, expected_then) in reads.iter().zip(early_expected) {
        let (Ok(p), Some(expected_then)) = (&read.result, expected_then) else {
            continue;
        };
        let answered = view_of_projection(&p.messages);
        if answered == expected_then.shared {
            continue;
        }
        if let Some(extra) = overlay_tail(&cx, &answered, &expected_then.shared) {
            f.add(
                BugId::P14,
                format!(
                    "read before settling ({}, replica-{}) ends with {extra} messages of live chunk text after the stored history",
                    turn_label(read),
                    read.replica
                ),
            );
            continue;
        }
        if answered == expected_then.own {
            // Secondary: a bug that drops what the replica had not yet received can also match.
            f.add_secondary(
                BugId::P12,
                format!(
                    "replica-{} answered ({}) from the rows its own persister received, not from the shared store",
                    read.replica,
                    turn_label(read)
                ),
            );
        } else if cx.visible.is_empty() && !answered.is_empty() {
            f.add(
                BugId::P9,
                format!(
                    "read before settling ({}, replica-{}): a thread without a visible display answered {} messages",
                    turn_label(read),
                    read.replica,
                    answered.len()
                ),
            );
        } else if let Some(word) =
            hidden_word(&cx, &words(&answered), &words(&expected_then.shared))
        {
            f.add(
                BugId::P2,
                format!(
                    "read before settling ({}, replica-{}): `{word}` is from a display the client never saw",
                    turn_label(read),
                    read.replica
                ),
            );
        } else if let Some(word) =
            nested_stop_word(&cx, &words(&answered), &words(&expected_then.shared))
        {
            f.add(
                BugId::P6,
                format!(
                    "read before settling ({}, replica-{}): `{word}` came from a stop of an agent that is not the primary",
                    turn_label(read),
                    read.replica
                ),
            );
        } else {
            f.add(
                BugId::P14,
                format!(
                    "read before settling ({}, replica-{}): {}",
                    turn_label(read),
                    read.replica,
                    first_difference(&words(&answered), &words(&expected_then.shared))
                ),
            );
        }
    }
    if f.by_id.is_empty() && f.secondary.is_empty() && f.catch_all.is_empty() && actual != expected
    {
        f.catch_all.push(format!(
            "same words, different messages: answered {} messages, expected {}",
            actual.len(),
            expected.len()
        ));
    }
    f.into_violations()
}

fn turn_label(read: &Read) -> String {
    match (read.turn, read.settled) {
        (Some(t), _) => format!("turn {t}"),
        (None, true) => "settled".into(),
        (None, false) => "poll after healing".into(),
    }
}

/// When `answered` is `expected` followed by assistant messages made only of streamed chunk text
/// (a live buffer's signature), the number of those messages.
fn overlay_tail(
    cx: &Context<'_>,
    answered: &[ViewMessage],
    expected: &[ViewMessage],
) -> Option<usize> {
    if answered.len() <= expected.len() || answered[..expected.len()] != *expected {
        return None;
    }
    let tail = &answered[expected.len()..];
    let earlier: BTreeSet<String> = words(expected).into_iter().map(|(_, w)| w).collect();
    let repeats_chunks = tail.iter().all(|m| m.role == "assistant")
        && words(tail).iter().all(|(_, w)| {
            let chunk = cx.sources(w).iter().any(|s| s.kind == Kind::Chunk);
            let skipped = cx
                .sources(w)
                .iter()
                .any(|s| s.kind == Kind::Chunk && s.defective);
            chunk && (earlier.contains(w) || skipped)
        });
    repeats_chunks.then_some(tail.len())
}

fn describe_media(parts: &[ViewPart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            ViewPart::Image(_) => "image".to_string(),
            ViewPart::Audio { format, data } => format!("{format}:{}B64", data.len()),
            ViewPart::Text(_) => "text".to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn is_decoy_marker(scenario: &DisplayScenario, step: &Step) -> bool {
    let Event::Decoy { class, .. } = &step.event else {
        return false;
    };
    let user_agent = scenario
        .agents
        .get(&step.agent)
        .is_some_and(|a| a.class == "UserAgent");
    user_agent
        && (class.contains("UserMessageEvent") || class.contains("HumanInTheLoopResponseEvent"))
}

/// Attributes every extra, missing or misplaced word of the settled answer.
fn diff_words(
    cx: &Context<'_>,
    actual: &[ViewMessage],
    expected: &[ViewMessage],
    f: &mut Findings,
) {
    let aw = words(actual);
    let ew = words(expected);
    let count = |ws: &[(&'static str, String)]| {
        let mut c: BTreeMap<String, usize> = BTreeMap::new();
        for (_, w) in ws {
            *c.entry(w.clone()).or_default() += 1;
        }
        c
    };
    let (ac, ec) = (count(&aw), count(&ew));
    let primary = &cx.scenario.primary;
    let decoy_shown = ac
        .keys()
        .any(|w| cx.sources(w).iter().any(|s| s.kind == Kind::Decoy));
    let duplicates_cause = duplicates_cause(cx, &aw, &ew);

    for (word, &n) in &ac {
        let want = ec.get(word).copied().unwrap_or(0);
        if n <= want {
            continue;
        }
        let sources = cx.sources(word);
        let what = format!("`{word}` appears {n}x, expected {want}x");
        let Some(src) = sources.first() else {
            f.catch_all.push(format!("{what} (text no step emitted)"));
            continue;
        };
        let step = src.step;
        if sources.iter().any(|s| s.kind == Kind::Decoy) {
            f.add(
                BugId::P7,
                format!("{what}: look-alike class of step {step} was projected"),
            );
        } else if sources.iter().all(|s| !cx.visible.contains(&s.display)) {
            // A look-alike marker's display leaks under a thread-wide scope too (P2); only a
            // substring match also projects the look-alike rows themselves.
            if decoy_shown
                && sources
                    .iter()
                    .any(|s| cx.decoy_marker_displays.contains(&s.display))
            {
                f.add(
                    BugId::P7,
                    format!(
                        "{what}: display `{}` is visible only through a look-alike marker",
                        src.display
                    ),
                );
            } else if cx.visible.is_empty()
                && sources
                    .iter()
                    .any(|s| cx.interactive_displays.contains(&s.display))
            {
                f.add(
                    BugId::P9,
                    format!("{what}: the thread has no visible display, yet step {step} was shown"),
                );
            } else {
                f.add(
                    BugId::P2,
                    format!("{what}: step {step} is on hidden display `{}`", src.display),
                );
            }
        } else if sources
            .iter()
            .any(|s| matches!(s.kind, Kind::Question | Kind::Answer))
            && in_wrong_role(&aw, word, sources)
        {
            f.add(
                BugId::P3,
                format!("{what}: HITL text of step {step} appears in the other role"),
            );
        } else if want >= 1 {
            let why = match duplicates_cause {
                BugId::P6 => "copied by the stop of an agent that is not the primary",
                BugId::P8 => "a row with a malformed created_at was placed in the order anyway",
                _ => "duplicated turn",
            };
            f.add(duplicates_cause, format!("{what}: {why} (step {step})"));
        } else if sources.iter().any(|s| s.bad_created_at) {
            f.add(
                BugId::P8,
                format!("{what}: step {step} has a malformed created_at and must be skipped"),
            );
        } else if only_from_nested_stop(cx, word) {
            f.add(
                BugId::P6,
                format!(
                    "{what}: only the stop of `{}`, not the primary agent, carries it",
                    nested_agent(cx, word)
                ),
            );
        } else if sources
            .iter()
            .any(|s| s.kind == Kind::Stop && &s.agent == primary)
        {
            f.add(
                BugId::P5,
                format!(
                    "{what}: the primary stop (step {step}) supplied text the contract does not"
                ),
            );
        } else {
            f.catch_all.push(format!("{what} (step {step})"));
        }
    }
    for (word, &want) in &ec {
        let n = ac.get(word).copied().unwrap_or(0);
        if n >= want {
            continue;
        }
        let sources = cx.sources(word);
        let what = format!("`{word}` appears {n}x, expected {want}x");
        let Some(src) = sources.first() else {
            f.catch_all.push(what.to_string());
            continue;
        };
        let step = src.step;
        if sources
            .iter()
            .any(|s| s.kind == Kind::Chunk && &s.agent != primary)
        {
            f.add(
                BugId::P11,
                format!("{what}: delegated output of `{}` (step {step}) on a shared display was dropped", src.agent),
            );
        } else if sources
            .iter()
            .any(|s| s.kind == Kind::Stop && &s.agent == primary)
        {
            f.add(
                BugId::P5,
                format!("{what}: the primary stop (step {step}) did not supply the missing suffix"),
            );
        } else if sources
            .iter()
            .any(|s| matches!(s.kind, Kind::Question | Kind::Answer))
        {
            f.add(
                BugId::P3,
                format!("{what}: HITL text of step {step} missing"),
            );
        } else {
            f.catch_all.push(format!("{what} (step {step})"));
        }
    }
    if ac == ec {
        // Same words: roles, then order.
        let roles_a: BTreeMap<&String, BTreeSet<&str>> = role_map(&aw);
        let roles_e: BTreeMap<&String, BTreeSet<&str>> = role_map(&ew);
        if roles_a != roles_e {
            let word = roles_a
                .iter()
                .find(|(w, r)| roles_e.get(*w) != Some(*r))
                .map(|(w, _)| (*w).clone())
                .unwrap_or_default();
            let hitl = cx
                .sources(&word)
                .iter()
                .any(|s| matches!(s.kind, Kind::Question | Kind::Answer));
            let what = format!("`{word}` has the wrong role");
            if hitl {
                f.add(BugId::P3, what);
            } else {
                f.catch_all.push(what);
            }
        } else if aw != ew {
            let at = aw.iter().zip(&ew).position(|(a, e)| a != e).unwrap_or(0);
            f.add(
                BugId::P8,
                format!(
                    "order differs at word {at}: answered `{}`, expected `{}`",
                    aw.get(at).map(|x| x.1.as_str()).unwrap_or(""),
                    ew.get(at).map(|x| x.1.as_str()).unwrap_or("")
                ),
            );
        }
    }
}

/// Whether a HITL word appears in the role its kind does not have (a question as the user, an
/// answer as the assistant).
fn in_wrong_role(ws: &[(&'static str, String)], word: &str, sources: &[Source]) -> bool {
    let proper: BTreeSet<&str> = sources
        .iter()
        .filter_map(|s| match s.kind {
            Kind::Question => Some("assistant"),
            Kind::Answer => Some("user"),
            _ => None,
        })
        .collect();
    ws.iter().any(|(r, w)| w == word && !proper.contains(r))
}

fn role_map<'a>(ws: &'a [(&'static str, String)]) -> BTreeMap<&'a String, BTreeSet<&'static str>> {
    let mut out: BTreeMap<&String, BTreeSet<&'static str>> = BTreeMap::new();
    for (r, w) in ws {
        out.entry(w).or_default().insert(r);
    }
    out
}

/// The words `answered` has more copies of than `expected`, one entry per extra copy.
fn excess_words(
    answered: &[(&'static str, String)],
    expected: &[(&'static str, String)],
) -> Vec<String> {
    let mut budget: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, w) in expected {
        *budget.entry(w.as_str()).or_default() += 1;
    }
    answered
        .iter()
        .filter_map(|(_, w)| {
            let left = budget.entry(w.as_str()).or_default();
            if *left > 0 {
                *left -= 1;
                None
            } else {
                Some(w.clone())
            }
        })
        .collect()
}

/// What copies of expected words point at, taken over all of them: all carried by a nested
/// agent's stop answer (stop gating, P6); all of rows with a malformed created_at (P8); anything
/// else is missing dedup (P4).
fn duplicates_cause(
    cx: &Context<'_>,
    answered: &[(&'static str, String)],
    expected: &[(&'static str, String)],
) -> BugId {
    let expected_words: BTreeSet<&str> = expected.iter().map(|(_, w)| w.as_str()).collect();
    let copies: Vec<String> = excess_words(answered, expected)
        .into_iter()
        .filter(|w| expected_words.contains(w.as_str()))
        .collect();
    // Copies of one row sort next to each other (same created_at and event_id): adjacent repeats
    // are missing dedup whatever the word.
    let adjacent_repeat = answered
        .windows(2)
        .any(|p| p[0] == p[1] && is_tagged(&p[0].1));
    if copies.is_empty() || adjacent_repeat {
        BugId::P4
    } else if copies.iter().all(|w| from_nested_stop(cx, w)) {
        BugId::P6
    } else if !copies.is_empty()
        && copies
            .iter()
            .all(|w| cx.sources(w).iter().any(|s| s.bad_created_at))
    {
        BugId::P8
    } else {
        BugId::P4
    }
}

fn from_nested_stop(cx: &Context<'_>, word: &str) -> bool {
    cx.sources(word)
        .iter()
        .any(|s| s.kind == Kind::Stop && s.agent != cx.scenario.primary)
}

/// Whether the only rows that could legitimately show `word` are stops of agents other than the
/// primary (its chunk, if any, is malformed and skipped): seeing it means a nested stop was used.
fn only_from_nested_stop(cx: &Context<'_>, word: &str) -> bool {
    let sources = cx.sources(word);
    let nested = |s: &Source| s.kind == Kind::Stop && s.agent != cx.scenario.primary;
    sources.iter().any(nested)
        && sources
            .iter()
            .filter(|s| s.persisted && (!s.defective || s.bad_created_at))
            .all(nested)
}

fn nested_agent(cx: &Context<'_>, word: &str) -> String {
    cx.sources(word)
        .iter()
        .find(|s| s.kind == Kind::Stop && s.agent != cx.scenario.primary)
        .map(|s| s.agent.clone())
        .unwrap_or_default()
}

/// An extra word whose every source is on a display that is never visible.
fn hidden_word(
    cx: &Context<'_>,
    answered: &[(&'static str, String)],
    expected: &[(&'static str, String)],
) -> Option<String> {
    excess_words(answered, expected).into_iter().find(|w| {
        let sources = cx.sources(w);
        !sources.is_empty()
            && sources.iter().all(|s| {
                !cx.visible.contains(&s.display) && !cx.decoy_marker_displays.contains(&s.display)
            })
    })
}

/// The first extra word of an early read when the extra words point at a nested agent's stop:
/// one only such a stop carries, or copies all of which such a stop carries.
fn nested_stop_word(
    cx: &Context<'_>,
    answered: &[(&'static str, String)],
    expected: &[(&'static str, String)],
) -> Option<String> {
    if answered
        .windows(2)
        .any(|p| p[0] == p[1] && is_tagged(&p[0].1))
    {
        // Adjacent copies of one row: missing dedup, not a stop.
        return None;
    }
    let excess = excess_words(answered, expected);
    if let Some(w) = excess.iter().find(|w| only_from_nested_stop(cx, w)) {
        return Some(w.clone());
    }
    // Before settling, a word whose chunk is not stored yet can only come from a stop's answer
    // (unless its chunk's malformed created_at was taken at face value: P8).
    let expected_words: BTreeSet<&str> = expected.iter().map(|(_, w)| w.as_str()).collect();
    if let Some(w) = excess.iter().find(|w| {
        !expected_words.contains(w.as_str())
            && from_nested_stop(cx, w)
            && !cx.sources(w).iter().any(|s| s.bad_created_at)
    }) {
        return Some(w.clone());
    }
    (duplicates_cause(cx, answered, expected) == BugId::P6)
        .then(|| excess.first().cloned())
        .flatten()
}

/// Where two word sequences first part, in words.
fn first_difference(
    answered: &[(&'static str, String)],
    expected: &[(&'static str, String)],
) -> String {
    let at = answered
        .iter()
        .zip(expected)
        .position(|(a, e)| a != e)
        .unwrap_or(answered.len().min(expected.len()));
    let show = |ws: &[(&'static str, String)]| {
        ws.get(at)
            .map(|(r, w)| format!("`{w}` ({r})"))
            .unwrap_or_else(|| "the end".to_string())
    };
    format!(
        "{} words answered, {} expected from the rows stored by then; at word {at} answered {}, expected {}",
        answered.len(),
        expected.len(),
        show(answered),
        show(expected)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_words_are_recognised() {
        assert!(is_tagged("c17a"));
        assert!(is_tagged("s1b"));
        assert!(!is_tagged("true"));
        assert!(!is_tagged("o0"));
        assert!(!is_tagged("c17"));
    }

    #[test]
    fn adjacent_text_parts_merge_in_views() {
        let mut parts = Vec::new();
        push_part(&mut parts, ViewPart::Text("a ".into()));
        push_part(&mut parts, ViewPart::Text("b ".into()));
        push_part(&mut parts, ViewPart::Image("u".into()));
        push_part(&mut parts, ViewPart::Text("c ".into()));
        assert_eq!(
            parts,
            vec![
                ViewPart::Text("a b ".into()),
                ViewPart::Image("u".into()),
                ViewPart::Text("c ".into())
            ]
        );
    }
}
