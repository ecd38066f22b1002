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
    /// What replays it where the report's files are gone (a CI machine): the imported scenario
    /// file's text, or the crash input's bytes when the import failed.
    pub replay_text: Option<ReplayText>,
}

/// A violation's input, written into the summary itself.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", content = "text", rename_all = "snake_case")]
pub enum ReplayText {
    /// The scenario file, as imported.
    ScenarioFile(String),
    /// The crash input, two lowercase hex digits a byte (`xxd -r -p` writes it back).
    InputHex(String),
}

/// The longest replay text the summary shows: a shrunk scenario file is a few KiB, a crash
/// input at most libFuzzer's 4,096 bytes.
pub(crate) const REPLAY_TEXT_BYTES_MAX: usize = 64 * 1024;

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
    /// Inputs already in the run's corpus folder when it started: an earlier run of the same
    /// name, which this one continued from.
    pub resumed_inputs: usize,
    /// Wall-clock seconds of the fuzzing process (the build before it not counted).
    pub elapsed_s: f64,
    /// CPU seconds (user + system) of the fuzzing process and its workers; below `elapsed_s`
    /// when the campaign shared the machine or was paused. `None` where it cannot be read.
    pub cpu_s: Option<f64>,
    /// Executions a CPU second: libFuzzer's executions over `cpu_s`, the rate on one core
    /// whatever else the machine ran.
    pub exec_per_cpu_s: Option<u64>,
    /// Scenarios played a CPU second: `exec_per_cpu_s` less the share of inputs the target
    /// rejected before play (its own count). libFuzzer's executions count rejected inputs,
    /// which cost about a tenth of a millisecond, so this is the figure to compare with
    /// `histsim run`'s seeds a second.
    pub played_per_cpu_s: Option<u64>,
    pub libfuzzer: LibFuzzerStats,
    /// Edges and features over the run, sampled from libFuzzer's log on the wall clock (at most
    /// [`super::coverage_series::POINTS_MAX`] points): the page's chart, never judged.
    pub coverage_over_time: Vec<super::coverage_series::CoveragePoint>,
    /// Inputs in the grown corpus folder at the end.
    pub corpus_files: usize,
    pub violations: Vec<FuzzViolation>,
    /// libFuzzer ended without a crash input yet not cleanly (the log says why).
    pub failure: Option<String>,
    pub command: String,
}

/// Where the campaign started: the seed inputs (or an empty corpus) and the inputs of an earlier
/// run of the same name it continued.
fn seeds_cell(s: &FuzzSummary) -> String {
    let seeds = s.seeds.as_deref().unwrap_or("empty corpus");
    match s.resumed_inputs {
        0 => seeds.to_string(),
        n => format!("{seeds}, and the {n} inputs of an earlier run of this name"),
    }
}

/// The summary for people.
pub fn markdown(s: &FuzzSummary) -> String {
    let mut md = figures(s);
    if s.violations.is_empty() {
        md.push_str("No violation.\n");
    }
    if !s.libfuzzer.slow_units.is_empty() {
        // libFuzzer times units by the wall clock: a starved or paused process writes them too.
        md.push_str(&format!(
            "\n{} slow unit(s) written (no violation; replay one with `cargo fuzz run {} FILE`): {}\n",
            s.libfuzzer.slow_units.len(),
            s.target,
            s.libfuzzer.slow_units.join(", ")
        ));
    }
    for v in &s.violations {
        let id =
            v.id.map(|i| i.to_string())
                .unwrap_or_else(|| "(no ID: a broken world)".into());
        md.push_str(&format!(
            "## Violation {id}\n\ncrash input: `{}`\n\n",
            v.crash_input
        ));
        if let Some(m) = &v.message {
            md.push_str(&format!("{m}\n\n"));
        }
        match (&v.scenario_file, &v.import_error) {
            (Some(f), _) => md.push_str(&format!(
                "scenario file: `{f}`; replay it: `{} scenarios {f}`\n\n",
                crate::run::histsim_command()
            )),
            (None, Some(e)) => md.push_str(&format!("import failed: {e}\n\n")),
            (None, None) => {}
        }
        md.push_str(&replay_section(v.replay_text.as_ref()));
    }
    if let Some(f) = &s.failure {
        md.push_str(&format!("\n**The fuzzer failed:** {f}\n"));
    }
    md.push_str(&format!("\nCommand: `{}`\n", s.command));
    md
}

/// A violation's input in the summary, so that a log alone replays it.
fn replay_section(text: Option<&ReplayText>) -> String {
    match text {
        None => String::new(),
        Some(ReplayText::ScenarioFile(t)) if t.len() > REPLAY_TEXT_BYTES_MAX => format!(
            "(the scenario file is {} bytes, too long to show here)\n\n",
            t.len()
        ),
        Some(ReplayText::ScenarioFile(t)) => format!(
            "The scenario file, to replay it where the report is gone (save it as `found.toml`, \
             then `{} scenarios found.toml`):\n\n```toml\n{}\n```\n\n",
            crate::run::histsim_command(),
            t.trim_end()
        ),
        Some(ReplayText::InputHex(h)) => format!(
            "The crash input in hex, to replay it where the report is gone (`xxd -r -p > \
             input`, then run the target on `input`):\n\n```\n{h}\n```\n\n"
        ),
    }
}

/// The summary's first table: what ran and libFuzzer's figures.
fn figures(s: &FuzzSummary) -> String {
    let figure = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    let planted = s
        .planted
        .map(|p| p.to_string())
        .unwrap_or_else(|| "none".into());
    format!(
        "# Fuzzing campaign {}\n\n\
         | | |\n|---|---|\n\
         | target | `{}` (workload {}) |\n| planted | {planted} |\n\
         | budget | {} s, {} job(s) |\n| seeds | {} |\n| elapsed | {:.1} s |\n\
         | CPU | {} |\n| executions | {} |\n| exec/s (wall clock) | {} |\n\
         | exec per CPU second | {} |\n| rejected before play | {} |\n\
         | played per CPU second | {} |\n| corpus | {} inputs ({} files) |\n\
         | new units | {} |\n| edges (cov) | {} |\n| features (ft) | {} |\n\n",
        s.name,
        s.target,
        s.workload,
        s.budget_s,
        s.jobs,
        seeds_cell(s),
        s.elapsed_s,
        s.cpu_s
            .map(|c| format!("{c:.1} s"))
            .unwrap_or_else(|| "-".into()),
        figure(s.libfuzzer.executions),
        figure(s.libfuzzer.exec_per_s),
        figure(s.exec_per_cpu_s),
        rejected_share(&s.libfuzzer),
        figure(s.played_per_cpu_s),
        figure(s.libfuzzer.corpus_size),
        s.corpus_files,
        figure(s.libfuzzer.new_units),
        figure(s.libfuzzer.edges),
        figure(s.libfuzzer.features),
    )
}

/// Executions a CPU second less the share of them the target rejected before play.
pub(crate) fn played_per_cpu_second(
    exec_per_cpu_s: Option<u64>,
    s: &LibFuzzerStats,
) -> Option<u64> {
    let rejected = s.rejected_percent()?;
    Some((exec_per_cpu_s? as f64 * (100.0 - rejected) / 100.0).round() as u64)
}

/// "R of the first N inputs (P %)", from the target's last counts line.
fn rejected_share(s: &LibFuzzerStats) -> String {
    match (s.counted_inputs, s.rejected_inputs, s.rejected_percent()) {
        (Some(n), Some(r), Some(p)) => format!("{r} of the first {n} inputs ({p:.1} %)"),
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_shows_cpu_time_beside_the_wall_clock() {
        let mut s = FuzzSummary {
            name: "c".into(),
            workload: "display".into(),
            target: "sim_display".into(),
            planted: None,
            budget_s: 60,
            jobs: 1,
            seeds: None,
            elapsed_s: 60.2,
            cpu_s: Some(30.04),
            exec_per_cpu_s: Some(1_030),
            played_per_cpu_s: Some(773),
            libfuzzer: LibFuzzerStats {
                executions: Some(30_941),
                exec_per_s: Some(515),
                counted_inputs: Some(16_384),
                rejected_inputs: Some(4_096),
                ..LibFuzzerStats::default()
            },
            coverage_over_time: Vec::new(),
            corpus_files: 3,
            resumed_inputs: 0,
            violations: Vec::new(),
            failure: None,
            command: "sim_display".into(),
        };
        let md = markdown(&s);
        assert!(md.contains("| CPU | 30.0 s |"), "{md}");
        assert!(md.contains("| exec/s (wall clock) | 515 |"), "{md}");
        assert!(md.contains("| exec per CPU second | 1030 |"), "{md}");
        assert!(
            md.contains("| rejected before play | 4096 of the first 16384 inputs (25.0 %) |"),
            "{md}"
        );
        assert!(md.contains("| played per CPU second | 773 |"), "{md}");
        assert_eq!(played_per_cpu_second(Some(1_030), &s.libfuzzer), Some(773));
        assert_eq!(
            played_per_cpu_second(Some(1_030), &LibFuzzerStats::default()),
            None
        );
        s.cpu_s = None;
        s.exec_per_cpu_s = None;
        let md = markdown(&s);
        assert!(md.contains("| CPU | - |") && md.contains("| exec per CPU second | - |"));
    }

    #[test]
    fn a_violation_shows_what_replays_it() {
        let file = "format = 1\nid = \"P11\"\n[display]\nprimary = \"lead\"\n";
        let md = replay_section(Some(&ReplayText::ScenarioFile(file.into())));
        assert!(md.contains(&format!("```toml\n{file}```")), "{md}");
        assert!(md.contains(" scenarios found.toml`"), "{md}");
        let long = "x".repeat(REPLAY_TEXT_BYTES_MAX + 1);
        let md = replay_section(Some(&ReplayText::ScenarioFile(long)));
        assert!(md.contains("65537 bytes") && !md.contains("xxx"), "{md}");
        let md = replay_section(Some(&ReplayText::InputHex("01ff".into())));
        assert!(
            md.contains("```\n01ff\n```") && md.contains("xxd -r -p"),
            "{md}"
        );
        assert_eq!(replay_section(None), "");
    }
}
