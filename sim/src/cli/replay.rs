//! `histsim replay`: one seed, its options, trace hash and findings; with `--trace` every event
//! and every answer beside the model's expectation.

use super::args::WorldArgs;
use crate::run::run_seed;
use crate::verdict::Verdict;

#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    #[arg(long)]
    seed: u64,
    #[command(flatten)]
    world: WorldArgs,
    /// Print every event of the trace.
    #[arg(long)]
    trace: bool,
}

pub(crate) fn cmd(args: ReplayArgs) -> Verdict {
    let mut config = match args.world.config() {
        Ok(c) => c,
        Err(e) => return Verdict::usage(&e),
    };
    config.keep_trace = args.trace;
    let seed = args.seed;
    let report = run_seed(seed, &config);
    println!("seed {seed}: {} workload", report.workload);
    println!("options derived from the seed:\n{}", report.options);
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
    for v in &report.violations {
        println!("violation {v}");
    }
    if let Some(e) = &report.failure {
        println!("world failure: {e}");
    }
    println!("trace-hash: {}", report.trace_hash);
    Verdict::of_seed(&report)
}
