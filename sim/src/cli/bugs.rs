//! `histsim bugs`: every planted bug found by random simulation under its own ID, and a clean
//! campaign that finds nothing.

use super::args::{default_jobs, truncate, SutArgs};
use super::run::print_failure;
use crate::bugs::{hunt, planted_ids, switch_in_system, Detection};
use crate::campaign::{run_campaign, CampaignConfig};
use crate::registry;
use crate::run::RunConfig;
use crate::sut::{SutOptions, SutProcess};
use crate::verdict::Verdict;
use crate::workload::StoreKind;
use history::BugId;

#[derive(clap::Args)]
pub(crate) struct BugsArgs {
    /// Give up on a bug after this many seeds.
    #[arg(long, default_value_t = 10_000)]
    max_seeds: u64,
    /// Start every hunt at this seed instead of 0: another sample of the seeds each bug takes
    /// (the clean campaign still runs from 0).
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Seeds of the clean campaign that must find nothing.
    #[arg(long, default_value_t = 300)]
    clean_seeds: u64,
    /// Only these IDs (default: every planted bug).
    #[arg(long, value_delimiter = ',')]
    only: Vec<BugId>,
    #[arg(long, value_enum, default_value = "memory")]
    store: StoreKind,
    #[arg(long, value_parser = super::args::parse_jobs)]
    jobs: Option<usize>,
    #[command(flatten)]
    sut: SutArgs,
}

pub(crate) fn cmd(args: BugsArgs) -> Verdict {
    // A missing program is usage before the first hunt, as for `run`.
    let sut = match args.sut.checked_options() {
        Ok(sut) => sut,
        Err(why) => return Verdict::usage(&why),
    };
    let jobs = args.jobs.unwrap_or_else(|| default_jobs(sut.is_some()));
    let ids = match ids_to_hunt(&args, sut.as_ref()) {
        Ok(ids) => ids,
        Err(why) => return Verdict::usage(&why),
    };
    if ids.is_empty() {
        println!("no planted bug to hunt: nothing was checked");
        return Verdict::NothingChecked;
    }
    let base = RunConfig {
        store: args.store,
        sut,
        ..RunConfig::new()
    };
    println!(
        "histsim bugs: {} planted bugs, up to {} seeds each from seed {}, store {:?}, jobs {jobs}{}",
        ids.len(),
        args.max_seeds,
        args.first_seed,
        args.store,
        base.sut
            .as_ref()
            .map(|s| format!(", system under test `{}`", s.command))
            .unwrap_or_default()
    );
    println!(
        "{:<5} {:<9} {:>8} {:>9}  {:<6} message",
        "ID", "workload", "seeds", "seconds", "fired"
    );
    let mut detected = 0;
    for id in &ids {
        if registry::covering(*id).is_none() {
            println!("{:<5} no workload of this build covers it", id.as_str());
            continue;
        }
        let d = hunt(*id, &base, args.first_seed, args.max_seeds, jobs);
        detected += usize::from(d.detected());
        print_detection(&d);
    }
    let clean_ok = clean_campaigns(&base, &ids, args.clean_seeds, jobs);
    println!("detected {detected}/{} planted bugs", ids.len());
    Verdict::clean_or(detected == ids.len() && clean_ok, Verdict::Violation)
}

/// The IDs to hunt: `--only`, or every planted bug; through a system under test, only the bugs
/// of the workloads whose ops it declares (asked once, by `hello`).
fn ids_to_hunt(args: &BugsArgs, sut: Option<&SutOptions>) -> Result<Vec<BugId>, String> {
    let hello = match sut {
        None => None,
        Some(options) => match SutProcess::start(options.clone()) {
            Ok(process) => Some(process.hello().clone()),
            Err(e) => return Err(format!("--sut: {e}")),
        },
    };
    let served = hello.as_ref().map(|h| h.ops.clone());
    let reachable = |id: &BugId| match &served {
        None => true,
        Some(ops) => registry::covering(*id).is_some_and(|w| {
            w.has_sut_boundary() && w.sut_ops().iter().all(|op| ops.iter().any(|o| o == op))
        }),
    };
    let has_store =
        |id: &BugId| registry::covering(*id).is_some_and(|w| w.stores().contains(&args.store));
    let ids: Vec<BugId> = if args.only.is_empty() {
        planted_ids()
            .into_iter()
            .filter(reachable)
            .filter(has_store)
            .collect()
    } else {
        args.only.clone()
    };
    if let Some(id) = ids.iter().find(|id| !has_store(id)) {
        return Err(format!(
            "--store jsonl: {id} lives in a workload without a JSONL store"
        ));
    }
    if let Some(id) = ids.iter().find(|id| !reachable(id)) {
        return Err(format!(
            "--sut: {id} lives in a workload this system under test does not serve"
        ));
    }
    match (sut, hello) {
        (Some(sut), Some(hello)) if !hello.planted => {
            on_histsims_side(ids, &sut.command, !args.only.is_empty())
        }
        _ => Ok(ids),
    }
}

/// The bugs of `ids` a system without histsim's planted switches can be hunted for: those whose
/// switch lives in histsim's world. Said at once, as hunting the others would run every seed
/// of every hunt for a bug that is never planted, and report it undetected. `only`: the user
/// named the IDs, so one that cannot be planted is bad usage.
fn on_histsims_side(ids: Vec<BugId>, system: &str, only: bool) -> Result<Vec<BugId>, String> {
    let (here, there): (Vec<BugId>, Vec<BugId>) =
        ids.into_iter().partition(|id| !switch_in_system(*id));
    let spelled = |ids: &[BugId]| {
        let names: Vec<&str> = ids.iter().map(|id| id.as_str()).collect();
        names.join(" ")
    };
    if there.is_empty() {
        return Ok(here);
    }
    if only {
        return Err(format!(
            "--sut: `{system}` does not declare `planted` in its hello, so {} cannot be planted \
             in it (the switch lives in the system; docs/sut-protocol.md, `hello`)",
            spelled(&there)
        ));
    }
    println!(
        "`{system}` does not declare `planted` in its hello: {} bugs whose switch lives in the \
         system cannot be planted there ({}); hunting only the {} on histsim's side{}",
        there.len(),
        spelled(&there),
        here.len(),
        if here.is_empty() {
            String::new()
        } else {
            format!(" ({})", spelled(&here))
        }
    );
    Ok(here)
}

/// The clean campaign: without a planted bug nothing fires. Through a system under test (or
/// with a store only some workloads have), one campaign for each workload the hunted bugs ran
/// in.
fn clean_campaigns(base: &RunConfig, ids: &[BugId], seeds: u64, jobs: usize) -> bool {
    let every_workload_has_the_store = registry::REGISTRY
        .iter()
        .all(|w| w.stores().contains(&base.store));
    if base.sut.is_none() && every_workload_has_the_store {
        return clean_campaign(base, seeds, jobs);
    }
    let mut workloads: Vec<&'static str> = ids
        .iter()
        .filter_map(|id| registry::covering(*id).map(|w| w.name()))
        .collect();
    workloads.dedup();
    workloads.iter().all(|name| {
        let config = RunConfig {
            workload: registry::by_name(name),
            ..base.clone()
        };
        clean_campaign(&config, seeds, jobs)
    })
}

fn print_detection(d: &Detection) {
    println!(
        "{:<5} {:<9} {:>8} {:>9.2}  {:<6} {}",
        d.id.as_str(),
        d.workload,
        d.seeds_to_detection
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".into()),
        d.seconds,
        d.fired
            .map(|f| f.to_string())
            .unwrap_or_else(|| "none".into()),
        truncate(d.message.as_deref().unwrap_or(""), 100)
    );
}

/// The same workloads without a planted bug must find nothing.
fn clean_campaign(base: &RunConfig, seeds: u64, jobs: usize) -> bool {
    let clean = run_campaign(&CampaignConfig {
        seeds: 0..seeds,
        shard: None,
        jobs,
        stop_at_first: true,
        progress: false,
        budget: None,
        run: base.clone(),
    });
    match clean.failures.first() {
        None => println!("clean: {} seeds, 0 violations", clean.seeds_run()),
        Some(f) => {
            println!("clean campaign FAILED:");
            print_failure(f, base, true);
        }
    }
    clean.failures.is_empty()
}
