//! `histsim fuzz`: coverage-guided campaigns over the `fuzz/` targets (`sim_<workload>`), their
//! seed corpus from the repository's scenario files, and crash inputs turned into scenario files.

use crate::fuzz::campaign::{self, CampaignOptions};
use crate::fuzz::corpus::{target_name, write_seed_corpus};
use crate::fuzz::import::import;
use crate::fuzz::reach;
use crate::fuzz::target::planted_from_env;
use crate::registry;
use crate::verdict::Verdict;
use crate::workload::DynWorkload;
use history::BugId;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Subcommand)]
pub(crate) enum FuzzAction {
    /// Write every scenario file under `--scenarios` as a seed input of its workload's target
    /// (`<out>/sim_<workload>/`).
    SeedCorpus(SeedCorpusArgs),
    /// Turn a libFuzzer crash input of `sim_<workload>` into a shrunk scenario file.
    Import(ImportArgs),
    /// Fuzz one workload's target for a time budget (built by `cargo fuzz build`); report like `histsim run`.
    Run(FuzzRunArgs),
    /// Play inputs (a campaign's corpus) or random seeds again and print the workload probes
    /// and pairs of probes they reach: a corpus beside `histsim run` in the workload's terms.
    Coverage(CoverageArgs),
}

#[derive(clap::Args)]
pub(crate) struct CoverageArgs {
    #[arg(long, value_parser = parse_workload)]
    workload: &'static dyn DynWorkload,
    /// Input files, or folders of them (`reports/<name>/corpus`).
    #[arg(required_unless_present = "seeds", conflicts_with = "seeds")]
    inputs: Vec<PathBuf>,
    /// Random seeds `A..B` instead, played as `histsim run` plays them.
    #[arg(long, value_parser = crate::cli::args::parse_seeds)]
    seeds: Option<std::ops::Range<u64>>,
    /// With `--seeds`: also write each seed's generator-mode input into this folder, for the
    /// target's code edges (`sim_<workload> -runs=0 FOLDER`; seeds over the size bound are
    /// rejected there).
    #[arg(long, requires = "seeds")]
    write_inputs: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct SeedCorpusArgs {
    #[arg(long, default_value = "scenarios")]
    scenarios: PathBuf,
    #[arg(long, default_value = "fuzz/corpus")]
    out: PathBuf,
}

#[derive(clap::Args)]
pub(crate) struct ImportArgs {
    /// The crash input libFuzzer wrote (`fuzz/artifacts/sim_display/crash-...`).
    crash_file: PathBuf,
    /// The workload whose target found it (display, runs, journal, spool, merge).
    #[arg(long, value_parser = parse_workload)]
    workload: &'static dyn DynWorkload,
    /// The planted bug the target ran with; default: `HISTSIM_PLANTED`, as the target read it.
    #[arg(long)]
    planted: Option<BugId>,
    #[arg(long, default_value = "scenarios/regressions")]
    out: PathBuf,
    /// Give up shrinking after this many seconds (the best so far is written).
    #[arg(long, default_value_t = 30)]
    time_cap_s: u64,
}

#[derive(clap::Args)]
pub(crate) struct FuzzRunArgs {
    #[arg(long, value_parser = parse_workload)]
    workload: &'static dyn DynWorkload,
    /// Seconds of fuzzing (libFuzzer's -max_total_time).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    budget_s: u64,
    /// Switch on one planted bug by its catalog ID (passed as HISTSIM_PLANTED).
    #[arg(long)]
    planted: Option<BugId>,
    /// libFuzzer processes (-fork=K above 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    jobs: u32,
    /// Start from an empty corpus instead of the repository's scenario files.
    #[arg(long)]
    empty_corpus: bool,
    /// Build and run the targets' debug build (cargo fuzz --dev): no release build to wait for.
    #[arg(long)]
    dev: bool,
    /// Build the target with libFuzzer's comparison tracing (off by default: it halved the
    /// executions a second, and a generator-mode input's bytes seed random streams that no
    /// comparison steers; it can help mutate scenario-file inputs).
    #[arg(long)]
    trace_compares: bool,
    /// The cargo-fuzz crate.
    #[arg(long, default_value = "fuzz")]
    fuzz_dir: PathBuf,
    #[arg(long, default_value = "scenarios")]
    scenarios: PathBuf,
    /// Campaign name (a plain name, no path): the report goes to <report-dir>/<name>/.
    #[arg(long, value_parser = super::args::parse_campaign_name)]
    name: Option<String>,
    #[arg(long, default_value = "reports")]
    report_dir: PathBuf,
    /// More flags for libFuzzer, e.g. `--libfuzzer-arg=-use_value_profile=1`.
    #[arg(long = "libfuzzer-arg", allow_hyphen_values = true)]
    libfuzzer_args: Vec<String>,
}

pub(crate) fn cmd(action: FuzzAction) -> Verdict {
    match action {
        FuzzAction::SeedCorpus(a) => seed_corpus(&a.scenarios, &a.out),
        FuzzAction::Import(a) => import_cmd(a),
        FuzzAction::Run(a) => run_cmd(a),
        FuzzAction::Coverage(a) => coverage_cmd(a),
    }
}

fn parse_workload(s: &str) -> Result<&'static dyn DynWorkload, String> {
    registry::by_name(s).ok_or_else(|| {
        format!(
            "no workload `{s}`; expected one of {}",
            registry::names().join(", ")
        )
    })
}

fn seed_corpus(scenarios: &Path, out: &Path) -> Verdict {
    match write_seed_corpus(scenarios, out) {
        Ok(counts) => {
            for (target, n) in counts {
                println!(
                    "{target}: {n} seed inputs in {}",
                    out.join(&target).display()
                );
            }
            Verdict::Clean
        }
        Err(e) => Verdict::usage(&e),
    }
}

fn coverage_cmd(a: CoverageArgs) -> Verdict {
    let probes = a.workload.probes();
    let (what, reach) = match &a.seeds {
        Some(seeds) => {
            if let Some(dir) = &a.write_inputs {
                if let Err(e) = write_seed_inputs(dir, seeds.clone()) {
                    return Verdict::usage(&e);
                }
            }
            let what = format!("seeds {}..{}", seeds.start, seeds.end);
            (what, reach::of_seeds(a.workload, seeds.clone()))
        }
        None => match reach::of_inputs(a.workload, &a.inputs) {
            Ok(reach) => ("inputs".to_string(), reach),
            Err(e) => return Verdict::usage(&e),
        },
    };
    let n = probes.len();
    println!(
        "histsim fuzz coverage: {}, {what}: {} played, {} rejected, {} failing",
        a.workload.name(),
        reach.plays - reach.rejected,
        reach.rejected,
        reach.failed
    );
    println!("probes fired: {} of {n}", reach.probes_fired(probes));
    println!(
        "pairs of probes fired in one play: {} of {}",
        reach.pairs.len(),
        n * n.saturating_sub(1) / 2
    );
    let never = reach.coverage.never_fired(probes);
    if !never.is_empty() {
        println!("never fired: {}", never.join(", "));
    }
    Verdict::Clean
}

fn write_seed_inputs(dir: &Path, seeds: std::ops::Range<u64>) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for seed in seeds {
        let path = dir.join(format!("seed-{seed}"));
        std::fs::write(&path, reach::input_of_seed(seed))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn import_cmd(a: ImportArgs) -> Verdict {
    let planted = match a.planted.map(Some).map(Ok).unwrap_or_else(planted_from_env) {
        Ok(p) => p,
        Err(e) => return Verdict::usage(&e),
    };
    let cap = Duration::from_secs(a.time_cap_s);
    match import(&a.crash_file, a.workload, planted, &a.out, cap) {
        Ok(i) => {
            println!(
                "{} violates {}: {} steps, {} faults shrunk to {} steps, {} faults",
                a.crash_file.display(),
                i.id,
                i.shrunk.steps_before,
                i.shrunk.faults_before,
                i.shrunk.steps,
                i.shrunk.faults
            );
            println!("regression scenario: {}", i.path.display());
            println!(
                "replay it: {} scenarios {}",
                crate::run::histsim_command(),
                i.path.display()
            );
            Verdict::Clean
        }
        Err(e) => Verdict::usage(&e),
    }
}

/// The seed inputs a run starts from (`None`: an empty corpus), written afresh.
fn seed_inputs(a: &FuzzRunArgs, target: &str) -> Result<Option<PathBuf>, String> {
    let seeds = (!a.empty_corpus).then(|| a.fuzz_dir.join("corpus").join(target));
    if let Some(seeds) = &seeds {
        // The seed inputs are derived from the scenario files: written afresh each campaign so
        // they never lag behind them.
        write_seed_corpus(&a.scenarios, &a.fuzz_dir.join("corpus"))?;
        if !seeds.is_dir() {
            return Err(format!("no scenario file of {target} to seed from"));
        }
    }
    Ok(seeds)
}

fn run_cmd(a: FuzzRunArgs) -> Verdict {
    let target = target_name(a.workload.name());
    let name = a.name.clone().unwrap_or_else(|| {
        let planted = a.planted.map(|p| format!("-{p}")).unwrap_or_default();
        format!("fuzz-{}-{}s{planted}", a.workload.name(), a.budget_s)
    });
    let run_dir = a.report_dir.join(&name);
    let seeds = match seed_inputs(&a, &target) {
        Ok(seeds) => seeds,
        Err(why) => return Verdict::usage(&why),
    };
    let options = CampaignOptions {
        workload: a.workload,
        budget_s: a.budget_s,
        planted: a.planted,
        jobs: a.jobs,
        fuzz_dir: a.fuzz_dir.clone(),
        seeds,
        run_dir: run_dir.clone(),
        libfuzzer_args: a.libfuzzer_args.clone(),
        import_cap: Duration::from_secs(30),
        dev: a.dev,
        trace_compares: a.trace_compares,
    };
    println!(
        "histsim fuzz run: {target}, {} s, planted {}, jobs {}, report {}",
        a.budget_s,
        a.planted
            .map(|p| p.to_string())
            .unwrap_or_else(|| "none".into()),
        a.jobs,
        run_dir.display()
    );
    let summary = match campaign::run(&name, &options) {
        Ok(s) => s,
        Err(e) => return Verdict::usage(&e),
    };
    if let Err(e) = campaign::write(&run_dir, &summary) {
        return Verdict::usage(&format!("{}: {e}", run_dir.display()));
    }
    print!("{}", campaign::markdown(&summary));
    if !summary.violations.is_empty() {
        Verdict::Violation
    } else if summary.failure.is_some() {
        Verdict::WorldFailure
    } else {
        Verdict::Clean
    }
}
