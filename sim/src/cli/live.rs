//! `histsim live`: a seed's display scenario run live on this machine (docs/live.md), and the
//! hidden `histsim live-replica`, one replica process of such a run.

use super::args::parse_seeds;
use super::live_verdict::{
    child_served, ended_early, keep_directory_unless_clean, new_run_directory, print_violations,
};
use crate::display::{DisplayScenario, DisplayWorkload};
use crate::live::children::ReplicaCommand;
use crate::live::outcome::{live_run, LiveOutcome};
use crate::live::plan::LivePlan;
use crate::live::replica::{serve, ReplicaSetup};
use crate::live::run::{LiveSetup, Nats};
use crate::live::{compare, regression, report::report};
use crate::rng::SeedRng;
use crate::verdict::Verdict;
use crate::workload::{OptionOverrides, StoreKind};
use history::display::AgentIdentity;
use history::{BugId, Planted};
use std::ops::Range;
use std::path::PathBuf;

#[derive(clap::Args)]
pub(crate) struct LiveArgs {
    /// The workload to run live: `display` (nats-server and replicas) or `runs` (run journals
    /// in worker processes writing one shared SQLite file).
    #[arg(long, default_value = "display", value_parser = ["display", "runs"])]
    workload: String,
    /// Worker processes of `--workload runs` (the runs are spread over them by the scenario;
    /// default 3 on SQLite, 1 on JSONL, whose store has one writer process).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=4))]
    workers: Option<u8>,
    /// The shared store of `--workload runs`: `sqlite` (one file, every worker process writes
    /// it) or `jsonl` (one directory, one writer process killed and restarted).
    #[arg(long, value_enum, default_value = "sqlite")]
    store: StoreKind,
    /// How long the run publishes under faults and settles, in seconds (publishing takes two
    /// thirds of it).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(3..=3600))]
    seconds: u64,
    /// Replica processes.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=5))]
    replicas: u8,
    /// The seed whose scenario and fault plan the run plays.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Switch on one planted (legacy) bug in the replicas, e.g. P4.
    #[arg(long)]
    planted: Option<BugId>,
    /// The nats-server binary to start (default: `nats-server` on the PATH, or the one
    /// scripts/install-nats-server.sh put under target/).
    #[arg(long, value_name = "PATH", conflicts_with = "nats_url")]
    nats_server: Option<PathBuf>,
    /// Use a running server on loopback instead (it is never restarted).
    #[arg(long, value_name = "URL")]
    nats_url: Option<String>,
    /// Where a failing run writes its scenario file.
    #[arg(long, default_value = "histsim-live", value_name = "DIR")]
    regressions_dir: PathBuf,
    /// Run the seeds of `--seeds` live and in the simulation and print their delivery patterns
    /// side by side.
    #[arg(long)]
    compare_sim: bool,
    /// A system under test each replica process writes through and reads from, opened on the
    /// run's directory over the SUT protocol (docs/sut-protocol.md; it must declare
    /// `stored_rows`), instead of histsim's own replica.
    #[arg(long, value_name = "CMD", conflicts_with = "compare_sim")]
    sut: Option<String>,
    /// The seeds of `--compare-sim`.
    #[arg(long, default_value = "0..20", value_parser = parse_seeds)]
    seeds: Range<u64>,
}

pub(crate) fn cmd(args: LiveArgs) -> Verdict {
    if args.workload == "runs" {
        return runs_cmd(&args);
    }
    if args.store != StoreKind::Sqlite || args.workers.is_some() {
        return Verdict::usage("--store and --workers are options of --workload runs");
    }
    if let Some(command) = &args.sut {
        if let Err(e) = crate::live::sut_store::check(command, args.planted) {
            return Verdict::usage(&e);
        }
    }
    let nats = match nats_source(&args) {
        Ok(n) => n,
        Err(e) => return Verdict::usage(&e),
    };
    if args.compare_sim {
        return compare::cmd(args.seeds.clone(), |seed| setup(&args, seed, &nats));
    }
    let setup = match setup(&args, args.seed, &nats) {
        Ok(s) => s,
        Err(e) => return Verdict::usage(&e),
    };
    println!(
        "live seed {}: {} replicas, {} events in {} turns, {} faults, run directory {}",
        args.seed,
        setup.scenario.replicas,
        setup.scenario.steps().count(),
        setup.scenario.turns.len(),
        setup.plan.faults.len(),
        setup.dir.display()
    );
    if let Some(command) = &setup.sut {
        println!("each replica writes and reads through the system under test `{command}`");
    }
    match live_run(setup) {
        Ok(outcome) => verdict_of(&outcome, &args),
        Err(ended) => ended_early(ended),
    }
}

/// `histsim live --workload runs`: one run, or `--compare-sim`.
fn runs_cmd(args: &LiveArgs) -> Verdict {
    if args.sut.is_some() || args.nats_url.is_some() {
        return Verdict::usage("--workload runs: --sut and --nats-url are display options");
    }
    let workers = match (args.store, args.workers) {
        (StoreKind::Memory, _) => {
            return Verdict::usage("--store memory: a live run's store is shared by processes: sqlite or jsonl")
        }
        (StoreKind::Jsonl, Some(n)) if n > 1 => {
            return Verdict::usage(&format!(
                "--store jsonl --workers {n}: the JSONL store has one writer process (its index of the rows is the opening process's own; two processes would number seqs apart)"
            ))
        }
        (StoreKind::Jsonl, _) => 1,
        (_, n) => n.unwrap_or(3),
    };
    let options = |seed| super::live_runs::RunsOptions {
        seconds: args.seconds,
        seed,
        workers,
        store: args.store,
        planted: args.planted,
        regressions_dir: args.regressions_dir.clone(),
    };
    if args.compare_sim {
        return crate::live::runs::compare::cmd(args.seeds.clone(), |seed| {
            super::live_runs::setup(&options(seed))
        });
    }
    super::live_runs::cmd(options(args.seed))
}

/// Prints the report and the violations; a failing run's scenario file is written and played.
fn verdict_of(outcome: &LiveOutcome, args: &LiveArgs) -> Verdict {
    print!("{}", report(outcome));
    print_violations(
        &outcome.violations,
        "the recorded delivery as a scenario",
        || regression::write(regression::display_scenario(outcome), &args.regressions_dir),
        // On the SQLite store, as the live run's.
        |path| regression::replay_in_simulation(path, StoreKind::Sqlite, outcome.setup.planted),
    );
    if outcome.unexplained_losses() > 0 {
        eprintln!(
            "error: {} events reached no replica with no fault to explain it: the live environment misbehaved",
            outcome.unexplained_losses()
        );
    }
    let verdict = if outcome.unsafe_run() {
        Verdict::Violation
    } else if !outcome.violations.is_empty() {
        Verdict::Liveness
    } else if outcome.unexplained_losses() > 0 {
        Verdict::WorldFailure
    } else {
        Verdict::Clean
    };
    keep_directory_unless_clean(verdict, &outcome.setup.dir)
}

/// Where the bus comes from: `--nats-url`, `--nats-server`, the PATH, or the install script's.
fn nats_source(args: &LiveArgs) -> Result<Nats, String> {
    if let Some(url) = &args.nats_url {
        let loopback = [
            "nats://127.0.0.1:",
            "nats://localhost:",
            "127.0.0.1:",
            "localhost:",
        ];
        if !loopback.iter().any(|p| url.starts_with(p)) {
            return Err(format!(
                "--nats-url {url}: live mode uses loopback only (nats://127.0.0.1:PORT)"
            ));
        }
        return Ok(Nats::Url(url.clone()));
    }
    if let Some(path) = &args.nats_server {
        return Ok(Nats::Server(path.clone()));
    }
    find_nats_server().map(Nats::Server).ok_or_else(|| {
        "nats-server not found: run scripts/install-nats-server.sh, or pass --nats-server PATH or --nats-url URL".to_string()
    })
}

/// `nats-server` on the PATH, or where scripts/install-nats-server.sh's pip fallback put it.
pub(crate) fn find_nats_server() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| {
        std::env::split_paths(&p)
            .map(|dir| dir.join("nats-server"))
            .collect::<Vec<_>>()
    });
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/nats-server-venv/bin/nats-server");
    on_path.chain([venv]).find(|p| p.is_file())
}

/// The seed's scenario (with `--replicas`), its live fault plan, and a fresh run directory.
fn setup(args: &LiveArgs, seed: u64, nats: &Nats) -> Result<LiveSetup, String> {
    let scenario = display_scenario(seed, args.replicas)?;
    let server_faults = matches!(nats, Nats::Server(_));
    let dir = new_run_directory("histsim-live-")?;
    Ok(LiveSetup {
        seed,
        plan: LivePlan::of_seed(seed, args.seconds, scenario.replicas, server_faults),
        scenario,
        nats: nats.clone(),
        dir,
        replica_args: replica_command,
        planted: Planted::from_option(args.planted),
        subject: format!("histsim.live.{}.{seed}", std::process::id()),
        sut: args.sut.clone(),
    })
}

fn display_scenario(seed: u64, replicas: u8) -> Result<DisplayScenario, String> {
    let workload = crate::registry::by_name("display").ok_or("no display workload")?;
    let overrides = OptionOverrides {
        replicas: Some(replicas),
    };
    let scenario = workload.scenario_of(SeedRng::new(seed), &overrides);
    scenario
        .get::<DisplayWorkload>()
        .cloned()
        .ok_or_else(|| "the display workload made another workload's scenario".into())
}

/// `histsim live-replica ...` for replica `k` of `setup`.
fn replica_command(setup: &LiveSetup, k: u8, url: &str) -> ReplicaCommand {
    let program = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("histsim"));
    let primary = setup.scenario.agents.get(&setup.scenario.primary);
    let mut args: Vec<String> = vec![
        "live-replica".into(),
        format!("--index={k}"),
        format!("--nats-url={url}"),
        format!("--subject={}.*", setup.subject),
        format!("--store={}", setup.store().display()),
        format!("--thread={}", setup.scenario.thread_id),
        format!(
            "--primary-class={}",
            primary.map_or("", |a| a.class.as_str())
        ),
        format!("--primary-id={}", primary.map_or("", |a| a.id.as_str())),
    ];
    if let Some(bug) = setup.planted.active() {
        args.push(format!("--planted={bug}"));
    }
    if let Some(command) = &setup.sut {
        args.push(format!("--sut={command}"));
    }
    ReplicaCommand { program, args }
}

#[derive(clap::Args)]
pub(crate) struct LiveReplicaArgs {
    #[arg(long)]
    index: u8,
    #[arg(long)]
    nats_url: String,
    #[arg(long)]
    subject: String,
    #[arg(long)]
    store: PathBuf,
    #[arg(long, allow_hyphen_values = true)]
    thread: String,
    #[arg(long, allow_hyphen_values = true)]
    primary_class: String,
    #[arg(long, allow_hyphen_values = true)]
    primary_id: String,
    #[arg(long)]
    planted: Option<BugId>,
    #[arg(long, allow_hyphen_values = true)]
    sut: Option<String>,
}

pub(crate) fn replica_cmd(args: LiveReplicaArgs) -> Verdict {
    let setup = ReplicaSetup {
        nats_url: args.nats_url,
        subject: args.subject,
        store: args.store,
        thread_id: args.thread,
        primary: AgentIdentity {
            agent_class: args.primary_class,
            agent_id: args.primary_id,
        },
        planted: Planted::from_option(args.planted),
        sut: args.sut,
        index: args.index,
    };
    child_served(&format!("replica-{}", args.index), serve(setup))
}
