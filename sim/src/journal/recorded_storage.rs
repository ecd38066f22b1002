//! The production file storage under crash states, from the journal workload: a seed may run
//! the crash workload's first mutations on the real file storage in a temporary directory,
//! record its file-system calls and check every state a POSIX file system may leave after each
//! ([`crate::journal::crash::recorded`]). The world itself runs on simulated disks, which implement the
//! durability contract themselves; this is where a sync the production storage forgets shows
//! (J22).

use history::Planted;
use rand::Rng;

use crate::coverage::Coverage;
use crate::journal::crash::{explore_recorded, CrashOptions};
use crate::outcome::Violation;
use crate::rng::{chance, SeedRng, Stream};

/// The fault sub-stream the draw comes from, so seeds without it keep every other fault.
const RECORDED_SUBSTREAM: u64 = 9;

/// The chance a seed runs it: real files and syncs cost about a second a run in a debug build.
const PROBABILITY: f64 = 0.15;

/// Mutations a scenario may ask for at most.
pub(super) const OPS_MAX: u32 = 16;

/// States checked per crash point at most, in the workload (`histsim crash` checks up to 256).
const STATES_PER_POINT: u64 = 4;

/// The probe a run fires.
pub(super) const PROBE: &str = "journal.fault.recorded_storage_crash_states";

/// How many mutations seed `seed` records (0: none).
pub(super) fn draw_ops(seed: SeedRng) -> u32 {
    let mut rng = seed.substream(Stream::Faults, RECORDED_SUBSTREAM);
    if chance(&mut rng, PROBABILITY) {
        rng.random_range(2..=6)
    } else {
        0
    }
}

/// Runs the recorded exploration of `ops` mutations with `planted`; each catalog ID whose
/// invariant some state broke becomes a violation naming the first such state.
pub(super) fn check(
    ops: u32,
    planted: Planted,
    violations: &mut Vec<Violation>,
    coverage: &mut Coverage,
) {
    if ops == 0 {
        return;
    }
    let report = explore_recorded(&CrashOptions {
        ops: ops as usize,
        planted,
        cap_per_point: STATES_PER_POINT,
        crash_depth: 1,
        ..CrashOptions::default()
    });
    coverage.hit(PROBE);
    for (id, n) in &report.crash.failed_by_id {
        let first = report.crash.failures.iter().find(|f| f.bug_id == *id);
        let mut violation = Violation::safety(
            *id,
            format!(
                "the production file storage under crash states ({ops} mutations recorded, {} \
                 states checked): {n} failed, first {}",
                report.crash.states_checked,
                first.map_or("(not kept)", |f| f.description.as_str())
            ),
        );
        // A crash state is a whole directory of files the recovery read, not one request.
        violation.whole_state = Some(
            "the files a crash of the production storage may leave, reopened by the journal"
                .to_string(),
        );
        violations.push(violation);
    }
}
