//! What a spool world's page shows beside its trace: the history's journal as the requests read
//! it, each request's sealed spool as a strip (each message's start a tick), and each request's
//! figures and body beside the oracle's for the same rows.
//!
//! The workload injects no crash, so no strip shows a crash point: the journal's strip shows
//! its bytes when the requests began (synced, and written after the last sync), a spool's its
//! bytes when its seal (an fsync) returned; each strip says so.

use super::check::{oracle_body, shape_name};
use super::scenario::{ShapeSpec, SpoolScenario};
use super::source::{compressed, prefix};
use super::world::{head, shape, HistoryFile, RequestSeen, WorldRecord, HISTORY_JOURNAL};
use crate::picture::{journal_strip, Facts, Recovered, Strip, StripPart};
use history::spool::SpoolReport;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The characters of a message its line shows; its length and hash tell the rest apart.
const MESSAGE_CHARS_MAX: usize = 100;
/// Why no strip of this workload shows a crash.
const NO_CRASH: &str = "no crash: the spool workload injects none";

/// The facts of a played spool world, in trace order.
pub fn facts(scenario: &SpoolScenario, record: &WorldRecord) -> Facts {
    let mut facts = Facts::default();
    if let Some(file) = &record.history_file {
        facts.strips.push(history_strip(file));
    }
    if record.setup.is_err() {
        return facts;
    }
    let rows = compressed(&record.history, scenario.compress_keep);
    let head = head(scenario);
    for (k, (spec, seen)) in scenario.requests.iter().zip(&record.requests).enumerate() {
        facts.strips.extend(spool_strip(k, spec.shape, seen));
        let n = prefix(rows.len(), spec.rows_percent);
        let want = oracle_body(shape(spec.shape), &head, &rows[..n]).map_err(|e| e.to_string());
        facts
            .recovered
            .push(request_box(k, spec.shape, seen, n, want));
    }
    facts
}

/// The history's journal when the requests began: a journal file's strip,
/// with nothing lost (no crash).
fn history_strip(file: &HistoryFile) -> Strip {
    let length = file.bytes.len() as u64;
    let mut s = journal_strip(
        0,
        "history",
        HISTORY_JOURNAL,
        &file.bytes,
        file.synced,
        length,
    );
    s.moment = format!("as the requests read it ({NO_CRASH})");
    s.after_events = Some(file.traced_events);
    s
}

/// A request's sealed spool: every byte synced (its seal fsyncs, and the build returned only
/// after it did), each message's start a tick.
fn spool_strip(k: usize, shape: ShapeSpec, seen: &RequestSeen) -> Option<Strip> {
    seen.built.as_ref().ok()?;
    Some(Strip {
        at_us: k as u64 + 1,
        moment: format!(
            "{k} ({}) sealed before its send ({NO_CRASH})",
            shape_name(shape)
        ),
        after_events: Some(seen.traced_events),
        lane: "spool".to_string(),
        file: seen.spool_file.clone(),
        parts: vec![StripPart::Synced(seen.spool.len() as u64)],
        record_starts: messages(&seen.spool)
            .map(|m| m.iter().map(|(at, _)| *at as u64).collect())
            .unwrap_or_default(),
    })
}

/// What request `k` built, sent and left, beside what the oracle's body `want` (for the `n`
/// rows the request should read) says it must be: each figure a line, then each message.
fn request_box(
    k: usize,
    shape: ShapeSpec,
    seen: &RequestSeen,
    n: usize,
    want: Result<Vec<u8>, String>,
) -> Recovered {
    let mut got = vec![format!("rows read: {}", seen.rows)];
    let mut model = vec![format!("rows read: {n}")];
    got.push(match &seen.built {
        Ok(()) => "build: sealed".to_string(),
        Err(e) => format!("build: failed: {e}"),
    });
    model.push(match &want {
        Ok(_) => "build: sealed".to_string(),
        Err(e) => format!("build: the oracle refuses the rows: {e}"),
    });
    let want_len = want.as_ref().map_or(0, Vec::len);
    match &seen.report {
        Ok(report) => {
            got.extend(report_lines(report, None));
            model.extend(report_lines(report, Some(want_len as u64)));
        }
        Err(e) => got.push(format!("send: {e}")),
    }
    got.push(match &seen.received {
        Some(r) => received_line(
            r.body.len(),
            r.content_length,
            r.status,
            r.body == seen.spool,
        ),
        None => "server received: nothing".to_string(),
    });
    model.push(received_line(want_len, Some(want_len as u64), 200, true));
    got.push(left_line(&seen.left));
    model.push(left_line(&[]));
    got.extend(body_lines(&seen.spool));
    model.extend(want.as_deref().map_or_else(|_| Vec::new(), body_lines));
    Recovered {
        at_us: k as u64 + 1,
        after_events: Some(seen.traced_events),
        lane: "spool".to_string(),
        label: format!(
            "request {k} ({}): its sealed spool, as sent and received",
            shape_name(shape)
        ),
        recovered: got,
        model_label: "the oracle's body for the same rows (model::spool)".to_string(),
        model,
    }
}

/// A report's figures; `want_len` given, the figures the oracle's body calls for (the bound is
/// the builder's own, which the check holds it to).
fn report_lines(r: &SpoolReport, want_len: Option<u64>) -> Vec<String> {
    let figure = |system: u64| want_len.unwrap_or(system);
    let memory = if want_len.is_some() || r.peak_buffered_bytes <= r.buffered_bound_bytes {
        format!(
            "builder memory: within the streaming bound of {} bytes",
            r.buffered_bound_bytes
        )
    } else {
        format!(
            "builder memory: {} bytes, over the streaming bound of {} bytes",
            r.peak_buffered_bytes, r.buffered_bound_bytes
        )
    };
    vec![
        format!("Content-Length: {}", figure(r.content_length)),
        format!("sealed size: {} bytes", figure(r.sealed_bytes)),
        format!("body bytes sent: {}", figure(r.sent_bytes)),
        memory,
    ]
}

fn received_line(bytes: usize, content_length: Option<u64>, status: u16, is_spool: bool) -> String {
    format!(
        "server received: {bytes} body bytes{}, Content-Length {}, status {status}",
        if is_spool {
            ", the sealed spool's"
        } else {
            ", not the sealed spool's"
        },
        content_length.map_or_else(|| "none".to_string(), |n| n.to_string())
    )
}

fn left_line(left: &[String]) -> String {
    if left.is_empty() {
        "files left after the send: none".to_string()
    } else {
        format!("files left after the send: {}", left.join(", "))
    }
}

/// A body's messages, a line each (`#3 {"role":"user",…} (812 bytes, 1a2b3c4d)`), or why it
/// has none.
fn body_lines(body: &[u8]) -> Vec<String> {
    match messages(body) {
        Ok(list) => {
            let mut lines = vec![format!("body: {} messages", list.len())];
            lines.extend(
                list.iter()
                    .enumerate()
                    .map(|(i, (_, m))| message_line(i, m)),
            );
            lines
        }
        Err(e) => vec![format!("body: not a request body: {e}")],
    }
}

fn message_line(i: usize, message: &str) -> String {
    let shown: String = message.chars().take(MESSAGE_CHARS_MAX).collect();
    let more = if shown.len() < message.len() {
        "…"
    } else {
        ""
    };
    format!(
        "#{i} {shown}{more} ({} bytes, {:08x})",
        message.len(),
        xxhash_rust::xxh3::xxh3_64(message.as_bytes()) as u32
    )
}

/// The part of a request body the page reads: its messages, as written.
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    messages: Vec<&'a RawValue>,
}

/// Each message of `body` with the byte it starts at.
fn messages(body: &[u8]) -> Result<Vec<(usize, &str)>, String> {
    let text = std::str::from_utf8(body).map_err(|e| e.to_string())?;
    let parsed: Body<'_> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let base = text.as_ptr() as usize;
    Ok(parsed
        .messages
        .into_iter()
        .map(|m| (m.get().as_ptr() as usize - base, m.get()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spool::scenario::{HistorySpec, RequestSpec, SourceKind};
    use crate::spool::world::play;
    use crate::workload::{StoreKind, WorldConfig};
    use history::{BugId, Planted};

    fn scenario() -> SpoolScenario {
        let request = |shape, rows_percent| RequestSpec {
            shape,
            rows_percent,
        };
        SpoolScenario {
            history: HistorySpec {
                seed: 7,
                content_bytes: 20_000,
                tool_heavy: true,
                text_bytes_max: 600,
            },
            compress_keep: None,
            source: SourceKind::Journal,
            write_buffer_bytes: 256,
            chunk_bytes: 1000,
            system: None,
            requests: vec![
                request(ShapeSpec::Openai, 60),
                request(ShapeSpec::Anthropic, 100),
            ],
        }
    }

    fn facts_of(planted: Planted) -> (WorldRecord, Facts) {
        let scenario = scenario();
        let mut config = WorldConfig::new(StoreKind::Memory, planted);
        config.keep_trace = true;
        let record = play(&scenario, &config);
        let facts = facts(&scenario, &record);
        (record, facts)
    }

    #[test]
    fn each_spool_is_a_strip_of_its_sealed_bytes_and_each_body_stands_beside_the_oracles() {
        let (record, facts) = facts_of(Planted::none());
        let file = record.history_file.as_ref().expect("a journal source");
        assert_eq!(facts.strips.len(), 1 + record.requests.len());
        let journal = &facts.strips[0];
        assert_eq!(
            journal.parts.iter().map(|p| p.bytes()).sum::<u64>(),
            file.bytes.len() as u64
        );
        assert!(journal.record_starts.len() > 1, "the journal's records");
        for (strip, seen) in facts.strips[1..].iter().zip(&record.requests) {
            assert_eq!(
                strip.parts,
                vec![StripPart::Synced(seen.spool.len() as u64)]
            );
            assert_eq!(strip.file, seen.spool_file);
            let messages = messages(&seen.spool).expect("a body");
            assert_eq!(strip.record_starts.len(), messages.len());
            assert!(strip.after_events.is_some_and(|n| n > file.traced_events));
        }
        assert_eq!(facts.recovered.len(), record.requests.len());
        for r in &facts.recovered {
            assert_eq!(r.recovered, r.model, "{}", r.label);
            assert!(r.recovered.iter().any(|l| l.starts_with("#0 {")));
        }
    }

    #[test]
    fn a_builder_over_its_bound_departs_on_the_memory_line() {
        let (_, facts) = facts_of(Planted::only(BugId::J14));
        for r in &facts.recovered {
            let differing: Vec<&String> = r
                .recovered
                .iter()
                .zip(&r.model)
                .filter(|(a, b)| a != b)
                .map(|(a, _)| a)
                .collect();
            assert_eq!(differing.len(), 1, "{differing:?}");
            assert!(differing[0].contains("over the streaming bound"));
        }
    }

    #[test]
    fn messages_are_read_where_they_start_in_the_body() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"hi"}, {"role":"assistant","content":"yo"}],"stream":true}"#;
        let list = messages(body).expect("a body");
        assert_eq!(list.len(), 2);
        for (at, m) in &list {
            assert_eq!(&body[*at..*at + m.len()], m.as_bytes());
        }
        assert_eq!(list[1].1, r#"{"role":"assistant","content":"yo"}"#);
        assert!(messages(b"{\"model\":").is_err());
    }

    #[test]
    fn a_long_message_line_keeps_what_tells_it_apart() {
        let a = format!("{{\"content\":\"{}a\"}}", "x".repeat(200));
        let b = format!("{{\"content\":\"{}b\"}}", "x".repeat(200));
        assert_ne!(message_line(0, &a), message_line(0, &b));
        assert!(message_line(0, &a).chars().count() < MESSAGE_CHARS_MAX + 40);
    }
}
