//! What a runs world's page shows beside its trace: every full read of a thread (both views,
//! paging) with the model's history as of the read, judged as the read rules judge it.

use super::context::{of_rendered, of_row};
use super::truth::Snapshots;
use crate::picture::{Facts, ReadBox};
use crate::runs::observations::WorldRecord;
use crate::runs::record::ReadKind;
use crate::runs::RunsScenario;
use crate::workload::StoreKind;
use model::runs::{ExpectedMessage, RunTruth};

/// The facts of a played runs world: its `/history` and paging reads.
pub fn facts(scenario: &RunsScenario, record: &WorldRecord, primary: StoreKind) -> Facts {
    let mut snapshots = Snapshots::new(scenario, record.log.truth());
    let mut reads = Vec::new();
    for read in record.log.reads() {
        let (label, observed) = match &read.kind {
            ReadKind::Views { history, .. } => {
                let observed = history.primary(primary).as_ref().map(|h| {
                    h.as_ref()
                        .map_or_else(Vec::new, |h| h.messages.iter().map(of_rendered).collect())
                });
                (format!("/history of {}", read.thread), observed)
            }
            ReadKind::Paginate {
                limit,
                backward,
                rows,
                ..
            } => {
                let observed = rows
                    .primary(primary)
                    .as_ref()
                    .map(|rows| rows.iter().map(of_row).collect::<Vec<_>>());
                let how = if *backward { "backward" } else { "forward" };
                (
                    format!("paging {} by {limit} ({how})", read.thread),
                    observed,
                )
            }
            _ => continue,
        };
        let Some(tid) = scenario.threads.get(&read.thread) else {
            continue;
        };
        let truth = snapshots.before(read.op);
        reads.push(read_box(read.at_us, label, observed, truth, tid));
    }
    Facts {
        reads,
        ..Facts::default()
    }
}

fn read_box(
    at_us: u64,
    label: String,
    observed: Result<Vec<ExpectedMessage>, &String>,
    truth: &RunTruth,
    tid: &str,
) -> ReadBox {
    let expected = truth.expected_history(tid).iter().map(line).collect();
    let (answer, departs) = match observed {
        Ok(o) => (
            o.iter().map(line).collect(),
            truth.check_history(tid, &o).is_err(),
        ),
        Err(e) => (vec![format!("error {e}")], true),
    };
    ReadBox {
        at_us,
        lane: "client".to_string(),
        label,
        answer,
        expected_label: "the model's history as of the read".to_string(),
        expected,
        departs,
    }
}

fn line(m: &ExpectedMessage) -> String {
    format!(
        "{:<10} {:<10} {}",
        format!("{:?}", m.kind),
        m.run_id,
        m.text
    )
}
