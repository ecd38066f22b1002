//! The subagent tasks a run delegates, with the event names and category the current DeerFlow
//! runtime writes for them: `subagent.start`, one `subagent.step` per step and `subagent.end`,
//! category `subagent`, each carrying `metadata.task_id`. A run's journal writes a task's
//! events just before the run's message number `after` (after its last message when `after`
//! is their count); a run stopped earlier never reaches the task.
//!
//! Task ids are unique within a run; runs reuse them (`task-0`, ...), as tool-call ids repeat
//! across runs, so a read filtered by task must keep to its run. A task may carry its id as a
//! JSON number (`"task_id": 1`): a filter by task matches a string `metadata.task_id` only, so
//! a read filtered by `"1"` must not return a task whose id is the number 1.

use history::runs::{current, Category, JournalEntry};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::Arc;

/// At most this many steps a task.
pub const TASK_STEPS_MAX: u32 = 8;

/// One subagent task of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// The `metadata.task_id` of its events.
    pub id: String,
    /// Written just before the run's message with this index (0-based, counting expanded
    /// messages); the number of messages: after the last one.
    pub after: u32,
    /// `subagent.step` events between its start and its end (1 to [`TASK_STEPS_MAX`]).
    pub steps: u32,
    /// Its events carry the id as a JSON number (the id is then decimal digits), not a string.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub numeric_id: bool,
}

impl TaskSpec {
    /// The `metadata.task_id` (and `content.task`) its events carry.
    pub fn id_value(&self) -> serde_json::Value {
        match self.numeric_id.then(|| self.id.parse::<u64>()) {
            Some(Ok(n)) => json!(n),
            _ => json!(self.id),
        }
    }
}

/// The journal entries of one task, in order.
pub fn entries(task: &TaskSpec, created_at_ns: i64) -> Vec<JournalEntry> {
    let id = task.id_value();
    let metadata = json!({ "task_id": id });
    let entry = |event_type: &str, content| JournalEntry {
        event_type: event_type.to_string(),
        category: Category::Subagent,
        content: Arc::new(content),
        metadata: metadata.clone(),
        created_at_ns,
    };
    let mut out = vec![entry(
        current::SUBAGENT_START,
        json!({ "task": id, "steps": task.steps }),
    )];
    out.extend(
        (0..task.steps).map(|n| entry(current::SUBAGENT_STEP, json!({ "task": id, "step": n }))),
    );
    out.push(entry(current::SUBAGENT_END, json!({ "task": id })));
    out
}

/// The tasks of `tasks` written before message `at` (in spec order).
pub fn due(tasks: &[TaskSpec], at: usize) -> impl Iterator<Item = &TaskSpec> {
    tasks.iter().filter(move |t| t.after as usize == at)
}

/// Checks the tasks of a run at `at` (`runs[r]`) that emits `messages` messages: ids not empty
/// and unique in the run (a numeric id and the string of its digits are two ids), numeric ids
/// digits, `after` within its messages, steps within bounds.
pub fn validate(at: &str, tasks: &[TaskSpec], messages: usize) -> Result<(), String> {
    let mut ids = BTreeSet::new();
    for (t, task) in tasks.iter().enumerate() {
        let at = format!("{at}.tasks[{t}]");
        if task.id.is_empty() {
            return Err(format!("{at}.id: empty task id"));
        }
        if task.numeric_id && task.id.parse::<u64>().is_err() {
            return Err(format!(
                "{at}.id: a numeric_id task needs decimal digits, found `{}`",
                task.id
            ));
        }
        if !ids.insert((task.id.as_str(), task.numeric_id)) {
            return Err(format!("{at}.id: task id `{}` is used twice", task.id));
        }
        if task.after as usize > messages {
            return Err(format!(
                "{at}.after: the run has {messages} messages, found {}",
                task.after
            ));
        }
        if !(1..=TASK_STEPS_MAX).contains(&task.steps) {
            return Err(format!(
                "{at}.steps: expected 1 to {TASK_STEPS_MAX}, found {}",
                task.steps
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_its_start_steps_and_end_all_tagged() {
        let task = TaskSpec {
            id: "task-0".into(),
            after: 0,
            steps: 2,
            numeric_id: false,
        };
        let e = entries(&task, 7);
        let types: Vec<&str> = e.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types,
            [
                "subagent.start",
                "subagent.step",
                "subagent.step",
                "subagent.end"
            ]
        );
        assert!(e
            .iter()
            .all(|e| e.category == Category::Subagent && e.metadata["task_id"] == "task-0"));
        assert_ne!(e[1].content, e[2].content, "steps tell apart");
        let numeric = TaskSpec {
            id: "1".into(),
            numeric_id: true,
            ..task
        };
        assert!(entries(&numeric, 7)
            .iter()
            .all(|e| e.metadata["task_id"] == 1 && e.content["task"] == 1));
    }

    #[test]
    fn errors_name_the_task_field() {
        let task = |id: &str, after, steps| TaskSpec {
            id: id.into(),
            after,
            steps,
            numeric_id: false,
        };
        assert_eq!(validate("runs[0]", &[task("a", 2, 1)], 2), Ok(()));
        let err = |tasks: &[TaskSpec]| validate("runs[0]", tasks, 2).unwrap_err();
        assert!(err(&[task("a", 3, 1)]).starts_with("runs[0].tasks[0].after"));
        assert!(err(&[task("a", 0, 0)]).starts_with("runs[0].tasks[0].steps"));
        assert!(err(&[task("a", 0, 1), task("a", 1, 1)]).starts_with("runs[0].tasks[1].id"));
        assert!(err(&[task("", 0, 1)]).starts_with("runs[0].tasks[0].id"));
        let numeric = |id: &str| TaskSpec {
            numeric_id: true,
            ..task(id, 0, 1)
        };
        assert_eq!(
            validate("runs[0]", &[task("1", 0, 1), numeric("1")], 2),
            Ok(())
        );
        assert!(err(&[numeric("one")]).starts_with("runs[0].tasks[0].id"));
        assert!(err(&[numeric("1"), numeric("1")]).starts_with("runs[0].tasks[1].id"));
    }
}
