//! What a journal world's page shows beside its trace: at each crash, every file's bytes as a
//! strip (synced, unsynced and kept, torn, lost), and at each restart the history the reopened
//! journal showed beside the model's last durable history.

use super::record::{CorruptedRestart, Happened, SessionRecord};
use super::world::WorldRecord;
use crate::picture::{journal_strip, Facts, Recovered};
use history::journal::{Block, Row};
use std::collections::BTreeMap;

/// The model's rows at a restart: (session, index in its `happened`) -> rows.
pub type ModelsAtRestarts = BTreeMap<(usize, usize), Vec<Row>>;

/// The facts of a played journal world, in time order.
pub fn facts(record: &WorldRecord, models: &ModelsAtRestarts) -> Facts {
    let mut facts = Facts::default();
    for (s, session) in record.sessions.iter().enumerate() {
        session_facts(s, session, models, &mut facts);
    }
    facts.strips.sort_by_key(|x| x.after_events);
    facts.recovered.sort_by_key(|x| x.after_events);
    facts
}

fn session_facts(s: usize, session: &SessionRecord, models: &ModelsAtRestarts, facts: &mut Facts) {
    let lane = format!("s{s}");
    for (i, h) in session.happened.iter().enumerate() {
        let (at_us, events) = session.happened_at.get(i).copied().unwrap_or_default();
        let after_events = Some(events);
        match h {
            Happened::Crash {
                image,
                synced,
                written,
                ..
            } => {
                // A journal's bytes: scratch files hold no records.
                let journals = written
                    .iter()
                    .filter(|(f, &n)| n > 0 && f.ends_with(".journal"));
                for (file, &length) in journals {
                    let kept = image.get(file).map_or(&[][..], Vec::as_slice);
                    let synced = synced.get(file).copied().unwrap_or(0);
                    let mut strip = journal_strip(at_us, &lane, file, kept, synced, length);
                    strip.after_events = after_events;
                    facts.strips.push(strip);
                }
            }
            Happened::Restart { solo, .. } => facts.recovered.push(Recovered {
                at_us,
                after_events,
                lane: lane.clone(),
                label: format!("{} reopened after the crash", solo.journal),
                recovered: shown(solo.shown.as_ref().map_err(Clone::clone)),
                model_label: "the model's last durable history".to_string(),
                model: models
                    .get(&(s, i))
                    .map_or_else(Vec::new, |rows| rows.iter().map(row_line).collect()),
            }),
            Happened::Corrupted { restart, .. } => {
                let mut r = corrupted(at_us, &lane, restart);
                r.after_events = after_events;
                facts.recovered.push(r);
            }
            _ => {}
        }
    }
}

/// A restart that met a silent corruption: the model wants an error naming its record.
fn corrupted(at_us: u64, lane: &str, r: &CorruptedRestart) -> Recovered {
    let recovered = match &r.shown {
        Ok(rows) => rows.iter().map(row_line).collect(),
        Err((e, offset)) => vec![format!("error at {offset:?}: {e}")],
    };
    Recovered {
        at_us,
        after_events: None,
        lane: lane.to_string(),
        label: format!(
            "{} reopened over a {} in its {} record",
            r.injected.file,
            r.injected.corruption.kind(),
            r.injected.record_kind
        ),
        recovered,
        model_label: "the model: an error naming the damaged record".to_string(),
        model: vec![format!("error at Some({})", r.injected.frame_start)],
    }
}

fn shown(rows: Result<&Vec<Row>, String>) -> Vec<String> {
    match rows {
        Ok(rows) => rows.iter().map(row_line).collect(),
        Err(e) => vec![format!("error: {e}")],
    }
}

/// A row as one line: its speaker and its first block.
fn row_line(row: &Row) -> String {
    let first = row.blocks.first().map_or(String::new(), |b| match b {
        Block::Text { text } => text.clone(),
        Block::ToolCall { id, name, .. } => format!("call {id} {name}"),
        Block::ToolResult { call_id, .. } => format!("result of {call_id}"),
    });
    format!("{:<6} {first}", format!("{:?}", row.speaker))
}
