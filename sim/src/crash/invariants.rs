//! Pure checks of the journal invariants, each naming its catalog ID. They only look at values
//! (bytes, rows, counters, reports); the probes and the explorer decide when to call them.

use history::journal::{
    dump_records, DisposeError, DisposeReport, Journal, JournalOptions, MemStorage, Origin, Row,
    Statistics, TruncationPlan, WriteReceipt, MAX_RECORD_BYTES, MAX_RECORD_ROWS,
};
use history::BugId;
use std::fmt;
use std::sync::Arc;

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

/// J3: between a `replace_begin` and its terminator stand only that transaction's rows.
pub fn check_replacements_uninterleaved(journal_bytes: &[u8]) -> Result<(), Violation> {
    let mut open: Option<u64> = None;
    for v in dump_records(journal_bytes).flatten() {
        let Some(kind) = v["kind"].as_str() else {
            continue;
        };
        let txn = v["txn"].as_u64();
        match (kind, open) {
            ("replace_begin", _) => open = txn,
            ("replace_rows", Some(o)) if txn == Some(o) => {}
            ("replace_commit" | "replace_abort", Some(o)) if txn == Some(o) => open = None,
            (_, Some(o)) => {
                return fail(
                    BugId::J3,
                    format!(
                        "a {kind} record (seq {}) landed inside replacement {o}",
                        v["seq"]
                    ),
                )
            }
            _ => {}
        }
    }
    Ok(())
}

/// J15: a suffix cut, a clear and a compression each write one record.
pub fn check_single_record_shape(kind: &str, receipt: &WriteReceipt) -> Result<(), Violation> {
    let single = matches!(kind, "suffix_cut" | "clear" | "compression");
    if single && receipt.records != 1 {
        return fail(
            BugId::J15,
            format!("a {kind} wrote {} records; it must be one", receipt.records),
        );
    }
    Ok(())
}

/// J16: every density record holds at most 64 rows, and at most 64 KiB unless it holds one row.
pub fn check_density_bounds(journal_bytes: &[u8]) -> Result<(), Violation> {
    for v in dump_records(journal_bytes).flatten() {
        if v["kind"] != "density_mutation" {
            continue;
        }
        let rows = v["removed"].as_array().map_or(0, Vec::len)
            + v["replacements"].as_array().map_or(0, Vec::len);
        let payload = v["frame_bytes"].as_u64().unwrap_or(0).saturating_sub(12) as usize;
        if rows > MAX_RECORD_ROWS || (payload > MAX_RECORD_BYTES && rows > 1) {
            return fail(
                BugId::J16,
                format!(
                    "density record at offset {} holds {rows} rows in {payload} bytes",
                    v["offset"]
                ),
            );
        }
    }
    Ok(())
}

/// J7: a mirror holds exactly the shared history's rows of its origin.
pub fn check_mirror_rows(origin: &Origin, truth: &[Row], mirror: &[Row]) -> Result<(), Violation> {
    let want: Vec<&Row> = truth.iter().filter(|r| r.origin == *origin).collect();
    let got: Vec<&Row> = mirror.iter().collect();
    if got != want {
        return fail(
            BugId::J7,
            format!(
                "mirror {origin:?} holds {} rows, the history has {} rows of that origin",
                got.len(),
                want.len()
            ),
        );
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

/// J9: what a crash now leaves of a mirror (its durable bytes) holds every resolved mutation.
pub fn check_mirror_durable(
    origin: &Origin,
    truth: &[Row],
    durable_bytes: &[u8],
    opts: &JournalOptions,
) -> Result<(), Violation> {
    let storage = Arc::new(MemStorage::with_file("mirror", durable_bytes));
    let held = match Journal::open(storage, "mirror", opts.clone()) {
        Ok(j) => j.rows(),
        Err(e) => {
            return fail(
                BugId::J9,
                format!("mirror {origin:?} does not reopen from its durable bytes: {e}"),
            )
        }
    };
    let want: Vec<Row> = truth
        .iter()
        .filter(|r| r.origin == *origin)
        .cloned()
        .collect();
    if held != want {
        return fail(
            BugId::J9,
            format!(
                "a mutation resolved but mirror {origin:?} durably holds {} rows, not {}",
                held.len(),
                want.len()
            ),
        );
    }
    Ok(())
}

/// J11: an incremental read costs at most what was appended since the previous read.
pub fn check_read_cost(bytes_read: u64, appended_since: u64) -> Result<(), Violation> {
    if bytes_read > appended_since {
        return fail(
            BugId::J11,
            format!("a read touched {bytes_read} bytes; {appended_since} were appended since"),
        );
    }
    Ok(())
}

/// J11: the incremental reader agrees with the writer.
pub fn check_read_agrees(read: Statistics, writer: Statistics) -> Result<(), Violation> {
    if read != writer {
        return fail(
            BugId::J11,
            format!("incremental statistics {read:?} differ from the writer's {writer:?}"),
        );
    }
    Ok(())
}

/// J12: a mutation by the journal's only writer reads nothing back from the journal.
pub fn check_mutation_read_cost(bytes_read: u64, journal_bytes: u64) -> Result<(), Violation> {
    if bytes_read > 0 {
        return fail(
            BugId::J12,
            format!("a mutation read {bytes_read} bytes back from a {journal_bytes}-byte journal"),
        );
    }
    Ok(())
}

/// J13: last-resort truncation looks at each row once.
pub fn check_truncation_pass(plan: &TruncationPlan, rows: usize) -> Result<(), Violation> {
    if plan.rows_visited > rows as u64 {
        return fail(
            BugId::J13,
            format!(
                "deciding {} replacements visited {} rows of {rows}",
                plan.replacements.len(),
                plan.rows_visited
            ),
        );
    }
    Ok(())
}

/// J17: interleaved counts equal the counts of each text alone.
pub fn check_token_counts(interleaved: &[u64], alone: &[u64]) -> Result<(), Violation> {
    if interleaved != alone {
        return fail(
            BugId::J17,
            format!("interleaved counters counted {interleaved:?}; alone {alone:?}"),
        );
    }
    Ok(())
}

/// J18: disposal reports a failure when one happened, and leaves no scratch when it succeeds.
pub fn check_dispose(
    result: &Result<DisposeReport, DisposeError>,
    fault_injected: bool,
    scratch_left: &[String],
) -> Result<(), Violation> {
    match result {
        Ok(_) if fault_injected => fail(
            BugId::J18,
            "disposal met a failure and reported success".into(),
        ),
        Ok(_) if !scratch_left.is_empty() => fail(
            BugId::J18,
            format!("disposal returned with scratch left: {scratch_left:?}"),
        ),
        _ => Ok(()),
    }
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
            format!("scratch of dead processes survived a start: {left:?}"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::journal::{RecordBody, Speaker};

    fn frames(bodies: Vec<RecordBody>) -> Vec<u8> {
        bodies
            .into_iter()
            .enumerate()
            .flat_map(|(i, body)| {
                history::journal::frame::encode_frame(&history::journal::Record {
                    seq: i as u64 + 1,
                    origin: Origin::Main,
                    body,
                })
            })
            .collect()
    }

    #[test]
    fn an_append_inside_a_replacement_is_a_j3_violation() {
        let row = Row::text(Speaker::Human, Origin::Main, "x");
        let ok = frames(vec![
            RecordBody::ReplaceBegin { txn: 1 },
            RecordBody::ReplaceRows {
                txn: 1,
                rows: vec![row.clone()],
            },
            RecordBody::ReplaceCommit { txn: 1 },
            RecordBody::Append {
                rows: vec![row.clone()],
            },
        ]);
        assert!(check_replacements_uninterleaved(&ok).is_ok());
        let bad = frames(vec![
            RecordBody::ReplaceBegin { txn: 1 },
            RecordBody::Append { rows: vec![row] },
            RecordBody::ReplaceCommit { txn: 1 },
        ]);
        let v = check_replacements_uninterleaved(&bad).expect_err("interleaved");
        assert_eq!(v.bug_id, BugId::J3);
    }

    #[test]
    fn costs_and_counts_name_their_ids() {
        assert_eq!(
            check_read_cost(10, 5).map_err(|v| v.bug_id),
            Err(BugId::J11)
        );
        assert!(check_read_cost(5, 5).is_ok());
        assert_eq!(
            check_mutation_read_cost(1, 100).map_err(|v| v.bug_id),
            Err(BugId::J12)
        );
        assert_eq!(
            check_token_counts(&[1, 2], &[1, 3]).map_err(|v| v.bug_id),
            Err(BugId::J17)
        );
        assert_eq!(
            check_swept(&["p0".into()], &["scratch/p0/x".into()]).map_err(|v| v.bug_id),
            Err(BugId::J18)
        );
        assert!(check_swept(&["p0".into()], &["scratch/p01/x".into()]).is_ok());
    }
}
