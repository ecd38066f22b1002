//! The states a POSIX file system may leave at a power cut after each recorded call.
//!
//! The rules (docs/usage.md, "The production storage under crash states"):
//! - a file's data written since its last `fdatasync` may be lost, or kept as any prefix of what
//!   the file holds now cut at a 512-byte sector boundary (or whole); a truncation since is kept
//!   or not with the writes after it (the prefix starts where the synced and current bytes part);
//! - a directory entry created, or removed, since the last `fsync` of its directory may be there
//!   or not: a name shows the file its directory last synced (or nothing) or the file it names now;
//! - a file's `fdatasync` never makes its own new entry durable;
//! - creating missing directories is durable at once (the journal's names are flat, so the
//!   recorded workload creates none).
//!
//! A point's states are the product of every name's outcomes, numbered in mixed radix. A space
//! over the cap is thinned to `cap` states spread evenly over the numbering, the first (every
//! name as its directory and `fdatasync` last left it) and the last (everything written kept)
//! always among them: no randomness.

use std::collections::BTreeMap;

use super::log::FsOp;
use crate::disk::states::Image;

/// The sector a torn write is cut at.
pub const SECTOR_BYTES: usize = 512;

#[derive(Clone, Debug, Default)]
struct Inode {
    /// What reads see.
    current: Vec<u8>,
    /// What the last `fdatasync` made durable.
    synced: Vec<u8>,
    /// The synced length no truncation cut since.
    stable: u64,
}

/// The file system as the log left it so far.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    inodes: Vec<Inode>,
    /// Name -> inode, as reads see it.
    current: BTreeMap<String, usize>,
    /// Name -> inode, as its directory's last `fsync` left it.
    durable: BTreeMap<String, usize>,
    /// Name -> the bytes a returned `Storage::sync` promised.
    promised: BTreeMap<String, Vec<u8>>,
}

fn parent(name: &str) -> &str {
    name.rsplit_once('/').map_or("", |(dir, _)| dir)
}

impl Tracker {
    /// Applies one logged entry.
    pub fn apply(&mut self, op: &FsOp) {
        match op {
            FsOp::CreateDirs { .. } | FsOp::RemoveDir { .. } => {}
            FsOp::Create { name } => {
                self.inodes.push(Inode::default());
                self.current.insert(name.clone(), self.inodes.len() - 1);
            }
            FsOp::Append { name, bytes } => self.inode(name).current.extend_from_slice(bytes),
            FsOp::Truncate { name, len } => {
                let inode = self.inode(name);
                inode.current.truncate(*len as usize);
                inode.stable = inode.stable.min(*len);
                if let Some(p) = self.promised.get_mut(name) {
                    p.truncate(*len as usize);
                }
            }
            FsOp::SyncData { name } => {
                let inode = self.inode(name);
                inode.synced = inode.current.clone();
                inode.stable = inode.current.len() as u64;
            }
            FsOp::SyncDir { dir } => {
                self.durable.retain(|n, _| parent(n) != dir);
                for (n, id) in &self.current {
                    if parent(n) == dir {
                        self.durable.insert(n.clone(), *id);
                    }
                }
            }
            FsOp::Unlink { name } => {
                self.current.remove(name);
                self.promised.remove(name);
            }
            FsOp::Synced { name } => {
                let bytes = self.inode(name).current.clone();
                self.promised.insert(name.clone(), bytes);
            }
        }
    }

    fn inode(&mut self, name: &str) -> &mut Inode {
        let id = *self
            .current
            .get(name)
            .unwrap_or_else(|| panic!("the log touches {name}, which no call created"));
        &mut self.inodes[id]
    }

    /// The bytes returned syncs promised, by name.
    pub fn promised(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.promised
    }

    /// The length of `name`'s current file that is durable and was not cut since (0: none).
    pub fn stable_len(&self, name: &str) -> u64 {
        self.current
            .get(name)
            .map_or(0, |id| self.inodes[*id].stable)
    }

    /// The space of states a power cut may leave now.
    pub fn space(&self) -> Space {
        let mut names: Vec<&String> = self.current.keys().chain(self.durable.keys()).collect();
        names.sort();
        names.dedup();
        let files = names
            .into_iter()
            .map(|name| {
                let mut entries = vec![self.durable.get(name), self.current.get(name)];
                entries.dedup();
                let outcomes = entries
                    .into_iter()
                    .flat_map(|id| match id {
                        None => vec![None],
                        Some(id) => contents(&self.inodes[*id]).into_iter().map(Some).collect(),
                    })
                    .collect();
                (name.clone(), outcomes)
            })
            .collect();
        Space { files }
    }
}

/// What a file may hold after a power cut: its synced bytes, or a prefix of its current bytes
/// from where the two part, cut at sectors, or whole.
fn contents(inode: &Inode) -> Vec<Vec<u8>> {
    let (synced, current) = (&inode.synced, &inode.current);
    let parted = synced
        .iter()
        .zip(current)
        .take_while(|(a, b)| a == b)
        .count();
    let cuts = (parted / SECTOR_BYTES + 1..)
        .map(|s| s * SECTOR_BYTES)
        .take_while(|&k| k < current.len());
    let mut out = vec![synced.clone()];
    for k in std::iter::once(parted).chain(cuts).chain([current.len()]) {
        let candidate = &current[..k];
        if !out.iter().any(|o| o == candidate) {
            out.push(candidate.to_vec());
        }
    }
    out
}

/// Every name's outcomes at one point (`None`: the name is absent).
#[derive(Clone, Debug)]
pub struct Space {
    files: Vec<(String, Vec<Option<Vec<u8>>>)>,
}

impl Space {
    /// How many states (saturating).
    pub fn count(&self) -> u128 {
        self.files
            .iter()
            .fold(1u128, |n, (_, o)| n.saturating_mul(o.len() as u128))
    }

    /// The numbers of the states checked: all, or `cap` spread evenly, both ends included.
    pub fn chosen(&self, cap: u64) -> Vec<u128> {
        let count = self.count();
        let cap = u128::from(cap.max(1));
        if count <= cap {
            return (0..count).collect();
        }
        if cap == 1 {
            return vec![count - 1];
        }
        let mut out: Vec<u128> = (0..cap).map(|i| i * (count - 1) / (cap - 1)).collect();
        out.dedup();
        out
    }

    /// State number `n`: the first name's outcome varies fastest.
    pub fn image(&self, mut n: u128) -> Image {
        let mut image = Image::new();
        for (name, outcomes) in &self.files {
            let radix = outcomes.len() as u128;
            if let Some(bytes) = &outcomes[(n % radix) as usize] {
                image.insert(name.clone(), bytes.clone());
            }
            n /= radix;
        }
        image
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op_log(ops: &[FsOp]) -> Tracker {
        let mut t = Tracker::default();
        for op in ops {
            t.apply(op);
        }
        t
    }

    fn name() -> String {
        "j".to_string()
    }

    /// `j` created and `bytes` appended to it, nothing synced.
    fn written(bytes: Vec<u8>) -> Vec<FsOp> {
        vec![
            FsOp::Create { name: name() },
            FsOp::Append {
                name: name(),
                bytes,
            },
        ]
    }

    /// `j` holding `bytes`, synced with its directory entry.
    fn durable(bytes: &[u8]) -> Vec<FsOp> {
        let mut ops = written(bytes.to_vec());
        ops.push(FsOp::SyncData { name: name() });
        ops.push(FsOp::SyncDir { dir: String::new() });
        ops
    }

    #[test]
    fn a_new_file_without_a_directory_sync_may_vanish_and_its_data_tears_at_sectors() {
        let mut t = op_log(&written(vec![7; 1300]));
        let images: Vec<Image> = (0..t.space().count()).map(|n| t.space().image(n)).collect();
        let lens: Vec<Option<usize>> = images.iter().map(|i| i.get("j").map(Vec::len)).collect();
        // Absent, or the new file with nothing, 512, 1024 or all 1300 bytes.
        assert_eq!(lens, [None, Some(0), Some(512), Some(1024), Some(1300)]);
        t.apply(&FsOp::SyncData { name: name() });
        let lens: Vec<Option<usize>> = (0..t.space().count())
            .map(|n| t.space().image(n).get("j").map(Vec::len))
            .collect();
        assert_eq!(
            lens,
            [None, Some(1300)],
            "fdatasync leaves the entry unsynced"
        );
        t.apply(&FsOp::SyncDir { dir: String::new() });
        assert_eq!(t.space().count(), 1);
        assert_eq!(t.space().image(0)["j"].len(), 1300);
    }

    #[test]
    fn a_truncation_and_the_writes_after_it_are_kept_or_lost_together() {
        let mut ops = durable(b"abcdef");
        ops.extend([
            FsOp::Truncate {
                name: name(),
                len: 3,
            },
            FsOp::Append {
                name: name(),
                bytes: b"XY".to_vec(),
            },
            FsOp::Synced { name: name() },
        ]);
        let t = op_log(&ops);
        let contents: Vec<Vec<u8>> = (0..t.space().count())
            .map(|n| t.space().image(n)["j"].clone())
            .collect();
        assert_eq!(
            contents,
            [b"abcdef".to_vec(), b"abc".to_vec(), b"abcXY".to_vec()]
        );
        assert_eq!(t.stable_len("j"), 3);
        assert_eq!(t.promised()["j"], b"abcXY");
    }

    #[test]
    fn an_unlink_without_a_directory_sync_may_be_undone() {
        let mut ops = durable(b"abc");
        ops.push(FsOp::Unlink { name: name() });
        let t = op_log(&ops);
        let shown: Vec<Option<Vec<u8>>> = (0..t.space().count())
            .map(|n| t.space().image(n).get("j").cloned())
            .collect();
        assert_eq!(shown, [Some(b"abc".to_vec()), None]);
    }

    #[test]
    fn a_space_over_the_cap_keeps_both_ends() {
        let t = op_log(&written(vec![1; 512 * 20]));
        let count = t.space().count();
        let chosen = t.space().chosen(4);
        assert_eq!(chosen.len(), 4);
        assert_eq!(chosen.first(), Some(&0));
        assert_eq!(chosen.last(), Some(&(count - 1)));
    }
}
