//! How a mutation's outcome is judged against the model, the same for the session's recording
//! (J10) and the shared history (J8): written only when the model takes it and it changes
//! something, skipped only when it changes nothing, failed only under an injected fault.

use super::record::Outcome;
use super::step::Step;
use crate::outcome::Findings;
use history::journal::Row;
use history::BugId;
use model::journal::{ModelError, ModelHistory};

/// J10 (J8: `id`): the model's history after a mutation (`at`) the session wrote: what the model
/// made of it (`applied`; `None`: it changes nothing), or `None` and a finding when the model
/// refuses it or it changes nothing.
pub fn model_after_write(
    id: BugId,
    at: &Step,
    applied: Option<Result<ModelHistory<Row>, ModelError>>,
    found: &mut Findings,
) -> Option<ModelHistory<Row>> {
    match applied {
        Some(Ok(next)) => Some(next),
        Some(Err(e)) => {
            found.unexplained_at(
                id,
                at.answers("written", format!("refused: {e}")),
                format!("{at}: the model refuses the mutation: {e}"),
            );
            None
        }
        None => {
            found.unexplained_at(
                id,
                at.answers("written", "skipped: it changes nothing"),
                format!("{at}: the session wrote a mutation that changes nothing"),
            );
            None
        }
    }
}

/// J10 (J8: `id`): a mutation (`at`) the session did not write (`outcome`) is skipped only when
/// it changes nothing (`changes`: the model says it does), and fails only under an injected
/// fault (`fault`).
pub fn judge_unwritten(
    id: BugId,
    at: &Step,
    outcome: &Outcome,
    changes: bool,
    fault: bool,
    found: &mut Findings,
) {
    match outcome {
        Outcome::Skipped if changes => found.unexplained_at(
            id,
            at.answers("skipped", "written: it changes the history"),
            format!("{at}: the session skipped a mutation that changes the history"),
        ),
        Outcome::Failed(e) if !fault => found.unexplained_at(
            id,
            at.answers(format!("error {e}"), "written: no fault was injected"),
            format!("{at}: failed with no fault injected: {e}"),
        ),
        Outcome::Written { .. } | Outcome::Skipped | Outcome::Failed(_) => {}
    }
}
