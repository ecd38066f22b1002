//! The catalog is part of the project: every `BugId` has a row in docs/catalog.md, at least one
//! scenario file under scenarios/, and a checker rule that reports it. The rule is shown by
//! running, not by a declaration: the ID's own scenario, played with its bug planted, must be
//! reported under that ID by the checkers of the workload that covers it.

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
fn every_bug_id_has_a_catalog_row_a_scenario_file_and_a_checker_rule() {
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
    for (id, files) in &scenarios {
        if !files.iter().any(|f| a_rule_reports(*id, f)) {
            missing.push(format!(
                "{id}: no checker rule reports it on its scenario files"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert_eq!(
        rows.len(),
        BugId::ALL.len(),
        "rows of unknown IDs: {rows:?}"
    );
}

/// Whether a checker rule of `file`'s workload reports `id` when the file is played with `id`'s
/// bug planted.
fn a_rule_reports(id: BugId, file: &Path) -> bool {
    let scenario = ScenarioFile::load(file).unwrap_or_else(|e| panic!("{e}"));
    let run = sim::run::run_scenario_file(
        &scenario,
        &sim::workload::WorldConfig::new(
            sim::workload::StoreKind::Memory,
            history::Planted::none(),
        ),
        Some(id),
    );
    run.violations.iter().any(|v| v.id == id)
}

#[test]
fn catalog_rows_are_read_from_table_lines_only() {
    let text = "| ID | seed |\n|---|---|\n| P1 | 000 | x |\n| J14 | 004 | y |\n- P2 in prose\n| Z9 | z |\n";
    assert_eq!(catalog_rows(text), ["P1", "J14"]);
}
