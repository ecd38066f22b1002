//! The truth of ratings: a known user has one rating per (thread, run), the latest submission
//! wins and a delete removes it; anonymous ratings (no user) are each a rating of their own.

use std::collections::BTreeMap;

use super::truth::{ExpectedMessage, MessageKind};

/// Every rating users meant to give.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RatingTruth {
    ratings: BTreeMap<(String, String, String), i8>,
    /// Anonymous ratings per (thread, run), in the order they were given; `None`: withdrawn.
    anonymous: BTreeMap<(String, String), Vec<Option<i8>>>,
}

/// Who gave a rating: a known user, or the n-th anonymous rating of its run (from 0, counting
/// withdrawn ones too: the n-th stays the n-th).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rater {
    User(String),
    Anonymous(u32),
}

/// One live rating of a thread.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RatingRow {
    pub run_id: String,
    pub rater: Rater,
    pub value: i8,
}

impl RatingRow {
    /// The user a store row of this rating carries (`None`: anonymous).
    pub fn user_id(&self) -> Option<&str> {
        match &self.rater {
            Rater::User(u) => Some(u),
            Rater::Anonymous(_) => None,
        }
    }
}

/// The counts of one run's ratings, every user's and the anonymous ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RatingCounts {
    pub total: u64,
    pub positive: u64,
    pub negative: u64,
}

fn check(value: i8) {
    assert!(value == 1 || value == -1, "a rating is +1 or -1");
}

impl RatingTruth {
    pub fn new() -> RatingTruth {
        RatingTruth::default()
    }

    /// A user rates a run: `value` is +1 or -1.
    pub fn rate(&mut self, thread_id: &str, run_id: &str, user_id: &str, value: i8) {
        check(value);
        self.ratings.insert(
            (
                thread_id.to_string(),
                run_id.to_string(),
                user_id.to_string(),
            ),
            value,
        );
    }

    /// The thread is deleted: every rating of it goes, a known user's and the anonymous ones
    /// (a thread created again under its id starts with none).
    pub fn delete_thread(&mut self, thread_id: &str) {
        self.ratings.retain(|(t, _, _), _| t != thread_id);
        self.anonymous.retain(|(t, _), _| t != thread_id);
    }

    /// Someone without a user rates a run: one more rating, replacing none. Returns its
    /// number among the run's anonymous ratings ([`Rater::Anonymous`]).
    pub fn rate_anonymously(&mut self, thread_id: &str, run_id: &str, value: i8) -> u32 {
        check(value);
        let given = self
            .anonymous
            .entry((thread_id.to_string(), run_id.to_string()))
            .or_default();
        given.push(Some(value));
        (given.len() - 1) as u32
    }

    /// The n-th anonymous rating of a run is withdrawn (deleted by its id); whether it stood.
    pub fn withdraw_anonymous(&mut self, thread_id: &str, run_id: &str, n: u32) -> bool {
        let key = (thread_id.to_string(), run_id.to_string());
        self.anonymous
            .get_mut(&key)
            .and_then(|given| given.get_mut(n as usize))
            .and_then(Option::take)
            .is_some()
    }

    /// A rating is withdrawn, whoever gave it; whether it stood.
    pub fn withdraw_rating(&mut self, thread_id: &str, run_id: &str, rater: &Rater) -> bool {
        match rater {
            Rater::User(u) => self.withdraw(thread_id, run_id, u),
            Rater::Anonymous(n) => self.withdraw_anonymous(thread_id, run_id, *n),
        }
    }

    /// The value of a rating that stands; `None` once withdrawn (or never given).
    pub fn value_of(&self, thread_id: &str, run_id: &str, rater: &Rater) -> Option<i8> {
        self.rows(thread_id)
            .into_iter()
            .find(|r| r.run_id == run_id && &r.rater == rater)
            .map(|r| r.value)
    }

    /// Every rating of the thread that stands, ordered by run, then rater (users before
    /// anonymous ratings).
    pub fn rows(&self, thread_id: &str) -> Vec<RatingRow> {
        let mut rows: Vec<RatingRow> = self
            .ratings
            .iter()
            .filter(|((t, _, _), _)| t == thread_id)
            .map(|((_, r, u), v)| RatingRow {
                run_id: r.clone(),
                rater: Rater::User(u.clone()),
                value: *v,
            })
            .collect();
        for ((t, r), given) in &self.anonymous {
            if t != thread_id {
                continue;
            }
            for (n, v) in given.iter().enumerate() {
                if let Some(v) = v {
                    rows.push(RatingRow {
                        run_id: r.clone(),
                        rater: Rater::Anonymous(n as u32),
                        value: *v,
                    });
                }
            }
        }
        rows.sort();
        rows
    }

    /// The ratings of the thread that stand and that a read in `scope` sees: every one for
    /// `None` (upstream's `user_id=None`), only that user's for `Some(user)` (anonymous ratings
    /// belong to no user).
    pub fn rows_in_scope(&self, thread_id: &str, scope: Option<&str>) -> Vec<RatingRow> {
        let mut rows = self.rows(thread_id);
        rows.retain(|r| scope.is_none_or(|u| r.user_id() == Some(u)));
        rows
    }

    /// A user withdraws their rating of a run; whether there was one.
    pub fn withdraw(&mut self, thread_id: &str, run_id: &str, user_id: &str) -> bool {
        let key = (
            thread_id.to_string(),
            run_id.to_string(),
            user_id.to_string(),
        );
        self.ratings.remove(&key).is_some()
    }

    /// The ratings of a thread as (run_id, user_id, value), ordered by run, then user (the
    /// anonymous ones, `None`, first, in the order given).
    pub fn expected(&self, thread_id: &str) -> Vec<(String, Option<String>, i8)> {
        let mut all: Vec<(String, Option<String>, usize, i8)> = self
            .ratings
            .iter()
            .filter(|((t, _, _), _)| t == thread_id)
            .map(|((_, r, u), v)| (r.clone(), Some(u.clone()), 0, *v))
            .collect();
        for ((t, r), values) in &self.anonymous {
            if t == thread_id {
                all.extend(
                    values
                        .iter()
                        .enumerate()
                        .filter_map(|(i, v)| v.map(|v| (r.clone(), None, i, v))),
                );
            }
        }
        all.sort();
        all.into_iter().map(|(r, u, _, v)| (r, u, v)).collect()
    }

    /// The counts of one run's ratings.
    pub fn counts(&self, thread_id: &str, run_id: &str) -> RatingCounts {
        let mut counts = RatingCounts::default();
        for (r, _, v) in self.expected(thread_id) {
            if r == run_id {
                counts.total += 1;
                if v > 0 {
                    counts.positive += 1;
                } else {
                    counts.negative += 1;
                }
            }
        }
        counts
    }
}

/// What `/messages` with feedback must show a known user: for each of the thread's messages (in
/// order), the value of the user's rating of the message's run when the message is that run's
/// last AI text (`ai_message`), else `None`. Anonymous ratings and other users' are not shown to
/// a user.
pub fn expected_attachment(
    ratings: &RatingTruth,
    thread_id: &str,
    messages: &[ExpectedMessage],
    user_id: &str,
) -> Vec<Option<i8>> {
    let last = last_ai_of_its_run(messages);
    messages
        .iter()
        .zip(last)
        .map(|(m, last)| {
            if !last {
                return None;
            }
            let key = (thread_id.to_string(), m.run_id.clone(), user_id.to_string());
            ratings.ratings.get(&key).copied()
        })
        .collect()
}

/// For each of `messages`, whether it is the last AI message of its run: the one message of a
/// run that feedback attaches to.
pub(super) fn last_ai_of_its_run(messages: &[ExpectedMessage]) -> Vec<bool> {
    let mut last_ai: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, m) in messages.iter().enumerate() {
        if m.kind == MessageKind::Ai {
            last_ai.insert(&m.run_id, i);
        }
    }
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| last_ai.get(m.run_id.as_str()) == Some(&i))
        .collect()
}

/// A message of `run` of `kind`, its text naming both: the tests' fixture.
#[cfg(test)]
pub(super) fn message(run: &str, kind: MessageKind) -> ExpectedMessage {
    ExpectedMessage::new(run, kind, &format!("{run} {kind:?}"))
}

/// The ratings given in order, each `(thread, run, user, value)`; no user: an anonymous rating.
#[cfg(test)]
pub(super) fn rated(ratings: &[(&str, &str, Option<&str>, i8)]) -> RatingTruth {
    let mut t = RatingTruth::new();
    for &(thread, run, user, value) in ratings {
        match user {
            Some(user) => t.rate(thread, run, user, value),
            None => {
                t.rate_anonymously(thread, run, value);
            }
        }
    }
    t
}

/// Run r1's turn (a question, a first answer, a tool call and its result, the last answer), then
/// run r2's one answer.
#[cfg(test)]
pub(super) fn two_runs() -> [ExpectedMessage; 6] {
    [
        message("r1", MessageKind::Human),
        message("r1", MessageKind::Ai),
        message("r1", MessageKind::AiToolCall),
        message("r1", MessageKind::Tool),
        message("r1", MessageKind::Ai),
        message("r2", MessageKind::Ai),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_thread_keeps_no_rating_and_starts_over() {
        let mut t = rated(&[
            ("t", "r1", Some("u"), 1),
            ("t", "r1", None, -1),
            ("other", "r1", Some("u"), 1),
        ]);
        t.delete_thread("t");
        assert!(t.rows("t").is_empty());
        assert_eq!(t.rows("other").len(), 1);
        // The anonymous numbering of a run starts over on the thread created again.
        assert_eq!(t.rate_anonymously("t", "r1", 1), 0);
    }

    #[test]
    fn a_users_rating_shows_on_the_last_ai_text_of_its_run_only() {
        let t = rated(&[
            ("t", "r1", Some("u"), -1),
            ("t", "r2", Some("other"), 1),
            ("t", "r2", None, 1),
        ]);
        let messages = two_runs();
        assert_eq!(
            expected_attachment(&t, "t", &messages, "u"),
            vec![None, None, None, None, Some(-1), None]
        );
        assert_eq!(
            expected_attachment(&t, "t", &messages, "other"),
            vec![None, None, None, None, None, Some(1)]
        );
    }

    #[test]
    fn the_last_rating_of_a_user_for_a_run_wins() {
        let t = rated(&[
            ("t", "r1", Some("u"), 1),
            ("t", "r2", Some("u"), 1),
            ("t", "r1", Some("u"), -1),
            ("other", "r1", Some("u"), 1),
        ]);
        assert_eq!(
            t.expected("t"),
            vec![
                ("r1".into(), Some("u".into()), -1),
                ("r2".into(), Some("u".into()), 1)
            ]
        );
    }

    #[test]
    fn anonymous_ratings_each_count_and_withdrawals_remove_a_users_rating() {
        let mut t = rated(&[
            ("t", "r1", Some("u1"), 1),
            ("t", "r1", Some("u2"), 1),
            ("t", "r1", None, -1),
            ("t", "r1", None, -1),
        ]);
        assert_eq!(
            t.counts("t", "r1"),
            RatingCounts {
                total: 4,
                positive: 2,
                negative: 2
            }
        );
        assert!(t.withdraw("t", "r1", "u2"));
        assert!(!t.withdraw("t", "r1", "u2"));
        assert_eq!(
            t.expected("t"),
            vec![
                ("r1".into(), None, -1),
                ("r1".into(), None, -1),
                ("r1".into(), Some("u1".into()), 1)
            ]
        );
        assert_eq!(t.counts("t", "r2"), RatingCounts::default());
    }
}
