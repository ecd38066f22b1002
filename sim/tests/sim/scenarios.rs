//! The committed scenario files: each reproduces its ID with the planted bug and passes without.

use sim::run::run_scenario_file;
use sim::scenario_file::{discover, ScenarioFile};
use sim::workload::StoreKind;
use std::path::Path;

fn scenario_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

#[test]
fn every_scenario_reproduces_its_id_and_passes_without_its_bug() {
    let files = discover(&scenario_dir()).expect("the scenarios directory is readable");
    assert!(files.len() >= 14, "only {} scenario files", files.len());
    for path in files {
        let file = ScenarioFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            let with_bug = run_scenario_file(
                &file,
                &sim::workload::WorldConfig::new(store, history::Planted::none()),
                Some(file.id),
            );
            assert!(
                with_bug.violations.iter().any(|v| v.id == file.id),
                "{} ({store:?}): no {} violation with the bug planted: {:?}",
                path.display(),
                file.id,
                with_bug.violations
            );
            let without = run_scenario_file(
                &file,
                &sim::workload::WorldConfig::new(store, history::Planted::none()),
                None,
            );
            assert!(
                without.violations.is_empty() && without.failure.is_none(),
                "{} ({store:?}): fails without the bug: {:?} {:?}",
                path.display(),
                without.violations,
                without.failure
            );
        }
    }
}

#[test]
fn a_bad_scenario_file_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.toml");
    std::fs::write(
        &path,
        "format = 1\nid = \"P4\"\ntitle = \"x\"\n[display]\nthread_id = 7\n",
    )
    .expect("write");
    let e = ScenarioFile::load(&path).expect_err("must fail");
    let text = e.to_string();
    assert!(text.contains("broken.toml"), "{text}");
    assert!(text.contains("display.thread_id"), "{text}");
}
