//! One incarnation of a session's process: it opens its journal store (sweeping the scratch of
//! its dead incarnations), then creates its recording and its shared history, or, after a crash,
//! reopens and resumes them while the user types, recording what the reopened journals showed.

use super::meaning::{mirror_file, origin_of, rows, SESSION_JOURNAL, SHARED_JOURNAL};
use super::record::{Happened, SharedRestart, SoloRestart};
use super::state::{read_rows, World};
use crate::disk::SimDisk;
use crate::journal::crash::classify_image;
use history::journal::{
    Journal, JournalReader, JournalStore, Origin, Row, ScratchOptions, Session, SharedHistory,
    SharedStorage, Storage,
};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// One incarnation of a session's process.
pub(super) struct Process {
    pub(super) s: usize,
    pub(super) p: u32,
    pub(super) disk: Arc<SimDisk>,
    pub(super) storage: SharedStorage,
    pub(super) store: Option<JournalStore>,
    pub(super) recorder: String,
    pub(super) session: Session,
    pub(super) reader: JournalReader,
    pub(super) shared: Rc<RefCell<Option<SharedHistory>>>,
    /// The restart met a silent corruption of the recording: the script ends here.
    pub(super) ended: bool,
}

impl Process {
    pub(super) fn journal(&self) -> Option<&Journal> {
        self.session.recording().map(|r| r.journal())
    }

    pub(super) fn journal_mut(&mut self) -> Option<&mut Journal> {
        self.session.recording_mut().map(|r| r.journal_mut())
    }

    pub(super) fn rows(&self) -> Vec<Row> {
        self.journal().map(Journal::rows).unwrap_or_default()
    }

    pub(super) fn last_seq(&self) -> u64 {
        self.journal().map_or(0, |j| j.fold().last_seq())
    }
}

/// Starts incarnation `p` of session `s`: the store (sweeping dead incarnations' scratch), then
/// the recording and the shared history, created or resumed.
pub(super) fn start(world: &World, s: usize) -> Process {
    let slot = &world.slots[s];
    let p = slot.incarnation.get();
    slot.incarnation.set(p + 1);
    super::recovery_crash::crash_inside_recovery(world, s);
    let disk = slot.disk.borrow().clone();
    let storage: SharedStorage = disk.clone();
    let mut store = open_store(world, s, p, &disk);
    let recorder = format!("recorder-p{p}.journal");
    if let Some(store) = store.as_mut() {
        if let Err(e) = store.create_recorder(&recorder, None) {
            world.record(format_args!("s{s} p{p} recorder failed: {e}"));
        }
    }
    let mut session = Session::new(storage.clone(), world.opts.clone());
    let shared = Rc::new(RefCell::new(None));
    let restart = slot.restart.take();
    let corrupted = slot.corrupted.borrow_mut().take();
    let ended = corrupted.is_some();
    let solo = match (restart, corrupted) {
        (None, _) => {
            create_recording(world, s, p, &mut session);
            None
        }
        (Some(c), Some(injected)) => {
            let op = world.scenario.crashes[c].op as usize;
            super::corrupted::restart(world, s, op, &disk, &mut session, injected);
            None
        }
        (Some(c), None) => Some(resume_recording(world, s, &disk, &mut session, c)),
    };
    let script = &world.scenario.sessions[s];
    let shared_seen = if script.subagents.is_empty() || ended {
        None
    } else if restart.is_none() {
        *shared.borrow_mut() = create_shared(world, s, &storage);
        None
    } else {
        let (h, seen) = reopen_shared(world, s, &disk);
        *shared.borrow_mut() = h;
        Some(seen)
    };
    if let Some(solo) = solo {
        world.happened(
            s,
            Happened::Restart {
                solo,
                shared: shared_seen,
            },
        );
    }
    let current = slot.current.borrow().clone();
    Process {
        s,
        p,
        reader: JournalReader::new(storage.clone(), &current, world.opts.clone()),
        disk,
        storage,
        store,
        recorder,
        session,
        shared,
        ended,
    }
}

/// Opens incarnation `p`'s journal store, which sweeps the scratch its dead incarnations left,
/// and records what it found (the store is absent when the sweep failed).
fn open_store(world: &World, s: usize, p: u32, disk: &Arc<SimDisk>) -> Option<JournalStore> {
    let storage: SharedStorage = disk.clone();
    let owner = format!("p{p}");
    let dead: Vec<String> = (0..p).map(|q| format!("p{q}")).collect();
    let scratch_opts = ScratchOptions {
        root_dir: "scratch".into(),
        owner: owner.clone(),
        planted: world.planted,
    };
    let is_alive = |o: &str| o == owner;
    let (store, sweep_error) = match JournalStore::open(
        storage.clone(),
        world.opts.clone(),
        &scratch_opts,
        &is_alive,
    ) {
        Ok((store, _)) => (Some(store), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let scratch = disk.list("scratch").unwrap_or_default();
    world.record(format_args!(
        "s{s} p{p} start dead={} scratch={}",
        dead.len(),
        scratch.len()
    ));
    world.happened(
        s,
        Happened::Started {
            incarnation: p,
            dead,
            scratch,
            sweep_error,
        },
    );
    store
}

/// A first start: the session creates its recording under the well-known name.
fn create_recording(world: &World, s: usize, p: u32, session: &mut Session) {
    *world.slots[s].current.borrow_mut() = SESSION_JOURNAL.to_string();
    match session.start(SESSION_JOURNAL) {
        Ok(()) => {
            let seq = session
                .recording()
                .map_or(0, |r| r.journal().fold().last_seq());
            world.push_event(s, SESSION_JOURNAL, seq);
        }
        Err(e) => world.record(format_args!("s{s} p{p} start failed: {e}")),
    }
}

/// The restarted session resumes its recording while the user types `arrivals`.
fn resume_recording(
    world: &World,
    s: usize,
    disk: &Arc<SimDisk>,
    session: &mut Session,
    crash: usize,
) -> SoloRestart {
    let slot = &world.slots[s];
    let name = slot.current.borrow().clone();
    let storage: SharedStorage = disk.clone();
    let facts_before = classify_image(&disk.bytes(&name));
    let shown = Journal::open(storage, &name, world.opts.clone())
        .map(|j| j.rows())
        .map_err(|e| e.to_string());
    let arrivals = rows(&world.scenario.crashes[crash].arrivals, &Origin::Main);
    let mut typed = Some(arrivals.clone());
    let resumed = session
        .resume(&name, &mut |_| typed.take().unwrap_or_default())
        .map(|_| ())
        .map_err(|e| e.to_string());
    let recording = session.recording().map(|r| r.journal());
    let writer_open_txn = recording.and_then(Journal::open_txn);
    let writer_last_seq = recording.map_or(0, |j| j.fold().last_seq());
    let rows_after = recording.map(Journal::rows).unwrap_or_default();
    if resumed.is_ok() {
        let seq = recording.map_or(0, |j| j.fold().last_seq());
        world.push_event(s, &name, seq);
    }
    let facts_after = classify_image(&disk.bytes(&name));
    if !arrivals.is_empty() {
        world
            .coverage
            .borrow_mut()
            .hit("journal.feature.arrivals_during_resume");
    }
    world.record(format_args!(
        "s{s} resume {name} shown={} resumed={} rows={} arrivals={} open_txn={:?} torn={}",
        shown.as_ref().map_or(-1, |r| r.len() as i64),
        resumed.is_ok(),
        rows_after.len(),
        arrivals.len(),
        facts_before.open_txn,
        facts_before.torn_tail
    ));
    SoloRestart {
        journal: name,
        facts_before,
        shown,
        resumed,
        writer_open_txn,
        writer_last_seq,
        rows_after,
        facts_after,
        arrivals,
    }
}

fn create_shared(world: &World, s: usize, storage: &SharedStorage) -> Option<SharedHistory> {
    let mut h = match SharedHistory::create(storage.clone(), SHARED_JOURNAL, world.opts.clone()) {
        Ok(h) => h,
        Err(e) => {
            world.record(format_args!("s{s} shared create failed: {e}"));
            return None;
        }
    };
    for m in &world.scenario.sessions[s].mirrors {
        let origin = origin_of(m);
        match h.attach_mirror(origin.clone(), &mirror_file(&origin)) {
            Ok(()) => world.slots[s].attached.borrow_mut().push(origin),
            Err(e) => world.record(format_args!("s{s} attach {m} failed: {e}")),
        }
    }
    Some(h)
}

/// Resumes the shared history and its attached mirrors.
pub(super) fn reopen_shared(
    world: &World,
    s: usize,
    disk: &Arc<SimDisk>,
) -> (Option<SharedHistory>, SharedRestart) {
    let attached = world.slots[s].attached.borrow().clone();
    let mirrors_before = attached
        .iter()
        .map(|o| (o.clone(), read_rows(&disk.bytes(&mirror_file(o)))))
        .collect();
    let names: Vec<String> = attached.iter().map(mirror_file).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let storage: SharedStorage = disk.clone();
    match SharedHistory::resume(storage, SHARED_JOURNAL, &refs, world.opts.clone()) {
        Ok(h) => {
            let mirrors = attached
                .iter()
                .map(|o| {
                    let rows = h.mirror(o).map(|m| m.journal().rows()).unwrap_or_default();
                    (o.clone(), rows)
                })
                .collect();
            let seen = SharedRestart {
                mirrors_before,
                resumed: Ok(()),
                primary: h.primary().rows(),
                mirrors,
            };
            world.record(format_args!(
                "s{s} shared resume rows={} mirrors={}",
                seen.primary.len(),
                attached.len()
            ));
            (Some(h), seen)
        }
        Err(e) => {
            world.record(format_args!("s{s} shared resume failed: {e}"));
            let seen = SharedRestart {
                mirrors_before,
                resumed: Err(e.to_string()),
                primary: Vec::new(),
                mirrors: Vec::new(),
            };
            (None, seen)
        }
    }
}
