//! [`Storage`] in memory, for tests, benches and reading journal bytes already in memory
//! (`dump_records`): counts the bytes every read touches, remembers how much of each file was
//! synced and, with the `testing` feature, fails the operations a test scripts and corrupts the
//! bytes it names.
//!
//! It is not the crash simulator (that is the `sim` crate's disk, which enumerates crash states);
//! it only answers "what would survive a crash now" ([`MemStorage::durable_bytes`]) and "how many
//! bytes did that read cost" ([`CountsReads::bytes_read`]), which is what the J9, J11 and J12 checks
//! of this crate need.

use std::collections::BTreeMap;
#[cfg(any(test, feature = "testing"))]
use std::collections::BTreeSet;
use std::io;
use std::sync::{Mutex, MutexGuard};

use super::storage::{
    check_name, check_truncation, missing, names_under, serve_read, CountsReads, ReadCounters,
    Storage,
};

/// An operation a scripted fault can hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FaultOp {
    Read,
    Append,
    Truncate,
    Sync,
    Remove,
}

/// In-memory storage.
#[derive(Debug, Default)]
pub struct MemStorage {
    state: Mutex<MemState>,
}

#[derive(Debug, Default)]
struct MemState {
    files: BTreeMap<String, MemFile>,
    /// Scripted faults: every matching operation fails until cleared.
    #[cfg(any(test, feature = "testing"))]
    faults: BTreeSet<(String, FaultOp)>,
    bytes_read: ReadCounters,
}

#[derive(Debug, Default, Clone)]
struct MemFile {
    data: Vec<u8>,
    /// Bytes that a crash now would keep. Appends are lost until a sync; a truncation below it
    /// takes effect at once (the simplification this storage makes, documented on the type).
    durable_len: usize,
}

impl MemStorage {
    pub fn new() -> MemStorage {
        MemStorage::default()
    }

    /// Storage holding one file with `bytes`, all durable.
    pub fn with_file(name: &str, bytes: &[u8]) -> MemStorage {
        let s = MemStorage::new();
        s.lock().files.insert(
            name.to_string(),
            MemFile {
                data: bytes.to_vec(),
                durable_len: bytes.len(),
            },
        );
        s
    }

    fn lock(&self) -> MutexGuard<'_, MemState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[cfg(any(test, feature = "testing"))]
    /// Makes every `op` on `name` fail with EIO until [`MemStorage::clear_faults`].
    pub fn fail(&self, name: &str, op: FaultOp) {
        self.lock().faults.insert((name.to_string(), op));
    }

    #[cfg(any(test, feature = "testing"))]
    /// Removes every scripted fault.
    pub fn clear_faults(&self) {
        self.lock().faults.clear();
    }

    /// What a crash now would leave of `name` (empty when it does not exist).
    pub fn durable_bytes(&self, name: &str) -> Vec<u8> {
        let st = self.lock();
        let durable = st
            .files
            .get(name)
            .map(|f| f.data[..f.durable_len].to_vec())
            .unwrap_or_default();
        durable
    }

    /// The current bytes of `name` (empty when it does not exist).
    pub fn bytes(&self, name: &str) -> Vec<u8> {
        let st = self.lock();
        st.files
            .get(name)
            .map(|f| f.data.clone())
            .unwrap_or_default()
    }

    #[cfg(any(test, feature = "testing"))]
    /// Overwrites one byte in place (a corruption a test plants).
    pub fn corrupt_byte(&self, name: &str, offset: u64, xor: u8) {
        assert_ne!(xor, 0, "a corruption must change the byte");
        let mut st = self.lock();
        let file = st
            .files
            .get_mut(name)
            .expect("corrupt_byte on a missing file");
        debug_assert!(offset < file.data.len() as u64, "corrupt_byte past the end");
        file.data[offset as usize] ^= xor;
    }

    fn check_fault(st: &MemState, name: &str, op: FaultOp) -> io::Result<()> {
        #[cfg(any(test, feature = "testing"))]
        if st.faults.contains(&(name.to_string(), op)) {
            return Err(io::Error::other(format!(
                "EIO: scripted {op:?} fault on {name}"
            )));
        }
        // Without the `testing` feature nothing can script a fault.
        #[cfg(not(any(test, feature = "testing")))]
        let _ = (st, name, op);
        Ok(())
    }
}

impl CountsReads for MemStorage {
    fn with_read_counters<R>(&self, f: impl FnOnce(&mut ReadCounters) -> R) -> R {
        f(&mut self.lock().bytes_read)
    }
}

impl Storage for MemStorage {
    fn len(&self, name: &str) -> io::Result<Option<u64>> {
        check_name(name)?;
        Ok(self.lock().files.get(name).map(|f| f.data.len() as u64))
    }

    fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        check_name(name)?;
        let mut st = self.lock();
        Self::check_fault(&st, name, FaultOp::Read)?;
        let file = st.files.get(name).ok_or_else(|| missing(name))?;
        let n = serve_read(&file.data, offset, buf);
        debug_assert!(n <= buf.len());
        debug_assert!(n == 0 || offset + n as u64 <= file.data.len() as u64);
        st.bytes_read.add(name, n);
        Ok(n)
    }

    fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        check_name(name)?;
        let mut st = self.lock();
        Self::check_fault(&st, name, FaultOp::Append)?;
        let file = st.files.entry(name.to_string()).or_default();
        let (before, durable) = (file.data.len(), file.durable_len);
        file.data.extend_from_slice(bytes);
        // Post-condition: the bytes went at the end, and nothing new is durable before a sync.
        debug_assert_eq!(file.data.len(), before + bytes.len());
        debug_assert!(file.durable_len == durable && durable <= before);
        Ok(())
    }

    fn truncate(&self, name: &str, len: u64) -> io::Result<()> {
        check_name(name)?;
        let mut st = self.lock();
        Self::check_fault(&st, name, FaultOp::Truncate)?;
        let file = st.files.get_mut(name).ok_or_else(|| missing(name))?;
        check_truncation(name, len, file.data.len() as u64)?;
        let len = len as usize;
        file.data.truncate(len);
        file.durable_len = file.durable_len.min(len);
        // Post-condition: the file is `len` long, and a crash keeps no more than it holds.
        debug_assert!(file.data.len() == len && file.durable_len <= len);
        Ok(())
    }

    fn sync(&self, name: &str) -> io::Result<()> {
        check_name(name)?;
        let mut st = self.lock();
        Self::check_fault(&st, name, FaultOp::Sync)?;
        let file = st.files.get_mut(name).ok_or_else(|| missing(name))?;
        file.durable_len = file.data.len();
        Ok(())
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        check_name(name)?;
        let mut st = self.lock();
        Self::check_fault(&st, name, FaultOp::Remove)?;
        st.files
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| missing(name))
    }

    fn list(&self, dir: &str) -> io::Result<Vec<String>> {
        names_under(dir, self.lock().files.keys())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::storage::read_all;

    #[test]
    fn durability_follows_sync_and_reads_are_counted() {
        let s = MemStorage::new();
        s.append("j", b"abc").expect("append");
        assert_eq!(s.durable_bytes("j"), b"");
        s.sync("j").expect("sync");
        s.append("j", b"def").expect("append");
        assert_eq!(s.durable_bytes("j"), b"abc");
        assert_eq!(read_all(&s, "j").expect("read"), b"abcdef");
        assert_eq!(s.bytes_read("j"), 6);
        s.truncate("j", 2).expect("truncate");
        assert_eq!(s.durable_bytes("j"), b"ab");
        s.reset_read_counters();
        assert_eq!(s.total_bytes_read(), 0);
    }

    #[test]
    fn scripted_faults_fail_until_cleared() {
        let s = MemStorage::new();
        s.fail("j", FaultOp::Append);
        assert!(s.append("j", b"x").is_err());
        assert!(s.append("k", b"x").is_ok());
        s.clear_faults();
        assert!(s.append("j", b"x").is_ok());
        assert_eq!(s.list("j").expect("list"), Vec::<String>::new());
    }
}
