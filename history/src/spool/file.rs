//! The spool file: a request body on disk, written once, sealed, sent, removed.
//!
//! - [`SpoolDir`] is a request-scoped scratch directory; it names spools `spool-<seq>.json` in
//!   creation order, so a continuation request after tool calls is simply the next spool.
//! - [`Spool`] is being written (buffered); [`Spool::seal`] flushes, fsyncs and checks that the
//!   size on disk equals the bytes written. Only then is the size known, so only a
//!   [`SealedSpool`] can be sent, with Content-Length equal to its sealed size.
//! - Both remove their file when dropped: a build or send that fails or is aborted leaves nothing
//!   behind. A send that succeeds removes the file itself and reports a failed removal.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::SpoolError;

/// The most spool names tried before giving up (names may be taken by files a dead process left).
const NAME_ATTEMPTS_MAX: u32 = 1024;

/// A request-scoped directory that holds the spools of one request (the first and its
/// continuations). Dropping it removes the directory if it is empty.
#[derive(Debug)]
pub struct SpoolDir {
    path: PathBuf,
    next_seq: u64,
}

impl SpoolDir {
    /// Opens (creating if needed) the directory at `path`.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, SpoolError> {
        let path = path.into();
        fs::create_dir_all(&path).map_err(|e| SpoolError::file("create dir", &path, e))?;
        Ok(SpoolDir { path, next_seq: 0 })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A new empty spool.
    pub fn create_spool(&mut self) -> Result<Spool, SpoolError> {
        for _ in 0..NAME_ATTEMPTS_MAX {
            let path = self.path.join(format!("spool-{:06}.json", self.next_seq));
            self.next_seq += 1;
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    return Ok(Spool {
                        file,
                        written_bytes: 0,
                        guard: RemoveOnDrop(Some(path)),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(SpoolError::file("create", path, e)),
            }
        }
        Err(SpoolError::file(
            "create",
            &self.path,
            io::Error::other(format!("{NAME_ATTEMPTS_MAX} spool names already taken")),
        ))
    }

    /// Removes the directory; fails (naming it) if a spool is still in it.
    pub fn close(self) -> Result<(), SpoolError> {
        let path = self.path.clone();
        // Skip the best-effort removal of Drop: this one reports.
        std::mem::forget(self);
        fs::remove_dir(&path).map_err(|e| SpoolError::file("remove dir", path, e))
    }
}

impl Drop for SpoolDir {
    fn drop(&mut self) {
        // Best effort: a directory still holding a spool stays (and the error has been reported
        // by whoever failed to remove that spool).
        let _ = fs::remove_dir(&self.path);
    }
}

/// A spool being written. Writes go straight to the file: the builders buffer their output
/// (a fixed buffer of `BuildOptions::write_buffer_bytes`), so a second buffer here would only copy
/// it again.
#[derive(Debug)]
pub struct Spool {
    file: File,
    written_bytes: u64,
    guard: RemoveOnDrop,
}

impl Spool {
    pub fn path(&self) -> &Path {
        self.guard.path()
    }

    /// Bytes written so far (buffered or not).
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }

    /// Fsyncs and checks the size on disk. The returned spool reads from the start.
    pub fn seal(mut self) -> Result<SealedSpool, SpoolError> {
        let path = self.guard.path().to_path_buf();
        self.file
            .sync_all()
            .map_err(|e| SpoolError::file("fsync", &path, e))?;
        let on_disk_bytes = self
            .file
            .metadata()
            .map_err(|e| SpoolError::file("stat", &path, e))?
            .len();
        if on_disk_bytes != self.written_bytes {
            return Err(SpoolError::SizeMismatch {
                path,
                expected_bytes: self.written_bytes,
                on_disk_bytes,
            });
        }
        self.file
            .seek(SeekFrom::Start(0))
            .map_err(|e| SpoolError::file("seek", &path, e))?;
        Ok(SealedSpool {
            file: self.file,
            size_bytes: on_disk_bytes,
            guard: self.guard,
        })
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written_bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A sealed spool: its size is final. Send it with [`SealedSpool::send`] or
/// [`SealedSpool::send_over`].
#[derive(Debug)]
pub struct SealedSpool {
    pub(super) file: File,
    size_bytes: u64,
    guard: RemoveOnDrop,
}

impl SealedSpool {
    pub fn path(&self) -> &Path {
        self.guard.path()
    }

    /// The sealed size: the request's Content-Length.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Removes the file now, reporting a failure (Drop would only try).
    pub fn discard(mut self) -> Result<(), SpoolError> {
        self.guard.remove_now()
    }
}

/// Removes a file when dropped, unless it was removed already.
#[derive(Debug)]
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn path(&self) -> &Path {
        self.0
            .as_deref()
            .expect("invariant: the path is only taken by remove_now, which consumes the owner")
    }

    fn remove_now(&mut self) -> Result<(), SpoolError> {
        match self.0.take() {
            Some(path) => match fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(SpoolError::file("remove", path, e)),
            },
            None => Ok(()),
        }
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        // Nothing to report to from Drop; the happy paths call remove_now and report.
        let _ = self.remove_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("test dir is readable")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_sealed_spool_has_the_written_size_and_reads_from_the_start() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut dir = SpoolDir::open(tmp.path().join("req")).expect("open");
        let mut spool = dir.create_spool().expect("create");
        spool.write_all(b"hello, spool").expect("write");
        assert_eq!(spool.written_bytes(), 12);
        let mut sealed = spool.seal().expect("seal");
        assert_eq!(sealed.size_bytes(), 12);
        let mut back = String::new();
        sealed.file.read_to_string(&mut back).expect("read");
        assert_eq!(back, "hello, spool");
        assert_eq!(entries(dir.path()), ["spool-000000.json"]);
        sealed.discard().expect("discard");
        assert!(entries(dir.path()).is_empty());
        dir.close().expect("close");
        assert!(!tmp.path().join("req").exists());
    }

    #[test]
    fn dropped_spools_leave_nothing_and_names_follow_creation_order() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut dir = SpoolDir::open(tmp.path()).expect("open");
        // A file left by a dead process takes the first name.
        fs::write(tmp.path().join("spool-000000.json"), b"old").expect("write");
        let a = dir.create_spool().expect("create");
        assert!(a.path().ends_with("spool-000001.json"));
        let b = dir.create_spool().expect("create").seal().expect("seal");
        assert!(b.path().ends_with("spool-000002.json"));
        drop(a);
        drop(b);
        assert_eq!(entries(tmp.path()), ["spool-000000.json"]);
        assert!(dir.close().is_err(), "a non-empty dir is not removed");
    }
}
