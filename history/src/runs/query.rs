//! What a read or a deletion selects beyond its thread: whose rows ([`UserScope`]) and, for
//! `list_events_filtered`, which events of a run ([`EventFilter`]).

use serde_json::Value;

use super::error::RunStoreError;
use super::event::RunEvent;

/// Whose rows an operation sees: the DeerFlow store's three-state `user_id` argument.
///
/// Upstream reads the default (`AUTO`) from the request's context variable; this crate has no
/// ambient state, so the caller hands that value in as [`UserScope::Current`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum UserScope {
    /// `user_id=AUTO`, the default: the request's current user (what the auth middleware set).
    /// With no user in the context the operation fails ([`RunStoreError::NoUserContext`]) rather
    /// than silently reading everybody's rows.
    Current(Option<String>),
    /// `user_id=None`: no user condition at all (migrations and admin tools). Rows without a
    /// user (legacy rows, background writers) are seen.
    #[default]
    All,
    /// `user_id="u"`: only rows whose `user_id` is exactly `u`; rows without a user are not.
    Only(String),
}

impl UserScope {
    /// The user a row must belong to, `None` for no condition. `op` names the operation in the
    /// error of a default scope without a current user.
    pub fn resolve(&self, op: &'static str) -> Result<Option<&str>, RunStoreError> {
        match self {
            UserScope::Current(Some(u)) | UserScope::Only(u) => Ok(Some(u)),
            UserScope::Current(None) => Err(RunStoreError::NoUserContext { op }),
            UserScope::All => Ok(None),
        }
    }

    /// Whether a row with this `user_id` is in a resolved scope.
    pub fn admits(resolved: Option<&str>, row_user: Option<&str>) -> bool {
        resolved.is_none_or(|u| row_user == Some(u))
    }
}

/// The page size of `list_events` when the caller names none (upstream's default).
pub const EVENTS_LIMIT_DEFAULT: usize = 500;

/// Which events of one run `list_events_filtered` returns: the rows of the run that pass every
/// condition, ascending by `seq`, then the first `limit` of them. The conditions apply before
/// the limit, so paging one subagent task with `after_seq` never loses its tail to other tasks'
/// events (upstream issue #3779).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventFilter {
    /// Only these event types. `Some(vec![])` selects nothing (membership in an empty set).
    pub event_types: Option<Vec<String>>,
    /// Only events whose `metadata.task_id` is this string (a non-string `task_id` never
    /// matches, a number included).
    pub task_id: Option<String>,
    /// Only events with `seq > after_seq`: the forward cursor.
    pub after_seq: Option<u64>,
    /// At most this many events.
    pub limit: usize,
}

impl Default for EventFilter {
    fn default() -> EventFilter {
        EventFilter {
            event_types: None,
            task_id: None,
            after_seq: None,
            limit: EVENTS_LIMIT_DEFAULT,
        }
    }
}

impl EventFilter {
    /// Every event of the run, with no limit.
    pub fn everything() -> EventFilter {
        EventFilter {
            limit: usize::MAX,
            ..EventFilter::default()
        }
    }

    /// Whether a row of the run passes the conditions (the limit aside).
    pub fn admits(&self, row: &RunEvent) -> bool {
        self.event_types
            .as_ref()
            .is_none_or(|types| types.contains(&row.event_type))
            && self
                .task_id
                .as_ref()
                .is_none_or(|task| task_id_of(&row.metadata) == Some(task.as_str()))
            && self.after_seq.is_none_or(|after| row.seq > after)
    }

    /// The legacy reads' conditions (planted R17): a task matched by its text, so the number 5
    /// passed a filter by `"5"`.
    pub(crate) fn admits_by_text(&self, row: &RunEvent) -> bool {
        let text = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let by_text = EventFilter {
            task_id: None,
            ..self.clone()
        };
        by_text.admits(row)
            && self.task_id.as_ref().is_none_or(|task| {
                row.metadata.get("task_id").and_then(text).as_ref() == Some(task)
            })
    }
}

/// `metadata.task_id` when it is a string.
pub fn task_id_of(metadata: &Value) -> Option<&str> {
    metadata.get("task_id").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Category, NewRunEvent};
    use serde_json::json;

    fn row(event_type: &str, metadata: Value, seq: u64) -> RunEvent {
        NewRunEvent {
            thread_id: "t".into(),
            run_id: "r".into(),
            user_id: None,
            event_type: event_type.into(),
            category: Category::Subagent,
            content: json!("").into(),
            metadata,
            created_at_ns: 0,
        }
        .with_seq(seq)
    }

    #[test]
    fn the_default_scope_needs_a_current_user() {
        assert_eq!(
            UserScope::Current(None).resolve("count_messages"),
            Err(RunStoreError::NoUserContext {
                op: "count_messages"
            })
        );
        assert_eq!(
            UserScope::Current(Some("u".into())).resolve("x"),
            Ok(Some("u"))
        );
        assert_eq!(UserScope::All.resolve("x"), Ok(None));
        assert!(UserScope::admits(None, None));
        assert!(!UserScope::admits(Some("u"), None));
        assert!(UserScope::admits(Some("u"), Some("u")));
    }

    #[test]
    fn task_ids_match_strings_only_and_empty_types_select_nothing() {
        let f = EventFilter {
            task_id: Some("5".into()),
            ..EventFilter::default()
        };
        assert!(f.admits(&row("s", json!({"task_id": "5"}), 1)));
        assert!(!f.admits(&row("s", json!({"task_id": 5}), 1)));
        assert!(!f.admits(&row("s", json!(null), 1)));
        let none = EventFilter {
            event_types: Some(vec![]),
            ..EventFilter::default()
        };
        assert!(!none.admits(&row("s", json!({}), 1)));
        let after = EventFilter {
            after_seq: Some(3),
            ..EventFilter::default()
        };
        assert!(!after.admits(&row("s", json!({}), 3)));
        assert!(after.admits(&row("s", json!({}), 4)));
    }
}
