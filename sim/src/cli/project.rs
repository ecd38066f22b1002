//! `histsim project`: bring your own rows. An export of persisted display-event rows (one JSON row
//! a line, as `mongoexport` writes them) goes through the persister's admission into a store, as
//! the service's rows do, and the thread's history comes out of the store's two-stage query and
//! the projector (`docs/display-projection.md`). Every warning and every unusable line is printed;
//! a malformed row is reported, never fatal. `--check` runs the row-level checks ([`checks`]) and
//! makes the verdict a violation (exit 1) when one fails.
//!
//! MongoDB extended JSON becomes the plain values the row fields expect: `{"$oid": s}` the string
//! s, `{"$numberLong": "n"}` and `{"$numberInt": "n"}` the integer n, `{"$numberDouble": "x"}` the
//! number x, `{"$date": d}` its milliseconds or its ISO-8601 text. Other `$` keys stay as they are.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use history::display::{
    project, reconstruct, Admission, AgentIdentity, ChatMessage, ContentPart, MemoryDisplayStore,
    Persister, Projection, ProjectorOptions, Warning, WarningCode, DISPLAY_EVENT, IDENTITY_FIELDS,
    USER_AGENT_CLASS,
};
use history::Planted;
use serde_json::{json, Map, Value};

use super::extended_json::plain;
use crate::verdict::Verdict;

#[derive(clap::Args)]
pub(crate) struct ProjectArgs {
    /// An export of persisted rows: one JSON row a line (MongoDB extended JSON accepted).
    rows: PathBuf,
    /// The thread whose history to project.
    #[arg(long)]
    thread: String,
    /// The request's primary agent as CLASS:ID; only its stops may supply a missing suffix.
    #[arg(long, value_parser = parse_primary)]
    primary: Option<AgentIdentity>,
    /// Print the history, warnings, line problems and checks as one JSON object.
    #[arg(long)]
    json: bool,
    /// Run the row-level checks; exit 1 when one fails.
    #[arg(long)]
    check: bool,
}

fn parse_primary(text: &str) -> Result<AgentIdentity, String> {
    match text.split_once(':') {
        Some((class, id)) if !class.is_empty() && !id.is_empty() => {
            Ok(AgentIdentity::new(class, id))
        }
        _ => Err(format!("`{text}` is not CLASS:ID (both non-empty)")),
    }
}

/// One non-blank line of the export (`number` from 1): the bytes delivered to the persister (the
/// plain row, or the line as written when it could not be made plain) and the row they hold.
struct Line {
    number: usize,
    bytes: Vec<u8>,
    row: Option<Map<String, Value>>,
}

/// A line the history could not use as it was.
#[derive(serde::Serialize)]
struct Problem {
    line: usize,
    what: String,
}

/// What a check found: it passed when `failures` is empty.
#[derive(serde::Serialize)]
struct Check {
    name: &'static str,
    failures: Vec<String>,
    notes: Vec<String>,
}

pub(crate) fn cmd(args: ProjectArgs) -> Verdict {
    let bytes = match std::fs::read(&args.rows) {
        Ok(bytes) => bytes,
        Err(e) => return Verdict::usage(&format!("cannot read {}: {e}", args.rows.display())),
    };
    let (lines, mut problems) = read_lines(&bytes);
    let mut persister = Persister::new(MemoryDisplayStore::new(Planted::none()));
    for line in &lines {
        match persister.deliver(&line.bytes) {
            Ok(Admission::Stored) => {}
            Ok(Admission::Quarantined { reason }) => problems.push(Problem {
                line: line.number,
                what: format!("quarantined by the store: {reason}"),
            }),
            Err(e) => {
                eprintln!("error: the store failed on line {}: {e}", line.number);
                return Verdict::WorldFailure;
            }
        }
    }
    let (primary, options) = (args.primary.as_ref(), ProjectorOptions::default());
    let answer = match reconstruct(persister.store(), &args.thread, primary, &options) {
        Ok(answer) => answer,
        Err(e) => {
            eprintln!("error: reconstructing thread {}: {e}", args.thread);
            return Verdict::WorldFailure;
        }
    };
    problems.sort_by_key(|p| p.line);
    let input = Input {
        thread: &args.thread,
        primary,
        lines: &lines,
        problems: &problems,
        answer: &answer,
    };
    let checks = if args.check {
        checks(&input)
    } else {
        Vec::new()
    };
    if args.json {
        println!("{}", as_json(&input, &checks));
    } else {
        print_text(&input, &checks);
    }
    let failed = checks.iter().any(|c| !c.failures.is_empty());
    Verdict::clean_or(!failed, Verdict::Violation)
}

struct Input<'a> {
    thread: &'a str,
    primary: Option<&'a AgentIdentity>,
    lines: &'a [Line],
    problems: &'a [Problem],
    answer: &'a Projection,
}

/// Splits the export into lines and makes each plain; a line that is not JSON, or whose extended
/// JSON cannot be converted, is reported and delivered as it was (the store quarantines it, or
/// the projector skips it with a warning).
fn read_lines(bytes: &[u8]) -> (Vec<Line>, Vec<Problem>) {
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let number = index + 1;
        let mut problem = |what: String| problems.push(Problem { line: number, what });
        let (bytes, row) = match serde_json::from_slice::<Value>(raw) {
            Err(e) => {
                problem(format!("not JSON ({e})"));
                (raw.to_vec(), None)
            }
            Ok(value) => match plain(value.clone()) {
                Ok(Value::Object(row)) => {
                    (Value::Object(row.clone()).to_string().into(), Some(row))
                }
                Ok(_) => {
                    problem("not a JSON object".into());
                    (raw.to_vec(), None)
                }
                Err(why) => {
                    problem(format!("extended JSON: {why}; the row is used as written"));
                    (raw.to_vec(), value.as_object().cloned())
                }
            },
        };
        lines.push(Line { number, bytes, row });
    }
    (lines, problems)
}

struct ThreadRow<'a> {
    line: usize,
    bytes: &'a [u8],
    row: &'a Map<String, Value>,
}

impl<'a> ThreadRow<'a> {
    fn str_field(&self, field: &str) -> Option<&'a str> {
        self.row.get(field).and_then(Value::as_str)
    }

    fn event_data(&self) -> Option<&'a Map<String, Value>> {
        self.row.get("event_data").and_then(Value::as_object)
    }

    fn has_parent(&self, family: &str) -> bool {
        self.row
            .get("event_parents")
            .and_then(Value::as_array)
            .is_some_and(|p| p.iter().any(|x| x.as_str() == Some(family)))
    }

    fn is_marker(&self) -> bool {
        self.str_field("agent_class") == Some(USER_AGENT_CLASS)
            && (self.has_parent("UserMessageEvent")
                || self.has_parent("HumanInTheLoopResponseEvent"))
    }

    /// Why the row cannot be ordered or identified, if it cannot.
    fn defect(&self) -> Option<String> {
        if let Some(field) = IDENTITY_FIELDS
            .iter()
            .find(|f| self.str_field(f).is_none_or(str::is_empty))
        {
            return Some(format!("`{field}` is missing, empty or not a string"));
        }
        let created_at = self.event_data().and_then(|d| d.get("created_at"));
        match created_at {
            Some(v) if v.is_i64() || v.is_u64() => None,
            _ => Some("`event_data.created_at` is not an integer".into()),
        }
    }

    fn created_at(&self) -> Option<i128> {
        let v = self.event_data()?.get("created_at")?;
        v.as_i64()
            .map(i128::from)
            .or_else(|| v.as_u64().map(i128::from))
    }
}

/// The thread's display-event rows, in file order: what the store's query reads from.
fn thread_rows<'a>(input: &'a Input<'_>) -> Vec<ThreadRow<'a>> {
    input
        .lines
        .iter()
        .filter_map(|l| {
            let row = l.row.as_ref()?;
            let r = ThreadRow {
                line: l.number,
                bytes: &l.bytes,
                row,
            };
            (r.str_field("thread_id") == Some(input.thread)
                && r.str_field("event_type") == Some(DISPLAY_EVENT))
            .then_some(r)
        })
        .collect()
}

/// The row-level checks, each over the thread's display-event rows:
/// - duplicate event ids [P4]: rows sharing an `event_id` are copies of one delivery (equal
///   identity and `event_data`), and the history is the same without the copies;
/// - content on hidden displays [P2]: the history equals the projection of the rows of visible
///   displays alone (found here from the rows: a `UserAgent` user message or HITL answer);
/// - malformed rows [P10]: no line is unusable and no row is skipped or warned about as
///   malformed, and every such row is named by a warning that carries no payload text;
/// - created_at order [P8]: the history is the same whatever order the rows come in.
fn checks(input: &Input<'_>) -> Vec<Check> {
    let rows = thread_rows(input);
    vec![
        duplicate_event_ids(input, &rows),
        hidden_display_content(input, &rows),
        malformed_rows(input, &rows),
        created_at_order(input, &rows),
    ]
}

/// The displays a `UserAgent` user message or HITL answer of the thread makes visible.
fn visible_displays<'a>(rows: &[ThreadRow<'a>]) -> BTreeSet<&'a str> {
    rows.iter()
        .filter(|r| r.is_marker())
        .filter_map(|r| r.str_field("display_id"))
        .collect()
}

fn projection_of(input: &Input<'_>, rows: &[&ThreadRow<'_>]) -> Projection {
    let bytes: Vec<&[u8]> = rows.iter().map(|r| r.bytes).collect();
    project(&bytes, input.primary, &ProjectorOptions::default())
}

/// The projection's messages and its warnings' codes (sorted), without `no_visible_display`,
/// which only the store's first stage gives.
fn outcome(p: &Projection) -> (Vec<ChatMessage>, Vec<WarningCode>) {
    let mut codes: Vec<WarningCode> = p
        .warnings
        .iter()
        .map(|w| w.code)
        .filter(|c| *c != WarningCode::NoVisibleDisplay)
        .collect();
    codes.sort();
    (p.messages.clone(), codes)
}

fn duplicate_event_ids(input: &Input<'_>, rows: &[ThreadRow<'_>]) -> Check {
    let mut by_id: BTreeMap<&str, Vec<&ThreadRow<'_>>> = BTreeMap::new();
    for r in rows {
        if let Some(id) = r.str_field("event_id") {
            by_id.entry(id).or_default().push(r);
        }
    }
    let same = |a: &ThreadRow<'_>, b: &ThreadRow<'_>| {
        IDENTITY_FIELDS
            .iter()
            .all(|f| a.row.get(*f) == b.row.get(*f))
            && a.row.get("event_data") == b.row.get("event_data")
    };
    let (mut failures, mut copies, mut unique) = (Vec::new(), 0, Vec::new());
    for (id, group) in &by_id {
        let first = group[0];
        unique.push(first);
        for &r in &group[1..] {
            if same(first, r) {
                copies += 1;
            } else {
                failures.push(format!(
                    "event_id {id}: lines {} and {} are different events (the history keeps at \
                     most one of them)",
                    first.line, r.line
                ));
                unique.push(r);
            }
        }
    }
    unique.extend(rows.iter().filter(|r| r.str_field("event_id").is_none()));
    unique.sort_by_key(|r| r.line);
    let all: Vec<&ThreadRow<'_>> = rows.iter().collect();
    if outcome(&projection_of(input, &unique)) != outcome(&projection_of(input, &all)) {
        failures.push(format!(
            "the history changes when the {copies} copies are removed"
        ));
    }
    Check {
        name: "duplicate event ids",
        failures,
        notes: vec![format!("{copies} copies of earlier deliveries, read once")],
    }
}

fn hidden_display_content(input: &Input<'_>, rows: &[ThreadRow<'_>]) -> Check {
    let visible = visible_displays(rows);
    let (shown, hidden): (Vec<&ThreadRow<'_>>, Vec<&ThreadRow<'_>>) = rows.iter().partition(|r| {
        r.str_field("display_id")
            .is_some_and(|d| visible.contains(d))
    });
    let hidden_displays: BTreeSet<&str> = hidden
        .iter()
        .filter_map(|r| r.str_field("display_id"))
        .collect();
    let mut failures = Vec::new();
    if outcome(&projection_of(input, &shown)).0 != input.answer.messages {
        failures.push(
            "the history differs from the projection of the visible displays' rows alone"
                .to_string(),
        );
    }
    Check {
        name: "content on hidden displays",
        failures,
        notes: vec![format!(
            "{} rows on {} hidden displays left out",
            hidden.len(),
            hidden_displays.len()
        )],
    }
}

fn malformed_rows(input: &Input<'_>, rows: &[ThreadRow<'_>]) -> Check {
    let mut failures: Vec<String> = input
        .problems
        .iter()
        .map(|p| format!("line {}: {}", p.line, p.what))
        .collect();
    let warned: BTreeSet<&str> = input
        .answer
        .warnings
        .iter()
        .filter_map(|w| w.event_id.as_deref())
        .collect();
    let visible = visible_displays(rows);
    for r in rows {
        let on_visible = r
            .str_field("display_id")
            .is_some_and(|d| visible.contains(d));
        let Some(why) = r.defect().filter(|_| on_visible) else {
            continue;
        };
        failures.push(format!("line {}: {why}", r.line));
        if r.str_field("event_id")
            .is_some_and(|id| !warned.contains(id))
        {
            failures.push(format!("line {}: skipped without a warning", r.line));
        }
    }
    for w in &input.answer.warnings {
        if w.code == WarningCode::BadPayload {
            failures.push(format!("{}: {}", lines_of(input, w), w.text));
        }
    }
    failures.extend(payload_in_warnings(input, rows));
    Check {
        name: "malformed rows",
        failures,
        notes: Vec::new(),
    }
}

/// Warnings whose text holds a string of some row's payload (P10: ids and field names only).
fn payload_in_warnings(input: &Input<'_>, rows: &[ThreadRow<'_>]) -> Vec<String> {
    let ids: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| IDENTITY_FIELDS.iter().filter_map(move |f| r.str_field(f)))
        .collect();
    let mut payload = BTreeSet::new();
    for r in rows {
        if let Some(data) = r.event_data() {
            string_leaves(&Value::Object(data.clone()), &mut payload);
        }
    }
    payload.retain(|s| s.chars().count() >= 8 && !ids.contains(s.as_str()));
    input
        .answer
        .warnings
        .iter()
        .filter(|w| payload.iter().any(|s| w.text.contains(s.as_str())))
        .map(|w| format!("{}: a warning carries payload text", lines_of(input, w)))
        .collect()
}

fn string_leaves(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| string_leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| string_leaves(v, out)),
        _ => {}
    }
}

fn created_at_order(input: &Input<'_>, rows: &[ThreadRow<'_>]) -> Check {
    let given: Vec<&ThreadRow<'_>> = rows.iter().collect();
    let mut sorted = given.clone();
    sorted.sort_by(|a, b| {
        let key = |r: &ThreadRow<'_>| (r.created_at(), r.str_field("event_id").map(str::to_owned));
        key(a).cmp(&key(b)).then(a.line.cmp(&b.line))
    });
    let reversed: Vec<&ThreadRow<'_>> = given.iter().rev().copied().collect();
    let expected = outcome(&projection_of(input, &given));
    let mut failures = Vec::new();
    for (order, rows) in [("sorted by created_at", &sorted), ("reversed", &reversed)] {
        if outcome(&projection_of(input, rows)) != expected {
            failures.push(format!("the history changes when the rows come {order}"));
        }
    }
    let mut latest = None;
    let late = given
        .iter()
        .filter_map(|r| r.created_at())
        .filter(|&t| {
            let is_late = latest.is_some_and(|l| t < l);
            latest = latest.max(Some(t));
            is_late
        })
        .count();
    Check {
        name: "created_at order",
        failures,
        notes: vec![format!(
            "{late} rows stored after a later-created row, ordered on read"
        )],
    }
}

/// The lines of the thread's rows a warning names, as `line 3` or `lines 3, 7`.
fn lines_of(input: &Input<'_>, w: &Warning) -> String {
    let numbers: Vec<String> = input
        .lines
        .iter()
        .filter(|l| {
            let row = l.row.as_ref();
            let field = |f: &str| row.and_then(|r| r.get(f)).and_then(Value::as_str);
            w.event_id.is_some()
                && field("event_id") == w.event_id.as_deref()
                && field("thread_id") == Some(input.thread)
        })
        .map(|l| l.number.to_string())
        .collect();
    match numbers.len() {
        0 => "no line".into(),
        n => format!(
            "line{} {}",
            if n == 1 { "" } else { "s" },
            numbers.join(", ")
        ),
    }
}

fn part_text(part: &ContentPart) -> String {
    match part {
        ContentPart::Text { text } => text.clone(),
        ContentPart::ImageUrl { url } => format!("[image {url}]"),
        ContentPart::InputAudio { data, format } => {
            format!("[audio {format}, {} base64 characters]", data.len())
        }
    }
}

fn print_text(input: &Input<'_>, checks: &[Check]) {
    let answer = input.answer;
    println!(
        "thread {}: {} messages, {} warnings",
        input.thread,
        answer.messages.len(),
        answer.warnings.len()
    );
    for m in &answer.messages {
        let parts: Vec<String> = m.content.iter().map(part_text).collect();
        println!(
            "  {}: {}",
            json!(m.role).as_str().unwrap_or("?"),
            parts.join(" | ")
        );
    }
    for w in &answer.warnings {
        println!("warning ({}): {}", lines_of(input, w), w.text);
    }
    for p in input.problems {
        println!("line {}: {}", p.line, p.what);
    }
    for c in checks {
        let verdict = if c.failures.is_empty() {
            "ok"
        } else {
            "FAILED"
        };
        println!("check {}: {verdict} ({})", c.name, c.notes.join("; "));
        for f in &c.failures {
            println!("  {f}");
        }
    }
}

fn as_json(input: &Input<'_>, checks: &[Check]) -> Value {
    let warnings: Vec<Value> = input
        .answer
        .warnings
        .iter()
        .map(|w| {
            json!({"code": w.code.as_str(), "event_id": w.event_id, "display_id": w.display_id,
                   "field": w.field, "text": w.text, "lines": lines_of(input, w)})
        })
        .collect();
    json!({
        "thread": input.thread,
        "messages": input.answer.messages,
        "warnings": warnings,
        "line_problems": input.problems,
        "checks": checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_json_becomes_plain_values() {
        let v: Value = serde_json::from_str(
            r#"{"_id":{"$oid":"665f"},"n":{"$numberLong":"1717000000000000000"},
                "d":{"$date":{"$numberLong":"17"}},"s":{"$date":"2024-01-01T00:00:00Z"},
                "x":[{"$numberInt":"3"},{"$numberDouble":"1.5"}],"k":{"$other":1}}"#,
        )
        .unwrap();
        assert_eq!(
            plain(v).unwrap(),
            json!({"_id":"665f","n":1717000000000000000i64,"d":17,"s":"2024-01-01T00:00:00Z",
                   "x":[3,1.5],"k":{"$other":1}})
        );
        for bad in [
            r#"{"$numberLong":"x"}"#,
            r#"{"$oid":5}"#,
            r#"{"$numberDouble":"NaN"}"#,
        ] {
            assert!(plain(serde_json::from_str(bad).unwrap()).is_err(), "{bad}");
        }
    }

    #[test]
    fn primaries_are_class_colon_id() {
        assert_eq!(
            parse_primary("LeadAgent:abc").ok(),
            Some(AgentIdentity::new("LeadAgent", "abc"))
        );
        for bad in ["LeadAgent", ":abc", "LeadAgent:"] {
            assert!(parse_primary(bad).is_err(), "{bad}");
        }
    }
}
