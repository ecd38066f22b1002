//! [`Storage`] over a directory of the real filesystem.
//!
//! Open handles are cached per name so an append is one `write` call, not an open and a close.
//! A new file's directory entry is synced with the file's first sync, so a synced journal is
//! still there after a power cut.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::storage::{check_name, Storage};

/// The real filesystem under `root`.
#[derive(Debug)]
pub struct FsStorage {
    root: PathBuf,
    handles: Mutex<BTreeMap<String, Handle>>,
}

#[derive(Debug)]
struct Handle {
    file: File,
    /// Whether the parent directory still needs a sync to make the file's entry durable.
    dir_unsynced: bool,
}

impl FsStorage {
    /// Storage rooted at an existing directory.
    pub fn new(root: impl Into<PathBuf>) -> io::Result<FsStorage> {
        let root = root.into();
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("storage root {} is not a directory", root.display()),
            ));
        }
        Ok(FsStorage {
            root,
            handles: Mutex::new(BTreeMap::new()),
        })
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, name: &str) -> io::Result<PathBuf> {
        check_name(name)?;
        Ok(self.root.join(name))
    }

    fn handles(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Handle>> {
        // A panic while holding the lock leaves only a cache of handles behind; keep using it.
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the cached handle of `name`, opening (and with `create`, creating) it first.
    fn with_handle<T>(
        &self,
        name: &str,
        create: bool,
        f: impl FnOnce(&mut Handle) -> io::Result<T>,
    ) -> io::Result<T> {
        let path = self.path(name)?;
        let mut handles = self.handles();
        if !handles.contains_key(name) {
            let existed = path.exists();
            if !existed && !create {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{name}: no such file"),
                ));
            }
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .create(create)
                .open(&path)?;
            handles.insert(
                name.to_string(),
                Handle {
                    file,
                    dir_unsynced: !existed,
                },
            );
        }
        let handle = handles.get_mut(name).expect("inserted above");
        f(handle)
    }
}

impl Storage for FsStorage {
    fn len(&self, name: &str) -> io::Result<Option<u64>> {
        match fs::metadata(self.path(name)?) {
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.with_handle(name, false, |h| read_at(&h.file, offset, buf))
    }

    fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.with_handle(name, true, |h| h.file.write_all(bytes))
    }

    fn truncate(&self, name: &str, len: u64) -> io::Result<()> {
        self.with_handle(name, false, |h| {
            let current = h.file.metadata()?.len();
            if len > current {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{name}: truncate to {len} beyond length {current}"),
                ));
            }
            h.file.set_len(len)
        })
    }

    fn sync(&self, name: &str) -> io::Result<()> {
        let path = self.path(name)?;
        self.with_handle(name, false, |h| {
            h.file.sync_data()?;
            if h.dir_unsynced {
                if let Some(parent) = path.parent() {
                    File::open(parent)?.sync_all()?;
                }
                h.dir_unsynced = false;
            }
            Ok(())
        })
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let path = self.path(name)?;
        self.handles().remove(name);
        fs::remove_file(&path)?;
        // Prune directories left empty, up to the root; a non-empty one stops the walk.
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d == self.root || fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
        Ok(())
    }

    fn list(&self, dir: &str) -> io::Result<Vec<String>> {
        let base = self.path(dir)?;
        let mut out = Vec::new();
        let mut stack = vec![(base, dir.to_string())];
        while let Some((path, name)) = stack.pop() {
            let entries = match fs::read_dir(&path) {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for entry in entries {
                let entry = entry?;
                let child = format!("{name}/{}", entry.file_name().to_string_lossy());
                if entry.file_type()?.is_dir() {
                    stack.push((entry.path(), child));
                } else {
                    out.push(child);
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(unix)]
fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(not(unix))]
fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(offset))?;
    let mut done = 0;
    while done < buf.len() {
        match f.read(&mut buf[done..])? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::storage::read_all;

    #[test]
    fn append_read_truncate_list_remove() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = FsStorage::new(dir.path()).expect("root");
        assert_eq!(s.len("a/j").expect("len"), None);
        s.append("a/j", b"hello").expect("append");
        s.append("a/j", b" world").expect("append");
        s.sync("a/j").expect("sync");
        assert_eq!(read_all(&s, "a/j").expect("read"), b"hello world");
        let mut buf = [0u8; 5];
        assert_eq!(s.read_at("a/j", 6, &mut buf).expect("read"), 5);
        assert_eq!(&buf, b"world");
        assert_eq!(s.read_at("a/j", 9, &mut buf).expect("read"), 2);
        s.truncate("a/j", 5).expect("truncate");
        s.append("a/j", b"!").expect("append");
        assert_eq!(read_all(&s, "a/j").expect("read"), b"hello!");
        assert!(s.truncate("a/j", 100).is_err());
        s.append("a/b/k", b"x").expect("append");
        assert_eq!(s.list("a").expect("list"), vec!["a/b/k", "a/j"]);
        s.remove("a/b/k").expect("remove");
        assert!(!dir.path().join("a/b").exists(), "empty dir pruned");
        assert_eq!(s.list("a").expect("list"), vec!["a/j"]);
        assert!(s.read_at("missing", 0, &mut buf).is_err());
        assert!(s.append("../escape", b"x").is_err());
    }
}
