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
use crate::divergence::{trimmed_texts, Divergence, TraceMark};
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

/// One thing a request did wrong: in words, and its answer beside the model's.
#[derive(Debug)]
pub(crate) struct Wrong {
    pub message: String,
    pub answered: String,
    pub expected: String,
}

fn wrong(message: String, answered: impl Into<String>, expected: impl Into<String>) -> Wrong {
    Wrong {
        message,
        answered: answered.into(),
        expected: expected.into(),
    }
}

/// Every J14 figure of one request that disagrees: Content-Length, the sealed size and the bytes
/// sent must be equal, and the builder must have held no more than a streaming builder may.
pub(crate) fn report_violations(report: &SpoolReport) -> Vec<Wrong> {
    let mut out = Vec::new();
    let (cl, sealed, sent) = (
        report.content_length,
        report.sealed_bytes,
        report.sent_bytes,
    );
    if cl != sealed {
        out.push(wrong(
            format!("Content-Length {cl} differs from the sealed size {sealed}"),
            format!("Content-Length {cl}"),
            format!("Content-Length {sealed}, the sealed size"),
        ));
    }
    if sent != sealed {
        out.push(wrong(
            format!("{sent} body bytes sent for a sealed size of {sealed}"),
            format!("{sent} body bytes sent"),
            format!("{sealed} body bytes sent, the sealed size"),
        ));
    }
    let (peak, bound) = (report.peak_buffered_bytes, report.buffered_bound_bytes);
    if peak > bound {
        out.push(wrong(
            format!("the builder held {peak} bytes in memory, over the streaming bound of {bound}"),
            format!("{peak} bytes held in memory"),
            format!("at most {bound} bytes held (the streaming bound)"),
        ));
    }
    out
}

/// The violations of a played spool world. Every J14 finding is about one request: its step
/// index `k` is its simulated time (`k + 1` microseconds, as its trace line is stamped) and its
/// first wrong answer. Setting up the history, a request never run and the request directory
/// left behind are whole-state findings: no request answered them.
pub fn check(scenario: &SpoolScenario, record: &WorldRecord) -> Vec<Violation> {
    let mut found: Vec<Violation> = Vec::new();
    let whole = |message: String, state: &str| Violation {
        whole_state: Some(state.to_string()),
        ..Violation::safety(BugId::J14, message)
    };
    if let Err(e) = &record.setup {
        found.push(whole(
            e.clone(),
            "the history and the request directory, set up before any request",
        ));
    } else {
        let rows = compressed(&record.history, scenario.compress_keep);
        let head = head(scenario);
        for (k, (spec, seen)) in scenario.requests.iter().zip(&record.requests).enumerate() {
            let shape = shape_name(spec.shape);
            let at = format!("request {k} ({shape})");
            let at_us = k as u64 + 1;
            for w in check_request(spec, seen, &rows, &head) {
                let d = Divergence::of(
                    format!("send ({shape})"),
                    k as u64,
                    at_us,
                    "the spool builder",
                )
                .answers(w.answered, w.expected);
                let mut v =
                    Violation::safety(BugId::J14, format!("{at}: {}", w.message)).diverged_at(d);
                v.trace_marks = vec![TraceMark::at(at_us, format!("request {k} "))];
                found.push(v);
            }
        }
        if record.requests.len() != scenario.requests.len() {
            found.push(whole(
                format!(
                    "{} of {} requests ran",
                    record.requests.len(),
                    scenario.requests.len()
                ),
                "the requests that ran",
            ));
        }
        if let Err(e) = &record.dir_closed {
            found.push(whole(
                format!("the request directory could not be removed: {e}"),
                "the request directory after every request",
            ));
        }
    }
    found
}

/// What one request did wrong: its build, its report, its rows, its bytes against the oracle's,
/// what reached the server, and what it left behind.
fn check_request(
    spec: &RequestSpec,
    seen: &RequestSeen,
    rows: &[Row],
    head: &RequestHead,
) -> Vec<Wrong> {
    let mut found = Vec::new();
    if let Err(e) = &seen.built {
        found.push(wrong(
            format!("building the body failed: {e}"),
            format!("error {e}"),
            "a sealed body",
        ));
        return found;
    }
    match &seen.report {
        Ok(report) => found.extend(report_violations(report)),
        Err(e) => found.push(wrong(
            format!("sending failed: {e}"),
            format!("error {e}"),
            "the body sent",
        )),
    }
    let n = prefix(rows.len(), spec.rows_percent);
    if seen.rows != n {
        found.push(wrong(
            format!(
                "the source gave {} rows; the history has {n} for this request",
                seen.rows
            ),
            format!("{} rows", seen.rows),
            format!("{n} rows"),
        ));
    }
    match oracle_body(shape(spec.shape), head, &rows[..n]) {
        Ok(want) if want != seen.spool => {
            let at_byte = want
                .iter()
                .zip(&seen.spool)
                .position(|(a, b)| a != b)
                .unwrap_or(want.len().min(seen.spool.len()));
            let (a, e) = trimmed_texts(
                &String::from_utf8_lossy(&seen.spool),
                &String::from_utf8_lossy(&want),
            );
            found.push(wrong(
                format!(
                    "the spool ({} bytes) differs from the oracle's body ({} bytes) at byte {at_byte}",
                    seen.spool.len(),
                    want.len()
                ),
                a,
                e,
            ));
        }
        Ok(_) => {}
        Err(e) => found.push(wrong(
            format!("the oracle refuses the rows: {e}"),
            "a body",
            format!("refused: {e}"),
        )),
    }
    found.extend(check_received(seen));
    found
}

/// The server received exactly the sealed spool, with a matching Content-Length, and the spool's
/// files are gone.
fn check_received(seen: &RequestSeen) -> Vec<Wrong> {
    let mut found = Vec::new();
    match &seen.received {
        Some(r) => {
            if r.content_length != Some(r.body.len() as u64) {
                let cl = r
                    .content_length
                    .map_or_else(|| "none".to_string(), |n| n.to_string());
                found.push(wrong(
                    format!(
                        "the server received {} body bytes for Content-Length {cl}",
                        r.body.len()
                    ),
                    format!("Content-Length {cl}"),
                    format!("Content-Length {}, the bytes received", r.body.len()),
                ));
            }
            if r.body != seen.spool {
                found.push(wrong(
                    "the bytes the server received are not the sealed spool".into(),
                    format!("{} bytes received", r.body.len()),
                    format!("the sealed spool's {} bytes", seen.spool.len()),
                ));
            }
        }
        None => found.push(wrong(
            "nothing reached the server".into(),
            "nothing received",
            format!("the sealed spool's {} bytes", seen.spool.len()),
        )),
    }
    if !seen.left.is_empty() {
        found.push(wrong(
            format!(
                "spool files left behind after the send: {}",
                seen.left.join(", ")
            ),
            format!("left: {}", seen.left.join(", ")),
            "no spool file left",
        ));
    }
    found
}

/// A request shape as a scenario file spells it.
pub(crate) fn shape_name(shape: ShapeSpec) -> &'static str {
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
        assert!(report_violations(&ok).is_empty());
        let bad = SpoolReport {
            content_length: 9,
            sent_bytes: 11,
            peak_buffered_bytes: 6,
            ..ok
        };
        let v: Vec<String> = report_violations(&bad)
            .into_iter()
            .map(|w| w.message)
            .collect();
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
