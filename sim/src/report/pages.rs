//! The pages beside a campaign's report: `seed-N.html` for each failing seed (played again with
//! its trace kept: the campaign keeps none) and `index.html` for the campaign, linked from
//! `summary.md`.

use super::Summary;
use crate::picture::{campaign_page, seed_page, CampaignPicture, SeedPicture};
use crate::run::{run_seed, RunConfig};
use std::fmt::Write as _;
use std::path::Path;

/// How many failing seeds get a page: each is played again.
pub const SEED_PAGES_MAX: usize = 20;

/// The name of a seed's page beside the report.
pub fn seed_page_name(seed: u64) -> String {
    format!("seed-{seed}.html")
}

/// Writes the pages of the failing seeds (the first [`SEED_PAGES_MAX`]) and `index.html` under
/// `out`, and links them from `out/summary.md`; returns the seeds that got a page.
pub fn write(out: &Path, s: &Summary, config: &RunConfig) -> std::io::Result<Vec<u64>> {
    let traced = RunConfig {
        keep_trace: true,
        ..config.clone()
    };
    let mut pages = Vec::new();
    for f in s.failures.iter().take(SEED_PAGES_MAX) {
        let report = run_seed(f.seed, &traced);
        let facts = report.picture.clone().unwrap_or_default();
        let html = seed_page(&SeedPicture {
            title: format!("seed {}", f.seed),
            workload: report.workload,
            options: &report.options,
            violations: &report.violations,
            failure: report.failure.as_deref(),
            replay_command: f.replay.clone(),
            trace: report.trace_full.as_deref().unwrap_or_default(),
            facts: &facts,
        });
        std::fs::write(out.join(seed_page_name(f.seed)), html)?;
        pages.push(f.seed);
    }
    let index = campaign_page(&CampaignPicture {
        summary: s,
        pages: &pages,
    });
    std::fs::write(out.join("index.html"), index)?;
    let mut md = std::fs::read_to_string(out.join("summary.md"))?;
    md.push_str(&pages_markdown(s, &pages));
    std::fs::write(out.join("summary.md"), md)?;
    Ok(pages)
}

/// The section of `summary.md` that links the pages.
fn pages_markdown(s: &Summary, pages: &[u64]) -> String {
    let mut md = String::from("\n## pages\n\nThe campaign as a page: [index.html](index.html)\n");
    for seed in pages {
        let _ = writeln!(md, "- seed {seed}: [{0}]({0})", seed_page_name(*seed));
    }
    let more = s.failures.len().saturating_sub(pages.len());
    if more > 0 {
        let _ = writeln!(
            md,
            "- {more} more failing seeds without a page (`histsim replay --seed N --html FILE` draws one)"
        );
    }
    md
}
