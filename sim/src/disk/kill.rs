//! A process kill that keeps the page cache, and a process that dies after some writes.
//!
//! A kill loses the process and nothing it wrote: the bytes it left unsynced are still what
//! reads see, and still unsynced, so a later power cut loses them unless a sync came between
//! ([`SimDisk::after_kill`]). A recovery cut at a write ([`SimDisk::die_after_writes`]) is the
//! crash of a process inside its own recovery.

use std::collections::BTreeMap;
use std::io;

use super::{DiskState, SimDisk, SimDiskOptions, SimFile};

impl SimDisk {
    /// A disk after a process kill that kept the page cache: `current` is what reads see,
    /// `durable` what survives a later power cut (a file absent from it was never synced). The
    /// bytes past the common prefix stay unsynced until a sync.
    pub fn after_kill(
        current: BTreeMap<String, Vec<u8>>,
        durable: &BTreeMap<String, Vec<u8>>,
        opts: SimDiskOptions,
    ) -> SimDisk {
        let disk = SimDisk::new(opts);
        {
            let mut st = disk.lock();
            for (name, bytes) in current {
                let synced = durable.get(&name);
                let old = synced.map_or(&[][..], Vec::as_slice);
                let same = old.iter().zip(&bytes).take_while(|(a, b)| a == b).count();
                let file = SimFile {
                    synced_prefix: same,
                    durable_extra: old[same..].to_vec(),
                    durably_exists: synced.is_some(),
                    current: bytes,
                };
                debug_assert_eq!(synced.is_some().then(|| file.durable()).as_ref(), synced);
                st.files.insert(name, file);
            }
        }
        disk
    }

    /// The process dies after `writes` more writes: every later append, truncation, sync or
    /// removal fails with EIO and changes nothing (a crash inside a recovery, cut at a write).
    pub fn die_after_writes(&self, writes: u64) {
        self.lock().writes_left = Some(writes);
    }

    /// Counts one write against the budget of [`SimDisk::die_after_writes`].
    pub(super) fn spend_write(st: &mut DiskState, name: &str) -> io::Result<()> {
        match &mut st.writes_left {
            Some(0) => Err(io::Error::other(format!(
                "EIO (simulated: the process died) on {name}"
            ))),
            Some(n) => {
                *n -= 1;
                Ok(())
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::synced_then_appended;
    use super::*;
    use history::journal::Storage;

    #[test]
    fn a_kill_keeps_unsynced_bytes_that_a_later_power_cut_loses_unless_synced() {
        let d = synced_then_appended(SimDiskOptions::default(), b"abc", b"def");
        d.append("k", b"new").expect("append");
        let killed = SimDisk::after_kill(d.image(), &d.durable_image(), SimDiskOptions::default());
        assert_eq!(killed.bytes("j"), b"abcdef");
        assert_eq!(killed.bytes("k"), b"new");
        // A power cut now: the unsynced bytes are lost, the never-synced file with them.
        let cut = killed.durable_image();
        assert_eq!(cut.get("j").map(Vec::as_slice), Some(&b"abc"[..]));
        assert!(!cut.contains_key("k"));
        // A sync between the kill and the power cut keeps them.
        killed.sync("j").expect("sync");
        assert_eq!(killed.durable_bytes("j"), b"abcdef");
    }

    #[test]
    fn a_process_that_dies_after_some_writes_changes_nothing_more() {
        let d = SimDisk::new(SimDiskOptions::default());
        d.die_after_writes(2);
        d.append("j", b"ab").expect("first write");
        d.sync("j").expect("second write");
        assert!(d.append("j", b"cd").is_err());
        assert!(d.sync("j").is_err());
        assert!(d.truncate("j", 0).is_err());
        assert_eq!(d.bytes("j"), b"ab");
        assert_eq!(d.durable_bytes("j"), b"ab");
    }
}
