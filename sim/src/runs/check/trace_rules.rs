//! R30: what a run journal with a trace bound stores of a trace longer than the bound.
//!
//! Read from what each run handed its journal ([`crate::runs::observations::ObservationLog::emitted`]) and the
//! rows the store accepted, against [`model::runs::kept_trace`]. Only traces over the bound are
//! judged here; whether every event was stored at all, and in order, is R4's.

use super::context::Context;
use crate::divergence::TraceMark;
use crate::outcome::{Findings, Pointer};
use crate::runs::record::{EmittedEvent, Written};
use history::runs::{Category, RunEvent};
use history::BugId;
use serde_json::Value;
use std::collections::BTreeMap;

/// R30: a trace whose content's text is over the journals' bound is stored as the model keeps
/// it: a string of the text's longest prefix of whole characters within the bound (no
/// character split, none replaced), its metadata marked `content_truncated` with the
/// `original_byte_length`. One finding a run, at its first such trace.
pub fn long_traces_are_cut_at_whole_characters(cx: &Context<'_>, f: &mut Findings) {
    let Some(max) = cx.scenario.max_trace_content_bytes else {
        return;
    };
    let stored = stored_by_run(cx.record.log.written());
    for (r, spec) in cx.scenario.runs.iter().enumerate() {
        let emitted = cx.record.log.emitted_by(r);
        let rows = stored.get(spec.id.as_str()).map_or(&[][..], Vec::as_slice);
        let Some((e, row, kept)) = first_wrong_cut(emitted, rows, max) else {
            continue;
        };
        f.add_at(
            BugId::R30,
            Pointer::lines(vec![TraceMark::any_time(format!(" {} n=", spec.id))]),
            format!(
                "{}: its `{}` trace of {} bytes was stored ending {:?} ({} bytes, metadata {}); \
                 a bound of {max} bytes keeps it ending {:?} ({} bytes), marked \
                 `content_truncated`",
                spec.id,
                e.event_type,
                text_of(&e.content).len(),
                tail(&text_of(&row.content)),
                text_of(&row.content).len(),
                row.metadata,
                tail(&text_of(&kept)),
                text_of(&kept).len(),
            ),
        );
    }
}

/// The rows each run's journal wrote, in write order (a receipt is the client's write, not one
/// the run emitted).
fn stored_by_run(written: &[Written]) -> BTreeMap<&str, Vec<&RunEvent>> {
    let mut by_run: BTreeMap<&str, Vec<&RunEvent>> = BTreeMap::new();
    for w in written {
        if w.event.event_type != history::runs::current::RUN_DELIVERY {
            by_run.entry(&w.event.run_id).or_default().push(&w.event);
        }
    }
    by_run
}

/// The first trace over `max` bytes stored otherwise than the model keeps it, with the content
/// the model keeps. Emitted events and rows are paired in order while they are the same event
/// (type and time); past the first pair that is not, the run's rows are R4's to judge.
fn first_wrong_cut<'a>(
    emitted: &'a [EmittedEvent],
    rows: &[&'a RunEvent],
    max: usize,
) -> Option<(&'a EmittedEvent, &'a RunEvent, Value)> {
    for (e, row) in emitted.iter().zip(rows.iter().copied()) {
        if e.event_type != row.event_type || e.created_at_ns != row.created_at_ns {
            return None;
        }
        if e.category != Category::Trace || text_of(&e.content).len() <= max {
            continue;
        }
        let (content, metadata) = model::runs::kept_trace(&e.content, &e.metadata, Some(max));
        if content != *row.content || metadata != row.metadata {
            return Some((e, row, content));
        }
    }
    None
}

/// A content's text as the bound measures it: a string's own characters, any other value's
/// compact JSON.
fn text_of(content: &Value) -> String {
    content
        .as_str()
        .map_or_else(|| content.to_string(), str::to_owned)
}

/// The last characters of a cut text, where a wrong cut shows.
fn tail(text: &str) -> String {
    const CHARS: usize = 12;
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(CHARS)).collect()
}
