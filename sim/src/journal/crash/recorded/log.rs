//! The recording: every file-system call [`FsStorage`] makes, heard beside the call, and the
//! moments its `sync` returned (the storage contract's promise).

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use history::journal::{FsCall, FsObserver, FsStorage, Storage};
use strum::IntoStaticStr;

/// One entry of the log: a file-system call, or a `Storage::sync` that returned. Each variant's
/// name in counts and messages is the call's.
#[derive(Clone, Debug, PartialEq, Eq, IntoStaticStr)]
pub enum FsOp {
    /// `create_dir_all` made the missing parents of `name`.
    #[strum(serialize = "mkdir")]
    CreateDirs { name: String },
    /// `open(O_CREAT)` made a new, empty file.
    #[strum(serialize = "create")]
    Create { name: String },
    /// `write` at the end of the file.
    #[strum(serialize = "write")]
    Append { name: String, bytes: Vec<u8> },
    /// `ftruncate`.
    #[strum(serialize = "ftruncate")]
    Truncate { name: String, len: u64 },
    /// `fdatasync` of a file.
    #[strum(serialize = "fdatasync")]
    SyncData { name: String },
    /// `fsync` of a directory (`""`: the root).
    #[strum(serialize = "fsync(dir)")]
    SyncDir { dir: String },
    /// `unlink`.
    #[strum(serialize = "unlink")]
    Unlink { name: String },
    /// `rmdir` of an emptied directory.
    #[strum(serialize = "rmdir")]
    RemoveDir { dir: String },
    /// Not a call: `Storage::sync(name)` returned, so by the storage's contract every byte of the
    /// file written before it survives a power cut.
    #[strum(serialize = "sync returned")]
    Synced { name: String },
}

impl FsOp {
    /// The call's name in counts and messages.
    pub fn kind(&self) -> &'static str {
        self.into()
    }

    /// Whether the entry is a file-system call (a crash point follows it).
    pub fn is_call(&self) -> bool {
        !matches!(self, FsOp::Synced { .. })
    }
}

/// The log, shared by the observer inside [`FsStorage`] and the [`Recorded`] storage around it.
#[derive(Debug, Default)]
pub struct Recorder {
    log: Mutex<Vec<FsOp>>,
}

impl Recorder {
    fn log(&self) -> MutexGuard<'_, Vec<FsOp>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Entries logged so far.
    pub fn len(&self) -> usize {
        self.log().len()
    }

    /// The log so far.
    pub fn entries(&self) -> Vec<FsOp> {
        self.log().clone()
    }

    fn push(&self, op: FsOp) {
        self.log().push(op);
    }
}

impl FsObserver for Recorder {
    fn call(&self, call: FsCall<'_>) {
        let op = match call {
            FsCall::CreateDirs { name } => FsOp::CreateDirs { name: name.into() },
            FsCall::Create { name } => FsOp::Create { name: name.into() },
            FsCall::Append { name, bytes } => FsOp::Append {
                name: name.into(),
                bytes: bytes.to_vec(),
            },
            FsCall::Truncate { name, len } => FsOp::Truncate {
                name: name.into(),
                len,
            },
            FsCall::SyncData { name } => FsOp::SyncData { name: name.into() },
            FsCall::SyncDir { dir } => FsOp::SyncDir { dir: dir.into() },
            FsCall::Unlink { name } => FsOp::Unlink { name: name.into() },
            FsCall::RemoveDir { dir } => FsOp::RemoveDir { dir: dir.into() },
        };
        self.push(op);
    }
}

/// [`FsStorage`] with its calls recorded, and each returned `sync` marked in the same log.
#[derive(Debug)]
pub struct Recorded {
    inner: FsStorage,
    recorder: Arc<Recorder>,
}

impl Recorded {
    /// `storage` made to tell `recorder` of its calls.
    pub fn new(storage: FsStorage, recorder: Arc<Recorder>) -> Recorded {
        Recorded {
            inner: storage.with_observer(recorder.clone()),
            recorder,
        }
    }
}

impl Storage for Recorded {
    history::forward_storage!(inner: len, read_at, append, truncate, remove, list);
    fn sync(&self, name: &str) -> io::Result<()> {
        self.inner.sync(name)?;
        self.recorder.push(FsOp::Synced { name: name.into() });
        Ok(())
    }
}
