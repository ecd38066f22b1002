//! What the run journal records of a run beside its messages' order: the user's turns as the
//! user sent them (R25), and one lifecycle, its root invocation's (R26).
//!
//! Read from the script (what the user sent; [`crate::runs::script::expand`]) and the rows the store
//! accepted, never from the model calls the journal was handed.

use super::context::{short, Context};
use crate::divergence::TraceMark;
use crate::outcome::{Findings, Pointer};
use crate::runs::record::TruthEvent;
use crate::runs::script::emitted_count;
use history::runs::{
    content_text, MessageKind, RunEvent, HUMAN_MESSAGE, RUN_END, RUN_ERROR, RUN_START,
};
use history::BugId;
use model::runs::RunOutcome;
use serde_json::Value;
use std::collections::BTreeMap;

/// R25: the human messages stored for a run are the turns its user sent, in order, as sent: a
/// prefix of them (a killed run, or a lost buffer, R4, stores fewer), never a hidden message, a
/// middleware's prompt or the model's rewritten copy.
pub fn inputs_are_the_users(cx: &Context<'_>, f: &mut Findings) {
    let mut stored: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for w in cx.record.log.written() {
        if w.event.event_type == HUMAN_MESSAGE {
            stored
                .entry(&w.event.run_id)
                .or_default()
                .push(&w.event.content);
        }
    }
    for (i, spec) in cx.scenario.runs.iter().enumerate() {
        let emissions = cx.scripts.run(i);
        let sent: Vec<Value> = emissions[..emitted_count(spec, emissions.len())]
            .iter()
            .filter(|e| e.message.kind == MessageKind::Human)
            .map(|e| e.message.to_content())
            .collect();
        let humans = stored.get(spec.id.as_str()).map_or(&[][..], Vec::as_slice);
        let Some((i, wrong)) = humans
            .iter()
            .enumerate()
            .find(|&(i, v)| sent.get(i) != Some(*v))
        else {
            continue;
        };
        let text = |v: &Value| short(&content_text(v.get("content").unwrap_or(&Value::Null)));
        let expected = sent
            .get(i)
            .map_or("nothing more".to_string(), |v| format!("`{}`", text(v)));
        f.add_at(
            BugId::R25,
            Pointer::lines(vec![TraceMark::any_time(format!(" {} n=", spec.id))]),
            format!(
                "{}: its user turn {i} was recorded as `{}`; the user sent {expected}",
                spec.id,
                text(wrong)
            ),
        );
    }
}

/// R26: a run's stored lifecycle is its root invocation's: at most one `run_start`, first, and
/// at most one end (`run_end` for a run that ended, `run_error` for one that errored, none for a
/// cancelled or killed one), after which nothing of the run is stored. Fewer is a lost buffer's
/// (R4), never more.
pub fn lifecycle_is_the_roots(cx: &Context<'_>, f: &mut Findings) {
    let mut stored: BTreeMap<&str, Vec<&RunEvent>> = BTreeMap::new();
    for w in cx.record.log.written() {
        // A receipt is the client's write (`put_if_absent`), not one the run emitted.
        if w.event.event_type != history::runs::current::RUN_DELIVERY {
            stored.entry(&w.event.run_id).or_default().push(&w.event);
        }
    }
    let outcomes = outcomes(cx);
    for (r, spec) in cx.scenario.runs.iter().enumerate() {
        let events = stored.get(spec.id.as_str()).map_or(&[][..], Vec::as_slice);
        let allowed_end = match outcomes.get(&r) {
            Some(RunOutcome::Ended) => Some(RUN_END),
            Some(RunOutcome::Errored) => Some(RUN_ERROR),
            _ => None,
        };
        if let Some(problem) = lifecycle_problem(events, allowed_end) {
            f.add_at(
                BugId::R26,
                Pointer::lines(vec![TraceMark::any_time(format!(" {} n=", spec.id))]),
                format!("{}: {problem}", spec.id),
            );
        }
    }
}

/// How each run stopped, by the world's ground truth.
fn outcomes(cx: &Context<'_>) -> BTreeMap<usize, RunOutcome> {
    cx.record
        .log
        .truth()
        .iter()
        .filter_map(|(_, run, event)| match event {
            TruthEvent::Stop(outcome) => Some((*run, *outcome)),
            _ => None,
        })
        .collect()
}

/// What is wrong with one run's stored events' lifecycle, if anything.
fn lifecycle_problem(events: &[&RunEvent], allowed_end: Option<&str>) -> Option<String> {
    let is_end = |e: &RunEvent| e.event_type == RUN_END || e.event_type == RUN_ERROR;
    let starts = events.iter().filter(|e| e.event_type == RUN_START).count();
    if starts > 1 || events.iter().skip(1).any(|e| e.event_type == RUN_START) {
        return Some(format!(
            "{starts} `{RUN_START}` events stored, or one after other events"
        ));
    }
    let ends: Vec<&str> = events
        .iter()
        .filter(|e| is_end(e))
        .map(|e| e.event_type.as_str())
        .collect();
    if ends.len() > 1 {
        return Some(format!(
            "{} end events stored: {}",
            ends.len(),
            ends.join(", ")
        ));
    }
    if let Some(at) = events.iter().position(|e| is_end(e)) {
        if at + 1 < events.len() {
            return Some(format!(
                "`{}` stored at event {at}, before {} more of the run's events",
                events[at].event_type,
                events.len() - at - 1
            ));
        }
        if Some(events[at].event_type.as_str()) != allowed_end {
            return Some(format!(
                "`{}` stored for a run whose root {}",
                events[at].event_type,
                allowed_end.map_or("wrote no end".to_string(), |e| format!("ended with `{e}`"))
            ));
        }
    }
    None
}
