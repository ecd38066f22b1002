//! The disk a crash leaves and the disk the host comes back to.

use super::scenario::Pending;
use crate::disk::{Persistence, SimDisk, SimDiskOptions};
use std::collections::BTreeMap;

/// The disk a crash leaves: synced bytes, plus what `pending` keeps of the unsynced ones.
pub(super) fn crash_image(disk: &SimDisk, pending: Pending) -> BTreeMap<String, Vec<u8>> {
    let durable = disk.durable_image();
    match pending {
        Pending::Lose => durable,
        Pending::Keep | Pending::Kill => disk.image(),
        Pending::Reorder { seed } => disk.model_crash_image(Persistence::Reorder, seed),
        Pending::Cut { bytes } => disk
            .image()
            .into_iter()
            .filter_map(|(name, current)| {
                let synced = durable.get(&name).cloned().unwrap_or_default();
                if current.starts_with(&synced) {
                    let keep = (current.len() - synced.len()).min(bytes as usize);
                    Some((name, current[..synced.len() + keep].to_vec()))
                } else {
                    durable.get(&name).map(|d| (name, d.clone()))
                }
            })
            .collect(),
    }
}

/// The disk a host comes back to after a crash that left `image` of `crashed`: all of it
/// durable, but after a process kill only what `crashed` had synced.
pub(super) fn disk_after(
    crashed: &SimDisk,
    image: BTreeMap<String, Vec<u8>>,
    pending: Pending,
) -> SimDisk {
    if pending == Pending::Kill {
        SimDisk::after_kill(image, &crashed.durable_image(), SimDiskOptions::default())
    } else {
        SimDisk::from_image(image, SimDiskOptions::default())
    }
}

pub(super) fn image_hash(image: &BTreeMap<String, Vec<u8>>) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (name, bytes) in image {
        h.update(name.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.digest()
}
