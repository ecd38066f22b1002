//! The invariant checkers of the display workload, P1 to P16.
//!
//! Checkers only check: they read the scenario (what the agents meant), the model's transcript
//! (what the client must see), and the replicas' answers, and name every difference by its
//! catalog ID. Each rule of [`RULES`] checks one invariant; the words of an answer are attributed
//! by [`super::words`] through where each word came from ([`super::provenance`]).
//!
//! Violations come out in a fixed priority order ([`ATTRIBUTION`]), most specific first, so that
//! a world with one defect reports that defect's ID first even when its effects also break broader
//! invariants.

use super::context::{overlay_tail, turn_label, Context, EarlyExpectation, Read};
use super::departure::{at_read, at_read_words, settled_pointer};
use super::faults::FaultPlan;
use super::record::WorldRecord;
use super::scenario::DisplayScenario;
use super::view::{describe_media, media, view_of_projection, warning_named, words, ViewMessage};
use super::words::{
    extra_words, first_difference, hidden_word, missing_words, nested_stop_word,
    same_words_in_order,
};
use crate::divergence::{Divergence, TraceMark};
use crate::outcome::{Attribution, Findings, Pointer, Unexplained, Violation};
use history::display::ContentPart;
use history::BugId;
use model::display as m;
use std::collections::{BTreeMap, BTreeSet};

/// The order findings are reported in; the weakest signals last.
pub static ATTRIBUTION: Attribution = Attribution {
    priority: &[
        BugId::P1,
        // A store that refused a delivery said so itself: nothing narrower explains it.
        BugId::P15,
        BugId::P12,
        // A read that did not find the thread misses every word of it.
        BugId::P16,
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
    ],
    secondary: &[BugId::P12, BugId::P5, BugId::P10],
    merge_up_to: Some(3),
    // The broadest invariant: the settled history equals what the client must see (P2's "history
    // equals what the live thread+display subscriber saw").
    unexplained: Unexplained::Merged {
        prefix: "settled history differs from the model: ",
        up_to: usize::MAX,
    },
};

/// One checker rule: the played world in, findings out.
pub type Rule = fn(&Context<'_>, &mut Findings);

/// Every rule, each tagged with the invariant it checks, in the order they run (which is the
/// order of messages within one ID).
pub const RULES: &[(BugId, Rule)] = &[
    (BugId::P15, every_delivery_is_admitted),
    (BugId::P1, reconstruction_never_fails),
    (BugId::P10, warnings_carry_no_payload),
    (BugId::P2, a_settled_read_exists),
    (BugId::P14, no_live_buffer_after_settling),
    (BugId::P12, replicas_agree_after_settling),
    (BugId::P9, fails_closed),
    (BugId::P16, super::lookup_rule::reads_find_the_thread),
    (BugId::P2, extra_words),
    (BugId::P2, missing_words),
    (BugId::P8, same_words_in_order),
    (BugId::P13, media_parts_match),
    (BugId::P13, answers_hold_no_empty_text_part),
    (BugId::P10, skipped_rows_are_warned_about),
    (BugId::P14, early_reads_show_the_stored_rows),
    (BugId::P2, settled_history_matches),
    (BugId::P2, project_matches_the_model),
];

/// Checks one played world.
pub fn check(
    scenario: &DisplayScenario,
    plan: &FaultPlan,
    conversation: &m::Conversation,
    transcript: &m::Transcript,
    record: &WorldRecord,
    early_expected: &[Option<EarlyExpectation>],
) -> Vec<Violation> {
    let cx = Context::new(
        scenario,
        plan,
        conversation,
        transcript,
        record,
        early_expected,
    );
    let mut f = Findings::new(&ATTRIBUTION);
    for (_, rule) in RULES {
        rule(&cx, &mut f);
    }
    let mut violations = f.into_violations();
    violations.extend(super::liveness::replicas_converge(record));
    violations
}

/// P15: a replica's store admits every delivery, stored or quarantined, copies included. The
/// display world injects no fault into the store (its faults are the bus's), so an error answer
/// is the store's own defect, whatever the reads then show: a store that fails every append
/// leaves a thread without a visible display reading empty, as the model expects, and only
/// this rule sees it.
fn every_delivery_is_admitted(cx: &Context<'_>, f: &mut Findings) {
    for e in cx.append_errors {
        // A delivery, not a read: the store's answer to the replica's append, against what the
        // contract asks of it (the row stored, or quarantined when it is malformed).
        let line = format!(
            "replica-{} persist step={} copy={} ",
            e.replica, e.step, e.copy
        );
        let by = format!("replica-{}", e.replica);
        let d = Divergence::of("append", e.op, e.at_us, by).answers(
            format!("step {} copy {}: error {}", e.step, e.copy, e.message),
            format!("step {} copy {}: stored or quarantined", e.step, e.copy),
        );
        f.add_at(
            BugId::P15,
            Pointer::request(d, TraceMark::any_time(line)),
            format!(
                "replica-{}'s store answered an error to step {} (copy {}), where it must store or quarantine the row: {}",
                e.replica, e.step, e.copy, e.message
            ),
        );
    }
}

/// P1: reconstruction never fails.
fn reconstruction_never_fails(cx: &Context<'_>, f: &mut Findings) {
    for read in cx.reads {
        if let Err(e) = &read.result {
            f.add_at(
                BugId::P1,
                at_read(read, format!("error {e}"), "the thread's history"),
                format!(
                    "replica-{} failed to reconstruct ({}): {e}",
                    read.replica,
                    turn_label(read)
                ),
            );
        }
    }
}

/// P10: no payload text in any warning.
fn warnings_carry_no_payload(cx: &Context<'_>, f: &mut Findings) {
    // Reads repeat the same warnings: each distinct text is searched once.
    let mut leaks: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    let urls: Vec<&str> = (cx.provenance.payload_strings.iter())
        .filter(|s| s.contains('/'))
        .copied()
        .collect();
    let mut identifiers = None;
    for read in cx.reads {
        let Ok(p) = &read.result else { continue };
        for w in &p.warnings {
            let leak = *leaks.entry(w.text.as_str()).or_insert_with(|| {
                let identifiers = identifiers.get_or_insert_with(|| Identifiers::of(cx));
                let text = identifiers.taken_out_of(&w.text);
                payload_in(&cx.provenance.payload_strings, &urls, &text)
            });
            if let Some(leak) = leak {
                f.add_at(
                    BugId::P10,
                    at_read(
                        read,
                        format!("a {} warning carrying `{leak}`", w.code.as_str()),
                        "warnings without payload text",
                    ),
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

/// The identifiers a warning names by design: each display's id and each row's event id, as the
/// scenario and the model know them (not as the warning says). A scenario file may give a payload
/// string the text of one of them, or of a part of one (a url that is a display's id, a display
/// id holding a word of a chunk); in a warning the two cannot be told apart, so the identifiers
/// are taken out of its text before the payload strings are looked for.
struct Identifiers<'a> {
    display_ids: Vec<&'a str>,
    /// Event ids are ObjectIds, one alphanumeric token each.
    event_ids: BTreeSet<&'a str>,
}

impl<'a> Identifiers<'a> {
    fn of(cx: &Context<'a>) -> Self {
        Identifiers {
            display_ids: (cx.scenario.displays.values())
                .map(String::as_str)
                .filter(|id| !id.is_empty())
                .collect(),
            event_ids: (cx.conversation.emissions.iter())
                .map(|e| e.event_id.as_str())
                .collect(),
        }
    }

    /// `text` with every identifier replaced by a space.
    fn taken_out_of<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        let mut text = std::borrow::Cow::Borrowed(text);
        for id in &self.display_ids {
            if text.contains(id) {
                text = text.replace(id, " ").into();
            }
        }
        let event_ids: Vec<&str> = (tokens(&text))
            .filter_map(|t| self.event_ids.get(t).copied())
            .collect();
        if event_ids.is_empty() {
            return text;
        }
        let mut text = text.into_owned();
        for id in event_ids {
            text = text.replace(id, " ");
        }
        text.into()
    }
}

/// The first payload string (in their order) that `text` carries: as a token, or anywhere for
/// a string with a `/` (a URL; `urls` are those). A token has no `/`, so the two never meet;
/// looking each token up rather than testing every payload string against the text was most
/// of the check's cost.
fn payload_in<'x>(
    payload_strings: &BTreeSet<&'x str>,
    urls: &[&'x str],
    text: &str,
) -> Option<&'x str> {
    let as_tokens = tokens(text).filter_map(|t| payload_strings.get(t).copied());
    let anywhere = urls.iter().copied().filter(|u| text.contains(u));
    as_tokens.chain(anywhere).min()
}

/// A warning's tokens: its runs of ASCII letters and digits.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    (text.split(|c: char| !c.is_ascii_alphanumeric())).filter(|t| !t.is_empty())
}

fn a_settled_read_exists(cx: &Context<'_>, f: &mut Findings) {
    if cx.settled.is_empty() {
        // A whole-state rule: no read settled, so none can be named.
        f.unexplained_at(
            BugId::P2,
            crate::outcome::Pointer::whole_state("the replicas' answers once the world settled"),
            "no settled read",
        );
    }
}

/// P14: a settled answer ends with no live buffer's messages.
fn no_live_buffer_after_settling(cx: &Context<'_>, f: &mut Findings) {
    for (read, (_, extra)) in cx.settled.iter().zip(&cx.settled_views) {
        if let Some(extra) = extra {
            f.add_at(
                BugId::P14,
                at_read(
                    read,
                    format!("the settled history, then {extra} messages"),
                    "the settled history",
                ),
                format!(
                    "settled answer of replica-{} ends with {extra} extra messages repeating earlier text",
                    read.replica
                ),
            );
        }
    }
}

/// P12: every replica answers the same.
fn replicas_agree_after_settling(cx: &Context<'_>, f: &mut Findings) {
    let Some((first, _)) = cx.settled_views.first() else {
        return;
    };
    for (i, (other, _)) in cx.settled_views.iter().enumerate().skip(1) {
        if first != other {
            let pointer = match (other, first) {
                (Ok(a), Ok(e)) => at_read_words(cx.settled[i], &words(a), &words(e)),
                (a, e) => at_read(
                    cx.settled[i],
                    format!("{} messages", a.as_ref().map_or(0, Vec::len)),
                    format!(
                        "replica-{}'s {} messages",
                        cx.settled[0].replica,
                        e.as_ref().map_or(0, Vec::len)
                    ),
                ),
            };
            f.add_at(
                BugId::P12,
                pointer,
                format!(
                    "replica-{} and replica-{} answer differently after settling",
                    cx.settled[0].replica, cx.settled[i].replica
                ),
            );
        }
    }
}

/// P9: a thread without a visible display answers nothing and warns once.
fn fails_closed(cx: &Context<'_>, f: &mut Findings) {
    let Some((projection, actual)) = &cx.answer else {
        return;
    };
    let expects_no_display = cx.expects_no_display();
    if !expects_no_display {
        return;
    }
    let count = projection
        .warnings
        .iter()
        .filter(|w| w.code.as_str() == m::code::NO_VISIBLE_DISPLAY)
        .count();
    if !actual.is_empty() || count != 1 {
        f.add_at(
            BugId::P9,
            settled_pointer(cx, &[]),
            format!(
                "a thread without a visible display answered {} messages and {count} no_visible_display warnings (expected 0 and 1)",
                actual.len()
            ),
        );
    }
}

/// P13: media parts.
fn media_parts_match(cx: &Context<'_>, f: &mut Findings) {
    let Some((_, actual)) = &cx.answer else {
        return;
    };
    let (am, em) = (media(actual), media(&cx.expected));
    if am != em {
        f.add_at(
            BugId::P13,
            settled_pointer(cx, &[]),
            format!(
                "media parts differ: answered {} ({}), expected {} ({})",
                am.len(),
                describe_media(&am),
                em.len(),
                describe_media(&em)
            ),
        );
    }
}

/// P13: every answer is in the OpenAI chat shape, where a text part is never empty
/// (docs/display-projection.md, "Projection" 5): an empty text block becomes nothing.
fn answers_hold_no_empty_text_part(cx: &Context<'_>, f: &mut Findings) {
    let reads = cx.reads.iter().filter_map(|r| {
        let at = format!("replica-{}'s answer at {}", r.replica, turn_label(r));
        r.result.as_ref().ok().map(|p| (at, Some(r), p))
    });
    let projected = cx
        .projected
        .and_then(|p| p.as_ref().ok())
        .map(|p| ("`project`'s answer".to_string(), None, p));
    for (at, read, projection) in reads.chain(projected) {
        let empty = projection.messages.iter().position(|m| {
            m.content
                .iter()
                .any(|p| matches!(p, ContentPart::Text { text } if text.is_empty()))
        });
        if let Some(m) = empty {
            let pointer = read.map_or_else(Pointer::default, |r| {
                at_read(
                    r,
                    format!("message {m}: an empty text part"),
                    format!("message {m}: no empty text part"),
                )
            });
            f.add_at(
                BugId::P13,
                pointer,
                format!("{at}: message {m} holds an empty text part"),
            );
            return;
        }
    }
}

/// P10: every skipped malformed row is warned about. Secondary: most defects also stop a row
/// from being skipped, and so from being warned about.
fn skipped_rows_are_warned_about(cx: &Context<'_>, f: &mut Findings) {
    let Some((projection, _)) = &cx.answer else {
        return;
    };
    for w in &cx.transcript.expected_warnings {
        let Some(index) = w.emission else { continue };
        let Some(emission) = cx.conversation.emissions.get(index) else {
            continue;
        };
        if warning_named(projection, w.code, &emission.event_id) {
            continue;
        }
        let primary_stop = matches!(emission.kind, m::EmissionKind::Stop { .. })
            && cx.conversation.primary.as_ref() == Some(&emission.agent);
        let pointer = settled_pointer(cx, &[]);
        if primary_stop {
            f.secondary_at(
                BugId::P5,
                pointer,
                format!(
                    "no {} warning for the primary agent's stop {}: stop events were not read",
                    w.code, emission.event_id
                ),
            );
        } else {
            f.secondary_at(
                BugId::P10,
                pointer,
                format!(
                    "no {} warning for event {} (a malformed row skipped silently)",
                    w.code, emission.event_id
                ),
            );
        }
    }
}

/// P14: a read before settling shows exactly what the model computes from the rows stored by
/// then, which is an in-order subset of the settled history except where the primary stop
/// supplied a suffix early (accepted, P5: the stored chunks may later diverge from the answer).
fn early_reads_show_the_stored_rows(cx: &Context<'_>, f: &mut Findings) {
    if cx.answer.is_none() {
        return;
    }
    for (read, expected_then) in cx.reads.iter().zip(cx.early_expected) {
        let (Ok(p), Some(expected_then)) = (&read.result, expected_then) else {
            continue;
        };
        let answered = view_of_projection(&p.messages);
        if answered != *expected_then.shared {
            early_read_differs(cx, read, &answered, expected_then, f);
        }
    }
}

/// Attributes an early read that differs from the model of the rows stored by then.
fn early_read_differs(
    cx: &Context<'_>,
    read: &Read,
    answered: &[ViewMessage],
    expected_then: &EarlyExpectation,
    f: &mut Findings,
) {
    let at = format!(
        "read before settling ({}, replica-{})",
        turn_label(read),
        read.replica
    );
    let (aw, ew) = (words(answered), words(&expected_then.shared));
    let pointer = at_read_words(read, &aw, &ew);
    if let Some(extra) = overlay_tail(cx, answered, &expected_then.shared) {
        f.add_at(
            BugId::P14,
            pointer,
            format!("{at} ends with {extra} messages of live chunk text after the stored history"),
        );
    } else if answered == expected_then.own.as_slice() {
        // Secondary: a bug that drops what the replica had not yet received can also match.
        f.secondary_at(
            BugId::P12,
            pointer,
            format!(
                "replica-{} answered ({}) from the rows its own persister received, not from the shared store",
                read.replica,
                turn_label(read)
            ),
        );
    } else if cx.visible.is_empty() && !answered.is_empty() {
        f.add_at(
            BugId::P9,
            pointer,
            format!(
                "{at}: a thread without a visible display answered {} messages",
                answered.len()
            ),
        );
    } else if let Some(word) = hidden_word(cx, &aw, &ew) {
        f.add_at(
            BugId::P2,
            pointer,
            format!("{at}: `{word}` is from a display the client never saw"),
        );
    } else if let Some(word) = nested_stop_word(cx, &aw, &ew) {
        f.add_at(
            BugId::P6,
            pointer,
            format!("{at}: `{word}` came from a stop of an agent that is not the primary"),
        );
    } else {
        f.add_at(
            BugId::P14,
            pointer,
            format!("{at}: {}", first_difference(&aw, &ew)),
        );
    }
}

/// P2, when nothing more specific was found: the settled history equals the model's.
fn settled_history_matches(cx: &Context<'_>, f: &mut Findings) {
    let Some((_, actual)) = &cx.answer else {
        return;
    };
    if f.is_empty() && *actual != cx.expected {
        f.unexplained_at(
            BugId::P2,
            settled_pointer(cx, &[]),
            format!(
                "same words, different messages: answered {} messages, expected {}",
                actual.len(),
                cx.expected.len()
            ),
        );
    }
}

/// `project` (docs/sut-protocol.md): the system's pure projector, given exactly the rows the
/// store holds once the world ended, answers the model's settled history; an error is a failed
/// reconstruction (P1). Compared only where no other rule found anything: a projector bug shows
/// in every read, and the reads' rules name it more narrowly.
fn project_matches_the_model(cx: &Context<'_>, f: &mut Findings) {
    match cx.projected {
        None => {}
        // A whole-state rule: `project` reads the rows the store holds once the world ended.
        Some(Err(e)) => f.add_whole_state(
            BugId::P1,
            "`project` of the rows the store holds at the end",
            format!("`project` of the rows the store holds answered an error: {e}"),
        ),
        Some(Ok(p)) if f.is_empty() => {
            let view = view_of_projection(&p.messages);
            if view != cx.expected {
                f.unexplained_at(
                    BugId::P2,
                    crate::outcome::Pointer::whole_state(
                        "`project` of the rows the store holds at the end",
                    ),
                    format!(
                        "`project` of the rows the store holds differs from the model: answered {} messages, expected {}",
                        view.len(),
                        cx.expected.len()
                    ),
                );
            }
        }
        Some(Ok(_)) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::words::{EXTRA_WORD_RULES, MISSING_WORD_RULES};
    use super::*;

    #[test]
    fn every_display_id_has_a_rule_and_a_rank() {
        let tagged: BTreeSet<BugId> = RULES
            .iter()
            .map(|(id, _)| *id)
            .chain(EXTRA_WORD_RULES.iter().map(|(id, _)| *id))
            .chain(MISSING_WORD_RULES.iter().map(|(id, _)| *id))
            .collect();
        for id in BugId::ALL.into_iter().filter(|id| id.family() == 'P') {
            assert!(tagged.contains(&id), "no display rule checks {id}");
            assert!(ATTRIBUTION.priority.contains(&id), "{id} has no rank");
        }
    }

    /// The token lookup finds what testing every payload string against the text found.
    #[test]
    fn a_warnings_payload_is_the_first_payload_string_it_carries() {
        let payload_strings: BTreeSet<&str> = [
            "alpha",
            "beta7",
            "gamma-ray",
            "a b",
            "https://x.test/img.png",
            "/tmp/y",
            "zeta",
        ]
        .into_iter()
        .collect();
        let urls: Vec<&str> = payload_strings
            .iter()
            .filter(|s| s.contains('/'))
            .copied()
            .collect();
        let every_string_tested = |text: &str| {
            let tokens: BTreeSet<&str> = text
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|t| !t.is_empty())
                .collect();
            payload_strings.iter().copied().find(|s| {
                if s.contains('/') {
                    text.contains(s)
                } else {
                    tokens.contains(s)
                }
            })
        };
        for text in [
            "",
            "nothing here",
            "zeta then alpha",
            "alphabet beta7x",
            "(beta7) and gamma-ray and a b",
            "see https://x.test/img.png, zeta",
            "path /tmp/y/z alpha",
            "https://x.test/img.pn",
        ] {
            assert_eq!(
                payload_in(&payload_strings, &urls, text),
                every_string_tested(text),
                "{text:?}"
            );
        }
        assert_eq!(
            payload_in(&payload_strings, &urls, "zeta then alpha"),
            Some("alpha")
        );
    }
}
