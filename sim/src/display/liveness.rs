//! P14's liveness: once every fault healed, every replica answers the model's history within
//! the world's bound. Play observes when (or whether) they converged; this rule judges it.

use super::record::WorldRecord;
use crate::outcome::Violation;

/// P14: the replicas did not converge on the model's history once every fault healed.
pub fn replicas_converge(record: &WorldRecord) -> Option<Violation> {
    if record.converged_after_ms.is_some() {
        return None;
    }
    let violation = Violation::liveness(
        history::BugId::P14,
        "after every fault healed, the replicas did not converge on the model's history within the bound",
    );
    // A whole-state rule: no read missed, every replica's answers past the bound did.
    Some(violation.of_whole_state("every replica's answers after the last fault healed"))
}
