//! What a run's filtered event reads must answer, from what the run emitted: the events one
//! `list_events` filter selects, paged with a forward cursor (R17), and the last message a
//! reader may show as the run's answer (R18).
//!
//! A run's journal writes its events in emission order, so its stored events are what it
//! emitted (only a prefix of it for a killed or running run, R4) and a filter selects a
//! subsequence of them. The model knows events by their type, their `metadata.task_id` and
//! their content; it never sees a stored row's seq.

use serde_json::Value;

use super::truth::MessageKind;

/// One event a run handed its journal, as a filtered read selects it and a reader tells it
/// apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunEventKey {
    pub event_type: String,
    /// `metadata.task_id` when it is a string (a number never matches a task filter).
    pub task_id: Option<String>,
    pub content: Value,
}

impl RunEventKey {
    /// An event as its type, metadata and content show it. A `metadata.task_id` that is not a
    /// string (the number 5, say) names no task a filter can ask for: the contract matches
    /// strings only.
    pub fn of(event_type: &str, metadata: &Value, content: &Value) -> RunEventKey {
        RunEventKey {
            event_type: event_type.to_string(),
            task_id: match metadata.get("task_id") {
                Some(Value::String(task)) => Some(task.clone()),
                _ => None,
            },
            content: content.clone(),
        }
    }
}

/// The conditions of a filtered read, its page size aside: the rows it selects pass both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventQuery {
    /// Only these event types (`Some(vec![])`: nothing).
    pub event_types: Option<Vec<String>>,
    /// Only events of this subagent task.
    pub task_id: Option<String>,
}

impl EventQuery {
    /// Whether the query selects the event.
    pub fn selects(&self, e: &RunEventKey) -> bool {
        self.event_types
            .as_ref()
            .is_none_or(|types| types.contains(&e.event_type))
            && self
                .task_id
                .as_ref()
                .is_none_or(|task| e.task_id.as_ref() == Some(task))
    }
}

/// The first way the pages of a filtered read differ from the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilteredMismatch {
    /// Page `page` holds more rows than the page size.
    PageOverLimit { page: usize, rows: usize },
    /// The pages together differ from the selected events at `position` (`None`: the one side
    /// ended there). Boxed: a mismatch is rare, the `Ok` path stays small.
    Differs {
        position: usize,
        expected: Option<Box<RunEventKey>>,
        observed: Option<Box<RunEventKey>>,
    },
}

/// The events of `emitted` the query selects, in emission order.
pub fn selected<'a>(emitted: &'a [RunEventKey], query: &EventQuery) -> Vec<&'a RunEventKey> {
    emitted.iter().filter(|e| query.selects(e)).collect()
}

/// Checks the pages a reader got by paging a run's events through one filter, `limit` a page,
/// each page after the last row of the one before, until a page came back short: each page
/// holds at most `limit` rows, and together they are exactly the emitted events the query
/// selects, in emission order. When `whole` is false (a killed or running run) they may be a
/// prefix of those: the journal may not have written its tail.
pub fn check_filtered_pages(
    emitted: &[RunEventKey],
    whole: bool,
    query: &EventQuery,
    limit: usize,
    pages: &[Vec<RunEventKey>],
) -> Result<(), FilteredMismatch> {
    if let Some((page, p)) = pages.iter().enumerate().find(|(_, p)| p.len() > limit) {
        return Err(FilteredMismatch::PageOverLimit {
            page,
            rows: p.len(),
        });
    }
    let want = selected(emitted, query);
    let seen: Vec<&RunEventKey> = pages.iter().flatten().collect();
    let differs = |position: usize| FilteredMismatch::Differs {
        position,
        expected: want.get(position).map(|e| Box::new((*e).clone())),
        observed: seen.get(position).map(|e| Box::new((*e).clone())),
    };
    if let Some(p) = (0..seen.len().min(want.len())).find(|&i| seen[i] != want[i]) {
        return Err(differs(p));
    }
    if seen.len() > want.len() || (seen.len() < want.len() && whole) {
        return Err(differs(seen.len().min(want.len())));
    }
    Ok(())
}

/// One message a run emitted, as the last-visible read tells the run's answer apart: its kind,
/// its text and the `metadata.caller` it was journaled with (`None`: no caller).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmittedMessage {
    pub kind: MessageKind,
    pub text: String,
    pub caller: Option<Value>,
}

/// The prefix of a middleware's caller (docs/sut-protocol.md, `get_last_visible_ai_seq_by_run`).
const MIDDLEWARE_CALLER_PREFIX: &str = "middleware:";

/// Whether an AI message's `caller` hides it from being its run's answer: only a string that
/// starts with `middleware:`, compared case by case as the contract spells it (`Middleware:x`
/// does not), marks a middleware's own model call (a title, a summary). No caller, a number, an
/// object or any other string leaves the message a candidate answer.
pub fn hidden_by_caller(caller: Option<&Value>) -> bool {
    matches!(caller, Some(Value::String(c)) if c.starts_with(MIDDLEWARE_CALLER_PREFIX))
}

/// The text of the message a reader may show as the run's answer: the last final AI message
/// (`Ai`; a tool-calling turn is not an answer) whose caller is not a middleware's, among the
/// first `stored` messages the run emitted (`messages` in emission order). `None` when there
/// is none.
pub fn last_visible_answer(messages: &[EmittedMessage], stored: usize) -> Option<&str> {
    messages[..stored.min(messages.len())]
        .iter()
        .rev()
        .find(|m| m.kind == MessageKind::Ai && !hidden_by_caller(m.caller.as_ref()))
        .map(|m| m.text.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(event_type: &str, task: Option<&str>, n: u32) -> RunEventKey {
        RunEventKey {
            event_type: event_type.into(),
            task_id: task.map(str::to_string),
            content: json!({ "n": n }),
        }
    }

    fn emitted() -> Vec<RunEventKey> {
        vec![
            ev("run.start", None, 0),
            ev("subagent.start", Some("a"), 1),
            ev("ai_message", None, 2),
            ev("subagent.step", Some("a"), 3),
            ev("subagent.step", Some("b"), 4),
            ev("subagent.end", Some("a"), 5),
        ]
    }

    #[test]
    fn a_task_paged_by_two_is_every_event_of_the_task() {
        let q = EventQuery {
            task_id: Some("a".into()),
            ..EventQuery::default()
        };
        let e = emitted();
        let pages = vec![vec![e[1].clone(), e[3].clone()], vec![e[5].clone()]];
        assert_eq!(check_filtered_pages(&e, true, &q, 2, &pages), Ok(()));
        // Limit first, filter after: the first page of two rows holds one match, paging stops.
        let cut = vec![vec![e[1].clone()]];
        assert!(matches!(
            check_filtered_pages(&e, true, &q, 2, &cut),
            Err(FilteredMismatch::Differs { position: 1, .. })
        ));
        // A killed run may stop anywhere.
        assert_eq!(check_filtered_pages(&e, false, &q, 2, &cut), Ok(()));
        assert!(matches!(
            check_filtered_pages(&e, true, &q, 1, &pages),
            Err(FilteredMismatch::PageOverLimit { page: 0, rows: 2 })
        ));
    }

    #[test]
    fn types_and_tasks_both_apply_and_no_types_select_nothing() {
        let e = emitted();
        let q = EventQuery {
            event_types: Some(vec!["subagent.step".into()]),
            task_id: Some("b".into()),
        };
        assert_eq!(selected(&e, &q), vec![&e[4]]);
        let none = EventQuery {
            event_types: Some(vec![]),
            task_id: None,
        };
        assert!(selected(&e, &none).is_empty());
        let wrong = vec![vec![e[3].clone()]];
        assert!(matches!(
            check_filtered_pages(&e, true, &q, 5, &wrong),
            Err(FilteredMismatch::Differs { position: 0, .. })
        ));
    }

    fn m(kind: MessageKind, text: &str, caller: Option<Value>) -> EmittedMessage {
        EmittedMessage {
            kind,
            text: text.to_string(),
            caller,
        }
    }

    #[test]
    fn the_answer_is_the_last_final_ai_message_of_what_was_stored() {
        let run = vec![
            m(MessageKind::Human, "q", None),
            m(MessageKind::Ai, "a1", None),
            m(MessageKind::Human, "q2", None),
            m(MessageKind::AiToolCall, "call", None),
            m(MessageKind::Tool, "result", None),
        ];
        assert_eq!(last_visible_answer(&run, run.len()), Some("a1"));
        assert_eq!(last_visible_answer(&run, 1), None);
        assert_eq!(last_visible_answer(&run, 99), Some("a1"));
        assert_eq!(last_visible_answer(&run[3..], 2), None);
    }

    #[test]
    fn a_middlewares_answer_is_never_the_runs_and_only_its_exact_prefix_hides() {
        let run = vec![
            m(MessageKind::Human, "q", None),
            m(MessageKind::Ai, "a", Some(json!("lead_agent"))),
            m(MessageKind::Ai, "title", Some(json!("middleware:title"))),
        ];
        // The middleware's message came last; the answer is the lead agent's before it.
        assert_eq!(last_visible_answer(&run, 3), Some("a"));
        // A run whose only AI message is a middleware's has no answer.
        assert_eq!(last_visible_answer(&run[2..], 1), None);
        for visible in [
            json!("Middleware:title"),
            json!("middleware"),
            json!(" middleware:title"),
            json!(7),
            json!({"name": "middleware:title"}),
            json!(["middleware:title"]),
        ] {
            assert!(!hidden_by_caller(Some(&visible)), "{visible}");
            let mut run = run.clone();
            run[2].caller = Some(visible);
            assert_eq!(last_visible_answer(&run, 3), Some("title"));
        }
        assert!(hidden_by_caller(Some(&json!("middleware:"))));
        assert!(!hidden_by_caller(None));
    }
}
