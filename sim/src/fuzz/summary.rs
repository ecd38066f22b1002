//! What a fuzzing campaign found and measured: the summary `histsim fuzz run` writes as
//! `summary.json`, `summary.md` and `junit.xml`.

use super::stats::LibFuzzerStats;
use history::BugId;
use serde::Serialize;

/// One violation the campaign found.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzViolation {
    pub id: Option<BugId>,
    pub crash_input: String,
    /// The imported scenario file, or why the import failed.
    pub scenario_file: Option<String>,
    pub import_error: Option<String>,
    /// What the target's panic said (`histsim violation P4: ...`, or a broken world's reason).
    pub message: Option<String>,
}

/// What `histsim fuzz run` reports.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzSummary {
    pub name: String,
    pub workload: String,
    pub target: String,
    pub planted: Option<BugId>,
    pub budget_s: u64,
    pub jobs: u32,
    pub seeds: Option<String>,
    /// Wall-clock seconds of the fuzzing process (the build before it not counted).
    pub elapsed_s: f64,
    pub libfuzzer: LibFuzzerStats,
    /// Inputs in the grown corpus folder at the end.
    pub corpus_files: usize,
    pub violations: Vec<FuzzViolation>,
    /// libFuzzer ended without a crash input yet not cleanly (the log says why).
    pub failure: Option<String>,
    pub command: String,
}
