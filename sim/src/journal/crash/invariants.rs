//! Pure checks of journal invariants, each naming its catalog ID. They only look at values
//! (bytes, rows, file lists); the journal workload's checker decides when to call them.

use history::journal::{DecodeError, DumpLine, RecordBody, Row, MAX_RECORD_BYTES, MAX_RECORD_ROWS};
use history::BugId;
use std::fmt;

/// A broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub bug_id: BugId,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.bug_id, self.message)
    }
}

fn fail(bug_id: BugId, message: String) -> Result<(), Violation> {
    Err(Violation { bug_id, message })
}

/// J16: every density record holds at most 64 rows, and at most 64 KiB unless it holds one row;
/// over a journal image already dumped (`dump_lines`), which the checker reads several ways.
pub fn density_bounds_of(lines: &[Result<DumpLine, DecodeError>]) -> Result<(), Violation> {
    for line in lines.iter().flatten() {
        let DumpLine::Record {
            offset,
            frame_bytes,
            record,
        } = line
        else {
            continue;
        };
        let RecordBody::DensityMutation {
            removed,
            replacements,
        } = &record.body
        else {
            continue;
        };
        let rows = removed.len() + replacements.len();
        let payload = frame_bytes.saturating_sub(12) as usize;
        if rows > MAX_RECORD_ROWS || (payload > MAX_RECORD_BYTES && rows > 1) {
            return fail(
                BugId::J16,
                format!("density record at offset {offset} holds {rows} rows in {payload} bytes"),
            );
        }
    }
    Ok(())
}

/// J8: the shared history holds the true rows, each under its own origin (after any rollback).
pub fn check_origins(truth: &[Row], shown: &[Row]) -> Result<(), Violation> {
    if truth == shown {
        return Ok(());
    }
    let same_text = truth.len() == shown.len()
        && truth
            .iter()
            .zip(shown)
            .all(|(a, b)| a.blocks == b.blocks && a.speaker == b.speaker);
    let what = if same_text {
        "the right rows under the wrong origins"
    } else {
        "rows that are not the history's"
    };
    fail(
        BugId::J8,
        format!(
            "the shared history holds {what} ({} rows, {} expected)",
            shown.len(),
            truth.len()
        ),
    )
}

/// J18: no scratch of a dead process survives the next start.
pub fn check_swept(dead_owners: &[String], scratch: &[String]) -> Result<(), Violation> {
    let left: Vec<&String> = scratch
        .iter()
        .filter(|f| {
            dead_owners
                .iter()
                .any(|o| f.starts_with(&format!("scratch/{o}/")))
        })
        .collect();
    if !left.is_empty() {
        return fail(
            BugId::J18,
            format!(
                "scratch of dead processes survived a start: {}",
                left.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::journal::{Origin, Speaker};

    #[test]
    fn the_scratch_of_a_dead_process_is_j18_and_a_prefix_is_not_an_owner() {
        assert_eq!(
            check_swept(&["p0".into()], &["scratch/p0/x".into()]).map_err(|v| v.bug_id),
            Err(BugId::J18)
        );
        assert!(check_swept(&["p0".into()], &["scratch/p01/x".into()]).is_ok());
    }

    #[test]
    fn rows_under_the_wrong_origin_are_j8() {
        let row = |o: Origin| Row::text(Speaker::Ai, o, "x");
        let truth = [row(Origin::Main)];
        assert!(check_origins(&truth, &truth).is_ok());
        let v = check_origins(&truth, &[row(Origin::Subagent("a".into()))]).expect_err("moved");
        assert_eq!(v.bug_id, BugId::J8);
        assert!(v.message.contains("wrong origins"), "{}", v.message);
    }
}
