//! The truth of ratings: one per (thread, run, user), the latest submission wins.

use std::collections::BTreeMap;

/// Every rating users meant to give.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RatingTruth {
    ratings: BTreeMap<(String, String, String), i8>,
}

impl RatingTruth {
    pub fn new() -> RatingTruth {
        RatingTruth::default()
    }

    /// A user rates a run: `value` is +1 or -1.
    pub fn rate(&mut self, thread_id: &str, run_id: &str, user_id: &str, value: i8) {
        assert!(value == 1 || value == -1, "a rating is +1 or -1");
        self.ratings.insert(
            (
                thread_id.to_string(),
                run_id.to_string(),
                user_id.to_string(),
            ),
            value,
        );
    }

    /// The ratings of a thread as (run_id, user_id, value), ordered by run then user.
    pub fn expected(&self, thread_id: &str) -> Vec<(String, String, i8)> {
        self.ratings
            .iter()
            .filter(|((t, _, _), _)| t == thread_id)
            .map(|((_, r, u), v)| (r.clone(), u.clone(), *v))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_rating_of_a_user_for_a_run_wins() {
        let mut t = RatingTruth::new();
        t.rate("t", "r1", "u", 1);
        t.rate("t", "r2", "u", 1);
        t.rate("t", "r1", "u", -1);
        t.rate("other", "r1", "u", 1);
        assert_eq!(
            t.expected("t"),
            vec![("r1".into(), "u".into(), -1), ("r2".into(), "u".into(), 1)]
        );
    }
}
