//! Left-out work: what the checks did not ask of a system under test, and the short names
//! `--allow-left-out` accepts for it.
//!
//! A world that cannot ask something of its system (an op the system does not declare, a crash
//! of a store that declares no durability, a known difference the system declares) leaves it
//! out and counts it under a sentence that says why. A campaign that left work out did not check
//! it, so `--require-coverage` fails on it unless the user names it, by the op (or the crash, or
//! the difference) the sentence is about. The names are read from the sentences here, in one
//! place, so each producer's wording and its name are tested together.

use std::collections::{BTreeMap, BTreeSet};

/// The name of a store crash left out because the store declares no durability.
pub const STORE_CRASH: &str = "store_crash";

/// How a runs world says which op its system does not serve: `... (the system does not serve
/// OP)`.
const NOT_SERVED: &str = "(the system does not serve ";

/// How the runs world says it left a store crash out (`runs::play::state::STORE_CRASH_LEFT_OUT`).
const STORE_CRASH_PREFIX: &str = "store crash:";

/// How the display world says a declared known difference weakened a rule: `RULE for ID (the
/// system declares it: SUMMARY)`.
const DECLARED: &str = " (the system declares it: ";

/// The name `--allow-left-out` takes for a left-out entry: the op it lacks, `store_crash`, or
/// the known difference's ID (`D1`). An entry in no known shape is named by its whole text, so
/// it can still be allowed, but never by accident.
pub fn name_of(entry: &str) -> String {
    if let Some(at) = entry.find(NOT_SERVED) {
        let rest = &entry[at + NOT_SERVED.len()..];
        if let Some(op) = rest.strip_suffix(')') {
            return op.to_string();
        }
    }
    if entry.starts_with(STORE_CRASH_PREFIX) {
        return STORE_CRASH.to_string();
    }
    if let Some(at) = entry.find(DECLARED) {
        if let Some((_, id)) = entry[..at].rsplit_once(" for ") {
            return id.to_string();
        }
    }
    entry.to_string()
}

/// The op a left-out entry lacks, when the entry is an op the system does not serve.
pub fn op_not_served(entry: &str) -> Option<&str> {
    let at = entry.find(NOT_SERVED)?;
    entry[at + NOT_SERVED.len()..].strip_suffix(')')
}

/// Left-out work set against what the user allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Judged {
    /// The names of the left-out entries no `--allow-left-out` name covers, sorted.
    pub not_covered: Vec<String>,
    /// The names of the left-out entries the user allowed, sorted.
    pub allowed: Vec<String>,
}

impl Judged {
    /// Sorts every entry of `left_out` by its name into allowed or not covered.
    pub fn of(left_out: &BTreeMap<String, u64>, allowed: &[String]) -> Judged {
        let names: BTreeSet<String> = left_out.keys().map(|e| name_of(e)).collect();
        let (allowed, not_covered): (Vec<String>, Vec<String>) =
            names.into_iter().partition(|n| allowed.contains(n));
        Judged {
            not_covered,
            allowed,
        }
    }
}

/// The report's `left out` table: each entry with how often, its `--allow-left-out` name and
/// whether that name was allowed (if not, the entry is not covered).
pub fn markdown(md: &mut String, left_out: &BTreeMap<String, u64>, allowed: &[String]) {
    if left_out.is_empty() {
        return;
    }
    md.push_str(
        "\n## left out\n\nWhat the checks did not ask of the system under test (an op it does \
         not serve, a crash it declares no durability for, a known difference it declares), with \
         how often; `--require-coverage` fails on what `--allow-left-out` does not name:\n\n\
         | left out | times | name | |\n|---|---|---|---|\n",
    );
    for (what, n) in left_out {
        let name = name_of(what);
        let status = if allowed.contains(&name) {
            "allowed"
        } else {
            "**not covered**"
        };
        let what = what.replace('|', "\\|");
        md.push_str(&format!("| {what} | {n} | `{name}` | {status} |\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_producers_wording_has_its_name() {
        // The sentences as runs/event_calls.rs, runs/store_calls.rs, runs/client.rs,
        // runs/state.rs and display/mod.rs write them.
        for (entry, name) in [
            (
                "the client's filtered event reads (the system does not serve list_events_filtered)",
                "list_events_filtered",
            ),
            (
                "the client's last-answer reads (the system does not serve get_last_visible_ai_seq_by_run)",
                "get_last_visible_ai_seq_by_run",
            ),
            (
                "the client's `events` reads (the system does not serve list_events)",
                "list_events",
            ),
            (
                "the client's thread deletions (the system does not serve delete_by_thread)",
                "delete_by_thread",
            ),
            (
                "store crash: a restart that keeps the store's data (it declares no durability)",
                STORE_CRASH,
            ),
            (
                "P10 for D1 (the system declares it: a block of an unconverted class is dropped)",
                "D1",
            ),
            ("something new", "something new"),
        ] {
            assert_eq!(name_of(entry), name, "{entry}");
        }
    }

    #[test]
    fn only_named_entries_are_allowed() {
        let left_out = BTreeMap::from([
            (
                "the client's `events` reads (the system does not serve list_events)".to_string(),
                3,
            ),
            (
                "store crash: a restart that keeps the store's data (it declares no durability)"
                    .to_string(),
                1,
            ),
        ]);
        assert_eq!(
            Judged::of(&left_out, &[]),
            Judged {
                not_covered: vec!["list_events".into(), "store_crash".into()],
                allowed: vec![],
            }
        );
        assert_eq!(
            Judged::of(&left_out, &["store_crash".into(), "other".into()]),
            Judged {
                not_covered: vec!["list_events".into()],
                allowed: vec!["store_crash".into()],
            }
        );
        assert_eq!(Judged::of(&BTreeMap::new(), &[]), Judged::default());
    }

    #[test]
    fn the_report_table_marks_each_entry_allowed_or_not_covered() {
        let left_out = BTreeMap::from([
            ("a | b (the system does not serve op_a)".to_string(), 2),
            ("c (the system does not serve op_c)".to_string(), 1),
        ]);
        let mut md = String::new();
        markdown(&mut md, &left_out, &["op_c".into()]);
        assert!(
            md.contains(
                "| a \\| b (the system does not serve op_a) | 2 | `op_a` | **not covered** |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| c (the system does not serve op_c) | 1 | `op_c` | allowed |"),
            "{md}"
        );
        let mut none = String::new();
        markdown(&mut none, &BTreeMap::new(), &[]);
        assert_eq!(none, "");
    }
}
