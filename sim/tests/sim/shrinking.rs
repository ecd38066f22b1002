//! Shrinking: integers bisected to their smallest failing value, cuts taken the largest first,
//! the same input shrunk to the same file. The figures (every planted bug's shrunk size, a
//! slow system's shrink) are printed by `histsim shrink --every-planted` and `histsim shrink
//! --sut`, never asserted against the clock: the budgets here count plays.

use sim::run::{scenario_of, RunConfig};
use sim::runs::scenario::{MessageSpec, Op};
use sim::runs::RunsWorkload;
use sim::scenario_file::ScenarioFile;
use sim::shrink::{shrink_failure, shrink_within, Budget};
use sim::workload::{halving_blocks, AnyScenario};
use std::path::Path;
use std::time::Duration;

/// A budget of plays, with a time cap far beyond what they take: the result does not depend on
/// the machine's load.
fn plays(attempts: usize) -> Budget {
    Budget {
        time_cap: Duration::from_secs(3600),
        attempts_max: Some(attempts),
    }
}

fn r02_script() -> AnyScenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/runs/r02_latest_1000_of_1001_messages.toml");
    ScenarioFile::load_script(&path).expect("the R2 scenario loads")
}

fn largest_bulk(c: &AnyScenario) -> u32 {
    let s = c.get::<RunsWorkload>().expect("a runs scenario");
    s.runs
        .iter()
        .flat_map(|r| &r.messages)
        .filter_map(|m| match m {
            MessageSpec::Bulk { messages } => Some(*messages),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

fn paginate_limit(c: &AnyScenario) -> Option<u32> {
    let s = c.get::<RunsWorkload>().expect("a runs scenario");
    s.ops.iter().find_map(|op| match op {
        Op::Paginate { limit, .. } => Some(*limit),
        _ => None,
    })
}

#[test]
fn integers_shrink_to_their_smallest_failing_value_by_bisection() {
    // A "failure" that needs a filler block of 300 messages or more and a pagination of 7 a
    // page or more: the shrinker must find exactly those values, and drop everything else.
    let keeps = |c: &AnyScenario| largest_bulk(c) >= 300 && paginate_limit(c).unwrap_or(0) >= 7;
    let original = r02_script();
    assert!(keeps(&original));
    let shrunk = shrink_within(&original, plays(10_000), keeps);
    assert!(!shrunk.capped, "{} plays", shrunk.attempts);
    assert_eq!(largest_bulk(&shrunk.scenario), 300);
    assert_eq!(paginate_limit(&shrunk.scenario), Some(7));
    let s = shrunk.scenario.get::<RunsWorkload>().expect("runs");
    // The run's start (a run no op starts is dropped) and the pagination.
    assert_eq!(s.ops.len(), 2, "{:?}", s.ops);
    assert_eq!(s.runs[0].messages.len(), 1, "{:?}", s.runs[0].messages);
    assert_eq!(shrunk.steps, 302);
    // Bisection, not one step at a time: 999 -> 300 and 500 -> 7 take a few dozen plays.
    assert!(shrunk.attempts < 200, "{} plays", shrunk.attempts);
}

#[test]
fn a_page_size_shrinks_so_that_a_long_thread_can() {
    // The views read a thread `page_size_events` rows a page; a failure that needs a thread of
    // more than one page shrinks both: the page to 1 row, the thread to 2 messages.
    let keeps = |c: &AnyScenario| {
        let s = c.get::<RunsWorkload>().expect("runs");
        let messages: usize = s.runs.iter().map(|r| r.message_count()).sum();
        messages > s.page_size_events
    };
    let shrunk = shrink_within(&r02_script(), plays(10_000), keeps);
    let s = shrunk.scenario.get::<RunsWorkload>().expect("runs");
    assert_eq!(s.page_size_events, 1);
    assert_eq!(s.runs.iter().map(|r| r.message_count()).sum::<usize>(), 2);
    // Only the run's start is left of the ops.
    assert_eq!(shrunk.steps, 3, "{:?}", shrunk.scenario);
}

#[test]
fn a_planted_bug_shrinks_to_a_few_steps_and_the_same_every_time() {
    // R14 (a receipt written twice) fires on seed 1 of the runs workload.
    let config = RunConfig {
        planted: Some(history::BugId::R14),
        ..RunConfig::new()
    };
    let scenario = scenario_of(1, &config);
    let shrink = || shrink_failure(&scenario, history::BugId::R14, &config.world(), plays(400));
    let first = shrink();
    assert!(
        first.steps <= 8,
        "{} steps -> {} steps",
        first.steps_before,
        first.steps
    );
    assert!(first.steps < first.steps_before);
    let again = shrink();
    assert_eq!(first.scenario, again.scenario);
    assert_eq!(first.attempts, again.attempts);
}

#[test]
fn every_planted_prints_one_line_a_bug_and_a_summary() {
    let (code, text) = super::histsim_cli(&[
        "shrink",
        "--every-planted",
        "--only",
        "R14,J11",
        "--time-cap-s",
        "30",
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("ID    workload   seed  steps after"),
        "{text}"
    );
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("R14 ") || l.starts_with("J11 "))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        text.contains("of 2 planted bugs shrank to 8 steps or fewer (2 shrunk)"),
        "{text}"
    );
}

#[test]
fn halving_blocks_never_cover_everything() {
    assert_eq!(halving_blocks(1), Vec::<std::ops::Range<usize>>::new());
    assert_eq!(halving_blocks(4), vec![0..2, 2..4, 0..1, 1..2, 2..3, 3..4]);
}
