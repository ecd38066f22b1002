//! `histsim live --compare-sim`: the same seeds live and in the simulation, their delivery
//! patterns side by side (docs/live.md keeps a table of them).

use super::outcome::live_run;
use super::patterns::{reorder_max, Delivery, Patterns};
use super::run::LiveSetup;
use super::seed_table::{compare_seeds, SeedRow};
use crate::display::faults::FaultPlan;
use crate::display::{run_scenario, DisplayScenario};
use crate::verdict::Verdict;
use crate::workload::{StoreKind, WorldConfig};
use std::ops::Range;

/// The simulation's patterns for `scenario` (its own generated bus faults), from its trace.
pub fn simulated(scenario: &DisplayScenario) -> Patterns {
    let mut world = WorldConfig::new(StoreKind::Sqlite, history::Planted::none());
    world.keep_trace = true;
    let run = run_scenario(scenario, &world);
    let deliveries: Vec<(Delivery, u8)> = (run.trace.full().unwrap_or(&[]).iter())
        .filter_map(|line| persist_of(line))
        .collect();
    let plan = FaultPlan::new(scenario);
    let lost = scenario.steps().filter(|s| !plan.persisted(s.id)).count();
    let firsts: Vec<Delivery> = (deliveries.iter())
        .filter(|(_, copy)| *copy == 0)
        .map(|(d, _)| *d)
        .collect();
    let (server_restarts, lost_in_restarts) = restarts(scenario, &plan);
    Patterns {
        published: scenario.steps().count(),
        deliveries: deliveries.len(),
        duplicate_deliveries: deliveries.iter().filter(|(_, copy)| *copy > 0).count(),
        store_copies_max: 0,
        reorder_max: reorder_max(scenario, &firsts),
        lost,
        lost_explained: lost,
        server_restarts,
        lost_in_restarts,
        exposed: 0,
        converged_after_ms: run.converged_after_ms,
    }
}

/// The bus restarts of a scenario (one step range every replica is disconnected over) and the
/// steps they cost.
fn restarts(scenario: &DisplayScenario, plan: &FaultPlan) -> (usize, usize) {
    let mut ranges: std::collections::BTreeMap<(u32, u32), u8> = Default::default();
    for fault in &scenario.faults {
        if let crate::display::scenario::Fault::Disconnect {
            from_step, to_step, ..
        } = fault
        {
            *ranges.entry((*from_step, *to_step)).or_default() += 1;
        }
    }
    let restarts: Vec<(u32, u32)> = (ranges.into_iter())
        .filter(|(_, n)| *n >= scenario.replicas)
        .map(|(range, _)| range)
        .collect();
    let lost = (scenario.steps())
        .filter(|s| !plan.persisted(s.id))
        .filter(|s| restarts.iter().any(|(a, b)| (*a..=*b).contains(&s.id)))
        .count();
    (restarts.len(), lost)
}

/// `replica-{k} persist step={step} copy={copy} ...` of a trace line.
fn persist_of(line: &str) -> Option<(Delivery, u8)> {
    let rest = &line[line.find("replica-")? + "replica-".len()..];
    let (k, rest) = rest.split_once(" persist step=")?;
    let (step, rest) = rest.split_once(" copy=")?;
    let copy = rest.split(' ').next()?;
    Some(((k.parse().ok()?, step.parse().ok()?), copy.parse().ok()?))
}

/// One table row.
fn row(seed: u64, live: &Patterns, sim: &Patterns) -> String {
    let per_event = |p: &Patterns| {
        if p.published == 0 {
            0.0
        } else {
            p.duplicate_deliveries as f64 / p.published as f64
        }
    };
    let ms = |c: Option<u64>| c.map_or("no".to_string(), |ms| ms.to_string());
    let lost = |p: &Patterns| {
        format!(
            "{} ({} in {} restarts)",
            p.lost, p.lost_in_restarts, p.server_restarts
        )
    };
    format!(
        "| {seed} | {} | {:.2} / {:.2} | {} / {} | {} / {} | {} / {} |",
        live.published,
        per_event(live),
        per_event(sim),
        live.reorder_max,
        sim.reorder_max,
        lost(live),
        lost(sim),
        ms(live.converged_after_ms),
        ms(sim.converged_after_ms),
    )
}

/// The table's header lines.
const HEADER: [&str; 2] = [
    "| seed | events | duplicates per event, live / sim | longest reorder in a display, live / sim | events no replica received (of them in server restarts), live / sim | converged after healing (ms), live / sim |",
    "|---|---|---|---|---|---|",
];

/// Runs every seed both ways and prints the table.
pub fn cmd(seeds: Range<u64>, setup: impl Fn(u64) -> Result<LiveSetup, String>) -> Verdict {
    let dir = |s: &LiveSetup| s.dir.clone();
    compare_seeds(&HEADER, seeds, setup, dir, |seed, setup| {
        let sim = simulated(&setup.scenario);
        let outcome = live_run(setup)?;
        Ok(SeedRow {
            row: row(seed, &outcome.patterns, &sim),
            violation: (outcome.violations.first()).map(|v| (v.to_string(), Verdict::Violation)),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persist_line_gives_its_delivery() {
        assert_eq!(
            persist_of("      42us replica-2 persist step=17 copy=1 stored"),
            Some(((2, 17), 1))
        );
        assert_eq!(persist_of("      42us agents emit step=3"), None);
    }
}
