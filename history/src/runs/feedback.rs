//! Feedback: one rating per (thread, run, user). Feedback targets a RUN, not a message, so
//! summarization cannot orphan it; a second rating by the same user for the same run replaces
//! the first (the seed's UNIQUE(thread_id, run_id, user_id)).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

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

/// A rating as a client submits it.
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

/// A stored rating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feedback {
    /// Assigned at the first rating of (thread, run, user); kept when it is replaced.
    pub feedback_id: u64,
    pub thread_id: String,
    pub run_id: String,
    pub user_id: String,
    pub message_id: Option<String>,
    pub rating: Rating,
    pub comment: Option<String>,
    pub created_at_ns: i64,
}

/// Why a rating was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedbackError {
    #[error("invalid feedback: field `{field}` {reason}")]
    Invalid { field: &'static str, reason: String },
}

type Key = (String, String, String);

#[derive(Debug, Default)]
struct State {
    rows: BTreeMap<Key, Feedback>,
    next_id: u64,
}

/// The in-memory feedback store.
#[derive(Debug, Default)]
pub struct FeedbackStore {
    state: Mutex<State>,
}

impl FeedbackStore {
    pub fn new() -> FeedbackStore {
        FeedbackStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every change is a single map insert, so a poisoned lock still guards whole data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores a rating, replacing this user's earlier rating of the same run.
    pub fn submit(&self, input: FeedbackInput) -> Result<Feedback, FeedbackError> {
        for (field, value) in [
            ("thread_id", &input.thread_id),
            ("run_id", &input.run_id),
            ("user_id", &input.user_id),
        ] {
            if value.is_empty() {
                return Err(FeedbackError::Invalid {
                    field,
                    reason: "empty".into(),
                });
            }
        }
        let mut state = self.lock();
        let key = (
            input.thread_id.clone(),
            input.run_id.clone(),
            input.user_id.clone(),
        );
        let feedback_id = match state.rows.get(&key) {
            Some(existing) => existing.feedback_id,
            None => {
                state.next_id += 1;
                state.next_id
            }
        };
        let row = Feedback {
            feedback_id,
            thread_id: input.thread_id,
            run_id: input.run_id,
            user_id: input.user_id,
            message_id: input.message_id,
            rating: input.rating,
            comment: input.comment,
            created_at_ns: input.created_at_ns,
        };
        state.rows.insert(key, row.clone());
        Ok(row)
    }

    /// The rating of one user for one run.
    pub fn get(&self, thread_id: &str, run_id: &str, user_id: &str) -> Option<Feedback> {
        let key = (
            thread_id.to_string(),
            run_id.to_string(),
            user_id.to_string(),
        );
        self.lock().rows.get(&key).cloned()
    }

    /// Every rating of a thread, ordered by (run_id, user_id).
    pub fn list_thread(&self, thread_id: &str) -> Vec<Feedback> {
        self.lock()
            .rows
            .values()
            .filter(|f| f.thread_id == thread_id)
            .cloned()
            .collect()
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
        assert_eq!(s.get("t", "r1", "u").unwrap().rating, Rating::Down);
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
