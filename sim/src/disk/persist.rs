//! Persistence models: which disks a file system may leave after a power cut, file by file.
//!
//! Between two syncs of a file, its unsynced operations sit in the page cache and reach the disk
//! in whatever order the file system and the device choose. A model says which subsets may have
//! landed:
//!
//! - `prefix`: the write log survives up to a point, the interrupted append cut at any byte, or
//!   every unsynced write is lost ([`super::crash`] enumerates it over the whole log).
//! - `ext4-ordered` (ext4 `data=ordered` with delayed allocation): each file independently keeps
//!   a prefix of its unsynced operations, the last kept append torn at a page (4 KiB) boundary of
//!   the file (the size is updated page by page and committed after the data). A directory change
//!   (a new file's entry, a removal) persists with the next journal commit, which any sync forces;
//!   before one, it may be lost.
//! - `reorder` (the most adversarial, POSIX without ordering): each file independently takes the
//!   length it had after any of its unsynced operations (or its synced length), and every 512-byte
//!   sector within it that differs from the synced bytes holds the old bytes (zeros past the synced
//!   length), the new ones, or a torn mix (new bytes up to a 64-byte boundary, old after). A new
//!   file's entry persists only with a sync of that file (the [`history::journal::Storage`]
//!   contract: a file's first sync also syncs its directory); a removal persists only once its
//!   directory was synced, otherwise the file comes back with its synced bytes.
//!
//! Simplifications: the new bytes of a sector are those of the version whose length was chosen; a
//! file removed and created again cannot bring the removed bytes back. The storage interface has
//! no rename, and no write path renames, so there is no rename to lose.

use std::str::FromStr;

use rand::Rng;
use strum::IntoStaticStr;

/// The unit a device writes atomically at best.
pub const SECTOR_BYTES: usize = 512;
/// The unit ext4 updates a file's size in.
pub const PAGE_BYTES: usize = 4096;
/// Where a torn sector may be cut.
pub const TORN_STEP_BYTES: usize = 64;
/// The outcomes of one dirty sector under `reorder`: old, new, or torn at one of 7 cuts.
const SECTOR_CHOICES: u128 = (SECTOR_BYTES / TORN_STEP_BYTES + 1) as u128;

/// A persistence model (see the module documentation), shown as its name.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, IntoStaticStr, strum::Display,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Persistence {
    Prefix,
    Ext4Ordered,
    #[default]
    Reorder,
}

impl Persistence {
    pub const ALL: [Persistence; 3] = [
        Persistence::Prefix,
        Persistence::Ext4Ordered,
        Persistence::Reorder,
    ];

    /// The model's name, as `--persistence` takes it: `prefix`, `ext4-ordered`, `reorder`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl FromStr for Persistence {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Persistence::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!("`{s}` is not a persistence model (prefix, ext4-ordered, reorder)")
            })
    }
}

/// One file at a crash point: what is durable and what its unsynced operations made of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileHistory {
    /// The synced bytes, when the file's directory entry is durable (it was synced once).
    pub durable: Option<Vec<u8>>,
    /// The file's bytes after each unsynced operation, oldest first (empty: nothing pending).
    pub versions: Vec<Vec<u8>>,
    /// Whether the file exists now (it was not removed).
    pub present: bool,
    /// Whether some file was synced since this file was created or removed (ext4's journal
    /// commit carries every directory change before it).
    pub committed: bool,
    /// Whether the file's directory was synced since its removal.
    pub dir_synced: bool,
}

/// The outcomes one file may show after a crash under one model.
#[derive(Clone, Debug)]
pub struct FileSpace {
    /// Whole-file outcomes: `None` is an absent file.
    listed: Vec<Option<Vec<u8>>>,
    /// `reorder`: the bytes a sector holds when its new bytes were lost.
    old: Vec<u8>,
    /// `reorder`: per chosen length, the version and its sectors that differ from `old`.
    mixes: Vec<Mix>,
}

#[derive(Clone, Debug)]
struct Mix {
    target: Vec<u8>,
    dirty: Vec<usize>,
}

impl FileSpace {
    pub fn new(model: Persistence, h: &FileHistory) -> FileSpace {
        let mut space = FileSpace {
            listed: Vec::new(),
            old: h.durable.clone().unwrap_or_default(),
            mixes: Vec::new(),
        };
        if !h.present {
            space.listed.push(None);
            let undone = match model {
                Persistence::Prefix => false,
                Persistence::Ext4Ordered => !h.committed,
                Persistence::Reorder => !h.dir_synced,
            };
            if undone {
                space.listed.push(h.durable.clone());
            }
            space.listed.dedup();
            return space;
        }
        let entry_may_be_lost = h.durable.is_none()
            && match model {
                Persistence::Ext4Ordered => !h.committed,
                Persistence::Prefix | Persistence::Reorder => true,
            };
        if entry_may_be_lost {
            space.listed.push(None);
        }
        match model {
            Persistence::Prefix | Persistence::Ext4Ordered => {
                space.list_prefixes(h, model == Persistence::Ext4Ordered);
            }
            Persistence::Reorder => space.list_mixes(h),
        }
        space
    }

    /// Every prefix of the unsynced operations, and with `torn_pages` every page cut of an append.
    fn list_prefixes(&mut self, h: &FileHistory, torn_pages: bool) {
        let mut before = self.old.clone();
        self.listed.push(Some(before.clone()));
        for v in &h.versions {
            let append = v.len() > before.len() && v.starts_with(&before);
            if torn_pages && append {
                let first = before.len() / PAGE_BYTES + 1;
                for page in first.. {
                    let cut = page * PAGE_BYTES;
                    if cut >= v.len() {
                        break;
                    }
                    self.listed.push(Some(v[..cut].to_vec()));
                }
            }
            self.listed.push(Some(v.clone()));
            before.clone_from(v);
        }
    }

    /// Every length the file had, each with every mix of its dirty sectors.
    fn list_mixes(&mut self, h: &FileHistory) {
        let mut targets = vec![self.old.clone()];
        targets.extend(h.versions.iter().cloned());
        targets.dedup();
        for target in targets {
            let dirty = (0..target.len().div_ceil(SECTOR_BYTES))
                .filter(|s| {
                    let start = s * SECTOR_BYTES;
                    let end = (start + SECTOR_BYTES).min(target.len());
                    (start..end).any(|i| self.old.get(i).copied().unwrap_or(0) != target[i])
                })
                .collect();
            self.mixes.push(Mix { target, dirty });
        }
    }

    /// How many outcomes (saturating).
    pub fn count(&self) -> u128 {
        self.mixes.iter().fold(self.listed.len() as u128, |n, m| {
            n.saturating_add(SECTOR_CHOICES.saturating_pow(m.dirty.len() as u32))
        })
    }

    /// Outcome `index` (below [`FileSpace::count`]).
    pub fn outcome(&self, index: u128) -> Option<Vec<u8>> {
        if let Some(o) = usize::try_from(index).ok().and_then(|i| self.listed.get(i)) {
            return o.clone();
        }
        let mut rem = index - self.listed.len() as u128;
        for m in &self.mixes {
            let n = SECTOR_CHOICES.saturating_pow(m.dirty.len() as u32);
            if rem < n {
                let digits: Vec<u8> = (0..m.dirty.len())
                    .map(|_| {
                        let d = (rem % SECTOR_CHOICES) as u8;
                        rem /= SECTOR_CHOICES;
                        d
                    })
                    .collect();
                return Some(self.mix(m, &digits));
            }
            rem -= n;
        }
        panic!("outcome {index} past the file's space");
    }

    /// A seeded outcome: a listed one or a mix, each sector new with probability 1/2, old 3/8,
    /// torn 1/8 (whole sectors are what devices mostly write).
    pub fn draw(&self, rng: &mut impl Rng) -> Option<Vec<u8>> {
        let options = self.listed.len() + self.mixes.len();
        let pick = rng.random_range(0..options);
        if pick < self.listed.len() {
            return self.listed[pick].clone();
        }
        let m = &self.mixes[pick - self.listed.len()];
        let digits: Vec<u8> = m
            .dirty
            .iter()
            .map(|_| match rng.random_range(0..8u8) {
                0..=3 => 1,
                4..=6 => 0,
                _ => rng.random_range(2..SECTOR_CHOICES as u8),
            })
            .collect();
        Some(self.mix(m, &digits))
    }

    /// The target with each dirty sector as its digit says: 0 old, 1 new, `k` new up to byte
    /// `(k - 1) * 64` of the sector and old after.
    fn mix(&self, m: &Mix, digits: &[u8]) -> Vec<u8> {
        let mut out = m.target.clone();
        for (&s, &d) in m.dirty.iter().zip(digits) {
            let start = s * SECTOR_BYTES;
            let end = (start + SECTOR_BYTES).min(out.len());
            let new_bytes = match d {
                0 => 0,
                1 => SECTOR_BYTES,
                k => (usize::from(k) - 1) * TORN_STEP_BYTES,
            };
            for (i, byte) in out.iter_mut().enumerate().take(end).skip(start + new_bytes) {
                *byte = self.old.get(i).copied().unwrap_or(0);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn pending(durable: Option<&[u8]>, versions: &[&[u8]]) -> FileHistory {
        FileHistory {
            durable: durable.map(<[u8]>::to_vec),
            versions: versions.iter().map(|v| v.to_vec()).collect(),
            present: true,
            ..FileHistory::default()
        }
    }

    fn all(space: &FileSpace) -> Vec<Option<Vec<u8>>> {
        (0..space.count()).map(|i| space.outcome(i)).collect()
    }

    #[test]
    fn names_parse_and_print() {
        for p in Persistence::ALL {
            assert_eq!(p.as_str().parse::<Persistence>(), Ok(p));
        }
        assert!("ext4".parse::<Persistence>().is_err());
        assert_eq!(Persistence::Ext4Ordered.to_string(), "ext4-ordered");
        assert_eq!(
            Persistence::ALL.map(Persistence::as_str),
            ["prefix", "ext4-ordered", "reorder"]
        );
        assert_eq!(Persistence::default(), Persistence::Reorder);
    }

    #[test]
    fn ext4_keeps_prefixes_torn_at_pages_and_may_lose_a_new_entry() {
        let big = vec![7u8; PAGE_BYTES * 2 + 10];
        let h = pending(None, &[&big[..5], &big]);
        let out = all(&FileSpace::new(Persistence::Ext4Ordered, &h));
        let lens: Vec<Option<usize>> = out.iter().map(|o| o.as_ref().map(Vec::len)).collect();
        assert_eq!(
            lens,
            [
                None,
                Some(0),
                Some(5),
                Some(PAGE_BYTES),
                Some(2 * PAGE_BYTES),
                Some(big.len())
            ]
        );
        let committed = FileHistory {
            committed: true,
            ..h
        };
        assert!(all(&FileSpace::new(Persistence::Ext4Ordered, &committed))[0].is_some());
    }

    #[test]
    fn reorder_mixes_sectors_and_tears_them() {
        let old = vec![1u8; 100];
        let mut new = old.clone();
        new.extend(vec![2u8; SECTOR_BYTES * 2 - 100]);
        let h = pending(Some(&old), &[&new]);
        let space = FileSpace::new(Persistence::Reorder, &h);
        // the synced length (1 state) and the new length (2 dirty sectors, 9 outcomes each)
        assert_eq!(space.count(), 1 + 81);
        let out = all(&space);
        assert!(out.contains(&Some(old.clone())));
        assert!(out.contains(&Some(new.clone())));
        let mut hole_then_data = vec![0u8; new.len()];
        hole_then_data[..100].copy_from_slice(&old);
        hole_then_data[SECTOR_BYTES..].copy_from_slice(&new[SECTOR_BYTES..]);
        assert!(out.contains(&Some(hole_then_data)), "a lost first sector");
        let torn = out.iter().flatten().any(|o| {
            o.len() == new.len() && o[100..192] == new[100..192] && o[192..SECTOR_BYTES] == [0; 320]
        });
        assert!(torn, "a sector torn after 192 bytes");
        assert!(
            out.iter().flatten().all(|o| o[..100] == old[..]),
            "synced bytes stay"
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..50 {
            assert!(out.contains(&space.draw(&mut rng)));
        }
    }

    #[test]
    fn removals_and_new_entries_follow_the_directory() {
        let removed = FileHistory {
            durable: Some(b"x".to_vec()),
            ..FileHistory::default()
        };
        let outs = |p| all(&FileSpace::new(p, &removed));
        assert_eq!(outs(Persistence::Reorder), [None, Some(b"x".to_vec())]);
        assert_eq!(outs(Persistence::Prefix), [None]);
        let synced_dir = FileHistory {
            dir_synced: true,
            ..removed
        };
        assert_eq!(
            all(&FileSpace::new(Persistence::Reorder, &synced_dir)),
            [None]
        );
        let fresh = pending(None, &[b"ab"]);
        let out = all(&FileSpace::new(Persistence::Reorder, &fresh));
        assert_eq!(out[0], None, "a new file's entry may be lost");
        assert!(out.contains(&Some(b"ab".to_vec())));
    }
}
