//! The merge workload's rules, one a catalog ID, each render's list against the model's:
//!
//! - M5: no id shows twice (a restored message kept beside the same message a page brought).
//! - M3: each message of the open thread shows once, and nothing else shows (a copy beside its
//!   original, a message of another thread, one the client never received).
//! - M6: no message a page delivered since the thread opened disappears (a moved page window).
//! - M1: nothing else the client holds disappears: every message it received (live, in any
//!   copy) since it opened the thread is in the list.
//! - M4: a message a page delivered shows with the seq the page told (never a live frame's
//!   copy without one).
//! - M2: the list is in order: messages whose seq a page told by seq, then the live tail by
//!   run and step.
//!
//! A render is judged by the first rule it breaks, in that order: each more specific rule comes
//! before the general one its failure would also break (M5 before M3, M6 before M1, M4 before
//! M2), so one defect is reported under its own ID; each ID is reported at its first render,
//! with the first wrong answer.

use super::expect::{Expectation, ExpectedRender};
use super::scenario::MergeScenario;
use super::world::{Render, WorldRecord};
use crate::divergence::{Divergence, TraceMark};
use crate::outcome::Violation;
use history::BugId;
use model::merge::Key;
use std::collections::{BTreeMap, BTreeSet};

/// One render beside its expectation, with the keys its ids stand for.
struct Judged<'a> {
    index: usize,
    op: &'static str,
    render: &'a Render,
    expected: &'a ExpectedRender,
    keys: Vec<Key>,
    /// Messages an earlier render lacked: what shows of them later (a live copy without its
    /// seq) is that loss's consequence, judged there, not a cause of its own.
    lost: &'a BTreeSet<Key>,
}

/// A rule: what it finds wrong with one render, if anything.
type Rule = fn(&Judged, &Expectation) -> Option<String>;

/// The rules, in the order a render is judged by them.
const RULES: [(BugId, Rule); 6] = [
    (BugId::M5, no_id_twice),
    (BugId::M3, each_message_once_and_nothing_else),
    (BugId::M6, nothing_paged_disappears),
    (BugId::M1, nothing_held_disappears),
    (BugId::M4, paged_messages_keep_their_seq),
    (BugId::M2, in_seq_then_tail_order),
];

/// Every rule's first violation in `record`, or why the world and the model disagree on how
/// many renders there were (a broken world).
pub fn check(
    scenario: &MergeScenario,
    record: &WorldRecord,
    expected: &Expectation,
) -> Result<Vec<Violation>, String> {
    if record.renders.len() != expected.renders.len() {
        return Err(format!(
            "the world rendered {} times, the model {} times",
            record.renders.len(),
            expected.renders.len()
        ));
    }
    let mut found: BTreeMap<BugId, Violation> = BTreeMap::new();
    let mut lost: BTreeSet<Key> = BTreeSet::new();
    for (index, (render, want)) in record.renders.iter().zip(&expected.renders).enumerate() {
        let judged = Judged {
            index,
            op: scenario.steps[render.step].op(),
            render,
            expected: want,
            keys: keys(render, expected),
            lost: &lost,
        };
        let broken = RULES
            .iter()
            .find_map(|(id, rule)| rule(&judged, expected).map(|m| (*id, m)));
        if let Some((id, message)) = broken {
            found
                .entry(id)
                .or_insert_with(|| violation(id, &judged, message));
        }
        let newly_lost: Vec<Key> = missing(&judged, |_| true)
            .into_iter()
            .chain(paged_absent(&judged))
            .map(str::to_string)
            .collect();
        lost.extend(newly_lost);
    }
    Ok(found.into_values().collect())
}

/// The message each shown id stands for: a copy's original, else the id.
fn keys(render: &Render, expected: &Expectation) -> Vec<Key> {
    render
        .shown
        .iter()
        .map(|s| expected.aliases.get(&s.id).unwrap_or(&s.id).clone())
        .collect()
}

fn violation(id: BugId, j: &Judged, message: String) -> Violation {
    let at = j.index as u64;
    let divergence =
        Divergence::of(j.op, at, at, "the client merge").items(&j.keys, &j.expected.keys);
    let mark = TraceMark::at(at, format!("render {at}:"));
    let mut v = Violation::safety(
        id,
        format!("render {at} (step {} `{}`): {message}", j.render.step, j.op),
    )
    .diverged_at(divergence);
    v.trace_marks.push(mark);
    v
}

/// M5: no id twice.
fn no_id_twice(j: &Judged, _: &Expectation) -> Option<String> {
    let shown = &j.render.shown;
    let twice = shown
        .iter()
        .enumerate()
        .find(|(k, s)| shown[..*k].iter().any(|t| t.id == s.id))?;
    Some(format!(
        "{} shows twice under the same id (the message held and its restored copy)",
        twice.1.id
    ))
}

/// M3: no message twice, nothing the client does not hold of the open thread.
fn each_message_once_and_nothing_else(j: &Judged, e: &Expectation) -> Option<String> {
    for (k, key) in j.keys.iter().enumerate() {
        if j.keys[..k].contains(key) {
            let ids: Vec<&str> = j
                .render
                .shown
                .iter()
                .zip(&j.keys)
                .filter(|(_, k)| *k == key)
                .map(|(s, _)| s.id.as_str())
                .collect();
            return Some(format!("{key} shows twice (as {})", ids.join(" and ")));
        }
        if !j.expected.keys.contains(key) {
            return Some(match e.truth.thread_of(key) {
                Some(t) if t != j.expected.thread => format!(
                    "{key}, a message of thread {t}, shows in thread {}",
                    j.expected.thread
                ),
                _ => format!("{key} shows, and the client never received it"),
            });
        }
    }
    None
}

/// M6: every message a page delivered is in the list, as itself (an optimistic copy standing
/// for it again is the page's message lost).
fn nothing_paged_disappears(j: &Judged, _: &Expectation) -> Option<String> {
    let missing = paged_absent(j);
    (!missing.is_empty()).then(|| {
        format!(
            "delivered by a page, missing from thread {} after the page window moved: {}",
            j.expected.thread,
            missing.join(", ")
        )
    })
}

/// The messages a page delivered that the render does not show under their own id.
fn paged_absent<'a>(j: &'a Judged) -> Vec<&'a str> {
    j.expected
        .paged
        .keys()
        .filter(|k| !j.render.shown.iter().any(|s| &s.id == *k))
        .map(String::as_str)
        .collect()
}

/// The keys the model expects and the render lacks, of those `which` selects.
fn missing<'a>(j: &'a Judged, which: impl Fn(&Key) -> bool) -> Vec<&'a str> {
    j.expected
        .keys
        .iter()
        .filter(|k| !j.keys.contains(k) && which(k))
        .map(String::as_str)
        .collect()
}

/// M1: every message the client holds is in the list.
fn nothing_held_disappears(j: &Judged, _: &Expectation) -> Option<String> {
    let missing = missing(j, |_| true);
    (!missing.is_empty()).then(|| {
        format!(
            "{} the client holds of thread {} {} missing: {}",
            if missing.len() == 1 {
                "a message"
            } else {
                "messages"
            },
            j.expected.thread,
            if missing.len() == 1 { "is" } else { "are" },
            missing.join(", ")
        )
    })
}

/// M4: a message a page delivered shows with the seq it told.
fn paged_messages_keep_their_seq(j: &Judged, _: &Expectation) -> Option<String> {
    j.render.shown.iter().find_map(|s| {
        let told = *j.expected.paged.get(&s.id)?;
        if j.lost.contains(&s.id) {
            return None;
        }
        (s.seq != Some(told)).then(|| match s.seq {
            None => format!(
                "{} shows without the seq {told} a page told (a live frame replaced it)",
                s.id
            ),
            Some(seq) => format!("{} shows with seq {seq}, a page told {told}", s.id),
        })
    })
}

/// M2: the list is in the model's order (a message an earlier render lost is left out of the
/// comparison: where it shows again is that loss's consequence).
fn in_seq_then_tail_order(j: &Judged, _: &Expectation) -> Option<String> {
    let kept = |keys: &'_ [Key]| -> Vec<Key> {
        keys.iter()
            .filter(|k| !j.lost.contains(*k))
            .cloned()
            .collect()
    };
    let (shown, want) = (kept(&j.keys), kept(&j.expected.keys));
    let at = shown.iter().zip(&want).position(|(a, b)| a != b)?;
    Some(format!(
        "out of order at position {at}: shows {} where the model expects {}",
        shown[at], want[at]
    ))
}
