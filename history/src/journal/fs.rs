//! [`Storage`] over a directory of the real filesystem.
//!
//! Open handles are cached per name so an append is one `write` call, not an open and a close.
//! A new file's directory entry is synced with the file's first sync (an fsync of its parent
//! directory after the file's fdatasync), so a synced journal is still there after a power cut.
//! A removal is not synced: a file removed just before a power cut may come back.
//!
//! An optional [`FsObserver`] hears of every call that changes the file system, right beside the
//! call (`histsim crash --storage recorded` records them and replays the states a power cut may
//! leave); without one, each call costs one branch more.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::storage::{check_name, check_truncation, Storage};
use crate::{BugId, Planted};

/// One file-system call [`FsStorage`] made, as its observer hears it after the call succeeded.
/// Names are storage names (relative to the root, `/`-separated); a directory is `""` for the
/// root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsCall<'a> {
    /// Missing parent directories of `name` were created (`create_dir_all`).
    CreateDirs { name: &'a str },
    /// `open` with `O_CREAT` made a new, empty file.
    Create { name: &'a str },
    /// `write` of all of `bytes` at the end of the file (it is open with `O_APPEND`).
    Append { name: &'a str, bytes: &'a [u8] },
    /// `ftruncate` to `len`.
    Truncate { name: &'a str, len: u64 },
    /// `fdatasync` of the file.
    SyncData { name: &'a str },
    /// `fsync` of a directory.
    SyncDir { dir: &'a str },
    /// `unlink` of the file.
    Unlink { name: &'a str },
    /// `rmdir` of an emptied directory.
    RemoveDir { dir: &'a str },
}

/// Hears every file-system change an [`FsStorage`] makes, in order.
pub trait FsObserver: Send + Sync + std::fmt::Debug {
    fn call(&self, call: FsCall<'_>);
}

/// The real filesystem under `root`.
#[derive(Debug)]
pub struct FsStorage {
    root: PathBuf,
    handles: Mutex<BTreeMap<String, Handle>>,
    observer: Option<Arc<dyn FsObserver>>,
    planted: Planted,
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
            observer: None,
            planted: Planted::none(),
        })
    }

    /// The same storage, telling `observer` of every file-system change it makes.
    pub fn with_observer(mut self, observer: Arc<dyn FsObserver>) -> FsStorage {
        self.observer = Some(observer);
        self
    }

    /// The same storage with a planted (legacy) behaviour switched on.
    pub fn with_planted(mut self, planted: Planted) -> FsStorage {
        self.planted = planted;
        self
    }

    fn tell(&self, call: FsCall<'_>) {
        if let Some(observer) = &self.observer {
            observer.call(call);
        }
    }

    /// The storage name of `path`'s parent directory (`""`: the root).
    fn parent_name(name: &str) -> &str {
        let dir = name.rsplit_once('/').map_or("", |(dir, _)| dir);
        // Post-condition: a strict prefix, so walking up from a name ends at the root.
        debug_assert!(name.starts_with(dir) && dir.len() < name.len().max(1));
        dir
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, name: &str) -> io::Result<PathBuf> {
        check_name(name)?;
        let path = self.root.join(name);
        // A checked name has no `..` nor a leading `/`, so it cannot leave the root.
        debug_assert!(path.starts_with(&self.root) && path != self.root);
        Ok(path)
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
                let missing = self.observer.is_some() && !parent.is_dir();
                fs::create_dir_all(parent)?;
                if missing {
                    self.tell(FsCall::CreateDirs { name });
                }
            }
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .create(create)
                .open(&path)?;
            if !existed {
                self.tell(FsCall::Create { name });
            }
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
        // Told under the handles' lock, so the observer hears calls in the order they ran.
        self.with_handle(name, true, |h| {
            h.file.write_all(bytes)?;
            self.tell(FsCall::Append { name, bytes });
            Ok(())
        })
    }

    fn truncate(&self, name: &str, len: u64) -> io::Result<()> {
        self.with_handle(name, false, |h| {
            check_truncation(name, len, h.file.metadata()?.len())?;
            h.file.set_len(len)?;
            self.tell(FsCall::Truncate { name, len });
            Ok(())
        })
    }

    fn sync(&self, name: &str) -> io::Result<()> {
        let path = self.path(name)?;
        self.with_handle(name, false, |h| {
            h.file.sync_data()?;
            self.tell(FsCall::SyncData { name });
            // planted J22: the legacy storage took the file's fdatasync for its directory
            // entry's too, and never synced the parent of a new file.
            if h.dir_unsynced && !self.planted.is(BugId::J22) {
                if let Some(parent) = path.parent() {
                    File::open(parent)?.sync_all()?;
                    self.tell(FsCall::SyncDir {
                        dir: Self::parent_name(name),
                    });
                }
            }
            h.dir_unsynced = false;
            Ok(())
        })
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let path = self.path(name)?;
        self.handles().remove(name);
        fs::remove_file(&path)?;
        self.tell(FsCall::Unlink { name });
        // Prune directories left empty, up to the root; a non-empty one stops the walk.
        let mut dir = path.parent();
        let mut dir_name = Self::parent_name(name);
        while let Some(d) = dir {
            if d == self.root || fs::remove_dir(d).is_err() {
                break;
            }
            // Below the root, so the directory has a storage name.
            debug_assert!(!dir_name.is_empty() && d.starts_with(&self.root));
            self.tell(FsCall::RemoveDir { dir: dir_name });
            dir = d.parent();
            dir_name = Self::parent_name(dir_name);
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
        // Post-condition: distinct names, each strictly under `dir/`.
        debug_assert!(out.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(out.iter().all(|n| n.len() > dir.len() + 1
            && n.starts_with(dir)
            && n.as_bytes()[dir.len()] == b'/'));
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
    // Post-condition: no more than asked, so callers may trust the count as a length.
    debug_assert!(done <= buf.len());
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

    /// Keeps what it hears as text.
    #[derive(Debug, Default)]
    struct Heard(Mutex<Vec<String>>);

    impl FsObserver for Heard {
        fn call(&self, call: FsCall<'_>) {
            let line = match call {
                FsCall::Append { name, bytes } => format!("append {name} {}", bytes.len()),
                other => format!("{other:?}"),
            };
            self.0.lock().expect("heard").push(line);
        }
    }

    #[test]
    fn the_observer_hears_each_change_beside_its_call() {
        let dir = tempfile::tempdir().expect("tempdir");
        let heard = Arc::new(Heard::default());
        let s = FsStorage::new(dir.path())
            .expect("root")
            .with_observer(heard.clone());
        s.append("a/j", b"hello").expect("append");
        s.sync("a/j").expect("sync");
        s.append("a/j", b"!").expect("append");
        s.sync("a/j").expect("sync");
        s.truncate("a/j", 2).expect("truncate");
        assert_eq!(s.len("a/j").expect("len"), Some(2));
        s.remove("a/j").expect("remove");
        let heard = heard.0.lock().expect("heard").clone();
        assert_eq!(
            heard,
            [
                r#"CreateDirs { name: "a/j" }"#,
                r#"Create { name: "a/j" }"#,
                "append a/j 5",
                r#"SyncData { name: "a/j" }"#,
                r#"SyncDir { dir: "a" }"#,
                "append a/j 1",
                r#"SyncData { name: "a/j" }"#,
                r#"Truncate { name: "a/j", len: 2 }"#,
                r#"Unlink { name: "a/j" }"#,
                r#"RemoveDir { dir: "a" }"#,
            ]
        );
    }
}
