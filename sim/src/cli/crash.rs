//! `histsim crash`: every crash state of a journal workload, then the workload on a faulty disk.

use super::args::{parse_fault_seeds, truncate};
use crate::disk::Persistence;
use crate::journal::crash::{
    explore, explore_recorded, run_faulted, CrashOptions, CrashReport, FaultedOptions,
};
use crate::verdict::Verdict;
use history::{BugId, Planted};
use std::ops::Range;

/// Which storage the crash states are of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CrashStorage {
    /// The simulated disk, under --persistence, with crash sequences and the faulty disk.
    Simulated,
    /// The production file storage on a real temporary directory: its file-system calls
    /// recorded, every state a POSIX file system may leave after each call replayed.
    Recorded,
}

#[derive(clap::Args)]
pub(crate) struct CrashArgs {
    /// `simulated` (the simulated disk) or `recorded` (the production storage's recorded
    /// file-system calls, ALICE's way; one crash, no faulty disk).
    #[arg(long, value_enum, default_value = "simulated")]
    storage: CrashStorage,
    /// Mutations in the workload (6 or more covers every kind).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    ops: u64,
    /// Switch on one planted (legacy) journal bug, e.g. J2.
    #[arg(long)]
    planted: Option<BugId>,
    /// Which disks a crash may leave: `prefix` (a prefix of the write log, the last append cut
    /// at any byte, or every unsynced write lost), `ext4-ordered` (per file a prefix of its
    /// unsynced writes, torn at pages; directory changes lost until a sync commits them) or
    /// `reorder` (per file any subset of its unsynced sectors, torn sectors, new entries and
    /// removals lost without a directory sync).
    #[arg(long, default_value = "reorder")]
    persistence: Persistence,
    /// Under ext4-ordered and reorder, states checked per crash point at most; a larger space
    /// is sampled with --sample-seed.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    state_cap: u64,
    /// Seeds the samples of spaces over --state-cap.
    #[arg(long, default_value_t = 0)]
    sample_seed: u64,
    /// Crashes in a sequence at most (1 to 3): after a crash, recovery (resume, clone, fork)
    /// runs on its state and crashes at each of its own disk operations, and so on.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=3))]
    crash_depth: u8,
    /// States recovered and crashed again per crash point, besides the process kill there
    /// (those with an open replacement or a torn tail first).
    #[arg(long, default_value_t = 1)]
    starts_per_point: usize,
    /// States checked per crash point inside a recovery at most; a larger space is sampled.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..))]
    recovery_state_cap: u64,
    /// Under prefix, cut appends every this many bytes (1: every byte).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    cut_step_bytes: u64,
    /// Then run the workload on a faulty disk (EIO, ENOSPC, short writes, silent
    /// corruption, some of it leaving the payload parsable JSON, failed syncs and reads) for
    /// these seeds; `none` skips it. The default (`crash::faulted::DEFAULT_SEEDS`) hits every
    /// record kind with a parsable corruption.
    #[arg(long, default_value = "0..400", value_parser = parse_fault_seeds)]
    fault_seeds: Range<u64>,
    /// Mutations per faulty-disk seed.
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u64).range(1..=1000))]
    fault_ops: u64,
}

pub(crate) fn cmd(args: CrashArgs) -> Verdict {
    if args.storage == CrashStorage::Recorded {
        return recorded(&args);
    }
    let explored = crash_points(&args);
    let faulted = faulty_disk(&args);
    explored.worst(faulted)
}

fn planted_text(planted: Option<BugId>) -> String {
    planted
        .map(|p| p.to_string())
        .unwrap_or_else(|| "none".into())
}

fn crash_points(args: &CrashArgs) -> Verdict {
    let opts = CrashOptions {
        ops: args.ops as usize,
        planted: Planted::from_option(args.planted),
        cut_step_bytes: args.cut_step_bytes,
        persistence: args.persistence,
        cap_per_point: args.state_cap,
        sample_seed: args.sample_seed,
        crash_depth: args.crash_depth,
        starts_per_point: args.starts_per_point,
        recovery_cap_per_point: args.recovery_state_cap,
        ..CrashOptions::default()
    };
    let bound = match args.persistence {
        Persistence::Prefix => format!("cuts every {} bytes", args.cut_step_bytes),
        _ => format!(
            "at most {} states a crash point, sample seed {}",
            args.state_cap, args.sample_seed
        ),
    };
    println!(
        "histsim crash: {} mutations, persistence {}, {bound}, planted {}",
        args.ops,
        args.persistence,
        planted_text(args.planted)
    );
    println!(
        "crash sequences: up to {} crashes; each recovery starts from the process kill at each \
         point and at most {} crash states with an open replacement or a torn tail; at most {} \
         states a crash point inside a recovery",
        args.crash_depth, args.starts_per_point, args.recovery_state_cap
    );
    let started = std::time::Instant::now();
    let report = explore(&opts);
    println!("{}", report.summary());
    println!(
        "crash points: {} under {}: {} states in the model, {} checked",
        report.points, report.persistence, report.space, report.states_checked,
    );
    for line in report.sequence_lines() {
        println!("{line}");
    }
    let inside: u64 = report.sequences.checked.iter().sum();
    println!(
        "crash: {} states checked ({} after one crash, {inside} after a crash inside a recovery) \
         in {:.2?}, {} failed",
        report.states_checked + inside,
        report.states_checked,
        started.elapsed(),
        report.states_failed
    );
    print_failures(&report);
    Verdict::clean_or(report.states_failed == 0, Verdict::Violation)
}

/// The production storage's recorded calls, every state after each replayed.
fn recorded(args: &CrashArgs) -> Verdict {
    println!(
        "histsim crash --storage recorded: {} mutations on the production file storage in a \
         temporary directory, at most {} states a crash point, planted {}",
        args.ops,
        args.state_cap,
        planted_text(args.planted)
    );
    println!(
        "rules: unsynced data lost or kept up to a {}-byte sector boundary; a directory entry \
         (created or removed) unsynced until its directory's fsync; a returned sync's bytes must \
         survive",
        crate::journal::crash::recorded::states::SECTOR_BYTES
    );
    let report = explore_recorded(&CrashOptions {
        ops: args.ops as usize,
        planted: Planted::from_option(args.planted),
        cap_per_point: args.state_cap,
        crash_depth: 1,
        ..CrashOptions::default()
    });
    println!("{}", report.summary());
    println!(
        "crash: {} points, {} states checked, {} failed",
        report.crash.points, report.crash.states_checked, report.crash.states_failed
    );
    print_failures(&report.crash);
    Verdict::clean_or(report.crash.states_failed == 0, Verdict::Violation)
}

/// Failed states by ID, then the failures kept.
fn print_failures(report: &CrashReport) {
    for (id, n) in &report.failed_by_id {
        println!("  {id}: {n} failed states");
    }
    for f in &report.failures {
        let cut = f
            .cut_at
            .map(|c| format!(", cut after {c} bytes"))
            .unwrap_or_default();
        let lost = if f.lose_unsynced {
            ", unsynced writes lost"
        } else {
            ""
        };
        println!(
            "  [{}] crash {}: disk event {}{cut}{lost} (op {:?}): {}",
            f.bug_id,
            f.depth,
            f.write_index,
            f.op_index,
            truncate(&f.description, 200)
        );
    }
}

fn faulty_disk(args: &CrashArgs) -> Verdict {
    let seeds = args.fault_seeds.clone();
    if seeds.is_empty() {
        return Verdict::Clean;
    }
    println!(
        "histsim crash, faulty disk: seeds {}..{}, {} mutations each",
        seeds.start, seeds.end, args.fault_ops
    );
    let report = run_faulted(&FaultedOptions {
        seeds,
        ops: args.fault_ops as usize,
        planted: Planted::from_option(args.planted),
    });
    println!("{}", report.summary());
    let (hit, missed) = report.parsable_kinds();
    println!(
        "parsable corruptions (the payload still JSON) by record kind: {}",
        report
            .coverage
            .counts
            .iter()
            .map(|(p, n)| format!("{} {n}", p.rsplit('.').next().unwrap_or(p)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "record kinds hit by a parsable corruption: {} of {}{}",
        hit.len(),
        hit.len() + missed.len(),
        if missed.is_empty() {
            String::new()
        } else {
            format!(" (never: {})", missed.join(", "))
        }
    );
    for f in report.failures.iter().take(20) {
        println!(
            "  [{}] seed {} op {}: {}",
            f.bug_id,
            f.seed,
            f.op_index,
            truncate(&f.description, 300)
        );
    }
    println!(
        "faulty disk: {} seeds, {} failed",
        report.seeds_run,
        report.failures.len()
    );
    Verdict::clean_or(report.failures.is_empty(), Verdict::Violation)
}
