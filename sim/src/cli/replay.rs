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
}

pub(crate) fn cmd(args: ReplayArgs) -> Verdict {
    let Some(path) = &args.scenario else {
        let mut config = match args.world.config() {
            Ok(c) => c,
            Err(e) => return Verdict::usage(&e),
        };
        config.keep_trace = args.trace;
        let seed = args.seed.expect("clap requires --seed without --scenario");
        let report = run_seed(seed, &config);
        println!("seed {seed}: {} workload", report.workload);
        println!("options derived from the seed:\n{}", report.options);
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
    config.keep_trace = args.trace;
    let run = file.scenario.play(&config.world());
    let planted = config.planted.map_or("none".to_string(), |p| p.to_string());
    println!(
        "scenario {} [{}]: {} workload, planted {planted}",
        path.display(),
        file.id,
        workload.name()
    );
    print_report(&report_of(0, workload.name(), String::new(), run))
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
    for v in &report.violations {
        println!("violation {v}");
    }
    if let Some(e) = &report.failure {
        println!("world failure: {e}");
    }
    println!("trace-hash: {}", report.trace_hash);
    Verdict::of_seed(report)
}
