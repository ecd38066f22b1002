//! The simulated deployment on turmoil: one host per session, each with its own simulated disk
//! ([`SimDisk`]) that outlives the host's crashes.
//!
//! The driving loop steps the simulation and crashes a host when its script reaches a crash
//! point: it takes the disk image the crash leaves (synced bytes, plus what the scenario keeps of
//! the unsynced ones), `sim.crash`es the host (whose dropped tasks may still write, to a disk
//! nobody reads again), installs a disk holding that image, and `sim.bounce`s the host after the
//! down time. The restarted host starts a new process ([`super::process`]) and resumes its script
//! where it stood; each operation is played by [`super::ops`].
//!
//! What the harness must know across crashes (where each script stands, which journal records,
//! which mirrors are attached) lives in a [`Slot`] per session, outside the hosts. Everything the
//! operations return is recorded ([`super::record`]); nothing here judges it.

use super::corrupted;
use super::crash_disk::{crash_image, disk_after, image_hash};
use super::ops::run_op;
use super::process::start;
use super::record::{Happened, SessionRecord};
use super::scenario::{JournalScenario, Pending};
use super::state::{sleep_ms, Point, Slot, World};
use crate::coverage::Coverage;
use crate::disk::SimDisk;
use crate::trace::Trace;
use crate::turmoil_clock::Clock;
use history::journal::JournalOptions;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Seconds since the Unix epoch at simulated time zero.
const EPOCH_SECS: u64 = 1_700_000_000;
/// Upper bound on simulated time: a world still running by then is broken.
const SIMULATION_SECS: u64 = 600;

pub use crate::workload::WorldConfig;

/// What a played world leaves for the checkers.
pub struct WorldRecord {
    pub sessions: Vec<SessionRecord>,
    pub trace: Trace,
    /// Set when the world did not finish (a hang, a host error).
    pub failure: Option<String>,
    pub sim_elapsed_ms: u64,
    /// Faults the world injected.
    pub coverage: Coverage,
    /// Operations that ran to their end.
    pub ops_run: usize,
}

pub(super) fn host_name(s: usize) -> String {
    format!("session-{s}")
}

/// Plays `scenario` once. Deterministic: the same scenario and config give the same record.
pub fn play(scenario: &JournalScenario, config: &WorldConfig) -> WorldRecord {
    let opts = JournalOptions {
        load_step_records: scenario.load_step_records.max(1) as usize,
        ..JournalOptions::planted(config.planted)
    };
    let world = Rc::new(World {
        scenario: scenario.clone(),
        opts,
        planted: config.planted,
        slots: scenario.sessions.iter().map(|_| Slot::new()).collect(),
        trace: RefCell::new(Trace::new(config.keep_trace)),
        coverage: RefCell::new(Coverage::default()),
        ops_run: Cell::new(0),
    });
    let clock = Clock::new(EPOCH_SECS, SIMULATION_SECS, Duration::from_millis(1));
    let mut sim = clock.simulation(scenario.network_seed);
    for s in 0..scenario.sessions.len() {
        let w = world.clone();
        sim.host(host_name(s), move || session_host(s, w.clone()));
    }
    let w = world.clone();
    sim.client("operator", async move {
        while !w.slots.iter().all(|s| s.done.get()) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(())
    });
    let failure = drive(&mut sim, &world);
    let sim_elapsed_ms = sim.elapsed().as_millis() as u64;
    drop(sim);
    let Ok(world) = Rc::try_unwrap(world) else {
        return WorldRecord {
            sessions: Vec::new(),
            trace: Trace::new(false),
            failure: Some("the world still holds its state after the simulation ended".into()),
            sim_elapsed_ms,
            coverage: Coverage::default(),
            ops_run: 0,
        };
    };
    let mut coverage = world.coverage.into_inner();
    for slot in &world.slots {
        super::map::map_probes(&slot.disk.borrow().image(), &mut coverage);
    }
    WorldRecord {
        sessions: world
            .slots
            .into_iter()
            .map(|s| s.record.into_inner())
            .collect(),
        trace: world.trace.into_inner(),
        failure,
        sim_elapsed_ms,
        coverage,
        ops_run: world.ops_run.get(),
    }
}

/// Steps the simulation, crashing and restarting hosts at their crash points.
fn drive(sim: &mut turmoil::Sim<'_>, world: &Rc<World>) -> Option<String> {
    let crashes = &world.scenario.crashes;
    let mut fired = vec![false; crashes.len()];
    let mut bounces: Vec<(Duration, usize)> = Vec::new();
    loop {
        match sim.step() {
            Ok(true) => return None,
            Ok(false) => {}
            Err(e) => return Some(e.to_string()),
        }
        for (i, c) in crashes.iter().enumerate() {
            let s = c.session as usize;
            let point = Point {
                op: c.op,
                during: c.during,
            };
            if fired[i] || world.slots[s].at.get() != Some(point) {
                continue;
            }
            fired[i] = true;
            crash(sim, world, i);
            bounces.push((
                sim.elapsed() + Duration::from_millis(u64::from(c.down_ms)),
                s,
            ));
        }
        let now = sim.elapsed();
        bounces.retain(|(at, s)| {
            if now < *at {
                return true;
            }
            world.record(format_args!("s{s} bounce"));
            sim.bounce(host_name(*s));
            false
        });
    }
}

/// Crash `i` of the scenario: the host loses its process and its unsynced writes.
fn crash(sim: &mut turmoil::Sim<'_>, world: &World, i: usize) {
    let c = &world.scenario.crashes[i];
    let s = c.session as usize;
    let slot = &world.slots[s];
    let disk = slot.disk.borrow().clone();
    let image = crash_image(&disk, c.pending);
    {
        let mut cov = world.coverage.borrow_mut();
        cov.hit("journal.fault.crash");
        match c.pending {
            Pending::Lose => cov.hit("journal.fault.crash_lose_unsynced"),
            Pending::Keep => cov.hit("journal.fault.crash_keep_unsynced"),
            Pending::Kill => cov.hit("journal.fault.crash_kill_keeps_page_cache"),
            Pending::Cut { .. } => cov.hit("journal.fault.crash_torn_write"),
            Pending::Reorder { .. } => cov.hit("journal.fault.crash_reordered_writes"),
        }
        if c.during.is_some() {
            cov.hit("journal.fault.crash_mid_replace");
        }
    }
    let bytes: usize = image.values().map(Vec::len).sum();
    world.record(format_args!(
        "s{s} crash op={} during={:?} pending={:?} files={} bytes={bytes} image={:016x}",
        c.op,
        c.during,
        c.pending,
        image.len(),
        image_hash(&image)
    ));
    if c.during.is_some() {
        world.happened(s, Happened::Interrupted { op: c.op as usize });
    }
    world.happened(
        s,
        Happened::Crash {
            op: c.op as usize,
            during: c.during,
            image: image.clone(),
            synced: disk.synced_prefixes(),
            written: (disk.image().into_iter())
                .map(|(name, bytes)| (name, bytes.len() as u64))
                .collect(),
        },
    );
    sim.crash(host_name(s));
    let restarted = restarted_disk(world, i, &disk, image);
    *slot.disk.borrow_mut() = Arc::new(restarted);
    slot.at.set(None);
    slot.next_op.set(c.op as usize + 1);
    slot.restart.set(Some(i));
}

/// The disk crash `i`'s host comes back to: `image`, with the silent corruption the crash's plan
/// names landed on the recording (flipped in the image, or a stale sector its reads serve).
fn restarted_disk(
    world: &World,
    i: usize,
    crashed: &SimDisk,
    mut image: BTreeMap<String, Vec<u8>>,
) -> SimDisk {
    let c = &world.scenario.crashes[i];
    let s = c.session as usize;
    let slot = &world.slots[s];
    let injected = c.corrupt.and_then(|corruption| {
        let file = slot.current.borrow().clone();
        corrupted::inject(crashed, &mut image, &file, corruption)
    });
    let restarted = disk_after(crashed, image, c.pending);
    if let Some(inj) = &injected {
        world.coverage.borrow_mut().hit(corrupted::probe(inj));
        world.record(format_args!(
            "s{s} corrupt {} {} byte={} record={}@{}",
            inj.corruption.kind(),
            inj.file,
            inj.byte,
            inj.record_kind,
            inj.frame_start
        ));
        if let Some((sector, old)) = &inj.stale {
            restarted.serve_stale(&inj.file, *sector, old.clone());
        }
    }
    *slot.corrupted.borrow_mut() = injected;
    restarted
}

async fn session_host(s: usize, world: Rc<World>) -> turmoil::Result {
    let mut proc = start(&world, s);
    let script = &world.scenario.sessions[s];
    let slot = &world.slots[s];
    while !proc.ended {
        let k = slot.next_op.get();
        let Some(op) = script.ops.get(k) else { break };
        run_op(&world, &mut proc, k, op).await;
        slot.next_op.set(k + 1);
        world.ops_run.set(world.ops_run.get() + 1);
        slot.at.set(Some(Point {
            op: k as u32,
            during: None,
        }));
        sleep_ms(op.after_ms).await;
        slot.at.set(None);
    }
    {
        let mut record = slot.record.borrow_mut();
        record.final_image = proc.disk.image();
        record.final_recording = proc
            .journal()
            .map(|j| (j.name().to_string(), j.fold().last_seq()));
        record.finished = true;
    }
    world.record(format_args!(
        "s{s} p{} done image={:016x}",
        proc.p,
        image_hash(&proc.disk.image())
    ));
    slot.done.set(true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::{synced_then_appended, SimDiskOptions};

    #[test]
    fn a_torn_crash_keeps_a_prefix_of_the_unsynced_bytes() {
        let d = synced_then_appended(SimDiskOptions::default(), b"abc", b"defg");
        let cut = crash_image(&d, Pending::Cut { bytes: 2 });
        assert_eq!(cut.get("j").map(Vec::as_slice), Some(&b"abcde"[..]));
        assert_eq!(
            crash_image(&d, Pending::Lose).get("j").map(Vec::as_slice),
            Some(&b"abc"[..])
        );
        assert_eq!(
            crash_image(&d, Pending::Keep).get("j").map(Vec::as_slice),
            Some(&b"abcdefg"[..])
        );
    }
}
