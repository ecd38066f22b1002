//! Flags several commands share, and the parsers of their values.

use crate::registry;
use crate::run::RunConfig;
use crate::sut::SutOptions;
use crate::workload::{DynWorkload, StoreKind};
use history::BugId;
use std::ops::Range;

/// The world a seed runs in: which workload, store, replicas and planted bug.
#[derive(clap::Args, Clone)]
pub(crate) struct WorldArgs {
    /// Which workload to run (display, runs, journal, spool); `all` mixes them by seed.
    #[arg(long, default_value = "all", value_parser = parse_workload)]
    workload: WorkloadArg,
    /// The weight table `--workload all` draws each seed's workload from (`mix-1`, ...);
    /// default: the newest. Older mixes keep their seeds' meaning when workloads are added.
    #[arg(long, value_parser = parse_mix)]
    mix: Option<&'static registry::Mix>,
    /// The store behind the replicas (display), or the primary of the runs world's pair
    /// (`jsonl`: the JSONL store plays its first slot in every seed; `memory`: a third of the
    /// seeds draw the JSONL store there).
    #[arg(long, value_enum, default_value = "memory")]
    store: StoreKind,
    /// Number of API replicas (1 to 5); default: derived from each seed.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=5))]
    replicas: Option<u8>,
    /// Switch on one planted (legacy) bug by its catalog ID, e.g. P4.
    #[arg(long)]
    planted: Option<BugId>,
    #[command(flatten)]
    sut: SutArgs,
}

impl WorldArgs {
    /// These flags with the workload `workload` (a scenario file's), whatever `--workload` said.
    pub(crate) fn with_workload(
        mut self,
        workload: &'static dyn crate::workload::DynWorkload,
    ) -> Self {
        self.workload = WorkloadArg(Some(workload));
        self
    }

    /// The config these flags name; `Err` says why they do not fit together.
    pub(crate) fn config(&self) -> Result<RunConfig, String> {
        let config = RunConfig {
            workload: self.workload.0,
            mix: self.mix.unwrap_or_else(registry::Mix::newest),
            store: self.store,
            planted: self.planted,
            replicas: self.replicas,
            keep_trace: false,
            sut: self.sut.checked_options()?,
        };
        check_sut_fits(&config)?;
        check_store_fits(&config)?;
        Ok(config)
    }
}

/// A system under test in a child process, for the workloads with a process boundary.
#[derive(clap::Args, Clone, Default)]
pub(crate) struct SutArgs {
    /// Drive this system under test (a command run by `sh -c`, speaking docs/sut-protocol.md)
    /// instead of histsim's own components; e.g. `--sut "histsim serve display"`.
    #[arg(long, value_name = "CMD")]
    sut: Option<String>,
    #[command(flatten)]
    timeouts: SutTimeouts,
    /// Let the system under test run on any CPU. By default each campaign thread and the
    /// processes it starts share one CPU, as a round trip between CPUs costs several times more
    /// (docs/sut-protocol.md, "Speed"); free them for a system that computes on threads of its own.
    #[arg(long)]
    sut_any_cpu: bool,
}

/// How long histsim waits on a system under test: `histsim run`'s one, `histsim diff`'s two.
#[derive(clap::Args, Clone, Copy, Default)]
pub(crate) struct SutTimeouts {
    /// Longest wait for one answer of a system under test (not `hello` or `open`), in wall
    /// milliseconds; a system still computing is waited for until it used as much CPU time
    /// (docs/sut-protocol.md, "Transport").
    #[arg(long, value_name = "MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) sut_timeout_ms: u64,
    /// Longest wait for a system under test to start and answer `hello`, and for each `open`,
    /// in wall milliseconds; a system still computing is waited for until it used as much CPU
    /// time.
    #[arg(long, value_name = "MS", default_value_t = 60_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) sut_start_timeout_ms: u64,
}

impl SutArgs {
    pub(crate) fn timeout_ms(&self) -> u64 {
        self.timeouts.sut_timeout_ms
    }

    pub(crate) fn start_timeout_ms(&self) -> u64 {
        self.timeouts.sut_start_timeout_ms
    }

    pub(crate) fn options(&self) -> Option<SutOptions> {
        self.sut.as_ref().map(|command| SutOptions {
            timeout_ms: self.timeouts.sut_timeout_ms,
            start_timeout_ms: self.timeouts.sut_start_timeout_ms,
            share_cpu: !self.sut_any_cpu,
            ..SutOptions::new(command.clone())
        })
    }

    /// [`SutArgs::options`], `Err` when the command's program is missing or not executable:
    /// a usage error found before the first seed, not a broken world in every seed.
    pub(crate) fn checked_options(&self) -> Result<Option<SutOptions>, String> {
        if let Some(command) = &self.sut {
            crate::sut::check_command(command)
                .map_err(|why| format!("--sut `{command}`: {why}"))?;
        }
        Ok(self.options())
    }
}

/// With `--sut`, every seed must run a workload that can drive a child process.
pub(crate) fn check_sut_fits(config: &RunConfig) -> Result<(), String> {
    if config.sut.is_none() {
        return Ok(());
    }
    let able: Vec<&str> = registry::REGISTRY
        .iter()
        .filter(|w| w.has_sut_boundary())
        .map(|w| w.name())
        .collect();
    let pinned = config
        .planted
        .and_then(registry::covering)
        .or(config.workload);
    match pinned {
        Some(w) if w.has_sut_boundary() => Ok(()),
        Some(w) => Err(format!(
            "--sut: the {} workload has no process boundary; --sut drives {}",
            w.name(),
            able.join(" or ")
        )),
        None => Err(format!(
            "--sut needs one workload: add --workload {}",
            able.join(" or --workload ")
        )),
    }
}

/// A store every seed's workload has: one workload's, or with `--workload all` every
/// workload's (a store only some have needs `--workload`).
fn check_store_fits(config: &RunConfig) -> Result<(), String> {
    let store = config.store;
    let having: Vec<&str> = registry::REGISTRY
        .iter()
        .filter(|w| w.stores().contains(&store))
        .map(|w| w.name())
        .collect();
    let fits = match config.workload {
        Some(w) => w.stores().contains(&store),
        None => having.len() == registry::REGISTRY.len(),
    };
    if fits {
        return Ok(());
    }
    Err(format!(
        "--store {}: only the {} workload{} this store (add --workload {})",
        store.as_str(),
        having.join(" and "),
        if having.len() == 1 { " has" } else { "s have" },
        having.join(" or --workload ")
    ))
}

/// `--workload`: `None` mixes every workload by seed.
#[derive(Clone, Copy)]
struct WorkloadArg(Option<&'static dyn DynWorkload>);

/// `all` or one registered workload's name.
fn parse_workload(s: &str) -> Result<WorkloadArg, String> {
    if s == "all" {
        return Ok(WorkloadArg(None));
    }
    registry::by_name(s)
        .map(|w| WorkloadArg(Some(w)))
        .ok_or_else(|| {
            format!(
                "no workload `{s}`; expected all or one of {}",
                registry::names().join(", ")
            )
        })
}

/// A mix's name (`mix-1`, ...).
fn parse_mix(s: &str) -> Result<&'static registry::Mix, String> {
    registry::Mix::by_name(s).ok_or_else(|| {
        let names: Vec<&str> = registry::MIXES.iter().map(|m| m.name).collect();
        format!("no mix `{s}`; expected one of {}", names.join(", "))
    })
}

/// `K/N`: shard K (from 0) of N.
pub(crate) fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not a shard: expected K/N, e.g. 0/4"))?;
    let k: u64 = k
        .trim()
        .parse()
        .map_err(|_| format!("`{k}` is not a shard index"))?;
    let n: u64 = n
        .trim()
        .parse()
        .map_err(|_| format!("`{n}` is not a shard count"))?;
    if n == 0 || k >= n {
        return Err(format!("shard {k}/{n}: expected 0 <= K < N"));
    }
    Ok((k, n))
}

/// Seeds as `A..B`, or `none` for no seeds.
pub(crate) fn parse_fault_seeds(s: &str) -> Result<Range<u64>, String> {
    if s == "none" {
        Ok(0..0)
    } else {
        parse_seeds(s)
    }
}

/// Seeds as `A..B` (B excluded) or one seed.
pub(crate) fn parse_seeds(s: &str) -> Result<Range<u64>, String> {
    let parse = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{x}` is not a seed (expected an unsigned integer)"))
    };
    match s.split_once("..") {
        Some((a, b)) => {
            let (a, b) = (parse(a)?, parse(b)?);
            if a >= b {
                return Err(format!("empty range {a}..{b}: expected A..B with A < B"));
            }
            Ok(a..b)
        }
        None => {
            let a = parse(s)?;
            Ok(a..a.saturating_add(1))
        }
    }
}

/// `--jobs`: a count of worker threads, at least one (none would run no seed, and a campaign
/// that ran no seed checked nothing).
pub(crate) fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("0 worker threads would run no seed: expected 1 or more".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a number of worker threads")),
    }
}

/// `--name`: a campaign's name is the name of its directory under `--report-dir`, so it must be
/// one plain path component. A `/`, a `..` or an absolute path would put the report (and
/// overwrite files) outside the report directory.
pub(crate) fn parse_campaign_name(s: &str) -> Result<String, String> {
    let why = if s.is_empty() {
        Some("it is empty")
    } else if s.contains('/') || s.contains('\\') {
        Some("it holds a path separator")
    } else if s.contains("..") {
        Some("it holds `..`")
    } else if s == "." {
        Some("it is `.`, the report directory itself")
    } else if s.chars().any(char::is_control) {
        Some("it holds a control character")
    } else {
        None
    };
    match why {
        Some(why) => Err(format!(
            "`{}` is not a plain name ({why}): a campaign's report goes to <report-dir>/<name>/, \
             e.g. --name nightly-runs",
            s.escape_debug()
        )),
        None => Ok(s.to_string()),
    }
}

/// Worker threads when `--jobs` is not given: one a core; two a core with a system under test,
/// whose seeds spend much of their time waiting for a child's answer rather than computing.
pub(crate) fn default_jobs(with_sut: bool) -> usize {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if with_sut {
        2 * cores
    } else {
        cores
    }
}

/// `s` cut to `n` characters, with `...` when cut.
pub(crate) fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_shards_and_fault_seeds_parse_or_say_why_not() {
        assert_eq!(parse_seeds("3..7"), Ok(3..7));
        assert_eq!(parse_seeds("42"), Ok(42..43));
        assert!(parse_seeds("7..3").unwrap_err().contains("empty range"));
        assert!(parse_seeds("x").unwrap_err().contains("`x` is not a seed"));
        assert_eq!(parse_shard("1/4"), Ok((1, 4)));
        assert!(parse_shard("4/4").unwrap_err().contains("0 <= K < N"));
        assert!(parse_shard("2").unwrap_err().contains("expected K/N"));
        assert_eq!(parse_fault_seeds("none"), Ok(0..0));
        assert_eq!(parse_fault_seeds("0..2"), Ok(0..2));
    }

    #[test]
    fn mixes_parse_by_name_and_an_unknown_one_lists_the_known() {
        assert_eq!(parse_mix("mix-1").expect("mix-1").name, "mix-1");
        let e = parse_mix("mix-0").expect_err("refused");
        assert!(e.contains("mix-0") && e.contains("mix-1"), "{e}");
    }

    #[test]
    fn workloads_parse_by_registered_name() {
        assert!(parse_workload("all").expect("all").0.is_none());
        for name in registry::names() {
            let w = parse_workload(name).expect("registered").0.expect("one");
            assert_eq!(w.name(), name);
        }
        let e = parse_workload("nope").err().expect("refused");
        assert!(e.contains("display, runs, journal, spool"), "{e}");
    }

    #[test]
    fn jobs_and_campaign_names_parse_or_say_why_not() {
        assert_eq!(parse_jobs("3"), Ok(3));
        assert!(parse_jobs("0").unwrap_err().contains("no seed"));
        assert!(parse_jobs("x").unwrap_err().contains("`x`"));
        assert_eq!(parse_campaign_name("nightly-1"), Ok("nightly-1".into()));
        for bad in [
            "", ".", "..", "a/b", "../x", "/tmp/x", "a..b", "a\\b", "a\nb",
        ] {
            let e = parse_campaign_name(bad).expect_err(bad);
            assert!(e.contains("not a plain name"), "{bad}: {e}");
        }
    }

    #[test]
    fn truncate_marks_a_cut() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "abc...");
    }
}
