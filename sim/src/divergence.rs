//! The first divergence of a violation: the request whose answer first departs from what the
//! model expects, named so that it is found in the trace (its op, its request id and its
//! simulated time), with the system's answer beside the model's, trimmed to the part that
//! differs. And the marks of the trace lines a violation concerns, so that a failure shows those
//! lines rather than the last ones of the run.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How many items (words, messages, rows) of each side are shown from the first that differs.
pub const SHOWN_ITEMS: usize = 4;
/// How many characters of each side of a text are shown from the first that differs.
pub const SHOWN_CHARS: usize = 60;

/// The first request whose answer departs from the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// What the request asked (`/history`, `paginate`, `read`).
    pub op: String,
    /// The request's id: its position in the world's order of operations.
    pub request: u64,
    /// When it was answered, in simulated microseconds (the trace stamps its lines alike).
    pub at_us: u64,
    /// Who answered: a store (`the memory and sqlite stores`) or a replica (`replica-2`).
    pub by: String,
    /// What the system answered, from the first part that differs.
    pub answered: String,
    /// What the model expects there.
    pub expected: String,
}

impl Divergence {
    /// The request `op` (`request`, answered at `at_us` by `by`), its answers not yet said.
    pub fn of(op: impl Into<String>, request: u64, at_us: u64, by: impl Into<String>) -> Self {
        Divergence {
            op: op.into(),
            request,
            at_us,
            by: by.into(),
            answered: String::new(),
            expected: String::new(),
        }
    }

    /// This request with the system's answer and the model's.
    pub fn answers(self, answered: impl Into<String>, expected: impl Into<String>) -> Self {
        Divergence {
            answered: answered.into(),
            expected: expected.into(),
            ..self
        }
    }

    /// This request with both answers trimmed to where two texts differ ([`trimmed_texts`]).
    pub fn texts(self, answered: &str, expected: &str) -> Self {
        let (a, e) = trimmed_texts(answered, expected);
        self.answers(a, e)
    }

    /// This request with both answers trimmed to where two lists differ ([`trimmed_items`]).
    pub fn items<T: PartialEq + fmt::Display>(self, answered: &[T], expected: &[T]) -> Self {
        let (a, e) = trimmed_items(answered, expected);
        self.answers(a, e)
    }

    /// The order in which divergences are first: by simulated time, then by request id.
    pub fn order(&self) -> (u64, u64) {
        (self.at_us, self.request)
    }

    /// What marks this request's own lines in the trace: its time and its op.
    pub fn trace_mark(&self, text: impl Into<String>) -> TraceMark {
        TraceMark::at(self.at_us, text)
    }
}

/// `/history (request 1672 at 29000us, the memory store): answered `1000 messages`, the model
/// expects `1501 messages``.
impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (request {} at {}us, {}): answered `{}`, the model expects `{}`",
            self.op, self.request, self.at_us, self.by, self.answered, self.expected
        )
    }
}

/// Two texts from their first differing character, at most [`SHOWN_CHARS`] of each, with the
/// length of the common part before it (`... 12 alike: `) and `...` where a side goes on.
pub fn trimmed_texts(answered: &str, expected: &str) -> (String, String) {
    let common = answered
        .chars()
        .zip(expected.chars())
        .take_while(|(a, e)| a == e)
        .count();
    let side = |text: &str| {
        let rest: String = text.chars().skip(common).collect();
        let mut shown: String = rest.chars().take(SHOWN_CHARS).collect();
        if rest.chars().count() > SHOWN_CHARS {
            shown.push_str("...");
        }
        match (common, shown.is_empty()) {
            (0, true) => "nothing".to_string(),
            (0, false) => shown,
            (n, true) => format!("{n} characters alike, then nothing"),
            (n, false) => format!("{n} characters alike, then {shown}"),
        }
    };
    (side(answered), side(expected))
}

/// Two lists from their first differing item, at most [`SHOWN_ITEMS`] of each, with the item's
/// position (`from 2: a, b, c, d, and 7 more`).
pub fn trimmed_items<T: PartialEq + fmt::Display>(
    answered: &[T],
    expected: &[T],
) -> (String, String) {
    let at = answered
        .iter()
        .zip(expected)
        .take_while(|(a, e)| a == e)
        .count();
    let side = |items: &[T]| {
        let rest = &items[at.min(items.len())..];
        let mut words: Vec<String> = rest
            .iter()
            .take(SHOWN_ITEMS)
            .map(|i| i.to_string())
            .collect();
        if rest.len() > SHOWN_ITEMS {
            words.push(format!("and {} more", rest.len() - SHOWN_ITEMS));
        }
        let shown = if words.is_empty() {
            "nothing".to_string()
        } else {
            words.join(", ")
        };
        match at {
            0 => shown,
            n => format!("from item {n}: {shown}"),
        }
    };
    (side(answered), side(expected))
}

/// What marks a trace line a violation concerns: the line holds `text` (and, when `at_us` is
/// set, was stamped at that simulated time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceMark {
    pub at_us: Option<u64>,
    pub text: String,
}

impl TraceMark {
    /// Lines holding `text`, whenever they came.
    pub fn any_time(text: impl Into<String>) -> Self {
        TraceMark {
            at_us: None,
            text: text.into(),
        }
    }

    /// Lines holding `text` stamped at `at_us`.
    pub fn at(at_us: u64, text: impl Into<String>) -> Self {
        TraceMark {
            at_us: Some(at_us),
            text: text.into(),
        }
    }

    /// Whether `line` (a trace line: its time, `us`, then the event) is one this mark names.
    pub fn marks(&self, line: &str) -> bool {
        let (time, event) = line.trim_start().split_once("us ").unwrap_or(("", line));
        let time_fits = self
            .at_us
            .is_none_or(|at| time.parse::<u64>().ok() == Some(at));
        time_fits && event.contains(&self.text)
    }
}

/// The lines of `trace` any of `marks` names, at most `up_to` of them: the first ones, where a
/// divergence begins. Repeats of one event text (a poll answered alike many times) are shown
/// once, with how many more there were.
pub fn marked_lines(trace: &[String], marks: &[TraceMark], up_to: usize) -> Vec<String> {
    let mut shown: Vec<String> = Vec::new();
    let mut repeats = 0usize;
    let event = |line: &str| {
        line.trim_start()
            .split_once("us ")
            .map(|(_, e)| e.to_string())
    };
    for line in trace.iter().filter(|l| marks.iter().any(|m| m.marks(l))) {
        if shown.last().is_some_and(|last| event(last) == event(line)) {
            repeats += 1;
            continue;
        }
        if repeats > 0 {
            shown.push(format!("  ... and {repeats} more lines alike"));
            repeats = 0;
        }
        if shown.len() >= up_to {
            shown.push("  ... (more lines in replay --trace)".to_string());
            return shown;
        }
        shown.push(line.clone());
    }
    if repeats > 0 {
        shown.push(format!("  ... and {repeats} more lines alike"));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_trimmed_to_where_they_differ() {
        let (a, e) = trimmed_texts("hello world", "hello there");
        assert_eq!(a, "6 characters alike, then world");
        assert_eq!(e, "6 characters alike, then there");
        let (a, e) = trimmed_texts("", "x");
        assert_eq!((a.as_str(), e.as_str()), ("nothing", "x"));
        let long = "y".repeat(100);
        let (a, _) = trimmed_texts(&long, "");
        assert!(a.ends_with("..."), "{a}");
    }

    #[test]
    fn lists_are_trimmed_to_their_first_differing_item() {
        let (a, e) = trimmed_items(&[1, 2, 3], &[1, 2, 4, 5, 6, 7, 8, 9]);
        assert_eq!(a, "from item 2: 3");
        assert_eq!(e, "from item 2: 4, 5, 6, 7, and 2 more");
        let (a, e) = trimmed_items::<u8>(&[], &[1]);
        assert_eq!((a.as_str(), e.as_str()), ("nothing", "1"));
    }

    #[test]
    fn a_divergence_reads_as_words() {
        let d = Divergence::of("/history", 7, 3000, "the memory store").answers("1", "2");
        assert_eq!(
            d.to_string(),
            "/history (request 7 at 3000us, the memory store): answered `1`, the model expects `2`"
        );
    }

    #[test]
    fn marks_pick_the_lines_they_name_and_fold_repeats() {
        let trace: Vec<String> = [
            "      100us replica-0 persist step=11 copy=0 stored",
            "      100us replica-0 persist step=110 copy=0 stored",
            "      200us replica-1 answer turn=settled ok=true shows=ab",
            "      300us replica-1 answer turn=settled ok=true shows=ab",
            "      400us replica-1 answer turn=settled ok=true shows=ab",
        ]
        .map(String::from)
        .to_vec();
        let marks = [
            TraceMark::any_time("step=11 "),
            TraceMark::any_time("replica-1 answer"),
        ];
        let shown = marked_lines(&trace, &marks, 10);
        assert_eq!(shown.len(), 3, "{shown:?}");
        assert!(shown[0].contains("step=11 "));
        assert!(shown[2].contains("2 more lines alike"));
        let at = [TraceMark::at(300, "answer")];
        assert_eq!(marked_lines(&trace, &at, 10), [trace[3].clone()]);
    }
}
