//! `histsim replay`: one seed, or one scenario file played exactly as a seed, with its options,
//! trace hash and findings; with `--trace` every event and every answer beside the model's
//! expectation.

use super::args::WorldArgs;
use crate::run::{report_of, run_seed, SeedReport};
use crate::scenario_file::ScenarioFile;
use crate::verdict::Verdict;
use std::path::PathBuf;

#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    #[arg(
        long,
        required_unless_present = "scenario",
        conflicts_with = "scenario"
    )]
    seed: Option<u64>,
    /// Play this scenario file (a shrunk regression, a catalog scenario) instead of a seed:
    /// nothing is planted unless `--planted` says so, and `--sut` drives a system under test.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    #[command(flatten)]
    world: WorldArgs,
    /// Print every event of the trace.
    #[arg(long)]
    trace: bool,
    /// Also write the seed as one self-contained HTML page (docs/pictures.md): a lane per host,
    /// time down the page, every read beside the model's expectation, the violation on top.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

pub(crate) fn cmd(args: ReplayArgs) -> Verdict {
    let Some(path) = &args.scenario else {
        let mut config = match args.world.config() {
            Ok(c) => c,
            Err(e) => return Verdict::usage(&e),
        };
        config.keep_trace = args.trace || args.html.is_some();
        let seed = args.seed.expect("clap requires --seed without --scenario");
        let mut report = run_seed(seed, &config);
        println!("seed {seed}: {} workload", report.workload);
        println!("options derived from the seed:\n{}", report.options);
        let page = (format!("seed {seed}"), config.replay_command(seed));
        if let Err(v) = write_html(args.html.as_deref(), &mut report, page, args.trace) {
            return v;
        }
        return print_report(&report);
    };
    let file = match ScenarioFile::load(path) {
        Ok(f) => f,
        Err(e) => return Verdict::usage(&e.to_string()),
    };
    let workload = file.scenario.workload();
    // The file names its workload; the flags' checks (a --sut needs a process boundary) hold
    // for it.
    let mut config = match args.world.with_workload(workload).config() {
        Ok(c) => c,
        Err(e) => return Verdict::usage(&format!("{}: {e}", path.display())),
    };
    config.keep_trace = args.trace || args.html.is_some();
    let run = file.scenario.play(&config.world());
    let planted = config.planted.map_or("none".to_string(), |p| p.to_string());
    println!(
        "scenario {} [{}]: {} workload, planted {planted}",
        path.display(),
        file.id,
        workload.name()
    );
    let mut report = report_of(0, workload.name(), String::new(), run);
    let command = format!(
        "{} replay --scenario {}{}",
        crate::run::histsim_command(),
        crate::run::shell_word(&path.to_string_lossy()),
        config.replay_flags()
    );
    let page = (
        format!("scenario {} [{}]", path.display(), file.id),
        command,
    );
    if let Err(v) = write_html(args.html.as_deref(), &mut report, page, args.trace) {
        return v;
    }
    print_report(&report)
}

/// Writes the page of `report` to `path` (when asked), titled and with the replay command of
/// `page`; then forgets the trace and the answers unless `--trace` asked to print them.
fn write_html(
    path: Option<&std::path::Path>,
    report: &mut SeedReport,
    (title, replay_command): (String, String),
    print_trace: bool,
) -> Result<(), Verdict> {
    let Some(path) = path else {
        return Ok(());
    };
    let facts = report.picture.take().unwrap_or_default();
    let picture = crate::picture::SeedPicture {
        title,
        workload: report.workload,
        options: &report.options,
        violations: &report.violations,
        failure: report.failure.as_deref(),
        replay_command,
        trace: report.trace_full.as_deref().unwrap_or_default(),
        facts: &facts,
    };
    let html = crate::picture::seed_page(&picture);
    if let Err(e) = std::fs::write(path, &html) {
        return Err(Verdict::usage(&format!("--html {}: {e}", path.display())));
    }
    println!("page: {} ({} bytes)", path.display(), html.len());
    if !print_trace {
        report.trace_full = None;
        report.details = None;
    }
    Ok(())
}

/// What a played world showed, and its verdict.
fn print_report(report: &SeedReport) -> Verdict {
    if let Some(full) = &report.trace_full {
        println!("trace:");
        for line in full {
            println!("  {line}");
        }
    }
    if let Some(details) = &report.details {
        println!("answers:\n{details}");
    }
    println!(
        "steps: {}, trace events: {}, simulated {} ms",
        report.steps, report.trace_events, report.sim_elapsed_ms
    );
    super::run::print_left_out(&report.left_out.counts);
    for line in crate::report::answer_lines(&report.answers.counts, &report.left_out.counts) {
        println!("{line}");
    }
    super::run::print_findings(
        (&report.violations, report.failure.as_deref()),
        "",
        "violation ",
    );
    println!("trace-hash: {}", report.trace_hash);
    Verdict::of_seed(report)
}
