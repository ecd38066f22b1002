//! The display conformance corpus: `tests/conformance/display/*.json`, each file one rule or case,
//! checked on the pure projector, the memory store and the SQLite store.
//!
//! A case is `{"about", "source", "primary", "rows", "expected": {"messages", "warning_codes"}}`:
//! `primary` is `{"agent_class", "agent_id"}` or null; each row is a JSON object exactly as
//! persisted or a JSON string holding raw (possibly malformed) row bytes; `messages` are the OpenAI
//! messages as [`Projection`] serializes them; `warning_codes` are compared as a multiset.
//!
//! The stores get the rows through a [`Persister`] in file order and answer
//! [`reconstruct`] for the thread of the first row that names one. The pure projector gets the
//! rows as given; `no_visible_display` is a verdict of the stores' first query stage, so it is not
//! expected from the pure projector (which returns an empty history without it).

use std::fs;
use std::path::{Path, PathBuf};

use history::display::{
    project, reconstruct, AgentIdentity, DisplayEventStore, MemoryDisplayStore, Persister,
    Projection, ProjectorOptions, SqliteDisplayStore, WarningCode,
};
use history::Planted;
use serde_json::Value;

/// One corpus file, read.
struct Case {
    name: String,
    primary: Option<AgentIdentity>,
    rows: Vec<Vec<u8>>,
    thread: Option<String>,
    messages: Value,
    warning_codes: Vec<String>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/display")
}

fn load(path: &Path) -> Result<Case, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("reading: {e}"))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("parsing: {e}"))?;
    for key in ["about", "source"] {
        if !doc[key].is_string() {
            return Err(format!("`{key}` must be a string"));
        }
    }
    let primary = match &doc["primary"] {
        Value::Null => None,
        p => {
            let class = p["agent_class"].as_str().ok_or("primary.agent_class")?;
            let id = p["agent_id"].as_str().ok_or("primary.agent_id")?;
            Some(AgentIdentity::new(class, id))
        }
    };
    let rows_json = doc["rows"].as_array().ok_or("`rows` must be an array")?;
    let mut rows = Vec::new();
    let mut thread = None;
    for (i, row) in rows_json.iter().enumerate() {
        match row {
            Value::String(raw) => rows.push(raw.as_bytes().to_vec()),
            Value::Object(o) => {
                if thread.is_none() {
                    thread = o
                        .get("thread_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
                rows.push(serde_json::to_vec(row).map_err(|e| format!("row {i}: {e}"))?);
            }
            _ => return Err(format!("row {i} is neither an object nor a string")),
        }
    }
    let expected = &doc["expected"];
    let messages = expected["messages"].clone();
    if !messages.is_array() {
        return Err("`expected.messages` must be an array".into());
    }
    let warning_codes = expected["warning_codes"]
        .as_array()
        .ok_or("`expected.warning_codes` must be an array")?
        .iter()
        .map(|c| {
            c.as_str()
                .map(str::to_owned)
                .ok_or("a warning code is not a string")
        })
        .collect::<Result<Vec<_>, _>>()?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Case {
        name,
        primary,
        rows,
        thread,
        messages,
        warning_codes,
    })
}

fn sorted(mut codes: Vec<String>) -> Vec<String> {
    codes.sort();
    codes
}

/// What differs between `got` and the case's expectation, if anything.
fn compare(case: &Case, got: &Projection, codes_expected: &[String]) -> Option<String> {
    let messages = serde_json::to_value(&got.messages).expect("a projection serializes");
    let codes: Vec<String> = got
        .warnings
        .iter()
        .map(|w| w.code.as_str().to_string())
        .collect();
    let mut problems = Vec::new();
    if messages != case.messages {
        problems.push(format!(
            "messages\n    got:      {messages}\n    expected: {}",
            case.messages
        ));
    }
    if sorted(codes.clone()) != sorted(codes_expected.to_vec()) {
        problems.push(format!(
            "warning codes\n    got:      {codes:?}\n    expected: {codes_expected:?}"
        ));
    }
    (!problems.is_empty()).then(|| problems.join("\n  "))
}

fn via_store<S: DisplayEventStore>(case: &Case, store: S) -> Result<Projection, String> {
    let thread = case.thread.as_deref().ok_or("no row names a thread")?;
    let mut persister = Persister::new(store);
    for row in &case.rows {
        persister
            .deliver(row)
            .map_err(|e| format!("persisting: {e}"))?;
    }
    reconstruct(
        persister.store(),
        thread,
        case.primary.as_ref(),
        &ProjectorOptions::default(),
    )
    .map_err(|e| format!("reconstructing: {e}"))
}

#[test]
fn every_conformance_case_passes_on_the_projector_and_both_stores() {
    let mut paths: Vec<PathBuf> = fs::read_dir(corpus_dir())
        .expect("the corpus directory exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "the corpus is empty");
    let no_visible = WarningCode::NoVisibleDisplay.as_str();
    let (mut pure, mut memory, mut sqlite) = (0, 0, 0);
    let mut failures = Vec::new();
    for path in &paths {
        let case = match load(path) {
            Ok(case) => case,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        let pure_codes: Vec<String> = case
            .warning_codes
            .iter()
            .filter(|c| c.as_str() != no_visible)
            .cloned()
            .collect();
        let got = project(
            &case.rows,
            case.primary.as_ref(),
            &ProjectorOptions::default(),
        );
        match compare(&case, &got, &pure_codes) {
            None => pure += 1,
            Some(p) => failures.push(format!("{} [pure projector]:\n  {p}", case.name)),
        }
        let stores: [(&str, &mut usize, Result<Projection, String>); 2] = [
            (
                "memory store",
                &mut memory,
                via_store(&case, MemoryDisplayStore::new(Planted::none())),
            ),
            (
                "sqlite store",
                &mut sqlite,
                SqliteDisplayStore::open_in_memory(Planted::none())
                    .map_err(|e| format!("opening: {e}"))
                    .and_then(|s| via_store(&case, s)),
            ),
        ];
        for (store, passed, answer) in stores {
            match answer.map(|got| compare(&case, &got, &case.warning_codes)) {
                Ok(None) => *passed += 1,
                Ok(Some(p)) => failures.push(format!("{} [{store}]:\n  {p}", case.name)),
                Err(e) => failures.push(format!("{} [{store}]: {e}", case.name)),
            }
        }
    }
    let total = paths.len();
    println!(
        "display conformance corpus: {total} cases; pure projector {pure}/{total}, memory store \
         {memory}/{total}, sqlite store {sqlite}/{total}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
