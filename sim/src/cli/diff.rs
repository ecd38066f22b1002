//! `histsim diff`: the same seeds through two systems under test (or one of them histsim's own
//! components, `in-process`), the first seed whose answers differ, and that difference shrunk
//! into a scenario file. A differential test: each system is the other's second opinion.
//!
//! Both worlds play the same scenario; they stay step for step alike as long as the systems
//! answer alike, so the first trace event that differs (the protocol's own lines aside) is the
//! first answer that differs.

use super::args::{default_jobs, parse_seeds};
use crate::registry;
use crate::run::{scenario_of, RunConfig};
use crate::scenario_file::{ScenarioFile, SCENARIO_FORMAT};
use crate::shrink::shrink_while;
use crate::sut::SutOptions;
use crate::verdict::Verdict;
use crate::workload::{AnyScenario, StoreKind, WorldConfig};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The name of histsim's own components where a `--sut` command would go.
const IN_PROCESS: &str = "in-process";

#[derive(clap::Args)]
pub(crate) struct DiffArgs {
    /// Seeds as `A..B` (B excluded) or a single seed.
    #[arg(long, default_value = "0..1000", value_parser = parse_seeds)]
    seeds: Range<u64>,
    /// The workload both systems play (one with a process boundary: display or runs).
    #[arg(long)]
    workload: String,
    /// The two systems, `--sut A --sut B`; `in-process` is histsim's own components.
    #[arg(long = "sut", value_name = "CMD", num_args = 1, required = true)]
    systems: Vec<String>,
    #[arg(long, value_enum, default_value = "memory")]
    store: StoreKind,
    /// Longest wait for one answer of either system, in wall milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    sut_timeout_ms: u64,
    /// Worker threads; default: two a core.
    #[arg(long)]
    jobs: Option<usize>,
    /// Replay a difference file (written by an earlier `histsim diff`) instead of seeds.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Time cap of the shrink of the first difference.
    #[arg(long, default_value_t = 60)]
    shrink_cap_s: u64,
    /// Where the difference file goes.
    #[arg(long, default_value = "reports/diff")]
    out: PathBuf,
}

/// One side of the comparison.
struct Side {
    name: String,
    world: WorldConfig,
}

/// What a system showed in one seed: every trace event but the protocol's own lines.
struct Shown {
    events: Vec<String>,
    verdict: String,
}

fn show(scenario: &AnyScenario, side: &Side) -> Shown {
    let world = WorldConfig {
        keep_trace: true,
        ..side.world.clone()
    };
    let run = scenario.play(&world);
    let events = run
        .trace
        .full()
        .unwrap_or_default()
        .iter()
        .filter(|line| {
            let event = line.split_once("us ").map_or(line.as_str(), |(_, e)| e);
            !event.starts_with("sut")
        })
        .cloned()
        .collect();
    let verdict = match (&run.failure, run.violations.first()) {
        (Some(f), _) => format!("world failure: {f}"),
        (None, Some(v)) => format!("violation {v}"),
        (None, None) => "clean".to_string(),
    };
    Shown { events, verdict }
}

/// The first difference between what the two sides showed, as text; `None` when alike.
fn difference(scenario: &AnyScenario, a: &Side, b: &Side) -> Option<String> {
    let (x, y) = (show(scenario, a), show(scenario, b));
    let at = x.events.iter().zip(&y.events).position(|(p, q)| p != q);
    let at = match at {
        Some(at) => at,
        None if x.events.len() != y.events.len() => x.events.len().min(y.events.len()),
        None if x.verdict != y.verdict => {
            return Some(format!(
                "the same answers, different verdicts: {}: {}; {}: {}",
                a.name, x.verdict, b.name, y.verdict
            ))
        }
        None => return None,
    };
    let event = |v: &[String]| v.get(at).cloned().unwrap_or_else(|| "<end>".into());
    Some(format!(
        "event {at}:\n  {}: {}\n  {}: {}\n  verdicts: {}: {}; {}: {}",
        a.name,
        event(&x.events),
        b.name,
        event(&y.events),
        a.name,
        x.verdict,
        b.name,
        y.verdict
    ))
}

fn side(name: &str, store: StoreKind, timeout_ms: u64) -> Side {
    let sut = (name != IN_PROCESS).then(|| {
        std::sync::Arc::new(SutOptions {
            timeout_ms,
            ..SutOptions::new(name)
        })
    });
    Side {
        name: name.to_string(),
        world: WorldConfig {
            sut,
            ..WorldConfig::new(store, history::Planted::none())
        },
    }
}

pub(crate) fn cmd(args: DiffArgs) -> Verdict {
    let Some(workload) = registry::by_name(&args.workload).filter(|w| w.has_sut_boundary()) else {
        return Verdict::usage(&format!(
            "--workload {}: histsim diff compares the workloads with a process boundary (display, runs)",
            args.workload
        ));
    };
    let [a, b] = args.systems.as_slice() else {
        return Verdict::usage("histsim diff takes exactly two systems: --sut A --sut B");
    };
    let (a, b) = (
        side(a, args.store, args.sut_timeout_ms),
        side(b, args.store, args.sut_timeout_ms),
    );
    if let Some(path) = &args.scenario {
        return replay_file(path, &a, &b);
    }
    let config = RunConfig {
        workload: Some(workload),
        store: args.store,
        ..RunConfig::new()
    };
    println!(
        "histsim diff: seeds {}..{}, workload {}, `{}` against `{}`",
        args.seeds.start,
        args.seeds.end,
        workload.name(),
        a.name,
        b.name
    );
    let jobs = args.jobs.unwrap_or_else(|| default_jobs(true));
    let Some((seed, why)) = first_differing_seed(args.seeds.clone(), &config, &a, &b, jobs) else {
        println!(
            "alike: {} seeds, the two systems answered alike",
            args.seeds.end - args.seeds.start
        );
        return Verdict::Clean;
    };
    println!("DIFFERENT at seed {seed}: {why}");
    write_shrunk(seed, &scenario_of(seed, &config), &a, &b, &args);
    Verdict::Violation
}

/// The lowest seed of `seeds` whose answers differ, with the difference.
fn first_differing_seed(
    seeds: Range<u64>,
    config: &RunConfig,
    a: &Side,
    b: &Side,
    jobs: usize,
) -> Option<(u64, String)> {
    let next = AtomicU64::new(seeds.start);
    let found: Mutex<Option<(u64, String)>> = Mutex::new(None);
    let lowest_found = || {
        found
            .lock()
            .map_or(u64::MAX, |f| f.as_ref().map_or(u64::MAX, |x| x.0))
    };
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::SeqCst);
                // Seeds below a difference found still run, so the lowest one is reported.
                if seed >= seeds.end || seed > lowest_found() {
                    return;
                }
                if seed > seeds.start && (seed - seeds.start).is_multiple_of(1000) {
                    eprintln!("diff: seed {seed}");
                }
                if let Some(why) = difference(&scenario_of(seed, config), a, b) {
                    let mut f = found.lock().unwrap_or_else(|e| e.into_inner());
                    if f.as_ref().is_none_or(|(s, _)| seed < *s) {
                        *f = Some((seed, why));
                    }
                }
            });
        }
    });
    found.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Shrinks the difference of `seed` and writes it as a difference file under `args.out`.
fn write_shrunk(seed: u64, scenario: &AnyScenario, a: &Side, b: &Side, args: &DiffArgs) {
    let shrunk = shrink_while(scenario, Duration::from_secs(args.shrink_cap_s), |c| {
        difference(c, a, b).is_some()
    });
    let why = difference(&shrunk.scenario, a, b).unwrap_or_default();
    let w = shrunk.scenario.workload();
    let title = format!("Difference: seed {seed}, `{}` against `{}`", a.name, b.name);
    let description = format!(
        "Shrunk by histsim diff from seed {seed}: {} steps and {} faults down to {} steps and {} faults. First difference: {why}",
        shrunk.steps_before, shrunk.faults_before, shrunk.steps, shrunk.faults
    );
    let mut table = toml::Table::new();
    table.insert(
        "format".into(),
        toml::Value::Integer(i64::from(SCENARIO_FORMAT)),
    );
    table.insert("title".into(), toml::Value::String(title));
    table.insert("description".into(), toml::Value::String(description));
    let script = match toml::Value::try_from(w.serializable(&shrunk.scenario)) {
        Ok(v) => v,
        Err(e) => return eprintln!("error: cannot write the difference: {e}"),
    };
    table.insert(w.section().into(), script);
    let path = args.out.join(format!("seed-{seed}.diff.toml"));
    let written = std::fs::create_dir_all(&args.out)
        .and_then(|_| std::fs::write(&path, toml::to_string_pretty(&table).unwrap_or_default()));
    match written {
        Ok(()) => println!(
            "shrunk: {} steps, {} faults ({} attempts); difference file: {}\nreplay: histsim diff --workload {} --sut '{}' --sut '{}' --scenario {}",
            shrunk.steps,
            shrunk.faults,
            shrunk.attempts,
            path.display(),
            w.name(),
            a.name,
            b.name,
            path.display()
        ),
        Err(e) => eprintln!("error: cannot write {}: {e}", path.display()),
    }
}

/// Plays a difference file through both systems.
fn replay_file(path: &std::path::Path, a: &Side, b: &Side) -> Verdict {
    let scenario = match ScenarioFile::load_script(path) {
        Ok(s) => s,
        Err(e) => return Verdict::usage(&e.to_string()),
    };
    match difference(&scenario, a, b) {
        None => {
            println!("alike: {} answers alike in both systems", path.display());
            Verdict::Clean
        }
        Some(why) => {
            println!("DIFFERENT: {}: {why}", path.display());
            Verdict::Violation
        }
    }
}
