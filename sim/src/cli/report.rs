//! `histsim report`: tools for campaign reports.

use crate::report::{self, Summary};
use crate::verdict::Verdict;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub(crate) enum ReportAction {
    /// Merge shard reports (directories holding summary.json) into one report.
    Merge {
        /// Shard report directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Name of the merged campaign (a plain name: the report goes to <report-dir>/<name>/).
        #[arg(long, default_value = "merged", value_parser = super::args::parse_campaign_name)]
        name: String,
        #[arg(long, default_value = "reports")]
        report_dir: PathBuf,
    },
}

pub(crate) fn cmd(action: ReportAction) -> Verdict {
    match action {
        ReportAction::Merge {
            dirs,
            name,
            report_dir,
        } => merge(&dirs, &name, &report_dir),
    }
}

fn merge(dirs: &[PathBuf], name: &str, report_dir: &std::path::Path) -> Verdict {
    let parts: Result<Vec<Summary>, String> = dirs
        .iter()
        .map(|d| Summary::read(d).map_err(|e| e.to_string()))
        .collect();
    let merged = parts.and_then(|parts| {
        let merged = Summary::merge(&parts, name).map_err(|e| e.to_string())?;
        Ok((parts.len(), merged))
    });
    let (n, merged) = match merged {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return Verdict::Usage;
        }
    };
    if merged.seeds_run == 0 {
        // Shards that ran nothing merge into a campaign that checked nothing: never a pass.
        println!("FAILED: the {n} reports ran no seed: nothing was checked; no report written");
        return Verdict::NothingChecked;
    }
    // The merged campaign's page; its failing seeds' pages stay with their shards (drawing
    // them plays each seed again: `histsim replay --seed N --html FILE`).
    let written = report::write(report_dir, &merged, &[]).and_then(|dir| {
        let index = crate::picture::campaign_page(&crate::picture::CampaignPicture {
            summary: &merged,
            pages: &[],
        });
        std::fs::write(dir.join("index.html"), index).map(|()| dir)
    });
    match written {
        Ok(dir) => println!(
            "merged {n} reports: {} seeds, {} failing -> {}",
            merged.seeds_run,
            merged.seeds_failed,
            dir.display()
        ),
        Err(e) => {
            eprintln!("error: cannot write the merged report: {e}");
            return Verdict::Usage;
        }
    }
    Verdict::clean_or(merged.seeds_failed == 0, Verdict::Violation)
}
