//! Enumerating the crash states of a logged workload (the ALICE / CrashMonkey idea).
//!
//! A crash state is the disk a machine finds after losing power at one point of the log:
//! - every append cut at every byte (every `cut_step_bytes`), with everything written before it
//!   kept, synced or not (the page cache happened to reach the disk);
//! - every point with every unsynced write lost (only synced bytes survive).
//!
//! Points with unsynced writes lost are emitted once per distinct durable image, at the earliest
//! event that shows it: later points show the same bytes with more operations issued, so their
//! check is weaker.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use super::event::DiskEvent;

/// Which crash states to enumerate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashPointOptions {
    /// Cut appends every this many bytes (1: every byte). The full length is always a cut.
    pub cut_step_bytes: u64,
    /// Also crash with every unsynced write lost.
    pub lose_unsynced: bool,
}

impl Default for CrashPointOptions {
    fn default() -> Self {
        CrashPointOptions {
            cut_step_bytes: 1,
            lose_unsynced: true,
        }
    }
}

/// One crash state: events `..event` happened; with `cut_bytes`, event `event` (an append) wrote
/// that many of its bytes; with `lose_unsynced`, only synced bytes survive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CrashPoint {
    pub event: usize,
    pub cut_bytes: Option<u64>,
    pub lose_unsynced: bool,
}

impl CrashPoint {
    /// The crash after events `..event` that keeps only synced bytes.
    fn synced_only(event: usize) -> CrashPoint {
        CrashPoint {
            event,
            cut_bytes: None,
            lose_unsynced: true,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct ReplayFile {
    current: Vec<u8>,
    durable: Vec<u8>,
    durably_exists: bool,
}

/// Calls `f` with every crash state of `events`, in log order, until it breaks.
pub fn for_each_crash_state(
    events: &[DiskEvent],
    opts: CrashPointOptions,
    f: &mut dyn FnMut(CrashPoint, BTreeMap<String, Vec<u8>>) -> ControlFlow<()>,
) {
    assert!(opts.cut_step_bytes >= 1, "cut step of 0 bytes");
    let mut files: BTreeMap<String, ReplayFile> = BTreeMap::new();
    let mut durable_changed = true;
    for (k, event) in events.iter().enumerate() {
        if opts.lose_unsynced && durable_changed {
            if f(CrashPoint::synced_only(k), durable_image(&files)).is_break() {
                return;
            }
            durable_changed = false;
        }
        if let DiskEvent::Append { file, bytes, .. } = event {
            let len = bytes.len() as u64;
            let mut cut = 0;
            loop {
                let mut image = current_image(&files);
                image
                    .entry(file.clone())
                    .or_default()
                    .extend_from_slice(&bytes[..cut as usize]);
                let point = CrashPoint {
                    event: k,
                    cut_bytes: Some(cut),
                    lose_unsynced: false,
                };
                if f(point, image).is_break() {
                    return;
                }
                if cut == len {
                    break;
                }
                cut = (cut + opts.cut_step_bytes).min(len);
            }
        }
        durable_changed |= apply(&mut files, event);
    }
    let end = events.len();
    if opts.lose_unsynced
        && durable_changed
        && f(CrashPoint::synced_only(end), durable_image(&files)).is_break()
    {
        return;
    }
    let point = CrashPoint {
        event: end,
        cut_bytes: None,
        lose_unsynced: false,
    };
    let _ = f(point, current_image(&files));
}

/// The disk image at one crash point (the same bytes [`for_each_crash_state`] hands over): the
/// unit tests' reference for the images the walk builds incrementally.
#[cfg(test)]
pub(crate) fn crash_image(events: &[DiskEvent], point: CrashPoint) -> BTreeMap<String, Vec<u8>> {
    assert!(point.event <= events.len(), "crash point past the log");
    let mut files: BTreeMap<String, ReplayFile> = BTreeMap::new();
    for event in &events[..point.event] {
        apply(&mut files, event);
    }
    if point.lose_unsynced {
        return durable_image(&files);
    }
    let mut image = current_image(&files);
    if let (Some(cut), Some(DiskEvent::Append { file, bytes, .. })) =
        (point.cut_bytes, events.get(point.event))
    {
        let cut = (cut as usize).min(bytes.len());
        image
            .entry(file.clone())
            .or_default()
            .extend_from_slice(&bytes[..cut]);
    }
    image
}

/// Applies one event; returns whether durable bytes changed.
fn apply(files: &mut BTreeMap<String, ReplayFile>, event: &DiskEvent) -> bool {
    match event {
        DiskEvent::Append { file, bytes, .. } => {
            files
                .entry(file.clone())
                .or_default()
                .current
                .extend_from_slice(bytes);
            false
        }
        DiskEvent::Truncate { file, len } => {
            if let Some(f) = files.get_mut(file) {
                f.current.truncate(*len as usize);
            }
            false
        }
        DiskEvent::Sync { file } => {
            let f = files.entry(file.clone()).or_default();
            f.durable.clone_from(&f.current);
            f.durably_exists = true;
            true
        }
        DiskEvent::Remove { file } => files.remove(file).is_some(),
    }
}

fn current_image(files: &BTreeMap<String, ReplayFile>) -> BTreeMap<String, Vec<u8>> {
    files
        .iter()
        .map(|(k, f)| (k.clone(), f.current.clone()))
        .collect()
}

fn durable_image(files: &BTreeMap<String, ReplayFile>) -> BTreeMap<String, Vec<u8>> {
    files
        .iter()
        .filter(|(_, f)| f.durably_exists)
        .map(|(k, f)| (k.clone(), f.durable.clone()))
        .collect()
}
