//! A second crash inside the recovery after a crash: the restarted process resumes its recording
//! on the disk the first crash left and dies after some of its writes; the host then comes back
//! to what that second crash left and recovers again.

use super::crash_disk::{crash_image, disk_after, image_hash};
use super::record::Happened;
use super::scenario::Pending;
use super::state::World;
use history::journal::Session;
use std::sync::Arc;

/// When the crash the host restarts after plans one, crashes the recovery of its recording and
/// installs the disk that leaves. A restart meeting a planted corruption is left alone.
pub(super) fn crash_inside_recovery(world: &World, s: usize) {
    let slot = &world.slots[s];
    let Some(c) = slot.restart.get() else { return };
    let crash = &world.scenario.crashes[c];
    let Some(rc) = crash.recovery else { return };
    if slot.corrupted.borrow().is_some() {
        return;
    }
    let disk = slot.disk.borrow().clone();
    let name = slot.current.borrow().clone();
    disk.die_after_writes(u64::from(rc.after_writes));
    let mut session = Session::new(disk.clone(), world.opts.clone());
    let resumed = session.resume(&name, &mut |_| Vec::new()).is_ok();
    drop(session);
    let image = crash_image(&disk, rc.pending);
    {
        let mut cov = world.coverage.borrow_mut();
        cov.hit("journal.fault.crash_inside_recovery");
        if rc.pending == Pending::Kill {
            cov.hit("journal.fault.crash_kill_keeps_page_cache");
        }
    }
    world.record(format_args!(
        "s{s} crash inside recovery of {name} after_writes={} resumed={resumed} pending={:?} image={:016x}",
        rc.after_writes,
        rc.pending,
        image_hash(&image)
    ));
    world.happened(
        s,
        Happened::Crash {
            op: crash.op as usize,
            during: None,
            image: image.clone(),
            synced: disk.synced_prefixes(),
            written: (disk.image().into_iter())
                .map(|(name, bytes)| (name, bytes.len() as u64))
                .collect(),
        },
    );
    *slot.disk.borrow_mut() = Arc::new(disk_after(&disk, image, rc.pending));
}
