//! How the runs rules word what they saw: a read's place and simulated time, absent values,
//! lists and answers, the way a user of the store reads them (never Rust's debug form).

use crate::runs::record::{Answer, Both, Read};
use history::runs::MessageCursor;
use std::fmt::Display;

/// When a read was made, as a message names it: its place in the world's order of operations
/// and its simulated time, spelt as the trace stamps its lines (`3000us`) so that the read's
/// line is found in `replay --trace`.
pub(crate) fn when(read: &Read) -> String {
    format!("op {} at {}us", read.op, read.at_us)
}

/// A value as a user reads it, `none` when absent.
pub(crate) fn or_none<T: Display>(value: Option<T>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// Items as a comma list, `none` when there is none.
pub(crate) fn listed<T: Display>(items: impl IntoIterator<Item = T>) -> String {
    let words: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    if words.is_empty() {
        "none".to_string()
    } else {
        words.join(", ")
    }
}

/// An answer as a user reads it: its value, or the error it failed with.
pub(crate) fn answered<T: Display>(answer: &Answer<T>) -> String {
    match answer {
        Ok(value) => value.to_string(),
        Err(e) => format!("error {e}"),
    }
}

/// The pair's answers, each with the stores that gave it: one answer named `the memory and
/// sqlite stores` when both gave it, else each with its own store (`the sqlite store`). A
/// finding about an answer both stores gave is then said once, on one line.
pub(crate) fn alike<'a, T>(both: &'a Both<T>, first_slot: &str) -> Vec<(String, &'a T)> {
    if both.agree() {
        vec![(format!("the {first_slot} and sqlite stores"), &both.memory)]
    } else {
        vec![
            (format!("the {first_slot} store"), &both.memory),
            ("the sqlite store".to_string(), &both.sqlite),
        ]
    }
}

/// A message cursor as the store's parameters spell it.
pub(crate) fn cursor(cursor: &MessageCursor) -> String {
    match cursor {
        MessageCursor::None => "the latest".to_string(),
        MessageCursor::Before(b) => format!("before {b}"),
        MessageCursor::After(a) => format!("after {a}"),
        MessageCursor::Both { before, after } => format!("after {after} before {before}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_words_not_rust() {
        assert_eq!(or_none(None::<u64>), "none");
        assert_eq!(or_none(Some("user-1")), "user-1");
        assert_eq!(listed(["a", "b"]), "a, b");
        assert_eq!(listed(Vec::<u64>::new()), "none");
        assert_eq!(answered::<u64>(&Err("boom".into())), "error boom");
        let both = history::runs::MessageCursor::Both {
            before: 100,
            after: 1,
        };
        assert_eq!(cursor(&both), "after 1 before 100");
        let same = Both::new(3_u64, 3);
        let stores: Vec<String> = alike(&same, "jsonl").into_iter().map(|s| s.0).collect();
        assert_eq!(stores, ["the jsonl and sqlite stores"]);
        let apart = Both::new(3_u64, 4);
        let stores: Vec<String> = alike(&apart, "memory").into_iter().map(|s| s.0).collect();
        assert_eq!(stores, ["the memory store", "the sqlite store"]);
    }
}
