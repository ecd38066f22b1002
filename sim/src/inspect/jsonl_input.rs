//! A DeerFlow JSONL run-event store: `threads/{thread_id}/runs/{run_id}.jsonl` under its base
//! directory (the published `JsonlRunEventStore`, default base `.deer-flow`), one JSON record a
//! line. Files are only read.

use super::{EventRow, Input, InputError};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Reads every record of every run file, in file then line order.
pub fn read(path: &Path) -> Result<Input, InputError> {
    let threads = [
        path.join("threads"),
        path.join(".deer-flow").join("threads"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
    .ok_or_else(|| {
        InputError(format!(
            "{}: neither a SQLite database nor a JSONL store: no threads/ directory (a JSONL \
                 store is laid out as threads/<thread_id>/runs/<run_id>.jsonl)",
            path.display()
        ))
    })?;
    let mut input = Input {
        kind: "JSONL store",
        ..Input::default()
    };
    for thread_dir in sorted_entries(&threads)? {
        let runs = thread_dir.join("runs");
        if !runs.is_dir() {
            continue;
        }
        for file in sorted_entries(&runs)? {
            if file.extension().is_some_and(|e| e == "jsonl") {
                read_file(&file, path, &mut input)?;
            }
        }
    }
    Ok(input)
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let fail = |e: std::io::Error| InputError(format!("{}: cannot list: {e}", dir.display()));
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(fail)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    entries.sort();
    Ok(entries)
}

fn read_file(file: &Path, base: &Path, input: &mut Input) -> Result<(), InputError> {
    let name = file
        .strip_prefix(base)
        .unwrap_or(file)
        .display()
        .to_string();
    let bytes = std::fs::read(file)
        .map_err(|e| InputError(format!("{}: cannot read: {e}", file.display())))?;
    // The directory names say whose records the file must hold.
    let run_of_file = file.file_stem().map(|s| s.to_string_lossy().into_owned());
    let thread_of_file = file
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map(|s| s.to_string_lossy().into_owned());
    for (index, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let origin = format!("{name}:{}", index + 1);
        match record_of(line) {
            Ok((thread_id, run_id, event)) => {
                if Some(&thread_id) != thread_of_file.as_ref()
                    || Some(&run_id) != run_of_file.as_ref()
                {
                    input.unreadable.push(format!(
                        "{origin}: a record of thread {thread_id:?}, run {run_id:?} in another run's file"
                    ));
                    continue;
                }
                input.events.push(EventRow {
                    origin,
                    thread_id,
                    run_id,
                    written: index as i64 + 1,
                    stream: name.clone(),
                    ..event
                });
            }
            Err(why) => input.unreadable.push(format!("{origin}: {why}")),
        }
    }
    Ok(())
}

/// One line as a record: its thread, its run, and the rest.
fn record_of(line: &[u8]) -> Result<(String, String, EventRow), String> {
    let value: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON ({e})"))?;
    let Value::Object(record) = value else {
        return Err("not a JSON object".into());
    };
    let text = |name: &str| match record.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{name} is not a string")),
        None => Err(format!("no {name}")),
    };
    let seq = record
        .get("seq")
        .and_then(Value::as_i64)
        .ok_or("seq is missing or not an integer")?;
    let content = match record.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let event = EventRow {
        origin: String::new(),
        thread_id: String::new(),
        run_id: String::new(),
        event_type: text("event_type")?,
        category: text("category")?,
        content,
        metadata: record.get("metadata").cloned(),
        seq,
        written: 0,
        stream: String::new(),
    };
    Ok((text("thread_id")?, text("run_id")?, event))
}
