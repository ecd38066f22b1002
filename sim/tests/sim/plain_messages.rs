//! Violation messages and first wrong answers are for people: no Rust debug rendering
//! (`Some(..)`, `None`, a struct's `{ .. }`, serde_json's `Object {..}`, escaped quotes) in what
//! any catalog scenario reports.

use sim::run::run_scenario_file;
use sim::scenario_file::{discover, ScenarioFile};
use sim::workload::{StoreKind, WorldConfig};
use std::path::Path;

/// What Rust's `{:?}` leaves in a text and a reader's wording never does.
const DEBUG_MARKS: [&str; 7] = [
    "{ ", "Some(", "None", "Object {", "Number(", "String(", "\\\"",
];

/// The marks of `{:?}` that `message` shows.
fn debug_marks(message: &str) -> Vec<&'static str> {
    DEBUG_MARKS
        .into_iter()
        .filter(|mark| message.contains(mark))
        .collect()
}

#[test]
fn the_marks_catch_debug_renderings() {
    let object = serde_json::json!({"steps": 1});
    for debug in [
        format!("{:?}", Some("1")),
        format!("{:?}", None::<u8>),
        format!("{object:?}"),
        format!("{:?}", "a \"quoted\" word"),
    ] {
        assert!(!debug_marks(&debug).is_empty(), "{debug}");
    }
    assert!(debug_marks("at position 0 the model expects `subagent.start` of task 1").is_empty());
}

#[test]
fn no_scenarios_violation_message_shows_rust_debug_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let files = discover(&dir).expect("the scenarios directory is readable");
    let mut checked = 0;
    let mut leaks = Vec::new();
    for path in files
        .iter()
        .filter(|p| !p.starts_with(dir.join("upstream")))
    {
        let file = ScenarioFile::load(path).unwrap_or_else(|e| panic!("{e}"));
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            let config = WorldConfig::new(store, history::Planted::none());
            let run = run_scenario_file(&file, &config, Some(file.id));
            assert!(
                run.failure.is_none(),
                "{}: {:?}",
                path.display(),
                run.failure
            );
            for v in &run.violations {
                checked += 1;
                // The message and the first wrong answer, as the terminal and the reports say them.
                let divergence = v.first_divergence.as_ref().map(|d| d.to_string());
                let said = format!("{} {}", v.message, divergence.unwrap_or_default());
                let marks = debug_marks(&said);
                if !marks.is_empty() {
                    leaks.push(format!("{} ({store:?}) {marks:?}: {v}", path.display()));
                }
            }
        }
    }
    assert!(checked >= files.len(), "only {checked} violations checked");
    assert!(
        leaks.is_empty(),
        "{} messages show debug text:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}
