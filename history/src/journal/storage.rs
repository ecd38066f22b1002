//! The small file interface the journal runs over.
//!
//! Two implementations matter: the real filesystem ([`super::FsStorage`]) and a simulated disk (in
//! the `sim` crate) on which unsynced writes are lost on a crash, the last write can tear at any
//! byte and writes can fail or corrupt. [`super::MemStorage`] is a plain in-memory one for tests and
//! benches. The journal only ever appends, truncates a torn tail, reads at offsets and syncs, so
//! the interface is exactly that, and names are flat `/`-separated strings inside one root.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::sync::Arc;

use super::error::JournalError;

/// Files addressed by name. Every method takes `&self`: one storage is shared by a primary
/// journal, its mirrors, readers and scratch, each behind its own `Arc`. Implementations
/// serialize their own state.
pub trait Storage: Send + Sync + fmt::Debug {
    /// The file's length, or `None` when it does not exist.
    fn len(&self, name: &str) -> io::Result<Option<u64>>;
    /// Reads up to `buf.len()` bytes at `offset`; returns fewer only at the end of the file.
    fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// Appends `bytes` at the end of the file, creating it when missing. Not durable until
    /// [`Storage::sync`].
    fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()>;
    /// Cuts the file to `len` bytes (`len` at most its length).
    fn truncate(&self, name: &str, len: u64) -> io::Result<()>;
    /// Makes every earlier write to the file durable (fsync).
    fn sync(&self, name: &str) -> io::Result<()>;
    /// Removes the file.
    fn remove(&self, name: &str) -> io::Result<()>;
    /// Every file whose name starts with `dir/`, sorted.
    fn list(&self, dir: &str) -> io::Result<Vec<String>>;
}

/// The handle journals keep.
pub type SharedStorage = Arc<dyn Storage>;

/// Reads exactly `buf.len()` bytes at `offset` or fails with `UnexpectedEof`.
pub fn read_exact_at(
    storage: &dyn Storage,
    name: &str,
    offset: u64,
    buf: &mut [u8],
) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let n = storage.read_at(name, offset + done as u64, &mut buf[done..])?;
        // The trait's contract: a read returns no more than it was asked for. Each turn of
        // the loop takes at least one byte, so it ends within `buf.len()` turns.
        debug_assert!(
            n <= buf.len() - done,
            "{name}: read {n} bytes into {}",
            buf.len() - done
        );
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{name}: read of {} bytes at offset {offset} hit the end",
                    buf.len()
                ),
            ));
        }
        done += n;
    }
    debug_assert_eq!(done, buf.len());
    Ok(())
}

/// Reads a whole file; an absent file reads as empty.
pub fn read_all(storage: &dyn Storage, name: &str) -> io::Result<Vec<u8>> {
    let len = storage.len(name)?.unwrap_or(0);
    let mut buf = vec![0u8; usize::try_from(len).map_err(io::Error::other)?];
    read_exact_at(storage, name, 0, &mut buf)?;
    debug_assert_eq!(buf.len() as u64, len);
    Ok(buf)
}

/// The error of an operation on `name` where no such file exists.
pub fn missing(name: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{name}: no such file"))
}

/// Whether `name`, `current` bytes long, can be truncated to `len`: a truncation only cuts.
pub fn check_truncation(name: &str, len: u64, current: u64) -> io::Result<()> {
    if len > current {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name}: truncate to {len} beyond length {current}"),
        ));
    }
    Ok(())
}

/// What `list(dir)` answers for a storage whose files are `names` (whole names, `a/b`): the
/// names under `dir/`, in the order given.
pub fn names_under<'a>(
    dir: &str,
    names: impl IntoIterator<Item = &'a String>,
) -> io::Result<Vec<String>> {
    check_name(dir)?;
    let prefix = format!("{dir}/");
    let names: Vec<String> = names
        .into_iter()
        .filter(|k| k.starts_with(&prefix))
        .cloned()
        .collect();
    // Post-condition: every name is strictly inside `dir`, never `dir/` itself.
    debug_assert!(names.iter().all(|n| n.len() > prefix.len()));
    Ok(names)
}

/// What a read at `offset` of a file holding `data` serves: up to `buf.len()` bytes copied into
/// `buf`, fewer only at the end of the file. Returns how many.
pub fn serve_read(data: &[u8], offset: u64, buf: &mut [u8]) -> usize {
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(data.len());
    let n = buf.len().min(data.len() - start);
    buf[..n].copy_from_slice(&data[start..start + n]);
    // Post-condition: no more than asked, and fewer only at the end of the file.
    debug_assert!(n <= buf.len() && start + n <= data.len());
    debug_assert!(n == buf.len() || start + n == data.len());
    n
}

/// The length of journal `name` (0 when absent), or [`JournalError::Shrunk`] when it is below
/// `expected`, the bytes a reader or writer already holds as history: someone cut them.
pub fn length_not_below(
    storage: &dyn Storage,
    name: &str,
    expected: u64,
) -> Result<u64, JournalError> {
    let actual = storage
        .len(name)
        .map_err(|e| JournalError::io(name, "stat", e))?
        .unwrap_or(0);
    if actual < expected {
        return Err(JournalError::Shrunk {
            file: name.to_string(),
            expected,
            actual,
        });
    }
    debug_assert!(actual >= expected);
    Ok(actual)
}

/// Checks a storage name: relative, `/`-separated, no empty, `.` or `..` parts.
pub fn check_name(name: &str) -> io::Result<()> {
    let bad = name.is_empty()
        || name.starts_with('/')
        || name.contains('\\')
        || name
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..");
    if bad {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{name}` is not a storage name (relative, /-separated, no . or ..)"),
        ));
    }
    Ok(())
}

/// Inside an `impl Storage for W`: the [`Storage`] methods named, each handing its call unchanged
/// to the field named first. For a wrapper that changes a few calls (a fault, a log) and passes
/// the others through: `history::forward_storage!(inner: len, truncate, sync, remove, list);`.
#[macro_export]
macro_rules! forward_storage {
    ($f:ident: $($method:ident),+ $(,)?) => {
        $($crate::forward_storage!(@one $f $method);)+
    };
    (@one $f:ident len) => {
        fn len(&self, name: &str) -> ::std::io::Result<Option<u64>> {
            self.$f.len(name)
        }
    };
    (@one $f:ident read_at) => {
        fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> ::std::io::Result<usize> {
            self.$f.read_at(name, offset, buf)
        }
    };
    (@one $f:ident append) => {
        fn append(&self, name: &str, bytes: &[u8]) -> ::std::io::Result<()> {
            self.$f.append(name, bytes)
        }
    };
    (@one $f:ident truncate) => {
        fn truncate(&self, name: &str, len: u64) -> ::std::io::Result<()> {
            self.$f.truncate(name, len)
        }
    };
    (@one $f:ident sync) => {
        fn sync(&self, name: &str) -> ::std::io::Result<()> {
            self.$f.sync(name)
        }
    };
    (@one $f:ident remove) => {
        fn remove(&self, name: &str) -> ::std::io::Result<()> {
            self.$f.remove(name)
        }
    };
    (@one $f:ident list) => {
        fn list(&self, dir: &str) -> ::std::io::Result<Vec<String>> {
            self.$f.list(dir)
        }
    };
}

/// Per file, the bytes reads took since the last reset: how the J11 and J12 checks learn what a
/// read or a mutation cost.
#[derive(Clone, Debug, Default)]
pub struct ReadCounters(BTreeMap<String, u64>);

impl ReadCounters {
    /// Counts a read of `n` bytes from `name`.
    pub fn add(&mut self, name: &str, n: usize) {
        let count = self.0.entry(name.to_string()).or_insert(0);
        // A counter only grows: it would take 2^64 bytes read to wrap it.
        debug_assert!(count.checked_add(n as u64).is_some());
        *count += n as u64;
    }
}

/// A storage that counts the bytes its reads take, in [`ReadCounters`] behind its own lock.
pub trait CountsReads {
    /// Runs `f` on the storage's counters.
    fn with_read_counters<R>(&self, f: impl FnOnce(&mut ReadCounters) -> R) -> R;

    /// Bytes read from `name` since the last reset.
    fn bytes_read(&self, name: &str) -> u64 {
        self.with_read_counters(|c| c.0.get(name).copied().unwrap_or(0))
    }

    /// Bytes read from every file since the last reset.
    fn total_bytes_read(&self) -> u64 {
        self.with_read_counters(|c| c.0.values().sum())
    }

    /// Zeroes the read counters.
    fn reset_read_counters(&self) {
        self.with_read_counters(|c| c.0.clear());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        for good in ["a", "a/b", "scratch/p1/x.json"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "/a", "a//b", "../a", "a/./b", "a\\b", "a/"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
