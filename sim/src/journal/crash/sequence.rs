//! Crashes during recovery: sequences of up to three crashes.
//!
//! A first crash leaves a state ([`super::explore`] checks each). Recovery (resume, then a clone
//! and a checkpoint fork of the recording) then runs on it, on a logging disk, and is itself
//! crashed at each of its own disk operations; each state that crash may leave is checked the way
//! a first crash's is (reopen within the model, resume, clone and fork leave no transaction
//! open, write again, reopen), against the first crash's window of allowed histories: a
//! recovery changes no history, it only terminates, cuts and syncs. A third crash cuts the
//! recovery of a second crash's state the same way.
//!
//! Recoveries start from two kinds of state, both bounded per crash point:
//! - a process kill that kept the page cache: the disk as the log left it at that point, its
//!   unsynced bytes still unsynced, so the recovery's crash is a later power cut that loses
//!   what the recovery did not sync (every point);
//! - up to `starts_per_point` crash states that left a replacement open or a torn tail (the
//!   first found, those with both first).

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use history::journal::{
    clone_journal, fork_journal, resume_journal, JournalOptions, SharedStorage, Storage,
};

use super::check::{keep_start, JOURNAL};
use super::explore::{synced_lengths, Checker};
use crate::disk::states::{for_each_model_state_from, Image, ModelStateOptions};
use crate::disk::{CrashPoint, DiskEvent, SimDisk, SimDiskOptions};

/// What crash sequences covered, per depth (index 0: the second crash, 1: the third).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SequenceCounts {
    /// Recoveries run from a crash state, crashed at each of their own disk operations.
    pub recoveries: [u64; 2],
    /// Of those, recoveries of a disk a process kill left (unsynced bytes kept, unsynced).
    pub after_kill: [u64; 2],
    /// Crash points inside those recoveries.
    pub points: [u64; 2],
    /// States the persistence model allows at those points (saturating).
    pub space: [u128; 2],
    /// States checked.
    pub checked: [u64; 2],
    /// Points whose space was over the cap, so sampled.
    pub sampled_points: [u64; 2],
}

/// Where a recovery starts: the log that builds its disk, and the first crash it follows.
struct Start {
    events: Vec<DiskEvent>,
    /// The first crash's point (its window of allowed histories).
    first: CrashPoint,
    kill: bool,
}

/// The log that rebuilds `image` as a durable disk.
fn image_events(image: &Image) -> Vec<DiskEvent> {
    image
        .iter()
        .flat_map(|(file, bytes)| {
            [
                DiskEvent::Append {
                    file: file.clone(),
                    offset: 0,
                    bytes: bytes.clone(),
                },
                DiskEvent::Sync { file: file.clone() },
            ]
        })
        .collect()
}

/// A logging disk with `events` replayed on it (its log starts with them).
fn replay_disk(events: &[DiskEvent]) -> Arc<SimDisk> {
    let disk = Arc::new(SimDisk::new(SimDiskOptions {
        log_events: true,
        ..SimDiskOptions::default()
    }));
    for e in events {
        let done = match e {
            DiskEvent::Append { file, bytes, .. } => disk.append(file, bytes),
            DiskEvent::Truncate { file, len } => disk.truncate(file, *len),
            DiskEvent::Sync { file } => disk.sync(file),
            DiskEvent::Remove { file } => disk.remove(file),
        };
        done.expect("a logged operation replays");
    }
    debug_assert_eq!(disk.event_count(), events.len());
    disk
}

/// The recovery a crash is explored inside: resume the recording, then clone it and fork it at
/// its last record but one (each under a name of its own per depth). Failures end it: a state
/// whose recovery fails is reported by the check of that state.
fn run_recovery(disk: &Arc<SimDisk>, depth: u8, jopts: &JournalOptions) {
    let storage: SharedStorage = disk.clone();
    let Ok(j) = resume_journal(storage.clone(), JOURNAL, jopts.clone()) else {
        return;
    };
    let last = j.fold().last_seq();
    drop(j);
    let clone = format!("clone-r{depth}.journal");
    if clone_journal(storage.clone(), JOURNAL, &clone, jopts.clone()).is_err() {
        return;
    }
    if last >= 2 {
        let fork = format!("fork-r{depth}.journal");
        let _ = fork_journal(storage, JOURNAL, &fork, last - 1, jopts.clone());
    }
}

impl Checker<'_> {
    /// Second (and third) crashes: recoveries of the first crash's states, each crashed at
    /// each of its disk operations. `kept` holds the interesting first-crash states per point.
    pub(super) fn explore_sequences(
        &self,
        report: &mut super::CrashReport,
        events: &[DiskEvent],
        kept: BTreeMap<usize, Vec<(u8, Image)>>,
    ) {
        if self.opts.crash_depth < 2 {
            return;
        }
        let mut kept = kept;
        for k in 0..=events.len() {
            let first = CrashPoint {
                event: k,
                cut_bytes: None,
                lose_unsynced: false,
            };
            let mut starts = vec![Start {
                events: events[..k].to_vec(),
                first,
                kill: true,
            }];
            for (_, image) in kept.remove(&k).unwrap_or_default() {
                starts.push(Start {
                    events: image_events(&image),
                    first,
                    kill: false,
                });
            }
            for start in starts {
                self.crash_recovery(report, start, 2);
            }
        }
    }

    /// Runs the recovery from `start` and checks every state a crash inside it may leave (crash
    /// number `depth`); below the depth bound, recovers some of those states again.
    fn crash_recovery(&self, report: &mut super::CrashReport, start: Start, depth: u8) {
        let d = usize::from(depth - 2);
        let disk = replay_disk(&start.events);
        run_recovery(&disk, depth, &self.jopts);
        let log = disk.events();
        let base = start.events.len();
        let synced = synced_lengths(&log);
        let states = ModelStateOptions {
            model: self.opts.persistence,
            cap_per_point: self.opts.recovery_cap_per_point,
            sample_seed: self.opts.sample_seed ^ u64::from(depth),
        };
        let deeper = depth < self.opts.crash_depth;
        let mut kept = BTreeMap::new();
        let counts = for_each_model_state_from(&log, base, states, &mut |k, image| {
            if deeper && k > base {
                keep_start(&mut kept, self.opts.starts_per_point, 0, image.clone());
            }
            self.check_image(report, start.first, synced[k], image, depth, k);
            ControlFlow::Continue(())
        });
        let s = &mut report.sequences;
        s.recoveries[d] += 1;
        s.after_kill[d] += u64::from(start.kill);
        s.points[d] += counts.points;
        s.space[d] = s.space[d].saturating_add(counts.space);
        s.checked[d] += counts.visited;
        s.sampled_points[d] += counts.sampled_points;
        if !deeper {
            return;
        }
        // A third crash: after a kill inside the recovery (at its middle write, where it has
        // written and not yet synced all of it), and from the kept states.
        let mid = base + (log.len() - base).div_ceil(2);
        let mut next = Vec::new();
        if log.len() > base {
            next.push(Start {
                events: log[..mid].to_vec(),
                first: start.first,
                kill: true,
            });
        }
        for (_, image) in kept.remove(&0).unwrap_or_default() {
            next.push(Start {
                events: image_events(&image),
                first: start.first,
                kill: false,
            });
        }
        for n in next {
            self.crash_recovery(report, n, depth + 1);
        }
    }
}
