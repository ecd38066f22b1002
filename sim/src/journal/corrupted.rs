//! Silent corruption in the journal workload: the fault a crash's plan names lands on the
//! recording while its host is down ([`inject`], by the world), and the restarted session meets
//! it ([`restart`], by the process), recording what it saw.
//!
//! A bit flip (anywhere in a record, or inside a row's text so the payload still parses) is
//! written into the disk the host comes back to; a stale sector is served by that disk's reads
//! ([`crate::disk::SimDisk::serve_stale`]). Either lands in a record a complete record follows
//! ([`crate::disk::corrupt::targets`]), so a correct reader has one answer: an error naming that
//! record's offset, with the file left as it was. The model accepts the recording as lost from
//! there (J10: reported, never silently dropped or changed; J20: never read as another row), so
//! the session's script ends at that restart.

use super::record::{CorruptedRestart, Happened};
use super::state::World;
use crate::disk::corrupt::{flip, stale, Corruption, Injected};
use crate::disk::SimDisk;
use history::journal::{Journal, Session, SharedStorage};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Lands `corruption` on `file` of the disk a crash leaves: flips go into `image`, a stale
/// sector is returned for the new disk to serve. `None` when no record fits.
pub(super) fn inject(
    crashed: &SimDisk,
    image: &mut BTreeMap<String, Vec<u8>>,
    file: &str,
    corruption: Corruption,
) -> Option<Injected> {
    let bytes = image.get_mut(file)?;
    match corruption {
        Corruption::StaleSector { .. } => {
            stale(file, bytes, &crashed.older_sectors(file), corruption)
        }
        _ => flip(file, bytes, corruption),
    }
}

/// The probe of an injected corruption.
pub(super) fn probe(injected: &Injected) -> &'static str {
    match injected.corruption {
        Corruption::BitFlip { .. } => "journal.fault.corrupt_bit_flip",
        Corruption::TextFlip { .. } => "journal.fault.corrupt_text_flip",
        Corruption::StaleSector { .. } => "journal.fault.corrupt_stale_sector",
    }
}

/// The restarted session of session `s` reopens and resumes a recording `injected` damaged.
pub(super) fn restart(
    world: &World,
    s: usize,
    op: usize,
    disk: &Arc<SimDisk>,
    session: &mut Session,
    injected: Injected,
) {
    let name = injected.file.clone();
    let storage: SharedStorage = disk.clone();
    let bytes_before = disk.bytes(&name);
    let shown = Journal::open(storage, &name, world.opts.clone())
        .map(|j| j.rows())
        .map_err(|e| (e.to_string(), e.offset()));
    let resumed = session
        .resume(&name, &mut |_| Vec::new())
        .map(|_| ())
        .map_err(|e| e.to_string());
    let bytes_after = disk.bytes(&name);
    world.record(format_args!(
        "s{s} corrupted restart {name} shown={} resumed={} unchanged={}",
        match &shown {
            Ok(rows) => format!("{} rows", rows.len()),
            Err((_, offset)) => format!("error at {offset:?}"),
        },
        resumed.is_ok(),
        bytes_before == bytes_after
    ));
    world.happened(
        s,
        Happened::Corrupted {
            op,
            restart: CorruptedRestart {
                injected,
                shown,
                resumed,
                bytes_before,
                bytes_after,
            },
        },
    );
}
