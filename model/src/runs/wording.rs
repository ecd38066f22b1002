//! How the model's values and findings read in a violation message: event types, run ids,
//! task ids and short JSON, the way a user of the store writes them, never Rust's debug form.

use std::fmt;

use serde_json::Value;

use super::events::{FilteredMismatch, RunEventKey};
use super::ratings::{Rater, RatingRow};
use super::truth::{HistoryMismatch, MessageKind, RunOutcome};

/// At most this many characters of a text or a JSON value are shown.
pub const SHOWN_CHARS: usize = 80;

/// `text` cut to [`SHOWN_CHARS`] characters, `...` marking a cut.
pub fn brief(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => text.to_string(),
        Some((end, _)) => format!("{}...", &text[..end]),
    }
}

/// `value` as compact JSON, cut to [`SHOWN_CHARS`] characters.
pub fn brief_json(value: &Value) -> String {
    brief(&value.to_string())
}

impl fmt::Display for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.event_type())
    }
}

impl fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunOutcome::Running => "running",
            RunOutcome::Ended => "ended",
            RunOutcome::Errored => "errored",
            RunOutcome::Cancelled => "cancelled",
            RunOutcome::Killed => "killed",
        })
    }
}

/// A rater: the user's id, or `anonymous #n`.
impl fmt::Display for Rater {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rater::User(user) => f.write_str(user),
            Rater::Anonymous(n) => write!(f, "anonymous #{n}"),
        }
    }
}

/// A rating: `+1 by user-1 on run-1`.
impl fmt::Display for RatingRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:+} by {} on {}", self.value, self.rater, self.run_id)
    }
}

/// An event: `` `subagent.start` of task 1 {"steps":1} ``.
impl fmt::Display for RunEventKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`", self.event_type)?;
        if let Some(task) = &self.task_id {
            write!(f, " of task {task}")?;
        }
        write!(f, " {}", brief_json(&self.content))
    }
}

/// One side of a difference: the event, or `nothing` where that side ended.
fn or_nothing<T: fmt::Display>(side: Option<T>) -> String {
    side.map_or_else(|| "nothing".to_string(), |s| s.to_string())
}

impl fmt::Display for FilteredMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilteredMismatch::PageOverLimit { page, rows } => {
                write!(f, "page {page} holds {rows} rows, more than the limit")
            }
            FilteredMismatch::Differs {
                position,
                expected,
                observed,
            } => write!(
                f,
                "at position {position} the model expects {} and the store answered {}",
                or_nothing(expected.as_deref()),
                or_nothing(observed.as_deref())
            ),
        }
    }
}

/// A message of a run: `` human_message `second question` ``.
fn message(m: &Option<(MessageKind, String)>) -> String {
    m.as_ref().map_or_else(
        || "nothing".to_string(),
        |(kind, text)| format!("{kind} `{}`", brief(text)),
    )
}

impl fmt::Display for HistoryMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryMismatch::UnknownRun { index, run_id } => write!(
                f,
                "message {index} of the answer is of run {run_id}, a run the model does not expect in this read"
            ),
            HistoryMismatch::RunDiffers {
                run_id,
                position,
                expected,
                observed,
            } => write!(
                f,
                "at position {position} of run {run_id} the model expects {} and the store answered {}",
                message(expected),
                message(observed)
            ),
            HistoryMismatch::OutOfOrder { earlier, later } => write!(
                f,
                "a message of run {later} comes before one of run {earlier}, which stopped before {later} started"
            ),
        }
    }
}

impl HistoryMismatch {
    /// The difference as two answers, the store's then the model's, each from where they part.
    pub fn sides(&self) -> (String, String) {
        match self {
            HistoryMismatch::UnknownRun { index, run_id } => (
                format!("message {index} of run {run_id}"),
                format!("no message of run {run_id}"),
            ),
            HistoryMismatch::RunDiffers {
                run_id,
                position,
                expected,
                observed,
            } => (
                format!("run {run_id} at {position}: {}", message(observed)),
                format!("run {run_id} at {position}: {}", message(expected)),
            ),
            HistoryMismatch::OutOfOrder { earlier, later } => (
                format!("a message of run {later} before one of run {earlier}"),
                format!("every message of run {earlier} before run {later}'s"),
            ),
        }
    }
}

impl FilteredMismatch {
    /// The difference as two answers, the store's then the model's, each from where they part.
    pub fn sides(&self) -> (String, String) {
        match self {
            FilteredMismatch::PageOverLimit { page, rows } => (
                format!("page {page} of {rows} rows"),
                format!("page {page} within the limit"),
            ),
            FilteredMismatch::Differs {
                position,
                expected,
                observed,
            } => (
                format!("at {position}: {}", or_nothing(observed.as_deref())),
                format!("at {position}: {}", or_nothing(expected.as_deref())),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_filtered_difference_reads_as_event_types_tasks_and_json() {
        let start = RunEventKey::of(
            "subagent.start",
            &json!({"task_id": "1"}),
            &json!({"steps": 1}),
        );
        let m = FilteredMismatch::Differs {
            position: 0,
            expected: Some(Box::new(start)),
            observed: None,
        };
        assert_eq!(
            m.to_string(),
            "at position 0 the model expects `subagent.start` of task 1 {\"steps\":1} and the store answered nothing"
        );
    }

    #[test]
    fn a_history_difference_names_the_run_and_the_messages() {
        let m = HistoryMismatch::RunDiffers {
            run_id: "run-1".into(),
            position: 2,
            expected: Some((MessageKind::Human, "hi".into())),
            observed: None,
        };
        assert_eq!(
            m.to_string(),
            "at position 2 of run run-1 the model expects human_message `hi` and the store answered nothing"
        );
    }

    #[test]
    fn a_rating_reads_as_its_value_rater_and_run() {
        let row = RatingRow {
            run_id: "run-1".into(),
            rater: Rater::Anonymous(0),
            value: -1,
        };
        assert_eq!(row.to_string(), "-1 by anonymous #0 on run-1");
    }

    #[test]
    fn a_long_value_is_cut() {
        let long = "x".repeat(200);
        let shown = brief_json(&json!({ "text": long }));
        assert_eq!(shown.chars().count(), SHOWN_CHARS + 3);
        assert!(shown.ends_with("..."));
    }
}
