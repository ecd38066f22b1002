//! The merge workload's rules, one a catalog ID, each render's list against the model's:
//!
//! - M3: each message of the open thread shows once, and nothing else shows (a copy beside its
//!   original, a message of another thread, one the client never received).
//! - M1: nothing the client holds disappears: every message it received (live, in any copy,
//!   or through a page) since it opened the thread is in the list.
//! - M2: the list is in order: messages whose seq a page told by seq, then the live tail by
//!   run and step.
//!
//! A render is judged by the first rule it breaks, in that order, so one defect is reported
//! under its own ID; each ID is reported at its first render, with the first wrong answer.

use super::expect::{Expectation, ExpectedRender};
use super::scenario::MergeScenario;
use super::world::{Render, WorldRecord};
use crate::divergence::{Divergence, TraceMark};
use crate::outcome::Violation;
use history::BugId;
use model::merge::Key;
use std::collections::BTreeMap;

/// One render beside its expectation, with the keys its ids stand for.
struct Judged<'a> {
    index: usize,
    op: &'static str,
    render: &'a Render,
    expected: &'a ExpectedRender,
    keys: Vec<Key>,
}

/// A rule: what it finds wrong with one render, if anything.
type Rule = fn(&Judged, &Expectation) -> Option<String>;

/// The rules, in the order a render is judged by them.
const RULES: [(BugId, Rule); 3] = [
    (BugId::M3, each_message_once_and_nothing_else),
    (BugId::M1, nothing_held_disappears),
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
    for (index, (render, want)) in record.renders.iter().zip(&expected.renders).enumerate() {
        let judged = Judged {
            index,
            op: scenario.steps[render.step].op(),
            render,
            expected: want,
            keys: keys(render, expected),
        };
        let broken = RULES
            .iter()
            .find_map(|(id, rule)| rule(&judged, expected).map(|m| (*id, m)));
        if let Some((id, message)) = broken {
            found
                .entry(id)
                .or_insert_with(|| violation(id, &judged, message));
        }
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

/// M1: every message the client holds is in the list.
fn nothing_held_disappears(j: &Judged, _: &Expectation) -> Option<String> {
    let missing: Vec<&str> = j
        .expected
        .keys
        .iter()
        .filter(|k| !j.keys.contains(k))
        .map(String::as_str)
        .collect();
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

/// M2: the list is in the model's order.
fn in_seq_then_tail_order(j: &Judged, _: &Expectation) -> Option<String> {
    let at = j
        .keys
        .iter()
        .zip(&j.expected.keys)
        .position(|(a, b)| a != b)?;
    Some(format!(
        "out of order at position {at}: shows {} where the model expects {}",
        j.keys[at], j.expected.keys[at]
    ))
}
