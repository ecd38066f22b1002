//! `histsim diff`: the same seeds through two systems under test (or one of them histsim's own
//! components, `in-process`), the first seed whose answers differ, and that difference shrunk
//! into a scenario file. A differential test: each system is the other's second opinion.
//!
//! Both worlds play the same scenario; they stay step for step alike as long as the systems
//! answer alike, so the first trace event that differs (the protocol's own lines aside) is the
//! first answer that differs.

use super::args::{default_jobs, parse_seeds, SutTimeouts};
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
    /// Switch on one planted bug in the FIRST system only (histsim's own components, in process
    /// or behind `histsim serve`), e.g. P4: a projector bug then shows as a difference from the
    /// second system.
    #[arg(long)]
    planted: Option<history::BugId>,
    /// Compare every warning, also those a known difference that a system declares covers
    /// (docs/display-projection.md); by default two systems are compared up to those.
    #[arg(long)]
    strict: bool,
    // The waits on either system.
    #[command(flatten)]
    timeouts: SutTimeouts,
    /// Worker threads; default: two a core.
    #[arg(long, value_parser = super::args::parse_jobs)]
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
    /// Per event of `events`: the last answer line of the protocol before it, if any.
    answers: Vec<Option<String>>,
    verdict: String,
}

/// The longest answer line a difference quotes.
const ANSWER_QUOTE_BYTES_MAX: usize = 4000;

fn show(scenario: &AnyScenario, side: &Side) -> Shown {
    let world = WorldConfig {
        keep_trace: true,
        ..side.world.clone()
    };
    let run = scenario.play(&world);
    let (mut events, mut answers, mut answer) = (Vec::new(), Vec::new(), None);
    for line in run.trace.full().unwrap_or_default() {
        let event = line.split_once("us ").map_or(line.as_str(), |(_, e)| e);
        match event.strip_prefix("sut < ") {
            Some(text) => answer = Some(text.to_string()),
            None if event.starts_with("sut") => {}
            None => {
                events.push(line.clone());
                answers.push(answer.clone());
            }
        }
    }
    let verdict = match (&run.failure, run.violations.first()) {
        (Some(f), _) => format!("world failure: {f}"),
        (None, Some(v)) => format!("violation {v}"),
        (None, None) => "clean".to_string(),
    };
    Shown {
        events,
        answers,
        verdict,
    }
}

/// The first difference between what the two sides showed, as text; `None` when alike.
fn difference(scenario: &AnyScenario, a: &Side, b: &Side) -> Option<String> {
    compare(scenario, a, b, &Tally::default())
}

/// Per side, how many seeds each verdict had (the verdict up to its first `:`): a differential
/// run is also a campaign of each system.
#[derive(Default)]
struct Tally {
    verdicts: [Mutex<std::collections::BTreeMap<String, u64>>; 2],
}

impl Tally {
    fn count(&self, side: usize, verdict: &str) {
        let kind = verdict.split(':').next().unwrap_or(verdict).to_string();
        let mut v = self.verdicts[side]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *v.entry(kind).or_default() += 1;
    }

    fn print(&self, a: &Side, b: &Side) {
        for (i, side) in [a, b].into_iter().enumerate() {
            let v = self.verdicts[i].lock().unwrap_or_else(|e| e.into_inner());
            let counts: Vec<String> = v.iter().map(|(k, n)| format!("{n} {k}")).collect();
            println!("  `{}`: {}", side.name, counts.join(", "));
        }
    }
}

/// [`difference`], counting each side's verdict in `tally`.
fn compare(scenario: &AnyScenario, a: &Side, b: &Side, tally: &Tally) -> Option<String> {
    let (x, y) = (show(scenario, a), show(scenario, b));
    tally.count(0, &x.verdict);
    tally.count(1, &y.verdict);
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
    let mut text = format!(
        "event {at}:\n  {}: {}\n  {}: {}\n  verdicts: {}: {}; {}: {}",
        a.name,
        event(&x.events),
        b.name,
        event(&y.events),
        a.name,
        x.verdict,
        b.name,
        y.verdict
    );
    // The answers behind a differing answer event, as each system sent them.
    for (side, shown) in [(a, &x), (b, &y)] {
        let quote = match shown.answers.get(at).cloned().flatten() {
            Some(line) if line.len() > ANSWER_QUOTE_BYTES_MAX => {
                let cut = line.floor_char_boundary(ANSWER_QUOTE_BYTES_MAX);
                format!("{}... ({} bytes)", &line[..cut], line.len())
            }
            Some(line) => line,
            None => format!(
                "(in this process: put `{} serve <workload>` in its place to see the lines)",
                crate::run::histsim_program()
            ),
        };
        text.push_str(&format!(
            "\n  the last answer of {} before it: {quote}",
            side.name
        ));
    }
    Some(text)
}

/// A side of the comparison, waited on for as long as `timeouts` say.
fn side(
    name: &str,
    store: StoreKind,
    timeouts: SutTimeouts,
    planted: Option<history::BugId>,
) -> Side {
    let sut = (name != IN_PROCESS).then(|| {
        std::sync::Arc::new(SutOptions {
            timeout_ms: timeouts.sut_timeout_ms,
            start_timeout_ms: timeouts.sut_start_timeout_ms,
            ..SutOptions::new(name)
        })
    });
    Side {
        name: name.to_string(),
        world: WorldConfig {
            sut,
            ..WorldConfig::new(store, history::Planted::from_option(planted))
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
    if let Err(why) = commands_found([a, b]) {
        return Verdict::usage(&why);
    }
    let (mut a, mut b) = (
        side(a, args.store, args.timeouts, args.planted),
        side(b, args.store, args.timeouts, None),
    );
    if let (Some(declared_by), false) = (workload.declared_differences(), args.strict) {
        // Compared up to what either system declares: each such difference is documented, and
        // the report of a campaign on that system says where the model accepted it.
        let mut alike_up_to = model::display::Declared::new();
        for s in [&a, &b] {
            match declared_by(&s.world) {
                Ok(d) => alike_up_to.extend(d),
                Err(e) => return Verdict::usage(&format!("`{}`: {e}", s.name)),
            }
        }
        if !alike_up_to.is_empty() {
            let ids: Vec<&str> = alike_up_to.iter().map(|d| d.id()).collect();
            println!(
                "compared up to the known differences {} (docs/display-projection.md; --strict compares them too)",
                ids.join(", ")
            );
        }
        a.world.alike_up_to = alike_up_to.clone();
        b.world.alike_up_to = alike_up_to;
    }
    if let Some(path) = &args.scenario {
        return replay_file(path, &a, &b);
    }
    let config = RunConfig {
        workload: Some(workload),
        store: args.store,
        ..RunConfig::new()
    };
    print_header(&args, workload.name(), (&a, &b));
    let jobs = args.jobs.unwrap_or_else(|| default_jobs(true));
    let tally = Tally::default();
    let first = first_differing_seed(args.seeds.clone(), &config, (&a, &b), jobs, &tally);
    println!("verdicts of the seeds played:");
    tally.print(&a, &b);
    let Some((seed, why)) = first else {
        println!(
            "alike: {} seeds, the two systems answered alike",
            args.seeds.end - args.seeds.start
        );
        return Verdict::Clean;
    };
    println!("DIFFERENT at seed {seed}: {why}");
    let scenario = scenario_of(seed, &config);
    if let Some(broken) = broken_side(&scenario, (&a, &b)) {
        // A world that broke shows no answer to compare: shrinking it would keep whatever
        // still breaks, or nothing (as `histsim run` never shrinks a broken world).
        println!("seed {seed}: broken world, not shrunk: {broken}");
        return Verdict::WorldFailure;
    }
    write_difference(seed, &scenario, (&a, &b), &why, &args);
    Verdict::Violation
}

/// What the first difference leaves under `--out`: its page and its shrunk scenario file.
fn write_difference(
    seed: u64,
    scenario: &AnyScenario,
    (a, b): (&Side, &Side),
    why: &str,
    args: &DiffArgs,
) {
    write_page(seed, scenario, (a, b), why, args);
    write_shrunk(seed, scenario, a, b, args);
}

/// Writes the diverging seed's page, `seed-N.html` under `--out`: each system a lane, each
/// read with both answers.
fn write_page(
    seed: u64,
    scenario: &AnyScenario,
    (a, b): (&Side, &Side),
    why: &str,
    args: &DiffArgs,
) {
    let reads = |side: &Side| {
        let world = WorldConfig {
            keep_trace: true,
            ..side.world.clone()
        };
        scenario.play(&world).picture.unwrap_or_default().reads
    };
    let (reads_a, reads_b) = (reads(a), reads(b));
    let command = format!(
        "{} diff --workload {} --sut '{}' --sut '{}' --seeds {seed}{}",
        crate::run::histsim_command(),
        args.workload,
        a.name,
        b.name,
        args.planted
            .map(|p| format!(" --planted {p}"))
            .unwrap_or_default()
    );
    let html = crate::picture::diff_page(
        seed,
        &args.workload,
        why,
        &command,
        [(&a.name, &reads_a), (&b.name, &reads_b)],
    );
    let path = args.out.join(format!("seed-{seed}.html"));
    let written = std::fs::create_dir_all(&args.out).and_then(|_| std::fs::write(&path, html));
    match written {
        Ok(()) => println!("page: {}", path.display()),
        Err(e) => eprintln!("error: cannot write {}: {e}", path.display()),
    }
}

fn print_header(args: &DiffArgs, workload: &str, (a, b): (&Side, &Side)) {
    let planted = args.planted.map(|p| format!(" (planted {p})"));
    println!(
        "histsim diff: seeds {}..{}, workload {workload}, `{}`{} against `{}`",
        args.seeds.start,
        args.seeds.end,
        a.name,
        planted.unwrap_or_default(),
        b.name
    );
}

/// A system whose program is missing is a usage error before the first seed.
fn commands_found(names: [&String; 2]) -> Result<(), String> {
    for name in names.into_iter().filter(|n| *n != IN_PROCESS) {
        crate::sut::check_command(name).map_err(|why| format!("--sut `{name}`: {why}"))?;
    }
    Ok(())
}

/// The lowest seed of `seeds` whose answers differ, with the difference.
fn first_differing_seed(
    seeds: Range<u64>,
    config: &RunConfig,
    (a, b): (&Side, &Side),
    jobs: usize,
    tally: &Tally,
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
                if let Some(why) = compare(&scenario_of(seed, config), a, b, tally) {
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

/// The side whose world broke on `scenario` (a hang, a breach, a host error), with why.
fn broken_side(scenario: &AnyScenario, (a, b): (&Side, &Side)) -> Option<String> {
    [a, b].into_iter().find_map(|side| {
        let shown = show(scenario, side);
        (shown.verdict.starts_with("world failure"))
            .then(|| format!("`{}`: {}", side.name, shown.verdict))
    })
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
            "shrunk: {} steps, {} faults ({} attempts); difference file: {}\nreplay: {} diff --workload {} --sut '{}' --sut '{}'{}{} --scenario {}",
            shrunk.steps,
            shrunk.faults,
            shrunk.attempts,
            path.display(),
            crate::run::histsim_command(),
            w.name(),
            a.name,
            b.name,
            args.planted
                .map(|p| format!(" --planted {p}"))
                .unwrap_or_default(),
            if args.strict { " --strict" } else { "" },
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
