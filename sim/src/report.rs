//! Campaign reports: `reports/<campaign>/summary.md` for people (and CI job summaries) and
//! `summary.json` for machines. The formats are documented in reports/README.md.

use crate::campaign::{CampaignResult, SeedLine};
use crate::outcome::Violation;
use crate::run::RunConfig;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The turmoil version seeds are comparable under.
pub const TURMOIL_VERSION: &str = "0.7.2";

#[derive(Serialize)]
pub struct Summary<'a> {
    pub campaign: &'a str,
    pub histsim_version: &'static str,
    pub turmoil_version: &'static str,
    pub commit: Option<String>,
    pub config: &'a RunConfig,
    pub seeds_start: u64,
    pub seeds_end: u64,
    pub seeds_run: usize,
    pub seeds_failed: usize,
    pub elapsed_s: f64,
    pub seeds_per_second: f64,
    pub steps_total: u64,
    pub failures: Vec<FailureSummary>,
    pub seeds: &'a [SeedLine],
}

#[derive(Serialize)]
pub struct FailureSummary {
    pub seed: u64,
    pub workload: String,
    pub violations: Vec<Violation>,
    pub failure: Option<String>,
    pub options: String,
    pub replay: String,
}

/// The project's commit, when the binary runs inside its git checkout.
pub fn current_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

pub fn summary<'a>(
    campaign: &'a str,
    config: &'a RunConfig,
    seeds: std::ops::Range<u64>,
    result: &'a CampaignResult,
) -> Summary<'a> {
    Summary {
        campaign,
        histsim_version: env!("CARGO_PKG_VERSION"),
        turmoil_version: TURMOIL_VERSION,
        commit: current_commit(),
        config,
        seeds_start: seeds.start,
        seeds_end: seeds.end,
        seeds_run: result.seeds_run(),
        seeds_failed: result.failures.len(),
        elapsed_s: result.elapsed.as_secs_f64(),
        seeds_per_second: result.seeds_per_second(),
        steps_total: result.steps_total,
        failures: result
            .failures
            .iter()
            .map(|f| FailureSummary {
                seed: f.seed,
                workload: f.workload.to_string(),
                violations: f.violations.clone(),
                failure: f.failure.clone(),
                options: f.options.clone(),
                replay: config.replay_command(f.seed),
            })
            .collect(),
        seeds: &result.lines,
    }
}

pub fn markdown(s: &Summary<'_>) -> String {
    let mut md = String::new();
    let verdict = if s.seeds_failed == 0 {
        "passed"
    } else {
        "FAILED"
    };
    let _ = writeln!(md, "# histsim campaign `{}`: {verdict}\n", s.campaign);
    let _ = writeln!(md, "| | |\n|---|---|");
    let _ = writeln!(
        md,
        "| seeds | {}..{} ({} run) |",
        s.seeds_start, s.seeds_end, s.seeds_run
    );
    let _ = writeln!(md, "| failed seeds | {} |", s.seeds_failed);
    let _ = writeln!(md, "| workload | {:?} |", s.config.workload);
    let _ = writeln!(md, "| store | {:?} |", s.config.store);
    let _ = writeln!(
        md,
        "| planted | {} |",
        s.config
            .planted
            .map(|p| p.to_string())
            .unwrap_or_else(|| "none".into())
    );
    let _ = writeln!(
        md,
        "| speed | {:.1} seeds/s over {:.1} s |",
        s.seeds_per_second, s.elapsed_s
    );
    let _ = writeln!(md, "| steps | {} |", s.steps_total);
    let _ = writeln!(
        md,
        "| versions | histsim {}, turmoil {}, commit {} |",
        s.histsim_version,
        s.turmoil_version,
        s.commit.as_deref().unwrap_or("unknown")
    );
    for f in &s.failures {
        let _ = writeln!(md, "\n## seed {} ({})\n", f.seed, f.workload);
        if let Some(e) = &f.failure {
            let _ = writeln!(md, "- world failure: {e}");
        }
        for v in &f.violations {
            let _ = writeln!(md, "- **{}** {}", v.id, v.message.replace('|', "\\|"));
        }
        let _ = writeln!(md, "\nReplay: `{}`\n", f.replay);
        let _ = writeln!(
            md,
            "<details><summary>options</summary>\n\n```\n{}```\n</details>",
            f.options
        );
    }
    md
}

/// Writes summary.md and summary.json under `dir/<campaign>/`; returns the directory.
pub fn write(dir: &Path, s: &Summary<'_>) -> std::io::Result<PathBuf> {
    let out = dir.join(s.campaign);
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("summary.md"), markdown(s))?;
    let json = serde_json::to_vec_pretty(s).map_err(std::io::Error::other)?;
    std::fs::write(out.join("summary.json"), json)?;
    Ok(out)
}
