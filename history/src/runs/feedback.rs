//! Feedback: ratings of runs, at the width of the published DeerFlow feedback repository.
//! Feedback targets a RUN, not a message, so summarization cannot orphan it. A known user has at
//! most one rating per (thread, run): [`FeedbackStore::submit`] replaces it (the seed's
//! UNIQUE(thread_id, run_id, user_id)), [`FeedbackStore::create`] refuses a second one.
//! Anonymous feedback (no user) is allowed any number of times, as a NULL `user_id` is under
//! that SQL constraint.
//!
//! User scope on reads and deletes is upstream's explicit form: `None` reads every user's
//! feedback (upstream's `user_id=None`, no filter), `Some(u)` only `u`'s. Upstream's default,
//! "the user of the request context", is the caller's to resolve into one of these.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::planted::{BugId, Planted};

/// Thumbs up or down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Rating {
    Up,
    Down,
}

impl Rating {
    /// +1 or -1, as stored.
    pub fn value(self) -> i8 {
        match self {
            Rating::Up => 1,
            Rating::Down => -1,
        }
    }

    /// Parses a stored or submitted value; anything but +1 and -1 is an error.
    pub fn from_value(v: i64) -> Result<Rating, FeedbackError> {
        match v {
            1 => Ok(Rating::Up),
            -1 => Ok(Rating::Down),
            other => Err(FeedbackError::Invalid {
                field: "rating",
                reason: format!("{other} is not +1 or -1"),
            }),
        }
    }
}

/// A rating as a known user submits it ([`FeedbackStore::submit`]: create or replace).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackInput {
    pub thread_id: String,
    pub run_id: String,
    pub user_id: String,
    /// The rated message's id, informational (the seed's optional `message_id`).
    pub message_id: Option<String>,
    pub rating: Rating,
    pub comment: Option<String>,
    pub created_at_ns: i64,
}

/// A new feedback row ([`FeedbackStore::create`]): `user_id` `None` is anonymous feedback.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewFeedback {
    pub thread_id: String,
    pub run_id: String,
    pub user_id: Option<String>,
    pub message_id: Option<String>,
    pub rating: Rating,
    pub comment: Option<String>,
    pub created_at_ns: i64,
}

/// A stored rating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feedback {
    /// Assigned when the row is created, never reused; kept when [`FeedbackStore::submit`]
    /// replaces the rating.
    pub feedback_id: u64,
    pub thread_id: String,
    pub run_id: String,
    /// `None` for anonymous feedback.
    pub user_id: Option<String>,
    pub message_id: Option<String>,
    pub rating: Rating,
    pub comment: Option<String>,
    pub created_at_ns: i64,
}

/// The counts of one run's feedback, every user's (upstream's `aggregate_by_run`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackAggregate {
    pub run_id: String,
    pub total: u64,
    pub positive: u64,
    pub negative: u64,
}

/// Why feedback was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedbackError {
    #[error("invalid feedback: field `{field}` {reason}")]
    Invalid { field: &'static str, reason: String },
    /// [`FeedbackStore::create`] for a user who already rated the run (the unique constraint).
    #[error("user `{user_id}` already rated run `{run_id}` of thread `{thread_id}` (feedback {feedback_id})")]
    Duplicate {
        thread_id: String,
        run_id: String,
        user_id: String,
        feedback_id: u64,
    },
}

/// A known user's rating of one run.
type Key = (String, String, String);

#[derive(Debug, Default)]
struct State {
    rows: BTreeMap<u64, Feedback>,
    by_user: BTreeMap<Key, u64>,
    next_id: u64,
    /// Planted R22 only: deleted rows, which the legacy soft delete kept and its grouped query
    /// forgot to filter out.
    soft_deleted: BTreeMap<u64, Feedback>,
}

impl State {
    fn insert(&mut self, row: Feedback) {
        if let Some(user) = &row.user_id {
            let key = (row.thread_id.clone(), row.run_id.clone(), user.clone());
            self.by_user.insert(key, row.feedback_id);
        }
        self.rows.insert(row.feedback_id, row);
    }

    fn remove(&mut self, feedback_id: u64) -> Option<Feedback> {
        let row = self.rows.remove(&feedback_id)?;
        if let Some(user) = &row.user_id {
            self.by_user
                .remove(&(row.thread_id.clone(), row.run_id.clone(), user.clone()));
        }
        Some(row)
    }

    fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

/// Whether a row is visible under a user scope (`None`: every row).
fn in_scope(row: &Feedback, user: Option<&str>) -> bool {
    user.is_none_or(|u| row.user_id.as_deref() == Some(u))
}

fn check_ids(fields: &[(&'static str, &str)]) -> Result<(), FeedbackError> {
    for &(field, value) in fields {
        if value.is_empty() {
            return Err(FeedbackError::Invalid {
                field,
                reason: "empty".into(),
            });
        }
    }
    Ok(())
}

/// The in-memory feedback store.
#[derive(Debug, Default)]
pub struct FeedbackStore {
    state: Mutex<State>,
    /// Legacy switches: R21 (anonymous rows left out of the counts) and R22 (withdrawn rows in
    /// the grouped listings).
    planted: Planted,
}

impl FeedbackStore {
    pub fn new() -> FeedbackStore {
        FeedbackStore::default()
    }

    /// A store with the legacy behaviour `planted` names (R21, R22) switched on.
    pub fn with_planted(planted: Planted) -> FeedbackStore {
        FeedbackStore {
            planted,
            ..FeedbackStore::default()
        }
    }

    /// Removes a row (a delete); planted R22 keeps it as a soft-deleted row.
    fn remove(&self, state: &mut State, feedback_id: u64) -> bool {
        let Some(row) = state.remove(feedback_id) else {
            return false;
        };
        if self.planted.is(BugId::R22) {
            state.soft_deleted.insert(feedback_id, row);
        }
        true
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every change is checked before it is made, so a poisoned lock still guards whole data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores a rating, replacing this user's earlier rating of the same run (upstream's
    /// `upsert`: the id stays, rating, comment, message and time are the new ones).
    pub fn submit(&self, input: FeedbackInput) -> Result<Feedback, FeedbackError> {
        check_ids(&[
            ("thread_id", &input.thread_id),
            ("run_id", &input.run_id),
            ("user_id", &input.user_id),
        ])?;
        let mut state = self.lock();
        let key = (
            input.thread_id.clone(),
            input.run_id.clone(),
            input.user_id.clone(),
        );
        let feedback_id = match state.by_user.get(&key) {
            Some(&existing) => existing,
            None => state.new_id(),
        };
        let row = Feedback {
            feedback_id,
            thread_id: input.thread_id,
            run_id: input.run_id,
            user_id: Some(input.user_id),
            message_id: input.message_id,
            rating: input.rating,
            comment: input.comment,
            created_at_ns: input.created_at_ns,
        };
        state.insert(row.clone());
        Ok(row)
    }

    /// Creates a feedback row (upstream's `create`): anonymous when `user_id` is `None`, any
    /// number of those; a known user's second rating of a run is [`FeedbackError::Duplicate`].
    pub fn create(&self, new: NewFeedback) -> Result<Feedback, FeedbackError> {
        check_ids(&[("thread_id", &new.thread_id), ("run_id", &new.run_id)])?;
        if new.user_id.as_deref() == Some("") {
            return Err(FeedbackError::Invalid {
                field: "user_id",
                reason: "empty (use None for anonymous feedback)".into(),
            });
        }
        let mut state = self.lock();
        if let Some(user) = &new.user_id {
            let key = (new.thread_id.clone(), new.run_id.clone(), user.clone());
            if let Some(&feedback_id) = state.by_user.get(&key) {
                return Err(FeedbackError::Duplicate {
                    thread_id: new.thread_id,
                    run_id: new.run_id,
                    user_id: user.clone(),
                    feedback_id,
                });
            }
        }
        let row = Feedback {
            feedback_id: state.new_id(),
            thread_id: new.thread_id,
            run_id: new.run_id,
            user_id: new.user_id,
            message_id: new.message_id,
            rating: new.rating,
            comment: new.comment,
            created_at_ns: new.created_at_ns,
        };
        state.insert(row.clone());
        Ok(row)
    }

    /// One row by id; `None` when there is none or it is not `user`'s.
    pub fn get(&self, feedback_id: u64, user: Option<&str>) -> Option<Feedback> {
        let state = self.lock();
        state
            .rows
            .get(&feedback_id)
            .filter(|row| in_scope(row, user))
            .cloned()
    }

    /// The rating of one known user for one run.
    pub fn get_by_run_and_user(
        &self,
        thread_id: &str,
        run_id: &str,
        user_id: &str,
    ) -> Option<Feedback> {
        let key = (
            thread_id.to_string(),
            run_id.to_string(),
            user_id.to_string(),
        );
        let state = self.lock();
        let id = state.by_user.get(&key)?;
        state.rows.get(id).cloned()
    }

    /// The rows of a thread matching `keep` and the user scope, oldest first (by creation
    /// time, then id: upstream orders by `created_at` alone), at most `limit`.
    fn oldest_first(
        &self,
        thread_id: &str,
        user: Option<&str>,
        limit: usize,
        keep: impl Fn(&Feedback) -> bool,
    ) -> Vec<Feedback> {
        let mut rows: Vec<Feedback> = self
            .lock()
            .rows
            .values()
            .filter(|r| r.thread_id == thread_id && in_scope(r, user) && keep(r))
            .cloned()
            .collect();
        rows.sort_by_key(|r| (r.created_at_ns, r.feedback_id));
        rows.truncate(limit);
        rows
    }

    /// The feedback of one run, oldest first, at most `limit` (upstream's default is 100).
    pub fn list_by_run(
        &self,
        thread_id: &str,
        run_id: &str,
        limit: usize,
        user: Option<&str>,
    ) -> Vec<Feedback> {
        self.oldest_first(thread_id, user, limit, |r| r.run_id == run_id)
    }

    /// The feedback of one thread, oldest first, at most `limit`.
    pub fn list_by_thread(
        &self,
        thread_id: &str,
        limit: usize,
        user: Option<&str>,
    ) -> Vec<Feedback> {
        self.oldest_first(thread_id, user, limit, |_| true)
    }

    /// Every rating of a thread, ordered by (run_id, user_id, feedback_id): the whole thread,
    /// for comparisons.
    pub fn list_thread(&self, thread_id: &str) -> Vec<Feedback> {
        let mut rows: Vec<Feedback> = self
            .lock()
            .rows
            .values()
            .filter(|f| f.thread_id == thread_id)
            .cloned()
            .collect();
        rows.sort_by(|a, b| {
            (&a.run_id, &a.user_id, a.feedback_id).cmp(&(&b.run_id, &b.user_id, b.feedback_id))
        });
        rows
    }

    /// Deletes one row; false when there is none or it is not `user`'s.
    pub fn delete(&self, feedback_id: u64, user: Option<&str>) -> bool {
        let mut state = self.lock();
        let visible = state
            .rows
            .get(&feedback_id)
            .is_some_and(|r| in_scope(r, user));
        visible && self.remove(&mut state, feedback_id)
    }

    /// Deletes every rating of a thread (a thread's deletion); how many rows it removed.
    pub fn delete_by_thread(&self, thread_id: &str) -> u64 {
        let mut state = self.lock();
        let ids: Vec<u64> = state
            .rows
            .values()
            .filter(|f| f.thread_id == thread_id)
            .map(|f| f.feedback_id)
            .collect();
        ids.iter()
            .filter(|&&id| self.remove(&mut state, id))
            .count() as u64
    }

    /// Deletes a known user's rating of a run; false when there was none. (Upstream takes the
    /// request's user here; anonymous rows are deleted by id.)
    pub fn delete_by_run(&self, thread_id: &str, run_id: &str, user_id: &str) -> bool {
        let key = (
            thread_id.to_string(),
            run_id.to_string(),
            user_id.to_string(),
        );
        let mut state = self.lock();
        match state.by_user.get(&key).copied() {
            Some(id) => self.remove(&mut state, id),
            None => false,
        }
    }

    /// Counts of every user's feedback on one run (zeros when there is none).
    pub fn aggregate_by_run(&self, thread_id: &str, run_id: &str) -> FeedbackAggregate {
        let state = self.lock();
        let mut aggregate = FeedbackAggregate {
            run_id: run_id.to_string(),
            ..FeedbackAggregate::default()
        };
        for row in state.rows.values() {
            if row.thread_id == thread_id && row.run_id == run_id {
                if self.planted.is(BugId::R21) && row.user_id.is_none() {
                    // planted R21: the legacy count joined the users table, which anonymous
                    // feedback has no row in.
                    continue;
                }
                aggregate.total += 1;
                match row.rating {
                    Rating::Up => aggregate.positive += 1,
                    Rating::Down => aggregate.negative += 1,
                }
            }
        }
        aggregate
    }

    /// A thread's feedback by run: one row per run. When several rows of a run are in scope
    /// (several users, or anonymous ones), the most recently created (highest id) is the one
    /// kept; upstream leaves that choice to the database's row order.
    pub fn list_by_thread_grouped(
        &self,
        thread_id: &str,
        user: Option<&str>,
    ) -> BTreeMap<String, Feedback> {
        self.grouped(thread_id, user, |_| true)
    }

    /// [`FeedbackStore::list_by_thread_grouped`] for the given runs only; empty for no runs.
    pub fn list_by_run_ids(
        &self,
        thread_id: &str,
        run_ids: &BTreeSet<String>,
        user: Option<&str>,
    ) -> BTreeMap<String, Feedback> {
        if run_ids.is_empty() {
            return BTreeMap::new();
        }
        self.grouped(thread_id, user, |run| run_ids.contains(run))
    }

    fn grouped(
        &self,
        thread_id: &str,
        user: Option<&str>,
        runs: impl Fn(&str) -> bool,
    ) -> BTreeMap<String, Feedback> {
        let state = self.lock();
        let mut by_run = BTreeMap::new();
        let mut rows: BTreeMap<u64, &Feedback> = state.rows.iter().map(|(k, v)| (*k, v)).collect();
        if self.planted.is(BugId::R22) {
            // planted R22: the legacy grouped query lacked the soft delete's filter.
            rows.extend(state.soft_deleted.iter().map(|(k, v)| (*k, v)));
        }
        // Rows in id order: a later row of the same run replaces an earlier one.
        for row in rows.into_values() {
            if row.thread_id == thread_id && in_scope(row, user) && runs(&row.run_id) {
                by_run.insert(row.run_id.clone(), row.clone());
            }
        }
        by_run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(run: &str, user: &str, rating: Rating) -> FeedbackInput {
        FeedbackInput {
            thread_id: "t".into(),
            run_id: run.into(),
            user_id: user.into(),
            message_id: None,
            rating,
            comment: None,
            created_at_ns: 0,
        }
    }

    #[test]
    fn one_rating_per_thread_run_and_user() {
        let s = FeedbackStore::new();
        let first = s.submit(input("r1", "u", Rating::Up)).unwrap();
        s.submit(input("r2", "u", Rating::Up)).unwrap();
        let again = s.submit(input("r1", "u", Rating::Down)).unwrap();
        assert_eq!(again.feedback_id, first.feedback_id);
        assert_eq!(
            s.get_by_run_and_user("t", "r1", "u").unwrap().rating,
            Rating::Down
        );
        assert_eq!(s.list_thread("t").len(), 2);
    }

    #[test]
    fn bad_ratings_and_empty_ids_are_refused() {
        assert!(Rating::from_value(0).is_err());
        assert_eq!(Rating::from_value(-1), Ok(Rating::Down));
        let s = FeedbackStore::new();
        assert!(matches!(
            s.submit(input("", "u", Rating::Up)),
            Err(FeedbackError::Invalid {
                field: "run_id",
                ..
            })
        ));
    }
}
