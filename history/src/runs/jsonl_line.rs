//! One line of the JSONL run-event store: where a row's file is and what its line holds.
//!
//! The layout is the published DeerFlow `JsonlRunEventStore`'s: one file per run,
//! `threads/{thread_id}/runs/{run_id}.jsonl`, every category in the run's file, one JSON object a
//! line with the fields `thread_id`, `run_id`, `event_type`, `category`, `content`, `metadata`,
//! `seq` and `created_at` (ISO 8601). Three fields are ours, after those: `user_id` (the store's
//! row has one), `write` (the store-wide write number, the tie-break between equal seqs and the
//! order a reopened store replays rows in) and `batch` (`[first write, rows]` of the batch the row
//! was written in, so that a reopened store can tell a batch a crash cut short).
//!
//! A row upstream wrote (no `write`, no `batch`, and in 0.1.7 no `user_id`) is read as a row of
//! its own, whole by itself, with no user: a store DeerFlow wrote opens, and its rows stay.
//!
//! Upstream refuses ids outside `[A-Za-z0-9_-]+`; every backend of ours must accept the same
//! writes (R9), so other bytes are escaped as `%XX` in the file name instead. Ids upstream
//! accepts map to themselves, so the layout is upstream's wherever upstream could write at all.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::event::{Category, RunEvent};

/// The directory every thread's directory lives in.
pub(crate) const THREADS_DIR: &str = "threads";

/// The file of one run: `threads/{thread}/runs/{run}.jsonl`, ids escaped.
pub(crate) fn run_file(thread_id: &str, run_id: &str) -> String {
    let file = format!(
        "{THREADS_DIR}/{}/runs/{}.jsonl",
        escape_id(thread_id),
        escape_id(run_id)
    );
    // Post-condition: the layout's reader takes it for a run file (but an empty run id's).
    debug_assert!(is_run_file(&file) || run_id.is_empty());
    file
}

/// An id as a file-name part: bytes upstream allows stay, every other byte becomes `%XX`.
/// Injective, because `%` itself is escaped.
pub(crate) fn escape_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    // Post-condition: a file-name part, with no separator.
    debug_assert!(!out.contains('/') && out.len() >= id.len());
    out
}

/// Whether a storage name is a run file of this layout (other files are left alone).
pub(crate) fn is_run_file(name: &str) -> bool {
    let parts: Vec<&str> = name.split('/').collect();
    parts.len() == 4
        && parts[0] == THREADS_DIR
        && parts[2] == "runs"
        && parts[3].len() > ".jsonl".len()
        && parts[3].ends_with(".jsonl")
}

/// The line a row is written as.
#[derive(Serialize)]
struct LineOut<'a> {
    thread_id: &'a str,
    run_id: &'a str,
    event_type: &'a str,
    category: &'a str,
    content: &'a Value,
    metadata: &'a Value,
    seq: u64,
    created_at: String,
    user_id: Option<&'a str>,
    write: u64,
    batch: [u64; 2],
}

/// A line as read back: every upstream field required, so a line that lost one is refused, not
/// guessed; ours may be missing all together (a row upstream wrote).
#[derive(Deserialize)]
struct LineIn {
    thread_id: String,
    run_id: String,
    event_type: String,
    category: String,
    content: Value,
    metadata: Value,
    seq: u64,
    created_at: String,
    #[serde(default)]
    user_id: Option<String>,
    write: Option<u64>,
    batch: Option<[u64; 2]>,
}

/// A row with the place it was written at.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StoredLine {
    pub(crate) event: RunEvent,
    /// The row's write number and its batch's (first write number, number of rows); `None`
    /// for a row upstream wrote, which is whole by itself.
    pub(crate) written: Option<Written>,
}

/// Where in the store's writes a row of ours was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) write: u64,
    pub(crate) batch: (u64, u64),
}

/// The line of one row, newline included.
pub(crate) fn encode(event: &RunEvent, write: u64, batch: (u64, u64)) -> Vec<u8> {
    let line = LineOut {
        thread_id: &event.thread_id,
        run_id: &event.run_id,
        event_type: &event.event_type,
        category: event.category.as_str(),
        content: &event.content,
        metadata: &event.metadata,
        seq: event.seq,
        created_at: iso_of_ns(event.created_at_ns),
        user_id: event.user_id.as_deref(),
        write,
        batch: [batch.0, batch.1],
    };
    let mut bytes = serde_json::to_vec(&line).expect("a run event serializes");
    // Post-condition: one line, no newline inside it (JSON escapes them).
    debug_assert!(!bytes.contains(&b'\n'));
    bytes.push(b'\n');
    bytes
}

/// Reads one line (without its newline); the error says what is wrong with it.
pub(crate) fn decode(line: &[u8]) -> Result<StoredLine, String> {
    let raw: LineIn = serde_json::from_slice(line).map_err(|e| format!("not a row ({e})"))?;
    let category = Category::parse(&raw.category)
        .ok_or_else(|| format!("unknown category `{}`", raw.category))?;
    let created_at_ns = ns_of_iso(&raw.created_at)?;
    let written = match (raw.write, raw.batch) {
        (None, None) => None,
        (Some(write), Some([first, rows])) => {
            if rows == 0 || write < first || write - first >= rows {
                return Err(format!(
                    "write {write} is not inside its batch [{first}, {rows}]"
                ));
            }
            Some(Written {
                write,
                batch: (first, rows),
            })
        }
        _ => return Err("`write` and `batch` go together, one is missing".into()),
    };
    Ok(StoredLine {
        event: RunEvent {
            thread_id: raw.thread_id,
            run_id: raw.run_id,
            user_id: raw.user_id,
            event_type: raw.event_type,
            category,
            content: raw.content.into(),
            metadata: raw.metadata,
            seq: raw.seq,
            created_at_ns,
        },
        written,
    })
}

const NS_PER_SEC: i64 = 1_000_000_000;
const SECS_PER_DAY: i64 = 86_400;

/// `created_at` as upstream writes it (UTC, `+00:00`), with nine fractional digits so that the
/// nanoseconds come back exactly.
pub(crate) fn iso_of_ns(ns: i64) -> String {
    let secs = ns.div_euclid(NS_PER_SEC);
    let frac = ns.rem_euclid(NS_PER_SEC);
    let days = secs.div_euclid(SECS_PER_DAY);
    let of_day = secs.rem_euclid(SECS_PER_DAY);
    let (y, m, d) = civil_of_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:09}+00:00",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)` (ours, and Python's `isoformat`) into
/// nanoseconds since the epoch.
pub(crate) fn ns_of_iso(s: &str) -> Result<i64, String> {
    let bad = || format!("created_at `{s}` is not an ISO 8601 time with an offset");
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return Err(bad());
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let num = |from: usize, to: usize| -> Result<i64, String> {
        let part = s.get(from..to).ok_or_else(bad)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        part.parse::<i64>().map_err(|_| bad())
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return Err(bad());
    }
    let mut rest = &s[19..];
    let mut frac_ns = 0i64;
    if let Some(after_dot) = rest.strip_prefix('.') {
        let digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return Err(bad());
        }
        let padded = format!("{:0<9}", &after_dot[..digits]);
        frac_ns = padded.parse::<i64>().map_err(|_| bad())?;
        rest = &after_dot[digits..];
    }
    let offset_secs = match rest {
        "Z" => 0,
        _ if rest.len() == 6 && rest.as_bytes()[3] == b':' => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return Err(bad()),
            };
            let (oh, om) = (num(s.len() - 5, s.len() - 3)?, num(s.len() - 2, s.len())?);
            sign * (oh * 3600 + om * 60)
        }
        _ => return Err(bad()),
    };
    let secs = days_of_civil(y, mo, d) * SECS_PER_DAY + h * 3600 + mi * 60 + sec - offset_secs;
    secs.checked_mul(NS_PER_SEC)
        .and_then(|n| n.checked_add(frac_ns))
        .ok_or_else(|| format!("created_at `{s}` is outside the nanosecond range"))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (400-year eras, March-based years).
fn days_of_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (m + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + d - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_of_civil`].
fn civil_of_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let d = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let m = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let y = year_of_era + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_round_trip_to_the_nanosecond() {
        for ns in [
            0,
            7,
            -1,
            1_700_000_000_123_456_789,
            951_782_400_000_000_000, // 2000-02-29
            i64::MAX,
            i64::MIN + NS_PER_SEC,
        ] {
            let iso = iso_of_ns(ns);
            assert_eq!(ns_of_iso(&iso), Ok(ns), "{iso}");
        }
        assert_eq!(iso_of_ns(0), "1970-01-01T00:00:00.000000000+00:00");
        assert_eq!(iso_of_ns(-1), "1969-12-31T23:59:59.999999999+00:00");
    }

    #[test]
    fn python_isoformat_times_are_read() {
        // datetime(2026, 3, 1, 12, 30, tzinfo=UTC).isoformat() and a microsecond variant.
        let base = ns_of_iso("2026-03-01T12:30:00+00:00").unwrap();
        assert_eq!(iso_of_ns(base), "2026-03-01T12:30:00.000000000+00:00");
        assert_eq!(
            ns_of_iso("2026-03-01T12:30:00.000005+00:00"),
            Ok(base + 5_000)
        );
        assert_eq!(ns_of_iso("2026-03-01T14:30:00+02:00"), Ok(base));
        assert_eq!(ns_of_iso("2026-03-01T12:30:00Z"), Ok(base));
        for bad in [
            "2026-03-01",
            "2026-13-01T00:00:00+00:00",
            "2026-03-01T12:30:00",
            "2026-03-01T12:30:00.+00:00",
            "2026-03-01T12:30:00.0000000001+00:00",
            "2026-03-01T12:30:00+0000",
        ] {
            assert!(ns_of_iso(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_upstream_accepts_name_their_file_unchanged_others_are_escaped() {
        assert_eq!(run_file("t-1", "run_2"), "threads/t-1/runs/run_2.jsonl");
        assert_eq!(run_file("a/b", "%"), "threads/a%2Fb/runs/%25.jsonl");
        assert_eq!(run_file("..", "x"), "threads/%2E%2E/runs/x.jsonl");
        assert!(is_run_file(&run_file("a.b", "é")));
        assert!(!is_run_file("threads/t/runs/.jsonl"));
        assert!(!is_run_file("threads/t/other/r.jsonl"));
    }

    #[test]
    fn lines_round_trip_and_keep_upstream_field_names() {
        let event = RunEvent {
            thread_id: "t".into(),
            run_id: "r".into(),
            user_id: Some("u".into()),
            event_type: "human_message".into(),
            category: Category::Message,
            content: json!({"type": "human", "content": "hi"}).into(),
            metadata: json!({"k": 1}),
            seq: 3,
            created_at_ns: 42,
        };
        let bytes = encode(&event, 9, (8, 2));
        assert_eq!(bytes.last(), Some(&b'\n'));
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        for field in [
            "thread_id",
            "run_id",
            "event_type",
            "category",
            "content",
            "metadata",
            "seq",
            "created_at",
        ] {
            assert!(value.get(field).is_some(), "{field}");
        }
        let back = decode(&bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(back.event, event);
        assert_eq!(
            back.written,
            Some(Written {
                write: 9,
                batch: (8, 2)
            })
        );
    }

    #[test]
    fn rows_upstream_wrote_are_read_whole_and_without_a_user() {
        // The record 0.1.7's `put` writes (content a plain string, Python's isoformat time).
        let line = br#"{"thread_id": "t", "run_id": "r", "event_type": "human_message", "category": "message", "content": "more", "metadata": {}, "seq": 7, "created_at": "2026-12-02T01:23:45.123456+00:00"}"#;
        let row = decode(line).unwrap();
        assert_eq!(row.written, None);
        assert_eq!(row.event.user_id, None);
        assert_eq!(row.event.content, json!("more").into());
        assert_eq!(row.event.seq, 7);
    }

    #[test]
    fn lines_that_lost_a_field_or_lie_about_their_batch_are_refused() {
        let event = RunEvent {
            thread_id: "t".into(),
            run_id: "r".into(),
            user_id: None,
            event_type: "x".into(),
            category: Category::Trace,
            content: json!("c").into(),
            metadata: json!({}),
            seq: 1,
            created_at_ns: 0,
        };
        let line = encode(&event, 5, (1, 2));
        assert!(decode(&line).unwrap_err().contains("not inside its batch"));
        let mut value: Value = serde_json::from_slice(&encode(&event, 1, (1, 1))).unwrap();
        value.as_object_mut().unwrap().remove("seq");
        assert!(decode(value.to_string().as_bytes()).is_err());
        value["seq"] = json!(1);
        value.as_object_mut().unwrap().remove("batch");
        assert!(decode(value.to_string().as_bytes())
            .unwrap_err()
            .contains("go together"));
        value["batch"] = json!([1, 1]);
        value["category"] = json!("chat");
        assert!(decode(value.to_string().as_bytes())
            .unwrap_err()
            .contains("unknown category"));
    }
}
