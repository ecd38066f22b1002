//! Attributes every extra, missing or misplaced word of an answer to an invariant. Text in
//! generated scenarios is made of words unique to their step, so a word names the steps it came
//! from ([`super::provenance`]); the first attribution rule that explains a word names its ID.

use super::context::Context;
use super::departure::settled_pointer;
use super::provenance::{is_tagged, Kind, Source};
use super::word_diff::WordDiff;
use crate::outcome::Findings;
use history::BugId;
use std::collections::{BTreeMap, BTreeSet};

/// The words of the settled answer against the model's, when there is one. Made once per
/// checked world and kept in the context: three rules read it.
fn of_answer<'c>(cx: &'c Context<'_>) -> Option<&'c WordDiff> {
    cx.word_diff
        .get_or_init(|| {
            let (_, actual) = cx.answer.as_ref()?;
            Some(WordDiff::new(actual, &cx.expected))
        })
        .as_ref()
}

/// Whether the answer shows text of a look-alike class; worked out when a rule first asks.
fn decoy_shown(cx: &Context<'_>, d: &WordDiff) -> bool {
    *d.decoy_shown.get_or_init(|| {
        d.answered_count.keys().any(|w| {
            cx.provenance
                .sources(w)
                .iter()
                .any(|s| s.kind == Kind::Decoy)
        })
    })
}

/// What the answer's copies of expected words point at (P4, P6 or P8); worked out when a rule
/// first asks.
fn cause_of_copies(cx: &Context<'_>, d: &WordDiff) -> BugId {
    *d.duplicates_cause
        .get_or_init(|| duplicates_cause(cx, &d.answered, &d.expected))
}

/// One word the answer has more or fewer copies of than the model.
pub struct WordCount<'c> {
    word: &'c str,
    /// Copies the model expects.
    want: usize,
    sources: &'c [Source<'c>],
    /// The first step the word came from.
    step: u32,
    display: &'c str,
    agent: &'c str,
}

/// Explains a word count in the words of one invariant, or passes.
pub type WordRule = fn(&Context<'_>, &WordDiff, &WordCount<'_>) -> Option<String>;

/// Why an answer has too many copies of a word: the first rule that explains it.
pub const EXTRA_WORD_RULES: &[(BugId, WordRule)] = &[
    (BugId::P7, |_, _, w| {
        w.sources
            .iter()
            .any(|s| s.kind == Kind::Decoy)
            .then(|| format!("look-alike class of step {} was projected", w.step))
    }),
    (BugId::P7, |cx, d, w| {
        // A look-alike marker's display leaks under a thread-wide scope too (P2); only a
        // substring match also projects the look-alike rows themselves.
        (hidden_only(cx, w) && decoy_shown(cx, d) && from_any_of(w, &cx.decoy_marker_displays))
            .then(|| {
                format!(
                    "display `{}` is visible only through a look-alike marker",
                    w.display
                )
            })
    }),
    (BugId::P9, |cx, _, w| {
        (hidden_only(cx, w) && cx.visible.is_empty() && from_any_of(w, &cx.interactive_displays))
            .then(|| {
                format!(
                    "the thread has no visible display, yet step {} was shown",
                    w.step
                )
            })
    }),
    (BugId::P2, |cx, _, w| {
        hidden_only(cx, w).then(|| format!("step {} is on hidden display `{}`", w.step, w.display))
    }),
    (BugId::P3, |_, d, w| {
        (hitl(w.sources) && in_wrong_role(&d.answered, w.word, w.sources))
            .then(|| format!("HITL text of step {} appears in the other role", w.step))
    }),
    (BugId::P6, |cx, d, w| {
        (w.want >= 1 && cause_of_copies(cx, d) == BugId::P6).then(|| {
            format!(
                "copied by the stop of an agent that is not the primary (step {})",
                w.step
            )
        })
    }),
    (BugId::P8, |cx, d, w| {
        (w.want >= 1 && cause_of_copies(cx, d) == BugId::P8).then(|| {
            format!(
                "a row with a malformed created_at was placed in the order anyway (step {})",
                w.step
            )
        })
    }),
    (BugId::P4, |_, _, w| {
        (w.want >= 1).then(|| format!("duplicated turn (step {})", w.step))
    }),
    (BugId::P8, |_, _, w| {
        w.sources.iter().any(|s| s.bad_created_at).then(|| {
            format!(
                "step {} has a malformed created_at and must be skipped",
                w.step
            )
        })
    }),
    (BugId::P6, |cx, _, w| {
        only_from_nested_stop(cx, w.word).then(|| {
            format!(
                "only the stop of `{}`, not the primary agent, carries it",
                nested_agent(cx, w.word)
            )
        })
    }),
    (BugId::P5, |cx, _, w| {
        primary_stop(cx, w.sources).then(|| {
            format!(
                "the primary stop (step {}) supplied text the contract does not",
                w.step
            )
        })
    }),
];

/// Why an answer has too few copies of a word: the first rule that explains it.
pub const MISSING_WORD_RULES: &[(BugId, WordRule)] = &[
    (BugId::P11, |cx, _, w| {
        w.sources
            .iter()
            .any(|s| s.kind == Kind::Chunk && s.agent != cx.scenario.primary)
            .then(|| {
                format!(
                    "delegated output of `{}` (step {}) on a shared display was dropped",
                    w.agent, w.step
                )
            })
    }),
    (BugId::P5, |cx, _, w| {
        primary_stop(cx, w.sources).then(|| {
            format!(
                "the primary stop (step {}) did not supply the missing suffix",
                w.step
            )
        })
    }),
    (BugId::P3, |_, _, w| {
        hitl(w.sources).then(|| format!("HITL text of step {} missing", w.step))
    }),
];

fn hidden_only(cx: &Context<'_>, w: &WordCount<'_>) -> bool {
    w.sources.iter().all(|s| !cx.visible.contains(s.display))
}

/// Whether a source of `w` is a step on one of `displays`.
fn from_any_of(w: &WordCount<'_>, displays: &BTreeSet<String>) -> bool {
    w.sources.iter().any(|s| displays.contains(s.display))
}

fn hitl(sources: &[Source]) -> bool {
    sources
        .iter()
        .any(|s| matches!(s.kind, Kind::Question | Kind::Answer))
}

fn primary_stop(cx: &Context<'_>, sources: &[Source]) -> bool {
    sources
        .iter()
        .any(|s| s.kind == Kind::Stop && s.agent == cx.scenario.primary)
}

/// Attributes every word the settled answer has more copies of than the model.
pub fn extra_words(cx: &Context<'_>, f: &mut Findings) {
    let Some(d) = of_answer(cx) else {
        return;
    };
    for (word, &n) in &d.answered_count {
        let want = d.expected_count.get(word).copied().unwrap_or(0);
        if n > want {
            attribute(cx, d, word, (n, want), EXTRA_WORD_RULES, f);
        }
    }
}

/// Attributes every word the settled answer has fewer copies of than the model.
pub fn missing_words(cx: &Context<'_>, f: &mut Findings) {
    let Some(d) = of_answer(cx) else {
        return;
    };
    for (word, &want) in &d.expected_count {
        let n = d.answered_count.get(word).copied().unwrap_or(0);
        if n < want {
            attribute(cx, d, word, (n, want), MISSING_WORD_RULES, f);
        }
    }
}

fn attribute(
    cx: &Context<'_>,
    d: &WordDiff,
    word: &str,
    (n, want): (usize, usize),
    rules: &[(BugId, WordRule)],
    f: &mut Findings,
) {
    let sources = cx.provenance.sources(word);
    let what = format!("`{word}` appears {n}x, expected {want}x");
    let Some(src) = sources.first() else {
        let unknown = if n > want {
            " (text no step emitted)"
        } else {
            ""
        };
        f.unexplained_at(
            BugId::P2,
            settled_pointer(cx, &[]),
            format!("{what}{unknown}"),
        );
        return;
    };
    let w = WordCount {
        word,
        want,
        sources,
        step: src.step,
        display: src.display,
        agent: src.agent,
    };
    let steps: Vec<u32> = w.sources.iter().map(|s| s.step).collect();
    let pointer = settled_pointer(cx, &steps);
    match rules
        .iter()
        .find_map(|(id, rule)| Some((*id, rule(cx, d, &w)?)))
    {
        Some((id, why)) => f.add_at(id, pointer, format!("{what}: {why}")),
        None => f.unexplained_at(BugId::P2, pointer, format!("{what} (step {})", w.step)),
    }
}

/// P8 (and P3): the same words, in the roles and the order of the model.
pub fn same_words_in_order(cx: &Context<'_>, f: &mut Findings) {
    let Some(d) = of_answer(cx) else {
        return;
    };
    if d.answered_count != d.expected_count {
        return;
    }
    let (aw, ew) = (&d.answered, &d.expected);
    let roles_a = role_map(aw);
    let roles_e = role_map(ew);
    if roles_a != roles_e {
        let word = roles_a
            .iter()
            .find(|(w, r)| roles_e.get(*w) != Some(*r))
            .map(|(w, _)| (*w).clone())
            .unwrap_or_default();
        let what = format!("`{word}` has the wrong role");
        let sources = cx.provenance.sources(&word);
        let steps: Vec<u32> = sources.iter().map(|s| s.step).collect();
        let pointer = settled_pointer(cx, &steps);
        if hitl(sources) {
            f.add_at(BugId::P3, pointer, what);
        } else {
            f.unexplained_at(BugId::P2, pointer, what);
        }
    } else if aw != ew {
        let at = aw.iter().zip(ew).position(|(a, e)| a != e).unwrap_or(0);
        f.add_at(
            BugId::P8,
            settled_pointer(cx, &[]),
            format!(
                "order differs at word {at}: answered `{}`, expected `{}`",
                aw.get(at).map(|x| x.1.as_str()).unwrap_or(""),
                ew.get(at).map(|x| x.1.as_str()).unwrap_or("")
            ),
        );
    }
}

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
            .all(|w| cx.provenance.sources(w).iter().any(|s| s.bad_created_at))
    {
        BugId::P8
    } else {
        BugId::P4
    }
}

fn from_nested_stop(cx: &Context<'_>, word: &str) -> bool {
    cx.provenance
        .sources(word)
        .iter()
        .any(|s| s.kind == Kind::Stop && s.agent != cx.scenario.primary)
}

/// Whether the only rows that could legitimately show `word` are stops of agents other than the
/// primary (its chunk, if any, is malformed and skipped): seeing it means a nested stop was used.
fn only_from_nested_stop(cx: &Context<'_>, word: &str) -> bool {
    let sources = cx.provenance.sources(word);
    let nested = |s: &Source| s.kind == Kind::Stop && s.agent != cx.scenario.primary;
    sources.iter().any(nested)
        && sources
            .iter()
            .filter(|s| s.persisted && (!s.defective || s.bad_created_at))
            .all(nested)
}

fn nested_agent(cx: &Context<'_>, word: &str) -> String {
    cx.provenance
        .sources(word)
        .iter()
        .find(|s| s.kind == Kind::Stop && s.agent != cx.scenario.primary)
        .map(|s| s.agent.to_owned())
        .unwrap_or_default()
}

/// An extra word whose every source is on a display that is never visible.
pub fn hidden_word(
    cx: &Context<'_>,
    answered: &[(&'static str, String)],
    expected: &[(&'static str, String)],
) -> Option<String> {
    excess_words(answered, expected).into_iter().find(|w| {
        let sources = cx.provenance.sources(w);
        !sources.is_empty()
            && sources.iter().all(|s| {
                !cx.visible.contains(s.display) && !cx.decoy_marker_displays.contains(s.display)
            })
    })
}

/// The first extra word of an early read when the extra words point at a nested agent's stop:
/// one only such a stop carries, or copies all of which such a stop carries.
pub fn nested_stop_word(
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
            && !cx.provenance.sources(w).iter().any(|s| s.bad_created_at)
    }) {
        return Some(w.clone());
    }
    (duplicates_cause(cx, answered, expected) == BugId::P6)
        .then(|| excess.first().cloned())
        .flatten()
}

/// Where two word sequences first part, in words.
pub fn first_difference(
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
