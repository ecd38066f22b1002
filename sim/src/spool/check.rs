//! The invariant checks of the spool workload (J14): every request's spool holds exactly the
//! bytes the in-memory oracle builds for the same rows, Content-Length equals the sealed size
//! and the bytes the server received, the builder held no more than a streaming builder may, and
//! no spool file outlives its request.
//!
//! The expected rows come from the scenario alone (the synthetic history, compressed by the
//! summarization middleware when asked), never from the journal the world wrote them to. The
//! expected bytes come from `model::spool`, which shares no code with the builders it judges;
//! [`oracle_body`] converts the system's row and head types into the model's.

use super::scenario::{RequestSpec, ShapeSpec, SpoolScenario};
use super::source::{compressed, prefix};
use super::world::{head, shape, RequestSeen, WorldRecord};
use crate::outcome::Violation;
use history::journal::{Block, Row, Speaker};
use history::spool::{RequestHead, Shape, SpoolReport};
use history::BugId;
use model::spool as oracle;

/// The oracle's body for `rows` (what the spool of `shape` must hold), or its refusal.
pub fn oracle_body(
    shape: Shape,
    head: &RequestHead,
    rows: &[Row],
) -> Result<Vec<u8>, oracle::ShapeError> {
    let shape = match shape {
        Shape::OpenAiChat => oracle::Shape::OpenAiChat,
        Shape::AnthropicMessages => oracle::Shape::AnthropicMessages,
    };
    let head = oracle::Head {
        model: head.model.clone(),
        system: head.system.clone(),
        max_tokens: head.max_tokens,
        stream: head.stream,
    };
    let rows: Vec<oracle::Row> = rows.iter().map(model_row).collect();
    oracle::body(shape, &head, &rows)
}

/// A journal row as the model sees it: who spoke and what; the origin is not sent.
fn model_row(row: &Row) -> oracle::Row {
    let speaker = match row.speaker {
        Speaker::Human => oracle::Speaker::Human,
        Speaker::Ai => oracle::Speaker::Ai,
        Speaker::Tool => oracle::Speaker::Tool,
    };
    let blocks = row
        .blocks
        .iter()
        .map(|b| match b.clone() {
            Block::Text { text } => oracle::Block::Text { text },
            Block::ToolCall {
                id,
                name,
                arguments,
            } => oracle::Block::ToolCall {
                id,
                name,
                arguments,
            },
            Block::ToolResult {
                call_id,
                name,
                content,
            } => oracle::Block::ToolResult {
                call_id,
                name,
                content,
            },
        })
        .collect();
    oracle::Row { speaker, blocks }
}

/// Every J14 figure of one request that disagrees: Content-Length, the sealed size and the bytes
/// sent must be equal, and the builder must have held no more than a streaming builder may.
pub fn report_violations(report: &SpoolReport) -> Vec<String> {
    let mut out = Vec::new();
    if report.content_length != report.sealed_bytes {
        out.push(format!(
            "Content-Length {} differs from the sealed size {}",
            report.content_length, report.sealed_bytes
        ));
    }
    if report.sent_bytes != report.sealed_bytes {
        out.push(format!(
            "{} body bytes sent for a sealed size of {}",
            report.sent_bytes, report.sealed_bytes
        ));
    }
    if report.peak_buffered_bytes > report.buffered_bound_bytes {
        out.push(format!(
            "the builder held {} bytes in memory, over the streaming bound of {}",
            report.peak_buffered_bytes, report.buffered_bound_bytes
        ));
    }
    out
}

pub fn check(scenario: &SpoolScenario, record: &WorldRecord) -> Vec<Violation> {
    let mut found: Vec<String> = Vec::new();
    if let Err(e) = &record.setup {
        found.push(e.clone());
    } else {
        let rows = compressed(&record.history, scenario.compress_keep);
        let head = head(scenario);
        for (k, (spec, seen)) in scenario.requests.iter().zip(&record.requests).enumerate() {
            let at = format!("request {k} ({})", shape_name(spec.shape));
            for what in check_request(spec, seen, &rows, &head) {
                found.push(format!("{at}: {what}"));
            }
        }
        if record.requests.len() != scenario.requests.len() {
            found.push(format!(
                "{} of {} requests ran",
                record.requests.len(),
                scenario.requests.len()
            ));
        }
        if let Err(e) = &record.dir_closed {
            found.push(format!("the request directory could not be removed: {e}"));
        }
    }
    found
        .into_iter()
        .map(|m| Violation::safety(BugId::J14, m))
        .collect()
}

/// What one request did wrong: its build, its report, its rows, its bytes against the oracle's,
/// what reached the server, and what it left behind.
fn check_request(
    spec: &RequestSpec,
    seen: &RequestSeen,
    rows: &[Row],
    head: &RequestHead,
) -> Vec<String> {
    let mut found = Vec::new();
    if let Err(e) = &seen.built {
        found.push(format!("building the body failed: {e}"));
        return found;
    }
    match &seen.report {
        Ok(report) => found.extend(report_violations(report)),
        Err(e) => found.push(format!("sending failed: {e}")),
    }
    let n = prefix(rows.len(), spec.rows_percent);
    if seen.rows != n {
        found.push(format!(
            "the source gave {} rows; the history has {n} for this request",
            seen.rows
        ));
    }
    match oracle_body(shape(spec.shape), head, &rows[..n]) {
        Ok(want) if want != seen.spool => {
            let at_byte = want
                .iter()
                .zip(&seen.spool)
                .position(|(a, b)| a != b)
                .unwrap_or(want.len().min(seen.spool.len()));
            found.push(format!(
                "the spool ({} bytes) differs from the oracle's body ({} bytes) at byte {at_byte}",
                seen.spool.len(),
                want.len()
            ));
        }
        Ok(_) => {}
        Err(e) => found.push(format!("the oracle refuses the rows: {e}")),
    }
    found.extend(check_received(seen));
    found
}

/// The server received exactly the sealed spool, with a matching Content-Length, and the spool's
/// files are gone.
fn check_received(seen: &RequestSeen) -> Vec<String> {
    let mut found = Vec::new();
    match &seen.received {
        Some(r) => {
            if r.content_length != Some(r.body.len() as u64) {
                found.push(format!(
                    "the server received {} body bytes for Content-Length {}",
                    r.body.len(),
                    r.content_length
                        .map_or_else(|| "none".to_string(), |n| n.to_string())
                ));
            }
            if r.body != seen.spool {
                found.push("the bytes the server received are not the sealed spool".into());
            }
        }
        None => found.push("nothing reached the server".into()),
    }
    if !seen.left.is_empty() {
        found.push(format!(
            "spool files left behind after the send: {}",
            seen.left.join(", ")
        ));
    }
    found
}

/// A request shape as a scenario file spells it.
pub fn shape_name(shape: ShapeSpec) -> &'static str {
    match shape {
        ShapeSpec::Openai => "openai",
        ShapeSpec::Anthropic => "anthropic",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::journal::Origin;

    #[test]
    fn a_consistent_report_has_no_violations_and_each_mismatch_is_named() {
        let ok = SpoolReport {
            sealed_bytes: 10,
            content_length: 10,
            sent_bytes: 10,
            peak_buffered_bytes: 5,
            buffered_bound_bytes: 5,
        };
        assert_eq!(report_violations(&ok), Vec::<String>::new());
        let bad = SpoolReport {
            content_length: 9,
            sent_bytes: 11,
            peak_buffered_bytes: 6,
            ..ok
        };
        let v = report_violations(&bad);
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(v[0].contains("Content-Length 9"), "{v:?}");
        assert!(v[1].contains("11 body bytes sent"), "{v:?}");
        assert!(v[2].contains("held 6 bytes"), "{v:?}");
    }

    #[test]
    fn the_oracle_sees_speakers_and_blocks_but_not_origins() {
        let call = Block::ToolCall {
            id: "x".into(),
            name: "grep".into(),
            arguments: "{}".into(),
        };
        let rows = [
            Row::text(Speaker::Human, Origin::Subagent("a".into()), "hi"),
            Row {
                speaker: Speaker::Ai,
                origin: Origin::Main,
                blocks: vec![call],
            },
        ];
        let body = oracle_body(Shape::OpenAiChat, &RequestHead::default(), &rows).expect("valid");
        assert_eq!(
            String::from_utf8(body).expect("UTF-8"),
            concat!(
                r#"{"model":"test-model","messages":[{"role":"user","content":"hi"},"#,
                r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"grep","arguments":"{}"}}]}],"stream":true}"#
            )
        );
        let tool_text = [Row::text(Speaker::Tool, Origin::Main, "t")];
        let err = oracle_body(
            Shape::AnthropicMessages,
            &RequestHead::default(),
            &tool_text,
        )
        .expect_err("a tool row cannot hold text");
        assert_eq!(
            err.to_string(),
            "row 0 block 0: a Tool row cannot hold a text block"
        );
    }
}
