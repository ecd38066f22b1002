//! The catalog is part of the project: every `BugId` has a row in docs/catalog.md and at least one
//! scenario file under scenarios/ that reproduces it.

use history::BugId;
use sim::scenario_file::{discover, ScenarioFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The IDs of the catalog's table rows (`| P1 | 000 | ...`), in file order.
fn catalog_rows(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(" |").next())
        .filter(|cell| cell.parse::<BugId>().is_ok())
        .map(str::to_string)
        .collect()
}

#[test]
fn every_bug_id_has_a_catalog_row_and_a_scenario_file() {
    let path = repo().join("docs/catalog.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows = catalog_rows(&text);
    let mut scenarios: BTreeMap<BugId, Vec<PathBuf>> = BTreeMap::new();
    let files = discover(&repo().join("scenarios")).expect("scenarios/ is readable");
    for file in files {
        // A file that does not load is an error here, not a file to skip: it covers no ID.
        let scenario = ScenarioFile::load(&file).unwrap_or_else(|e| panic!("{e}"));
        scenarios.entry(scenario.id).or_default().push(file);
    }
    let mut missing = Vec::new();
    for id in BugId::ALL {
        let in_catalog = rows.iter().filter(|r| **r == id.as_str()).count();
        if in_catalog != 1 {
            missing.push(format!("{id}: {in_catalog} rows in docs/catalog.md"));
        }
        if !scenarios.contains_key(&id) {
            missing.push(format!("{id}: no scenario file under scenarios/"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert_eq!(
        rows.len(),
        BugId::ALL.len(),
        "rows of unknown IDs: {rows:?}"
    );
}

#[test]
fn catalog_rows_are_read_from_table_lines_only() {
    let text = "| ID | seed |\n|---|---|\n| P1 | 000 | x |\n| J14 | 004 | y |\n- P2 in prose\n| Z9 | z |\n";
    assert_eq!(catalog_rows(text), ["P1", "J14"]);
}
