//! What the run journal records of a run beside its messages' order: the user's turns as the
//! user sent them (R25).
//!
//! Read from the script (what the user sent; [`super::script::expand`]) and the rows the store
//! accepted, never from the model calls the journal was handed.

use super::context::{short, Context};
use super::script::{emitted_count, expand};
use crate::divergence::TraceMark;
use crate::outcome::{Findings, Pointer};
use history::runs::{content_text, MessageKind, HUMAN_MESSAGE};
use history::BugId;
use serde_json::Value;
use std::collections::BTreeMap;

/// R25: the human messages stored for a run are the turns its user sent, in order, as sent: a
/// prefix of them (a killed run, or a lost buffer, R4, stores fewer), never a hidden message, a
/// middleware's prompt or the model's rewritten copy.
pub fn inputs_are_the_users(cx: &Context<'_>, f: &mut Findings) {
    let mut stored: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for w in &cx.record.written {
        if w.event.event_type == HUMAN_MESSAGE {
            stored
                .entry(&w.event.run_id)
                .or_default()
                .push(&w.event.content);
        }
    }
    for spec in &cx.scenario.runs {
        let emissions = expand(spec);
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
