//! The invariant checks of the spool workload (J14): every request's spool holds exactly the
//! bytes the in-memory oracle builds for the same rows, Content-Length equals the sealed size
//! and the bytes the server received, the builder held no more than a streaming builder may, and
//! no spool file outlives its request.
//!
//! The expected rows come from the scenario alone (the synthetic history, compressed by the
//! summarization middleware when asked), never from the journal the world wrote them to.

use super::scenario::SpoolScenario;
use super::source::{compressed, history_rows, prefix};
use super::world::{head, shape, WorldRecord};
use crate::outcome::Violation;
use history::spool::oracle;
use history::BugId;

pub fn check(scenario: &SpoolScenario, record: &WorldRecord) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut add = |message: String| out.push(Violation::safety(BugId::J14, message));
    if let Err(e) = &record.setup {
        add(e.clone());
        return out;
    }
    let rows = compressed(&history_rows(&scenario.history), scenario.compress_keep);
    let head = head(scenario);
    for (k, (spec, seen)) in scenario.requests.iter().zip(&record.requests).enumerate() {
        let at = format!("request {k} ({:?})", spec.shape);
        if let Err(e) = &seen.built {
            add(format!("{at}: building the body failed: {e}"));
            continue;
        }
        match &seen.report {
            Ok(report) => {
                for v in report.violations() {
                    add(format!("{at}: {}", v.what));
                }
            }
            Err(e) => add(format!("{at}: sending failed: {e}")),
        }
        let n = prefix(rows.len(), spec.rows_percent);
        if seen.rows != n {
            add(format!(
                "{at}: the source gave {} rows; the history has {n} for this request",
                seen.rows
            ));
        }
        match oracle::body(shape(spec.shape), &head, &rows[..n]) {
            Ok(want) if want != seen.spool => {
                let at_byte = want
                    .iter()
                    .zip(&seen.spool)
                    .position(|(a, b)| a != b)
                    .unwrap_or(want.len().min(seen.spool.len()));
                add(format!(
                    "{at}: the spool ({} bytes) differs from the oracle's body ({} bytes) at byte {at_byte}",
                    seen.spool.len(),
                    want.len()
                ));
            }
            Ok(_) => {}
            Err(e) => add(format!("{at}: the oracle refuses the rows: {e}")),
        }
        match &seen.received {
            Some(r) => {
                if r.content_length != Some(r.body.len() as u64) {
                    add(format!(
                        "{at}: the server received {} body bytes for Content-Length {:?}",
                        r.body.len(),
                        r.content_length
                    ));
                }
                if r.body != seen.spool {
                    add(format!(
                        "{at}: the bytes the server received are not the sealed spool"
                    ));
                }
            }
            None => add(format!("{at}: nothing reached the server")),
        }
        if !seen.left.is_empty() {
            add(format!(
                "{at}: spool files left behind after the send: {:?}",
                seen.left
            ));
        }
    }
    if record.requests.len() != scenario.requests.len() {
        add(format!(
            "{} of {} requests ran",
            record.requests.len(),
            scenario.requests.len()
        ));
    }
    if let Err(e) = &record.dir_closed {
        add(format!("the request directory could not be removed: {e}"));
    }
    out
}
