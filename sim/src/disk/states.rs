//! Crash states under a persistence model ([`super::persist`]): at every point of a logged
//! workload, every disk the model allows, or a seeded sample of them when there are too many.
//!
//! A point is "events `..k` happened". The disk at a point is the product of every file's
//! outcomes; its states are numbered in mixed radix over the files, so a bounded space is walked
//! exhaustively in a fixed order, and a space over the cap is sampled from a generator seeded by
//! the sample seed and the point.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::event::DiskEvent;
use super::persist::{FileHistory, FileSpace, Persistence};

/// A disk image: every file's bytes.
pub type Image = BTreeMap<String, Vec<u8>>;

/// Every file's outcomes at one point.
#[derive(Clone, Debug)]
pub struct StateSpace {
    files: Vec<(String, FileSpace)>,
}

impl StateSpace {
    pub fn new(model: Persistence, files: &BTreeMap<String, FileHistory>) -> StateSpace {
        StateSpace {
            files: files
                .iter()
                .map(|(name, h)| (name.clone(), FileSpace::new(model, h)))
                .collect(),
        }
    }

    /// How many disks (saturating).
    pub fn count(&self) -> u128 {
        self.files
            .iter()
            .fold(1u128, |n, (_, f)| n.saturating_mul(f.count()))
    }

    /// Disk `index` (below [`StateSpace::count`]).
    pub fn image(&self, mut index: u128) -> Image {
        let mut image = Image::new();
        for (name, f) in &self.files {
            let n = f.count();
            if let Some(bytes) = f.outcome(index % n) {
                image.insert(name.clone(), bytes);
            }
            index /= n;
        }
        image
    }

    /// A seeded disk.
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> Image {
        self.files
            .iter()
            .filter_map(|(name, f)| f.draw(rng).map(|b| (name.clone(), b)))
            .collect()
    }
}

/// What to enumerate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelStateOptions {
    pub model: Persistence,
    /// States checked per point at most; a larger space is sampled.
    pub cap_per_point: u64,
    /// Seeds the samples.
    pub sample_seed: u64,
}

/// What an enumeration covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub points: u64,
    /// States the model allows, summed over the points (saturating).
    pub space: u128,
    /// States handed to the caller.
    pub visited: u64,
    /// Points whose space was over the cap, so sampled.
    pub sampled_points: u64,
}

/// Calls `f` with (point, disk) for every state `opts.model` allows at every point of `events`,
/// each point capped at `opts.cap_per_point` sampled states, until `f` breaks.
pub fn for_each_model_state(
    events: &[DiskEvent],
    opts: ModelStateOptions,
    f: &mut dyn FnMut(usize, Image) -> ControlFlow<()>,
) -> StateCounts {
    for_each_model_state_from(events, 0, opts, f)
}

/// [`for_each_model_state`] over the points from `first` on only (the events before it are a
/// history the crashes of the rest start from).
pub fn for_each_model_state_from(
    events: &[DiskEvent],
    first: usize,
    opts: ModelStateOptions,
    f: &mut dyn FnMut(usize, Image) -> ControlFlow<()>,
) -> StateCounts {
    assert!(opts.cap_per_point >= 1, "a cap of no states");
    let mut replay = Replay::default();
    let mut counts = StateCounts::default();
    for k in 0..=events.len() {
        if k > 0 {
            replay.apply(&events[k - 1]);
        }
        if k < first {
            continue;
        }
        let space = StateSpace::new(opts.model, &replay.histories());
        let n = space.count();
        counts.points += 1;
        counts.space = counts.space.saturating_add(n);
        let flow = if n <= u128::from(opts.cap_per_point) {
            (0..n).try_for_each(|i| {
                counts.visited += 1;
                f(k, space.image(i))
            })
        } else {
            counts.sampled_points += 1;
            let mut rng = point_rng(opts.sample_seed, k);
            (0..opts.cap_per_point).try_for_each(|_| {
                counts.visited += 1;
                f(k, space.draw(&mut rng))
            })
        };
        if flow.is_break() {
            break;
        }
    }
    counts
}

fn point_rng(seed: u64, point: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (point as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// One file as the log replays it.
#[derive(Clone, Debug, Default)]
struct Tracked {
    h: FileHistory,
    current: Vec<u8>,
}

/// The files of a log replayed up to a point, with what each has pending.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    files: BTreeMap<String, Tracked>,
}

fn dir_of(name: &str) -> &str {
    name.rsplit_once('/').map_or("", |(d, _)| d)
}

impl Replay {
    pub fn apply(&mut self, event: &DiskEvent) {
        match event {
            DiskEvent::Append { file, bytes, .. } => {
                let t = self.files.entry(file.clone()).or_default();
                if !t.h.present {
                    // Created (again): a removed file's old bytes cannot come back (simplified).
                    *t = Tracked::default();
                    t.h.present = true;
                }
                t.current.extend_from_slice(bytes);
                t.h.versions.push(t.current.clone());
            }
            DiskEvent::Truncate { file, len } => {
                if let Some(t) = self.files.get_mut(file).filter(|t| t.h.present) {
                    t.current.truncate(*len as usize);
                    t.h.versions.push(t.current.clone());
                }
            }
            DiskEvent::Sync { file } => self.sync(file),
            DiskEvent::Remove { file } => {
                if let Some(t) = self.files.get_mut(file) {
                    if t.h.durable.is_none() {
                        self.files.remove(file);
                        return;
                    }
                    t.h.present = false;
                    t.h.versions.clear();
                    t.current.clear();
                    t.h.committed = false;
                    t.h.dir_synced = false;
                }
            }
        }
    }

    /// A sync makes the file durable; its first one also syncs its directory; any sync commits
    /// ext4's journal.
    fn sync(&mut self, file: &str) {
        let Some(t) = self.files.get_mut(file).filter(|t| t.h.present) else {
            return;
        };
        let first = t.h.durable.is_none();
        t.h.durable = Some(t.current.clone());
        t.h.versions.clear();
        let dir = dir_of(file).to_string();
        for (name, t) in &mut self.files {
            t.h.committed = true;
            if first && !t.h.present && dir_of(name) == dir {
                t.h.dir_synced = true;
            }
        }
    }

    /// Every file's history at this point.
    pub fn histories(&self) -> BTreeMap<String, FileHistory> {
        self.files
            .iter()
            .map(|(k, t)| (k.clone(), t.h.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(file: &str, bytes: &[u8]) -> DiskEvent {
        DiskEvent::Append {
            file: file.into(),
            offset: 0,
            bytes: bytes.to_vec(),
        }
    }

    fn sync(file: &str) -> DiskEvent {
        DiskEvent::Sync { file: file.into() }
    }

    fn collect(events: &[DiskEvent], model: Persistence, cap: u64) -> (StateCounts, Vec<Image>) {
        let mut seen = Vec::new();
        let opts = ModelStateOptions {
            model,
            cap_per_point: cap,
            sample_seed: 7,
        };
        let counts = for_each_model_state(events, opts, &mut |_, image| {
            seen.push(image);
            ControlFlow::Continue(())
        });
        (counts, seen)
    }

    #[test]
    fn two_files_reorder_independently_and_a_new_entry_needs_its_sync() {
        let events = [
            append("a", b"1"),
            sync("a"),
            append("a", b"2"),
            append("b", b"x"),
        ];
        let (counts, seen) = collect(&events, Persistence::Reorder, 1000);
        assert_eq!(counts.points, 5);
        assert_eq!(counts.sampled_points, 0);
        assert_eq!(counts.visited as u128, counts.space);
        let a_kept_b_lost = Image::from([("a".to_string(), b"12".to_vec())]);
        let a_lost_b_kept = Image::from([
            ("a".to_string(), b"1".to_vec()),
            ("b".to_string(), b"x".to_vec()),
        ]);
        assert!(seen.contains(&a_kept_b_lost));
        assert!(seen.contains(&a_lost_b_kept));
        let (ext4, _) = collect(&events, Persistence::Ext4Ordered, 1000);
        assert!(ext4.space < counts.space, "{ext4:?} {counts:?}");
    }

    #[test]
    fn a_space_over_the_cap_is_sampled_the_same_way_twice() {
        let events = [append("a", &[9u8; 4000])];
        let (counts, first) = collect(&events, Persistence::Reorder, 16);
        assert_eq!(counts.sampled_points, 1);
        assert!(counts.space > 16);
        assert_eq!(counts.visited, 1 + 16);
        let (_, again) = collect(&events, Persistence::Reorder, 16);
        assert_eq!(first, again);
    }

    #[test]
    fn an_unsynced_removal_may_come_back_until_its_directory_is_synced() {
        let events = [
            append("d/a", b"1"),
            sync("d/a"),
            DiskEvent::Remove { file: "d/a".into() },
            append("d/b", b"2"),
            sync("d/b"),
        ];
        let mut replay = Replay::default();
        for e in &events[..3] {
            replay.apply(e);
        }
        let space = StateSpace::new(Persistence::Reorder, &replay.histories());
        assert_eq!(space.count(), 2);
        for e in &events[3..] {
            replay.apply(e);
        }
        let space = StateSpace::new(Persistence::Reorder, &replay.histories());
        assert_eq!(space.count(), 1);
        assert!(!space.image(0).contains_key("d/a"));
    }
}
