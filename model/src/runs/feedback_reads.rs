//! What the feedback reads beyond a rating must answer (R21, R22), from the ratings that stand
//! ([`RatingTruth`]): the grouped listings and the feedback `/messages` attaches.
//!
//! Where the published store leaves a choice to the database (several ratings of one run in
//! scope, of which the grouped listing shows one), the expectation is the set of ratings any
//! of which may be shown, never one the code under test happened to pick.

use std::collections::{BTreeMap, BTreeSet};

use super::ratings::{last_ai_of_its_run, RatingRow, RatingTruth};
use super::truth::ExpectedMessage;

/// The grouped listing (`list_by_thread_grouped`, and `list_by_run_ids` when `runs` is given):
/// per run with at least one standing rating in `scope`, the ratings it may show (one of them).
/// Runs not in `runs` are left out; `Some` of an empty set lists nothing.
pub fn grouped_choices(
    ratings: &RatingTruth,
    thread_id: &str,
    scope: Option<&str>,
    runs: Option<&BTreeSet<String>>,
) -> BTreeMap<String, Vec<RatingRow>> {
    let mut by_run: BTreeMap<String, Vec<RatingRow>> = BTreeMap::new();
    for row in ratings.rows_in_scope(thread_id, scope) {
        if runs.is_none_or(|wanted| wanted.contains(&row.run_id)) {
            by_run.entry(row.run_id.clone()).or_default().push(row);
        }
    }
    by_run
}

/// What `/messages` with feedback may attach to each of `messages` (the view's messages, in its
/// order, each named by the run that emitted it): nothing (empty) except on each run's last AI
/// answer, which carries one of its run's standing ratings in `scope` (the grouped listing's
/// choice), or nothing when there is none.
pub fn attachment_choices(
    ratings: &RatingTruth,
    thread_id: &str,
    messages: &[ExpectedMessage],
    scope: Option<&str>,
) -> Vec<Vec<RatingRow>> {
    let grouped = grouped_choices(ratings, thread_id, scope, None);
    messages
        .iter()
        .zip(last_ai_of_its_run(messages))
        .map(|(m, last)| {
            if !last {
                return Vec::new();
            }
            grouped.get(&m.run_id).cloned().unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::ratings::{rated, two_runs, Rater};
    use super::*;

    #[test]
    fn withdrawn_ratings_leave_every_grouping_and_anonymous_ones_show_to_every_user_only() {
        let mut t = RatingTruth::new();
        t.rate("t", "r1", "u", 1);
        let n = t.rate_anonymously("t", "r1", -1);
        t.rate_anonymously("t", "r2", 1);
        assert!(t.withdraw_anonymous("t", "r1", n));
        assert!(!t.withdraw_anonymous("t", "r1", n));
        let all = grouped_choices(&t, "t", None, None);
        assert_eq!(all.len(), 2);
        assert_eq!(all["r1"].len(), 1, "the withdrawn anonymous rating is gone");
        assert_eq!(all["r1"][0].rater, Rater::User("u".into()));
        let mine = grouped_choices(&t, "t", Some("u"), None);
        assert_eq!(mine.keys().collect::<Vec<_>>(), vec!["r1"]);
        let wanted = BTreeSet::from(["r2".to_string()]);
        assert_eq!(grouped_choices(&t, "t", None, Some(&wanted)).len(), 1);
        assert!(grouped_choices(&t, "t", None, Some(&BTreeSet::new())).is_empty());
        assert!(t.withdraw("t", "r1", "u"));
        assert!(grouped_choices(&t, "t", Some("u"), None).is_empty());
    }

    #[test]
    fn feedback_goes_on_the_last_answer_of_its_run_only() {
        let t = rated(&[("t", "r1", Some("u"), -1), ("t", "r2", None, 1)]);
        let messages = two_runs();
        let every = attachment_choices(&t, "t", &messages, None);
        let lens: Vec<usize> = every.iter().map(Vec::len).collect();
        assert_eq!(lens, vec![0, 0, 0, 0, 1, 1]);
        assert_eq!(every[4][0].value, -1);
        let users = attachment_choices(&t, "t", &messages, Some("u"));
        let lens: Vec<usize> = users.iter().map(Vec::len).collect();
        assert_eq!(
            lens,
            vec![0, 0, 0, 0, 1, 0],
            "an anonymous rating is no user's"
        );
    }
}
