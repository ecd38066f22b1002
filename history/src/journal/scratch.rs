//! Scratch files: per-process working files (resolver output, staged request bodies) under
//! `<root>/<owner>/`, where `owner` names the process.
//!
//! A process that dies leaves its scratch behind. The first scratch area a process creates sweeps
//! the areas of owners that are no longer alive (J18); liveness is a question the caller answers
//! (the real system asks the OS, the simulator its own process table), so the sweep is
//! deterministic. Each area holds an owner marker file so an empty area is still visible.

use std::collections::BTreeSet;

use super::error::JournalError;
use super::storage::SharedStorage;
use crate::{BugId, Planted};

/// The marker file of every scratch area.
const OWNER_MARKER: &str = ".owner";

/// Where scratch lives and whose it is.
#[derive(Clone, Debug)]
pub struct ScratchOptions {
    /// The directory holding every process's scratch area. Default `scratch`.
    pub root_dir: String,
    /// This process's name for its own area (unique per process).
    pub owner: String,
    pub planted: Planted,
}

/// What a sweep removed, and what it could not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    pub owners_swept: Vec<String>,
    pub files_removed: usize,
    /// Files that could not be removed, with the error.
    pub failures: Vec<String>,
}

/// One process's scratch area.
#[derive(Debug)]
pub struct ScratchArea {
    storage: SharedStorage,
    dir: String,
    files: BTreeSet<String>,
}

impl ScratchArea {
    /// Creates this process's area and sweeps the areas of dead owners.
    pub fn create(
        storage: SharedStorage,
        opts: &ScratchOptions,
        is_alive: &dyn Fn(&str) -> bool,
    ) -> Result<(ScratchArea, SweepReport), JournalError> {
        assert!(
            !opts.owner.is_empty() && !opts.owner.contains('/'),
            "scratch owner `{}` must be one path part",
            opts.owner
        );
        let report = if opts.planted.is(BugId::J18) {
            // planted J18: scratch left by dead processes was never swept.
            SweepReport::default()
        } else {
            sweep(&storage, &opts.root_dir, &opts.owner, is_alive)?
        };
        let dir = format!("{}/{}", opts.root_dir, opts.owner);
        let marker = format!("{dir}/{OWNER_MARKER}");
        if storage
            .len(&marker)
            .map_err(|e| JournalError::io(&marker, "stat", e))?
            .is_none()
        {
            storage
                .append(&marker, opts.owner.as_bytes())
                .map_err(|e| JournalError::io(&marker, "create", e))?;
        }
        let mut files = BTreeSet::new();
        files.insert(marker);
        Ok((
            ScratchArea {
                storage,
                dir,
                files,
            },
            report,
        ))
    }

    /// The area's directory.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// Writes a scratch file `name` (inside the area) and returns its storage name.
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> Result<String, JournalError> {
        let path = format!("{}/{name}", self.dir);
        self.storage
            .append(&path, bytes)
            .map_err(|e| JournalError::io(&path, "write scratch", e))?;
        self.files.insert(path.clone());
        // Post-condition: the file is inside the area, and known to it for disposal.
        debug_assert!(path.starts_with(&self.dir) && self.files.contains(&path));
        Ok(path)
    }

    /// Every file of the area, marker included.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(String::as_str)
    }

    /// Removes every file of the area; returns what could not be removed.
    pub fn remove_all(&mut self) -> Vec<JournalError> {
        let mut failures = Vec::new();
        let files = std::mem::take(&mut self.files);
        for f in files {
            if let Err(e) = self.storage.remove(&f) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    failures.push(JournalError::io(&f, "remove scratch", e));
                    self.files.insert(f);
                }
            }
        }
        // Post-condition: the area still knows exactly the files it could not remove.
        debug_assert_eq!(self.files.len(), failures.len());
        failures
    }
}

/// Removes the areas under `root` whose owner is not `me` and not alive.
fn sweep(
    storage: &SharedStorage,
    root: &str,
    me: &str,
    is_alive: &dyn Fn(&str) -> bool,
) -> Result<SweepReport, JournalError> {
    let mut report = SweepReport::default();
    let files = storage
        .list(root)
        .map_err(|e| JournalError::io(root, "list scratch", e))?;
    let mut dead: BTreeSet<String> = BTreeSet::new();
    for f in files {
        let owner = f[root.len() + 1..]
            .split('/')
            .next()
            .unwrap_or("")
            .to_string();
        if owner.is_empty() || owner == me || is_alive(&owner) {
            continue;
        }
        match storage.remove(&f) {
            Ok(()) => report.files_removed += 1,
            Err(e) => report.failures.push(format!("{f}: {e}")),
        }
        dead.insert(owner);
    }
    report.owners_swept = dead.into_iter().collect();
    Ok(report)
}
