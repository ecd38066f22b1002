//! The words of one answer against the model's: what the display checker's word rules
//! ([`super::words`]) read. Its own module so that the checker's context can keep one per
//! checked world without the context and the rules importing each other.

use super::view::{words, ViewMessage};
use history::BugId;
use std::cell::OnceCell;
use std::collections::BTreeMap;

/// Words of one answer against the model's, and what they point at as a whole.
pub struct WordDiff {
    pub(super) answered: Vec<(&'static str, String)>,
    pub(super) expected: Vec<(&'static str, String)>,
    pub(super) answered_count: BTreeMap<String, usize>,
    pub(super) expected_count: BTreeMap<String, usize>,
    /// The answer shows text of a look-alike class; worked out when a rule first asks (only
    /// attributing a wrong count does), not for every answer checked.
    pub(super) decoy_shown: OnceCell<bool>,
    /// What the answer's copies of expected words point at (P4, P6 or P8); as `decoy_shown`.
    pub(super) duplicates_cause: OnceCell<BugId>,
}

impl WordDiff {
    pub(super) fn new(actual: &[ViewMessage], expected: &[ViewMessage]) -> Self {
        let answered = words(actual);
        let expected = words(expected);
        let count = |ws: &[(&'static str, String)]| {
            let mut c: BTreeMap<String, usize> = BTreeMap::new();
            for (_, w) in ws {
                *c.entry(w.clone()).or_default() += 1;
            }
            c
        };
        WordDiff {
            answered_count: count(&answered),
            expected_count: count(&expected),
            answered,
            expected,
            decoy_shown: OnceCell::new(),
            duplicates_cause: OnceCell::new(),
        }
    }
}
