//! The per-thread checks of `histsim runs inspect`, on what [`super::read`] read.

use super::{EventRow, FeedbackRow, Input};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The limit of the read seed 003's plan used for the whole history: `list_messages` returns
/// the latest `limit` messages, so a longer thread loses its oldest ones.
pub const LATEST_READ_LIMIT: usize = 1000;

/// Event types that end a run: DeerFlow 0.1.7's `RunJournal` writes `run.end` and `run.error`;
/// the seed-era names (histsim's own store) are `run_end` and `run_error`.
pub const END_EVENT_TYPES: [&str; 4] = ["run.end", "run.error", "run_end", "run_error"];

/// How many items of a list a finding names before it says how many more there are.
const LISTED_MAX: usize = 8;

#[derive(Debug, Serialize)]
pub struct Finding {
    /// `seq_duplicate`, `seq_gap`, `out_of_order`, `hidden_by_latest_read`, `run_without_end`,
    /// `feedback_unknown_run`, `feedback_wrong_run`.
    pub kind: &'static str,
    pub text: String,
}

#[derive(Debug, Serialize)]
pub struct ThreadReport {
    pub thread_id: String,
    pub events: usize,
    pub messages: usize,
    pub runs: usize,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub kind: &'static str,
    pub events: usize,
    pub feedback_rows: usize,
    pub threads: Vec<ThreadReport>,
    /// Rows or lines that could not be read, each naming where it is.
    pub unreadable: Vec<String>,
}

impl Report {
    pub fn findings(&self) -> usize {
        self.threads.iter().map(|t| t.findings.len()).sum::<usize>() + self.unreadable.len()
    }
}

/// Checks every thread of `input`, in thread order.
pub fn check(input: &Input) -> Report {
    let mut events: BTreeMap<&str, Vec<&EventRow>> = BTreeMap::new();
    for e in &input.events {
        events.entry(e.thread_id.as_str()).or_default().push(e);
    }
    let mut feedback: BTreeMap<&str, Vec<&FeedbackRow>> = BTreeMap::new();
    for f in &input.feedback {
        events.entry(f.thread_id.as_str()).or_default();
        feedback.entry(f.thread_id.as_str()).or_default().push(f);
    }
    let threads = events
        .into_iter()
        .map(|(thread_id, rows)| {
            let feedback = feedback.get(thread_id).map(Vec::as_slice).unwrap_or(&[]);
            thread_report(thread_id, &rows, feedback)
        })
        .collect();
    Report {
        kind: input.kind,
        events: input.events.len(),
        feedback_rows: input.feedback.len(),
        threads,
        unreadable: input.unreadable.clone(),
    }
}

fn thread_report(thread_id: &str, rows: &[&EventRow], feedback: &[&FeedbackRow]) -> ThreadReport {
    let mut findings = Vec::new();
    seq_findings(rows, &mut findings);
    order_findings(rows, &mut findings);
    hidden_findings(rows, &mut findings);
    let runs = end_findings(rows, &mut findings);
    feedback_findings(rows, feedback, &runs, &mut findings);
    ThreadReport {
        thread_id: thread_id.to_string(),
        events: rows.len(),
        messages: rows.iter().filter(|e| e.category == "message").count(),
        runs: runs.len(),
        findings,
    }
}

/// `items`, at most [`LISTED_MAX`] of them, then how many more.
fn listed(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(LISTED_MAX)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED_MAX {
        text.push_str(&format!(" and {} more", items.len() - LISTED_MAX));
    }
    text
}

/// Seqs given twice, and seqs missing between 1 and the highest.
fn seq_findings(rows: &[&EventRow], findings: &mut Vec<Finding>) {
    let mut by_seq: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
    for e in rows {
        by_seq.entry(e.seq).or_default().push(&e.origin);
    }
    let duplicates: Vec<String> = by_seq
        .iter()
        .filter(|(_, origins)| origins.len() > 1)
        .map(|(seq, origins)| format!("seq {seq} ({})", origins.join(", ")))
        .collect();
    if !duplicates.is_empty() {
        findings.push(Finding {
            kind: "seq_duplicate",
            text: format!(
                "{} seqs given to more than one event: {}",
                duplicates.len(),
                listed(&duplicates)
            ),
        });
    }
    let mut gaps = Vec::new();
    let mut expected = 1;
    for &seq in by_seq.keys() {
        if seq > expected {
            gaps.push(if seq - 1 == expected {
                format!("{expected}")
            } else {
                format!("{expected}..={}", seq - 1)
            });
        }
        expected = expected.max(seq + 1);
    }
    if !gaps.is_empty() {
        findings.push(Finding {
            kind: "seq_gap",
            text: format!(
                "seqs missing below the highest ({}): {} (lost events, or a deleted run)",
                by_seq.keys().last().copied().unwrap_or(0),
                listed(&gaps)
            ),
        });
    }
}

/// Rows written after a row of a higher seq of the same stream (the table, or one file).
fn order_findings(rows: &[&EventRow], findings: &mut Vec<Finding>) {
    let mut streams: BTreeMap<&str, Vec<&EventRow>> = BTreeMap::new();
    for e in rows {
        streams.entry(e.stream.as_str()).or_default().push(e);
    }
    let mut late = Vec::new();
    for (_, mut stream) in streams {
        stream.sort_by_key(|e| e.written);
        let mut highest: Option<(i64, &str)> = None;
        for e in stream {
            match highest {
                Some((seq, origin)) if e.seq < seq => {
                    late.push(format!(
                        "{} (seq {}) after {origin} (seq {seq})",
                        e.origin, e.seq
                    ));
                }
                _ => highest = Some((e.seq, &e.origin)),
            }
        }
    }
    if !late.is_empty() {
        findings.push(Finding {
            kind: "out_of_order",
            text: format!(
                "{} rows written after a higher seq: {}",
                late.len(),
                listed(&late)
            ),
        });
    }
}

/// Messages older than the latest [`LATEST_READ_LIMIT`].
fn hidden_findings(rows: &[&EventRow], findings: &mut Vec<Finding>) {
    let mut messages: Vec<i64> = rows
        .iter()
        .filter(|e| e.category == "message")
        .map(|e| e.seq)
        .collect();
    if messages.len() <= LATEST_READ_LIMIT {
        return;
    }
    messages.sort_unstable();
    let hidden = &messages[..messages.len() - LATEST_READ_LIMIT];
    findings.push(Finding {
        kind: "hidden_by_latest_read",
        text: format!(
            "{} messages; a latest-{LATEST_READ_LIMIT} read (list_messages with limit \
             {LATEST_READ_LIMIT}, no cursor) hides the oldest {}: seq {}..={} (page with before_seq)",
            messages.len(),
            hidden.len(),
            hidden[0],
            hidden[hidden.len() - 1]
        ),
    });
}

/// Runs with no end event; returns every run of the thread.
fn end_findings<'a>(rows: &[&'a EventRow], findings: &mut Vec<Finding>) -> BTreeSet<&'a str> {
    let mut runs: BTreeMap<&str, (i64, bool)> = BTreeMap::new();
    for e in rows {
        let run = runs.entry(e.run_id.as_str()).or_insert((e.seq, false));
        run.0 = run.0.min(e.seq);
        run.1 |= END_EVENT_TYPES.contains(&e.event_type.as_str());
    }
    let mut open: Vec<(i64, &str)> = runs
        .iter()
        .filter(|(_, (_, ended))| !ended)
        .map(|(run, (first, _))| (*first, *run))
        .collect();
    open.sort_unstable();
    if !open.is_empty() {
        let named: Vec<String> = open
            .iter()
            .map(|(first, run)| format!("{run} (from seq {first})"))
            .collect();
        findings.push(Finding {
            kind: "run_without_end",
            text: format!(
                "{} runs with no {} event (killed before their journal flushed, or still running): {}",
                open.len(),
                END_EVENT_TYPES.join("/"),
                listed(&named)
            ),
        });
    }
    runs.into_keys().collect()
}

/// The id a message event carries: its serialized message's `id`, or its metadata's
/// `message_id`.
fn message_id_of(e: &EventRow) -> Option<String> {
    let from_content = serde_json::from_str::<serde_json::Value>(&e.content)
        .ok()
        .and_then(|v| v.get("id").and_then(|id| id.as_str()).map(str::to_string));
    from_content.or_else(|| {
        e.metadata
            .as_ref()
            .and_then(|m| m.get("message_id"))
            .and_then(|id| id.as_str())
            .map(str::to_string)
    })
}

/// Feedback on a run the thread does not have, or on a message of another run.
fn feedback_findings(
    rows: &[&EventRow],
    feedback: &[&FeedbackRow],
    runs: &BTreeSet<&str>,
    findings: &mut Vec<Finding>,
) {
    let run_of_message: BTreeMap<String, &str> = rows
        .iter()
        .filter(|e| e.category == "message")
        .filter_map(|e| message_id_of(e).map(|id| (id, e.run_id.as_str())))
        .collect();
    for f in feedback {
        if !runs.contains(f.run_id.as_str()) {
            findings.push(Finding {
                kind: "feedback_unknown_run",
                text: format!(
                    "{} (feedback {}) names run {}, which has no event in this thread",
                    f.origin, f.feedback_id, f.run_id
                ),
            });
            continue;
        }
        let message_run = f.message_id.as_ref().and_then(|m| run_of_message.get(m));
        if let Some(&run) = message_run.filter(|&&run| run != f.run_id) {
            findings.push(Finding {
                kind: "feedback_wrong_run",
                text: format!(
                    "{} (feedback {}) names run {} but its message {} belongs to run {run}",
                    f.origin,
                    f.feedback_id,
                    f.run_id,
                    f.message_id.as_deref().unwrap_or_default()
                ),
            });
        }
    }
}
