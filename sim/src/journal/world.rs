//! The simulated deployment on turmoil: one host per session, each with its own simulated disk
//! ([`SimDisk`]) that outlives the host's crashes.
//!
//! A session host opens its process's journal store (sweeping the scratch of its dead
//! incarnations), starts or resumes its recording and its shared history, then plays its
//! script: appends, replacements whose row groups are written with pauses between them,
//! rewinds, clears, compressions from the summarization middleware, density changes, inserts,
//! incremental reads, token estimates, requests, forks, clones, switches and resumes, and
//! mutations of the shared history by several origins fanned out to per-origin mirrors.
//!
//! The driving loop steps the simulation and crashes a host when its script reaches a crash
//! point: it takes the disk image the crash leaves (synced bytes, plus what the scenario keeps of
//! the unsynced ones), `sim.crash`es the host (whose dropped tasks may still write, to a disk
//! nobody reads again), installs a disk holding that image, and `sim.bounce`s the host after the
//! down time. The restarted host resumes where its script stood.
//!
//! Injected faults (EIO on a journal's appends, a failing mirror, a failing disposal) are set on
//! the disk just around the operation they belong to. Everything the operations return is
//! recorded ([`super::record`]); nothing here judges it.

use super::meaning::{
    compression, density_positions, insert_after, journal_file, mirror_file, origin_of,
    rewind_rows, rewrite_row, row, rows, transformed, SESSION_JOURNAL, SHARED_JOURNAL,
};
use super::record::{
    Happened, MirrorSeen, Outcome, Seen, SessionRecord, SharedRestart, SoloRestart,
};
use super::scenario::{Action, DisposeFault, JournalScenario, Op, Pending, SharedAction};
use crate::coverage::Coverage;
use crate::crash::classify_image;
use crate::disk::{SimDisk, SimDiskOptions};
use crate::trace::Trace;
use history::journal::{
    clone_journal, fork_journal, plan_truncation, DensityReplacement, FaultOp, Journal,
    JournalError, JournalOptions, JournalReader, JournalStore, MemStorage, Origin, Row,
    ScratchOptions, Session, SharedHistory, SharedStorage, Storage, TruncationOptions,
    WriteReceipt,
};
use history::Planted;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// Seconds since the Unix epoch at simulated time zero.
const EPOCH_SECS: u64 = 1_700_000_000;
/// Upper bound on simulated time: a world still running by then is broken.
const SIMULATION_SECS: u64 = 600;

#[derive(Clone, Copy, Debug)]
pub struct WorldConfig {
    pub planted: Planted,
    pub keep_trace: bool,
}

/// What a played world leaves for the checkers.
pub struct WorldRecord {
    pub sessions: Vec<SessionRecord>,
    pub trace: Trace,
    /// Set when the world did not finish (a hang, a host error).
    pub failure: Option<String>,
    pub sim_elapsed_ms: u64,
    /// Faults the world injected.
    pub coverage: Coverage,
    /// Operations that ran to their end.
    pub ops_run: usize,
}

/// A point of a script a crash can hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Point {
    op: u32,
    during: Option<u32>,
}

/// What the harness keeps of one session across its host's crashes.
struct Slot {
    disk: RefCell<Arc<SimDisk>>,
    /// The point the script is paused at, while it is paused.
    at: Cell<Option<Point>>,
    next_op: Cell<usize>,
    incarnation: Cell<u32>,
    /// The crash (index) the host is coming back from.
    restart: Cell<Option<usize>>,
    done: Cell<bool>,
    /// The recording's file.
    current: RefCell<String>,
    /// Per journal file: its last sequence number after each change of its history.
    events: RefCell<BTreeMap<String, Vec<u64>>>,
    /// Mirrors attached to the shared history, in attach order.
    attached: RefCell<Vec<Origin>>,
    record: RefCell<SessionRecord>,
}

struct World {
    scenario: JournalScenario,
    opts: JournalOptions,
    planted: Planted,
    slots: Vec<Slot>,
    trace: RefCell<Trace>,
    coverage: RefCell<Coverage>,
    ops_run: Cell<usize>,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            disk: RefCell::new(Arc::new(SimDisk::new(SimDiskOptions::default()))),
            at: Cell::new(None),
            next_op: Cell::new(0),
            incarnation: Cell::new(0),
            restart: Cell::new(None),
            done: Cell::new(false),
            current: RefCell::new(String::new()),
            events: RefCell::new(BTreeMap::new()),
            attached: RefCell::new(Vec::new()),
            record: RefCell::new(SessionRecord::default()),
        }
    }
}

impl World {
    fn record(&self, event: std::fmt::Arguments<'_>) {
        self.trace.borrow_mut().record(now_us(), event);
    }

    fn happened(&self, s: usize, h: Happened) {
        self.slots[s].record.borrow_mut().happened.push(h);
    }

    fn push_event(&self, s: usize, journal: &str, seq: u64) {
        self.slots[s]
            .events
            .borrow_mut()
            .entry(journal.to_string())
            .or_default()
            .push(seq);
    }
}

fn now_us() -> u64 {
    turmoil::sim_elapsed()
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

fn host_name(s: usize) -> String {
    format!("session-{s}")
}

async fn sleep_ms(ms: u32) {
    tokio::time::sleep(Duration::from_millis(u64::from(ms.max(1)))).await;
}

/// A journal's rows as the harness reads them from `bytes`: the production reader with no
/// planted bug, on a private copy.
fn read_rows(bytes: &[u8]) -> Result<Vec<Row>, String> {
    let storage = Arc::new(MemStorage::with_file("copy", bytes));
    Journal::open(storage, "copy", JournalOptions::default())
        .map(|j| j.rows())
        .map_err(|e| e.to_string())
}

fn written(r: Result<WriteReceipt, JournalError>) -> Outcome {
    match r {
        Ok(receipt) => Outcome::Written {
            records: receipt.records,
        },
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

/// The disk a crash leaves: synced bytes, plus what `pending` keeps of the unsynced ones.
fn crash_image(disk: &SimDisk, pending: Pending) -> BTreeMap<String, Vec<u8>> {
    let durable = disk.durable_image();
    match pending {
        Pending::Lose => durable,
        Pending::Keep => disk.image(),
        Pending::Cut { bytes } => disk
            .image()
            .into_iter()
            .filter_map(|(name, current)| {
                let synced = durable.get(&name).cloned().unwrap_or_default();
                if current.starts_with(&synced) {
                    let keep = (current.len() - synced.len()).min(bytes as usize);
                    Some((name, current[..synced.len() + keep].to_vec()))
                } else {
                    durable.get(&name).map(|d| (name, d.clone()))
                }
            })
            .collect(),
    }
}

/// Plays `scenario` once. Deterministic: the same scenario and config give the same record.
pub fn play(scenario: &JournalScenario, config: &WorldConfig) -> WorldRecord {
    let opts = JournalOptions {
        load_step_records: scenario.load_step_records.max(1) as usize,
        ..JournalOptions::planted(config.planted)
    };
    let world = Rc::new(World {
        scenario: scenario.clone(),
        opts,
        planted: config.planted,
        slots: scenario.sessions.iter().map(|_| Slot::new()).collect(),
        trace: RefCell::new(Trace::new(config.keep_trace)),
        coverage: RefCell::new(Coverage::default()),
        ops_run: Cell::new(0),
    });
    let mut sim = turmoil::Builder::new()
        .rng_seed(scenario.network_seed)
        .epoch(UNIX_EPOCH + Duration::from_secs(EPOCH_SECS))
        .simulation_duration(Duration::from_secs(SIMULATION_SECS))
        .tick_duration(Duration::from_millis(1))
        .build();
    for s in 0..scenario.sessions.len() {
        let w = world.clone();
        sim.host(host_name(s), move || session_host(s, w.clone()));
    }
    let w = world.clone();
    sim.client("operator", async move {
        while !w.slots.iter().all(|s| s.done.get()) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(())
    });
    let failure = drive(&mut sim, &world);
    let sim_elapsed_ms = sim.elapsed().as_millis() as u64;
    drop(sim);
    let Ok(world) = Rc::try_unwrap(world) else {
        return WorldRecord {
            sessions: Vec::new(),
            trace: Trace::new(false),
            failure: Some("the world still holds its state after the simulation ended".into()),
            sim_elapsed_ms,
            coverage: Coverage::default(),
            ops_run: 0,
        };
    };
    WorldRecord {
        sessions: world
            .slots
            .into_iter()
            .map(|s| s.record.into_inner())
            .collect(),
        trace: world.trace.into_inner(),
        failure,
        sim_elapsed_ms,
        coverage: world.coverage.into_inner(),
        ops_run: world.ops_run.get(),
    }
}

/// Steps the simulation, crashing and restarting hosts at their crash points.
fn drive(sim: &mut turmoil::Sim<'_>, world: &Rc<World>) -> Option<String> {
    let crashes = &world.scenario.crashes;
    let mut fired = vec![false; crashes.len()];
    let mut bounces: Vec<(Duration, usize)> = Vec::new();
    loop {
        match sim.step() {
            Ok(true) => return None,
            Ok(false) => {}
            Err(e) => return Some(e.to_string()),
        }
        for (i, c) in crashes.iter().enumerate() {
            let s = c.session as usize;
            let point = Point {
                op: c.op,
                during: c.during,
            };
            if fired[i] || world.slots[s].at.get() != Some(point) {
                continue;
            }
            fired[i] = true;
            crash(sim, world, i);
            bounces.push((
                sim.elapsed() + Duration::from_millis(u64::from(c.down_ms)),
                s,
            ));
        }
        let now = sim.elapsed();
        bounces.retain(|(at, s)| {
            if now < *at {
                return true;
            }
            world.record(format_args!("s{s} bounce"));
            sim.bounce(host_name(*s));
            false
        });
    }
}

/// Crash `i` of the scenario: the host loses its process and its unsynced writes.
fn crash(sim: &mut turmoil::Sim<'_>, world: &World, i: usize) {
    let c = &world.scenario.crashes[i];
    let s = c.session as usize;
    let slot = &world.slots[s];
    let disk = slot.disk.borrow().clone();
    let image = crash_image(&disk, c.pending);
    {
        let mut cov = world.coverage.borrow_mut();
        cov.hit("journal.fault.crash");
        match c.pending {
            Pending::Lose => cov.hit("journal.fault.crash_lose_unsynced"),
            Pending::Keep => cov.hit("journal.fault.crash_keep_unsynced"),
            Pending::Cut { .. } => cov.hit("journal.fault.crash_torn_write"),
        }
        if c.during.is_some() {
            cov.hit("journal.fault.crash_mid_replace");
        }
    }
    let bytes: usize = image.values().map(Vec::len).sum();
    world.record(format_args!(
        "s{s} crash op={} during={:?} pending={:?} files={} bytes={bytes} image={:016x}",
        c.op,
        c.during,
        c.pending,
        image.len(),
        image_hash(&image)
    ));
    if c.during.is_some() {
        world.happened(s, Happened::Interrupted { op: c.op as usize });
    }
    world.happened(
        s,
        Happened::Crash {
            op: c.op as usize,
            during: c.during,
            image: image.clone(),
        },
    );
    sim.crash(host_name(s));
    *slot.disk.borrow_mut() = Arc::new(SimDisk::from_image(image, SimDiskOptions::default()));
    slot.at.set(None);
    slot.next_op.set(c.op as usize + 1);
    slot.restart.set(Some(i));
}

fn image_hash(image: &BTreeMap<String, Vec<u8>>) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (name, bytes) in image {
        h.update(name.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.digest()
}

/// One incarnation of a session's process.
struct Process {
    s: usize,
    p: u32,
    disk: Arc<SimDisk>,
    storage: SharedStorage,
    store: Option<JournalStore>,
    recorder: String,
    session: Session,
    reader: JournalReader,
    shared: Rc<RefCell<Option<SharedHistory>>>,
}

impl Process {
    fn journal(&self) -> Option<&Journal> {
        self.session.recording().map(|r| r.journal())
    }

    fn journal_mut(&mut self) -> Option<&mut Journal> {
        self.session.recording_mut().map(|r| r.journal_mut())
    }

    fn rows(&self) -> Vec<Row> {
        self.journal().map(Journal::rows).unwrap_or_default()
    }

    fn last_seq(&self) -> u64 {
        self.journal().map_or(0, |j| j.fold().last_seq())
    }
}

async fn session_host(s: usize, world: Rc<World>) -> turmoil::Result {
    let mut proc = start(&world, s);
    let script = &world.scenario.sessions[s];
    let slot = &world.slots[s];
    loop {
        let k = slot.next_op.get();
        let Some(op) = script.ops.get(k) else { break };
        run_op(&world, &mut proc, k, op).await;
        slot.next_op.set(k + 1);
        world.ops_run.set(world.ops_run.get() + 1);
        slot.at.set(Some(Point {
            op: k as u32,
            during: None,
        }));
        sleep_ms(op.after_ms).await;
        slot.at.set(None);
    }
    {
        let mut record = slot.record.borrow_mut();
        record.final_image = proc.disk.image();
        record.final_recording = proc
            .journal()
            .map(|j| (j.name().to_string(), j.fold().last_seq()));
        record.finished = true;
    }
    world.record(format_args!(
        "s{s} p{} done image={:016x}",
        proc.p,
        image_hash(&proc.disk.image())
    ));
    slot.done.set(true);
    Ok(())
}

/// Starts incarnation `p` of session `s`: the store (sweeping dead incarnations' scratch), then
/// the recording and the shared history, created or resumed.
fn start(world: &World, s: usize) -> Process {
    let slot = &world.slots[s];
    let p = slot.incarnation.get();
    slot.incarnation.set(p + 1);
    let disk = slot.disk.borrow().clone();
    let storage: SharedStorage = disk.clone();
    let owner = format!("p{p}");
    let dead: Vec<String> = (0..p).map(|q| format!("p{q}")).collect();
    let scratch_opts = ScratchOptions {
        root_dir: "scratch".into(),
        owner: owner.clone(),
        planted: world.planted,
    };
    let is_alive = |o: &str| o == owner;
    let (mut store, sweep_error) = match JournalStore::open(
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
    let recorder = format!("recorder-p{p}.journal");
    if let Some(store) = store.as_mut() {
        if let Err(e) = store.create_recorder(&recorder, None) {
            world.record(format_args!("s{s} p{p} recorder failed: {e}"));
        }
    }
    let mut session = Session::new(storage.clone(), world.opts.clone());
    let shared = Rc::new(RefCell::new(None));
    let restart = slot.restart.take();
    let solo = match restart {
        None => {
            *slot.current.borrow_mut() = SESSION_JOURNAL.to_string();
            match session.start(SESSION_JOURNAL) {
                Ok(()) => {
                    let seq = session
                        .recording()
                        .map_or(0, |r| r.journal().fold().last_seq());
                    world.push_event(s, SESSION_JOURNAL, seq);
                }
                Err(e) => world.record(format_args!("s{s} p{p} start failed: {e}")),
            }
            None
        }
        Some(c) => Some(resume_recording(world, s, &disk, &mut session, c)),
    };
    let script = &world.scenario.sessions[s];
    let shared_seen = if script.subagents.is_empty() {
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
fn reopen_shared(
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

async fn run_op(world: &World, proc: &mut Process, k: usize, op: &Op) {
    let s = proc.s;
    let seen = match &op.action {
        Action::Append { .. }
        | Action::Replace { .. }
        | Action::Rewind { .. }
        | Action::Clear
        | Action::Compress { .. }
        | Action::Density { .. }
        | Action::Insert { .. } => solo_mutation(world, proc, k, op).await,
        Action::Read => read(world, proc),
        Action::Estimate { texts, schedule } => estimate(world, texts, schedule).await,
        Action::Send {
            budget_percent,
            keep_bytes,
        } => send(world, proc, k, *budget_percent, *keep_bytes),
        Action::Fork { name, back } => copy(world, proc, name, Some(*back)),
        Action::Clone { name } => copy(world, proc, name, None),
        Action::Switch { to, arrivals } => switch(world, proc, to, arrivals, op.fail),
        Action::ResumeAgain => resume_again(world, proc),
        Action::Shared {
            origin,
            op: action,
            fail_mirror,
        } => shared_op(world, proc, k, origin, action, fail_mirror.as_deref()),
        Action::AttachMirror { origin } => attach(world, proc, origin),
        Action::SharedResume => {
            let (h, seen) = reopen_shared(world, s, &proc.disk);
            *proc.shared.borrow_mut() = h;
            Seen::SharedResume(seen)
        }
        Action::Dispose { fault } => dispose(proc, *fault),
    };
    world.record(format_args!(
        "s{s} p{} op {k} {} {} journal={:016x}",
        proc.p,
        op.action.kind(),
        summary(&seen),
        xxhash_rust::xxh3::xxh3_64(&proc.disk.bytes(&world.slots[s].current.borrow()))
    ));
    world.happened(s, Happened::Op { op: k, seen });
}

/// One short line about what an operation returned, for the trace.
fn summary(seen: &Seen) -> String {
    let outcome = |o: &Outcome| match o {
        Outcome::Written { records } => format!("written records={records}"),
        Outcome::Skipped => "skipped".into(),
        Outcome::Failed(e) => format!("failed ({e})"),
    };
    match seen {
        Seen::Solo {
            outcome: o,
            rows,
            bytes_read,
            ..
        } => format!("{} rows={} read={bytes_read}", outcome(o), rows.len()),
        Seen::Shared {
            outcome: o,
            primary,
            bytes_read,
            ..
        } => format!(
            "resolve {} rows={} read={bytes_read}",
            outcome(o),
            primary.len()
        ),
        Seen::Read {
            result,
            bytes_read,
            appended,
            ..
        } => format!(
            "rows={:?} read={bytes_read} appended={appended}",
            result.as_ref().map(|s| s.rows).ok()
        ),
        Seen::Estimate { counts } => format!("counts={counts:?}"),
        Seen::Send {
            rows, rows_visited, ..
        } => format!("rows={rows} visited={rows_visited}"),
        Seen::Copy {
            journal, result, ..
        } => format!("{journal} ok={}", result.is_ok()),
        Seen::Switch { to, result, .. } => format!("{to} ok={}", result.is_ok()),
        Seen::ResumeAgain {
            bytes_before,
            bytes_after,
            ..
        } => format!("bytes {bytes_before}->{bytes_after}"),
        Seen::AttachMirror { result, .. } => format!("ok={}", result.is_ok()),
        Seen::SharedResume(r) => format!("ok={}", r.resumed.is_ok()),
        Seen::Dispose { result, .. } => format!("ok={}", result.is_ok()),
    }
}

async fn solo_mutation(world: &World, proc: &mut Process, k: usize, op: &Op) -> Seen {
    let slot = &world.slots[proc.s];
    let name = slot.current.borrow().clone();
    if op.fail {
        proc.disk.fail(&name, FaultOp::Append);
        world.coverage.borrow_mut().hit("journal.fault.append_eio");
    }
    proc.disk.reset_read_counters();
    let outcome = match &op.action {
        Action::Replace {
            groups,
            gap_ms,
            arrivals,
        } => replace(slot, proc, k, groups, *gap_ms, arrivals).await,
        other => solo_sync(proc, k, other),
    };
    let bytes_read = proc.disk.total_bytes_read();
    proc.disk.clear_faults();
    if outcome.is_written() {
        world.push_event(proc.s, &name, proc.last_seq());
    }
    Seen::Solo {
        journal: name,
        outcome,
        bytes_read,
        rows: proc.rows(),
    }
}

fn solo_sync(proc: &mut Process, k: usize, action: &Action) -> Outcome {
    let Some(j) = proc.journal_mut() else {
        return Outcome::Failed("the session has no recording".into());
    };
    let main = Origin::Main;
    let ctx: Vec<_> = j.fold().in_context().iter().map(|e| e.id).collect();
    let n = ctx.len();
    match action {
        Action::Append { rows: specs } => written(j.append(main.clone(), rows(specs, &main))),
        Action::Rewind { rows } => match rewind_rows(*rows, n) {
            0 => Outcome::Skipped,
            cut => written(j.suffix_cut(main, cut)),
        },
        Action::Clear => written(j.clear(main)),
        Action::Compress { keep } => match compression(&j.rows(), *keep, &main) {
            None => Outcome::Skipped,
            Some((summary, cut)) => written(j.compress(main, summary, cut)),
        },
        Action::Density {
            remove,
            rewrite,
            rewrite_bytes,
        } => match density_positions(remove, rewrite, n) {
            None => Outcome::Skipped,
            Some((removed, rewritten)) => {
                let removed: Vec<_> = removed.iter().map(|p| ctx[*p]).collect();
                let replacements: Vec<DensityReplacement> = rewritten
                    .iter()
                    .enumerate()
                    .map(|(i, p)| DensityReplacement {
                        id: ctx[*p],
                        row: rewrite_row(k, i, *rewrite_bytes),
                    })
                    .collect();
                written(j.density_mutation(main, &removed, &replacements))
            }
        },
        Action::Insert { after, row: spec } => {
            let anchor = insert_after(*after, n).map(|p| ctx[p]);
            written(j.insert_after(main.clone(), anchor, row(spec, &main)))
        }
        other => Outcome::Failed(format!("{} is not a solo mutation", other.kind())),
    }
}

/// A replacement written group by group with pauses, a crash point at every pause.
async fn replace(
    slot: &Slot,
    proc: &mut Process,
    k: usize,
    groups: &[Vec<super::scenario::RowSpec>],
    gap_ms: u32,
    arrivals: &[super::scenario::RowSpec],
) -> Outcome {
    let Some(j) = proc.journal_mut() else {
        return Outcome::Failed("the session has no recording".into());
    };
    let inbox = j.inbox();
    let mut guard = match j.begin_replace(Origin::Main) {
        Ok(g) => g,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    // Another recorder (a subagent's turn) hands its rows over while the replacement runs.
    for a in rows(arrivals, &Origin::Main) {
        inbox.submit(a.origin.clone(), vec![a]);
    }
    for (g, group) in groups.iter().enumerate() {
        pause(slot, k, g, gap_ms).await;
        if let Err(e) = guard.push_rows(rows(group, &Origin::Main)) {
            return Outcome::Failed(e.to_string());
        }
    }
    pause(slot, k, groups.len(), gap_ms).await;
    written(guard.commit())
}

async fn pause(slot: &Slot, k: usize, during: usize, gap_ms: u32) {
    slot.at.set(Some(Point {
        op: k as u32,
        during: Some(during as u32),
    }));
    sleep_ms(gap_ms).await;
    slot.at.set(None);
}

fn read(world: &World, proc: &mut Process) -> Seen {
    let name = world.slots[proc.s].current.borrow().clone();
    let len = proc.disk.len(&name).ok().flatten().unwrap_or(0);
    let appended = len.saturating_sub(proc.reader.offset());
    proc.disk.reset_read_counters();
    let result = proc.reader.statistics().map_err(|e| e.to_string());
    let bytes_read = proc.disk.bytes_read(&name);
    Seen::Read {
        result,
        bytes_read,
        appended,
        writer: proc.journal().map(|j| j.fold().statistics()),
    }
}

/// Counters fed piece by piece, taking turns as `schedule` says, yielding between turns.
async fn estimate(world: &World, texts: &[Vec<String>], schedule: &[u8]) -> Seen {
    let tokenizer = world.opts.tokenizer.clone();
    let mut counters: Vec<_> = texts
        .iter()
        .map(|_| tokenizer.counter(world.planted))
        .collect();
    let mut fed = vec![0usize; texts.len()];
    let mut counts: Vec<Option<u64>> = vec![None; texts.len()];
    for &i in schedule {
        let i = i as usize;
        if counts[i].is_none() {
            if fed[i] < texts[i].len() {
                counters[i].push(&texts[i][fed[i]]);
                fed[i] += 1;
            } else {
                counts[i] = Some(counters[i].end_row());
            }
        }
        tokio::task::yield_now().await;
    }
    for i in 0..texts.len() {
        if counts[i].is_none() {
            for piece in &texts[i][fed[i]..] {
                counters[i].push(piece);
            }
            counts[i] = Some(counters[i].end_row());
        }
    }
    Seen::Estimate {
        counts: counts.into_iter().map(Option::unwrap_or_default).collect(),
    }
}

fn send(world: &World, proc: &mut Process, k: usize, budget_percent: u8, keep_bytes: u32) -> Seen {
    let rows = proc.rows();
    let refs: Vec<&Row> = rows.iter().collect();
    let total: u64 = rows.iter().map(|r| r.content_bytes() as u64).sum();
    let plan = plan_truncation(
        &refs,
        TruncationOptions {
            budget_bytes: total * u64::from(budget_percent) / 100,
            keep_bytes: keep_bytes as usize,
            planted: world.planted,
        },
    );
    let body = format!(
        "{{\"rows\":{},\"bytes\":{},\"cut\":{}}}",
        rows.len(),
        plan.bytes_after,
        plan.replacements.len()
    );
    let staged = match proc.store.as_mut() {
        Some(store) => store
            .scratch()
            .write(&format!("request-{k}.json"), body.as_bytes())
            .map(|_| ())
            .map_err(|e| e.to_string()),
        None => Err("the journal store is disposed".into()),
    };
    Seen::Send {
        rows: rows.len(),
        rows_visited: plan.rows_visited,
        replacements: plan.replacements.len(),
        staged,
    }
}

/// A fork (`back` changes before the current state) or a clone (`None`) of the recording.
fn copy(world: &World, proc: &mut Process, name: &str, back: Option<u32>) -> Seen {
    let s = proc.s;
    let source = world.slots[s].current.borrow().clone();
    let file = journal_file(name);
    let events = world.slots[s]
        .events
        .borrow()
        .get(&source)
        .cloned()
        .unwrap_or_default();
    let last = events.len().saturating_sub(1);
    let checkpoint = last - back.map_or(0, |b| (b as usize).min(last));
    let result = match (back, events.get(checkpoint)) {
        (Some(_), Some(seq)) => fork_journal(
            proc.storage.clone(),
            &source,
            &file,
            *seq,
            world.opts.clone(),
        ),
        (None, Some(_)) => clone_journal(proc.storage.clone(), &source, &file, world.opts.clone()),
        (_, None) => Err(JournalError::Argument(format!("{source} has no history"))),
    };
    let (result, open_txn, rows) = match result {
        Ok(j) => {
            world.push_event(s, &file, j.fold().last_seq());
            (Ok(()), j.open_txn(), j.rows())
        }
        Err(e) => (Err(e.to_string()), None, Vec::new()),
    };
    Seen::Copy {
        source,
        journal: file.clone(),
        checkpoint,
        result,
        open_txn,
        facts: classify_image(&proc.disk.bytes(&file)),
        rows,
    }
}

fn switch(
    world: &World,
    proc: &mut Process,
    to: &str,
    arrivals: &[super::scenario::RowSpec],
    fail: bool,
) -> Seen {
    let s = proc.s;
    let previous = world.slots[s].current.borrow().clone();
    let file = journal_file(to);
    let arrivals = rows(arrivals, &Origin::Main);
    let loaded = Journal::open(proc.storage.clone(), &file, world.opts.clone())
        .map(|j| j.rows())
        .map_err(|e| e.to_string());
    if fail {
        proc.disk.fail(&file, FaultOp::Append);
        world
            .coverage
            .borrow_mut()
            .hit("journal.fault.resume_fails_after_publish");
    }
    let mut typed = Some(arrivals.clone());
    let result = proc
        .session
        .resume(&file, &mut |_| typed.take().unwrap_or_default())
        .map(|_| ())
        .map_err(|e| e.to_string());
    proc.disk.clear_faults();
    if result.is_ok() {
        *world.slots[s].current.borrow_mut() = file.clone();
        world.push_event(s, &file, proc.last_seq());
        proc.reader = JournalReader::new(proc.storage.clone(), &file, world.opts.clone());
    }
    Seen::Switch {
        previous,
        to: file,
        loaded,
        result,
        recording: proc.journal().map(|j| j.name().to_string()),
        rows: proc.rows(),
        arrivals,
    }
}

fn resume_again(world: &World, proc: &mut Process) -> Seen {
    let s = proc.s;
    let name = world.slots[s].current.borrow().clone();
    let size = |d: &SimDisk| d.len(&name).ok().flatten().unwrap_or(0);
    let bytes_before = size(&proc.disk);
    let rows_before = proc.journal().map(Journal::rows);
    let result = proc
        .session
        .resume(&name, &mut |_| Vec::new())
        .map(|_| ())
        .map_err(|e| e.to_string());
    if result.is_ok() {
        world.push_event(s, &name, proc.last_seq());
    }
    Seen::ResumeAgain {
        result,
        bytes_before,
        bytes_after: size(&proc.disk),
        rows_before,
        rows_after: proc.rows(),
    }
}

fn shared_op(
    world: &World,
    proc: &mut Process,
    k: usize,
    origin: &str,
    action: &SharedAction,
    fail_mirror: Option<&str>,
) -> Seen {
    let origin = origin_of(origin);
    if let Some(m) = fail_mirror {
        proc.disk.fail(&mirror_file(&origin_of(m)), FaultOp::Append);
        world
            .coverage
            .borrow_mut()
            .hit("journal.fault.mirror_append_eio");
    }
    proc.disk.reset_read_counters();
    let outcome = match proc.shared.borrow_mut().as_mut() {
        Some(h) => shared_mutation(h, k, &origin, action),
        None => Outcome::Failed("the session has no shared history".into()),
    };
    let bytes_read = proc.disk.total_bytes_read();
    proc.disk.clear_faults();
    let attached = world.slots[proc.s].attached.borrow().clone();
    let (primary, mirrors) = match proc.shared.borrow().as_ref() {
        Some(h) => (
            h.primary().rows(),
            attached
                .iter()
                .map(|o| mirror_seen(h, &proc.disk, o))
                .collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    settle_later(world, proc);
    Seen::Shared {
        outcome,
        bytes_read,
        primary,
        mirrors,
    }
}

fn mirror_seen(h: &SharedHistory, disk: &SimDisk, origin: &Origin) -> MirrorSeen {
    MirrorSeen {
        origin: origin.clone(),
        rows: h
            .mirror(origin)
            .map(|m| m.journal().rows())
            .unwrap_or_default(),
        durable: read_rows(&disk.durable_bytes(&mirror_file(origin))),
    }
}

/// Slow mirrors: the host writes mirror work still owed only after `mirror_settle_ms`.
fn settle_later(world: &World, proc: &Process) {
    let ms = world.scenario.mirror_settle_ms;
    if ms == 0 {
        if let Some(h) = proc.shared.borrow_mut().as_mut() {
            let _ = h.settle();
        }
        return;
    }
    let shared = proc.shared.clone();
    tokio::task::spawn_local(async move {
        tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
        if let Some(h) = shared.borrow_mut().as_mut() {
            let _ = h.settle();
        }
    });
}

fn shared_mutation(
    h: &mut SharedHistory,
    k: usize,
    origin: &Origin,
    action: &SharedAction,
) -> Outcome {
    let ctx: Vec<(history::journal::RowId, Row)> = h
        .primary()
        .fold()
        .in_context()
        .iter()
        .map(|e| (e.id, (*e.row).clone()))
        .collect();
    let n = ctx.len();
    let o = origin.clone();
    match action {
        SharedAction::Append { rows: specs } => written(h.append(o, rows(specs, origin))),
        SharedAction::Rewind { rows } => match rewind_rows(*rows, n) {
            0 => Outcome::Skipped,
            cut => written(h.rewind(o, cut)),
        },
        SharedAction::Clear => written(h.clear(o)),
        SharedAction::Compress { keep } => {
            let now: Vec<Row> = ctx.iter().map(|(_, r)| r.clone()).collect();
            match compression(&now, *keep, origin) {
                None => Outcome::Skipped,
                Some((summary, cut)) => written(h.compress(o, summary, cut)),
            }
        }
        SharedAction::Transform { at } => {
            if n == 0 {
                return Outcome::Skipped;
            }
            let (id, old) = &ctx[*at as usize % n];
            written(h.transform(o, *id, transformed(old, k)))
        }
        SharedAction::Restore { rows: specs } => written(h.restore(o, rows(specs, origin))),
        SharedAction::Insert { after, row: spec } => {
            let anchor = insert_after(*after, n).map(|p| ctx[p].0);
            written(h.insert_after(o, anchor, row(spec, origin)))
        }
    }
}

fn attach(world: &World, proc: &mut Process, origin: &str) -> Seen {
    let origin = origin_of(origin);
    let slot = &world.slots[proc.s];
    if slot.attached.borrow().contains(&origin) {
        return Seen::AttachMirror {
            result: Ok(()),
            mirror: None,
        };
    }
    let mut cell = proc.shared.borrow_mut();
    let Some(h) = cell.as_mut() else {
        return Seen::AttachMirror {
            result: Err("the session has no shared history".into()),
            mirror: None,
        };
    };
    match h.attach_mirror(origin.clone(), &mirror_file(&origin)) {
        Ok(()) => {
            slot.attached.borrow_mut().push(origin.clone());
            Seen::AttachMirror {
                result: Ok(()),
                mirror: Some(mirror_seen(h, &proc.disk, &origin)),
            }
        }
        Err(e) => Seen::AttachMirror {
            result: Err(e.to_string()),
            mirror: None,
        },
    }
}

fn dispose(proc: &mut Process, fault: Option<DisposeFault>) -> Seen {
    let area = format!("scratch/p{}", proc.p);
    match fault {
        Some(DisposeFault::ScratchRemove) => {
            proc.disk.fail(&format!("{area}/.owner"), FaultOp::Remove)
        }
        Some(DisposeFault::RecorderSync) => proc.disk.fail(&proc.recorder, FaultOp::Sync),
        None => {}
    }
    let result = match proc.store.take() {
        Some(store) => store.dispose().map(|_| ()).map_err(|e| e.to_string()),
        None => Err("the journal store is disposed already".into()),
    };
    proc.disk.clear_faults();
    Seen::Dispose {
        fault_injected: fault.is_some(),
        result,
        scratch_left: proc.disk.list(&area).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_crash_keeps_a_prefix_of_the_unsynced_bytes() {
        let d = SimDisk::new(SimDiskOptions::default());
        d.append("j", b"abc").expect("append");
        d.sync("j").expect("sync");
        d.append("j", b"defg").expect("append");
        let cut = crash_image(&d, Pending::Cut { bytes: 2 });
        assert_eq!(cut.get("j").map(Vec::as_slice), Some(&b"abcde"[..]));
        assert_eq!(
            crash_image(&d, Pending::Lose).get("j").map(Vec::as_slice),
            Some(&b"abc"[..])
        );
        assert_eq!(
            crash_image(&d, Pending::Keep).get("j").map(Vec::as_slice),
            Some(&b"abcdefg"[..])
        );
    }
}
