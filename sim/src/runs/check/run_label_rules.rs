//! R31: every message a view shows names the run that produced it. The client maps a rating, a
//! run's deletion and its grouping of a thread's turns by that run id, so a view that labels a
//! message with another run sends them astray even when every message's text and order are right.

use super::context::{short, Context};
use super::truth::Snapshots;
use super::wording::Asked;
use crate::coverage::Coverage;
use crate::outcome::Findings;
use crate::runs::observations::WorldRecord;
use history::runs::content_text;
use history::BugId;
use model::runs::RunTruth;
use serde_json::Value;
use std::collections::BTreeSet;

/// R31: in both views of every read, each message's `run_id` is the run the model says emitted
/// its text. A message the model knows no run of (a summary, a text no run emitted) or that
/// carries no run id is left to R1's rule, which judges what the views show.
pub fn views_name_the_producing_run(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    for (read, history, messages) in cx.record.log.views_reads() {
        let truth = snapshots.before(read.op);
        let tid = cx.thread_id(&read.thread);
        let shown_by_history: Vec<&Value> = match history.primary(cx.primary) {
            Ok(Some(h)) => h.messages.iter().collect(),
            _ => Vec::new(),
        };
        let shown_by_messages: Vec<&Value> = match messages.primary(cx.primary) {
            Ok(views) => views.iter().map(|v| &v.message).collect(),
            Err(_) => Vec::new(),
        };
        let at = Asked::of(cx, read);
        for (view, shown) in [
            ("/history", shown_by_history),
            ("/messages", shown_by_messages),
        ] {
            let Some(wrong) = first_mislabelled(truth, tid, &shown) else {
                continue;
            };
            f.add_at(
                BugId::R31,
                at.on(view).answers(
                    format!("message {}: run {}", wrong.index, wrong.labelled),
                    format!("run {}", wrong.producing),
                ),
                format!(
                    "{at}: {view} of {}: message {} (`{}`) names run {}, but run {} produced it",
                    read.thread,
                    wrong.index,
                    short(&wrong.text),
                    wrong.labelled,
                    wrong.producing
                ),
            );
        }
    }
}

/// The first message of a view labelled with another run than the one that emitted it.
struct Mislabelled {
    index: usize,
    text: String,
    labelled: String,
    producing: String,
}

fn first_mislabelled(truth: &RunTruth, thread_id: &str, shown: &[&Value]) -> Option<Mislabelled> {
    let emitters = truth.emitters(thread_id);
    shown.iter().enumerate().find_map(|(index, message)| {
        let labelled = message.get("run_id").and_then(Value::as_str)?;
        let text = content_text(message.get("content").unwrap_or(&Value::Null));
        let producing = *emitters.get(text.as_str())?;
        (labelled != producing).then(|| Mislabelled {
            index,
            text,
            labelled: labelled.to_string(),
            producing: producing.to_string(),
        })
    })
}

/// `runs.feature.views_of_several_runs`: a views read whose `/messages` answer shows the
/// messages of two runs or more, the reads R31's labels can be wrong in.
pub fn probes(record: &WorldRecord, cov: &mut Coverage) {
    let reads = record.log.views_reads().filter(|(_, _, messages)| {
        [&messages.memory, &messages.sqlite]
            .into_iter()
            .any(|answer| {
                answer.as_ref().is_ok_and(|views| {
                    views
                        .iter()
                        .map(|v| v.run_id.as_str())
                        .collect::<BTreeSet<_>>()
                        .len()
                        > 1
                })
            })
    });
    cov.hit_n("runs.feature.views_of_several_runs", reads.count() as u64);
}
