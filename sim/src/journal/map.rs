//! The journal generator's map: which record kind reaches which kind of journal file under which
//! origin, each combination a cell with a coverage probe (`journal.map.<path>.<kind>.<origin>`).
//!
//! A record's kind follows from the operation that wrote it (an append, a replacement's begin,
//! rows, commit or abort, a rewind's suffix cut, ...); what the contract varies beyond that is
//! the path the write took: a session's own recording, the shared history of several origins,
//! the per-origin mirrors it fans out to, a fork's or clone's copy, a process's recorder. The
//! probes read the records back from the files every session's disk holds when the world ends
//! (decoded by the journal's own dump reader), so a cell counts only what was really written
//! and kept.

use crate::coverage::{possible_cells, probe_cube, Coverage};
use history::journal::row::Origin;
use history::journal::{dump_lines, DumpLine};
use std::collections::BTreeMap;
use strum::IntoStaticStr;

/// The kind of journal file a record is in, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Path {
    /// `session.journal`: one session's recording.
    Recording,
    /// `shared.journal`: the history the main session and its subagents share.
    Shared,
    /// `mirror-<origin>.journal`: a per-origin mirror of the shared history.
    Mirror,
    /// `copy-<n>.journal`: a fork's or clone's copy, written on by its session afterwards.
    Copy,
    /// `recorder-p<n>.journal`: the store's recorder of one process.
    Recorder,
}

pub const PATHS: [Path; 5] = [
    Path::Recording,
    Path::Shared,
    Path::Mirror,
    Path::Copy,
    Path::Recorder,
];

/// Whether the contract lets a cell exist (docs/catalog.md, "Generator maps", says why not).
pub const fn possible(path: Path, kind: usize, subagent: bool) -> bool {
    let start = kind == 0;
    let append = kind == 1;
    let abort = kind == 5;
    match path {
        // Only the recording's own session mutates it; a subagent's rows reach it through
        // the inbox, as appends. A copy is a recording too.
        Path::Recording | Path::Copy => !subagent || append,
        // The main session creates the shared history; a failed shared mutation is undone by
        // restoring rows, never by an abort record.
        Path::Shared => !(abort || start && subagent),
        Path::Mirror => !abort,
        // The recorder only ever holds its start record in this workload.
        Path::Recorder => start && !subagent,
    }
}

// Every cell's probe, `[path][kind][origin]`, in the order of [`PATHS`], [`KINDS`], [`ORIGINS`].
probe_cube!(
    const CUBE = "journal.map",
    #[cfg(test)]
    PATH_NAMES ["recording", "shared", "mirror", "copy", "recorder"],
    /// Record kinds, as `histsim journal dump` spells them.
    pub KINDS [
        "start",
        "append",
        "replace_begin",
        "replace_rows",
        "replace_commit",
        "replace_abort",
        "suffix_cut",
        "clear",
        "compression",
        "density_mutation",
        "synthetic_insert",
    ],
    /// Whether a record's origin is the main session's or a subagent's (index 1: a subagent's,
    /// as `possible`'s flag says).
    #[cfg(test)]
    ORIGINS ["main", "subagent"],
);

/// How many cells can exist.
pub const CELL_COUNT: usize = 12 + 19 + 20 + 12 + 1;

/// The probe of every possible cell.
pub const PROBES: [&str; CELL_COUNT] =
    possible_cells!(CUBE, CELL_COUNT, |p, k, o| possible(PATHS[p], k, o == 1));

/// The path of a file, by its name; `None` for files that hold no journal (scratch, spool).
pub fn path_of(name: &str) -> Option<Path> {
    let file = name.rsplit('/').next().unwrap_or(name);
    let stem = file.strip_suffix(".journal")?;
    Some(match stem {
        "session" => Path::Recording,
        "shared" => Path::Shared,
        _ if stem.starts_with("mirror-") => Path::Mirror,
        _ if stem.starts_with("copy-") => Path::Copy,
        _ if stem.starts_with("recorder-") => Path::Recorder,
        _ => return None,
    })
}

/// Fires the cell of every record in the journal files of `image` (a disk's files by name).
pub fn map_probes(image: &BTreeMap<String, Vec<u8>>, cov: &mut Coverage) {
    for (name, bytes) in image {
        let Some(path) = path_of(name) else { continue };
        for line in dump_lines(bytes).into_iter().flatten() {
            let DumpLine::Record { record, .. } = line else {
                continue;
            };
            let kind = record.body.kind();
            let Some(k) = KINDS.iter().position(|x| *x == kind) else {
                debug_assert!(false, "a record kind the map does not name: {kind}");
                continue;
            };
            let subagent = matches!(record.origin, Origin::Subagent(_));
            // A planted bug may write what the contract rules out; its check says so, not this.
            if possible(path, k, subagent) {
                cov.hit(CUBE[path as usize][k][usize::from(subagent)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_follow_the_lists() {
        for p in PATHS {
            let path: &str = p.into();
            assert_eq!(PATH_NAMES[p as usize], path);
            for (k, kind) in KINDS.iter().enumerate() {
                for (o, origin) in ORIGINS.iter().enumerate() {
                    let name = format!("journal.map.{path}.{kind}.{origin}");
                    assert_eq!(CUBE[p as usize][k][o], name);
                    assert_eq!(PROBES.contains(&name.as_str()), possible(p, k, o == 1));
                }
            }
        }
    }

    #[test]
    fn files_are_named_by_path() {
        assert_eq!(path_of("session.journal"), Some(Path::Recording));
        assert_eq!(path_of("mirror-researcher.journal"), Some(Path::Mirror));
        assert_eq!(path_of("copy-3.journal"), Some(Path::Copy));
        assert_eq!(path_of("recorder-p0.journal"), Some(Path::Recorder));
        assert_eq!(path_of("scratch/abc"), None);
    }
}
