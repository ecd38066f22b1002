//! The journal on a disk that fails: the crash workload run on a [`SimDisk`] whose seeded
//! schedule injects EIO, ENOSPC (a capacity bound), short writes (a prefix lands, then EIO),
//! silent corruption (one flipped byte, success returned), failed syncs and failed reads.
//!
//! Crash exploration ([`super::explore`]) cuts a fault-free run at every byte; this runs many
//! seeds of a faulty one and checks, after every mutation, against the model
//! (`model::journal::CrashModel`) and the disk's own record of what it did:
//!
//! - a mutation that resolves `Ok` is in the writer, and a crash right after it reopens as it:
//!   it resolved only once durable (J9);
//! - a mutation that fails changes nothing the writer shows; the current bytes, reopened on a
//!   healthy disk, show the history before it (or, when a failed sync poisoned the writer, before
//!   or after it: the record was issued) and a crash shows a state the model allows; a poisoned
//!   writer refuses the next mutation without touching the file (J10);
//! - after a failure the session restarts: resume on the still faulty disk, retried, gives the
//!   history the bytes hold, with no transaction open (J2);
//! - a silently flipped byte cannot be recovered, and the model says so (accepted loss, J10):
//!   reopening must fail with an error naming the byte offset where the damaged record starts,
//!   leaving the file untouched; only when the damaged record is the file's last one may it be
//!   discarded as a torn tail, which loses that acknowledged mutation and nothing else;
//! - a flip that leaves the payload parsable JSON (a letter of a row's text, a number's last
//!   digit) is held to the same rule: only the checksum tells, and a reader that shows the
//!   record anyway turns it into a different row or record (J20). Each record kind such a flip
//!   hit fires the probe `crash.corrupt_parsable.<kind>` ([`PARSABLE_PROBES`]); the default
//!   budget hits every kind.
//!
//! A seed ends at its first corruption (the journal is unreadable by design from there) or when
//! resume keeps failing (a full disk). `histsim crash --fault-seeds A..B` runs it.

use std::collections::BTreeMap;

use crate::coverage::Coverage;
use std::ops::Range;
use std::sync::Arc;

use history::journal::{
    resume_journal, Journal, JournalError, JournalOptions, Origin, Row, Storage,
};
use history::{BugId, Planted};
use model::journal::{CrashModel, ModelHistory};
use rand::{Rng, RngCore};

use super::check::{classify_image, JOURNAL};
use super::view::{describe, model_view};
use super::workload::{next_op, WorkloadOp};
use crate::disk::{DiskEvent, FaultOptions, SimDisk, SimDiskOptions};
use crate::rng::{SeedRng, Stream};

/// Resume attempts after a failed mutation before the seed gives up (the disk may be full).
const RESUME_ATTEMPTS: usize = 8;

/// What to run.
#[derive(Clone, Debug)]
pub struct FaultedOptions {
    pub seeds: Range<u64>,
    /// Mutations per seed.
    pub ops: usize,
    pub planted: Planted,
}

/// One probe per record kind of the journal (`history::journal::RecordBody::kind`): a
/// corruption that left the payload parsable hit a record of that kind.
pub const PARSABLE_PROBES: &[&str] = &[
    "crash.corrupt_parsable.start",
    "crash.corrupt_parsable.append",
    "crash.corrupt_parsable.replace_begin",
    "crash.corrupt_parsable.replace_rows",
    "crash.corrupt_parsable.replace_commit",
    "crash.corrupt_parsable.replace_abort",
    "crash.corrupt_parsable.suffix_cut",
    "crash.corrupt_parsable.clear",
    "crash.corrupt_parsable.compression",
    "crash.corrupt_parsable.density_mutation",
    "crash.corrupt_parsable.synthetic_insert",
];

/// Seeds of the default run: enough that a parsable corruption hits every record kind.
pub(crate) const DEFAULT_SEEDS: Range<u64> = 0..400;

impl Default for FaultedOptions {
    fn default() -> Self {
        FaultedOptions {
            seeds: DEFAULT_SEEDS,
            ops: 24,
            planted: Planted::none(),
        }
    }
}

/// One seed that broke an invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultedFailure {
    pub seed: u64,
    pub bug_id: BugId,
    /// The mutation during or after which it broke.
    pub op_index: usize,
    pub description: String,
}

/// What the seeds did, summed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultedReport {
    pub seeds_run: u64,
    pub mutations_ok: u64,
    pub mutations_failed: u64,
    pub faults_injected: u64,
    /// Restarts (a resume after a failed mutation) that succeeded.
    pub resumes: u64,
    /// Seeds that ended because resume kept failing.
    pub seeds_given_up: u64,
    /// Corruptions a reopen reported as an error naming their record.
    pub corruptions_reported: u64,
    /// Corruptions of the last record, discarded as a torn tail (the accepted loss).
    pub corruptions_discarded: u64,
    /// The probes of [`PARSABLE_PROBES`] that fired, with their counts.
    pub coverage: Coverage,
    pub failures: Vec<FaultedFailure>,
}

impl FaultedReport {
    pub fn names(&self, id: BugId) -> bool {
        self.failures.iter().any(|f| f.bug_id == id)
    }

    /// The record kinds a parsable corruption hit, and those it never hit.
    pub fn parsable_kinds(&self) -> (Vec<&'static str>, Vec<&'static str>) {
        let kind = |p: &&'static str| p.rsplit('.').next().unwrap_or(p);
        let missed = self.coverage.never_fired(PARSABLE_PROBES);
        let hit = PARSABLE_PROBES
            .iter()
            .filter(|p| !missed.contains(p))
            .map(kind)
            .collect();
        (hit, missed.iter().map(kind).collect())
    }

    /// One line for the command line.
    pub fn summary(&self) -> String {
        format!(
            "{} seeds on a faulty disk: {} mutations ok, {} failed, {} faults injected, {} resumes, \
             {} seeds gave up on a full or failing disk, corruptions {} reported and {} discarded \
             as a torn tail; {} seeds failed",
            self.seeds_run,
            self.mutations_ok,
            self.mutations_failed,
            self.faults_injected,
            self.resumes,
            self.seeds_given_up,
            self.corruptions_reported,
            self.corruptions_discarded,
            self.failures.len()
        )
    }
}

/// The disk faults seed `seed` switches on (swarm style: each kind on for some seeds only).
pub(crate) fn fault_options(seed: u64) -> FaultOptions {
    let mut rng = SeedRng::new(seed).stream(Stream::Faults);
    let mut rate = |on: f64, lo: f64, hi: f64| {
        let draw = rng.random_range(lo..hi);
        if rng.random_bool(on) {
            draw
        } else {
            0.0
        }
    };
    let append_eio_probability = rate(0.5, 0.02, 0.2);
    let append_short_probability = rate(0.5, 0.02, 0.2);
    let append_corrupt_probability = rate(0.25, 0.01, 0.08);
    let sync_eio_probability = rate(0.5, 0.02, 0.15);
    let read_eio_probability = rate(0.3, 0.01, 0.1);
    let capacity_bytes = rng
        .random_bool(0.2)
        .then(|| rng.random_range(1_024..16_384));
    // A sub-stream of its own, so the faults above stay what they were for every seed.
    let mut parsable = SeedRng::new(seed).substream(Stream::Faults, 1);
    let append_corrupt_parsable_probability = if parsable.random_bool(0.6) {
        parsable.random_range(0.02..0.12)
    } else {
        0.0
    };
    FaultOptions {
        append_corrupt_parsable_probability,
        seed: rng.next_u64(),
        append_eio_probability,
        append_short_probability,
        append_corrupt_probability,
        sync_eio_probability,
        read_eio_probability,
        capacity_bytes,
    }
}

/// Runs every seed.
pub fn run_faulted(opts: &FaultedOptions) -> FaultedReport {
    let jopts = JournalOptions::planted(opts.planted);
    let mut report = FaultedReport::default();
    for seed in opts.seeds.clone() {
        report.seeds_run += 1;
        let mut seed_run = SeedRun::new(seed, &jopts);
        let outcome = seed_run.run(opts.ops, &mut report);
        report.faults_injected += seed_run.disk.faults_injected();
        if let Err((op_index, bug_id, description)) = outcome {
            report.failures.push(FaultedFailure {
                seed,
                bug_id,
                op_index,
                description,
            });
        }
    }
    report
}

type Broken = (usize, BugId, String);

struct SeedRun {
    disk: Arc<SimDisk>,
    jopts: JournalOptions,
    model: CrashModel<Row>,
    /// The first workload op of the cycle.
    first: usize,
    /// Good records in the journal before the op in progress.
    records_before: usize,
}

/// A fault-free copy of some files: the checker's own reader, so verification never trips the
/// schedule (and never shifts it).
fn healthy(image: BTreeMap<String, Vec<u8>>) -> Arc<SimDisk> {
    Arc::new(SimDisk::from_image(image, SimDiskOptions::default()))
}

fn reopen(
    image: BTreeMap<String, Vec<u8>>,
    jopts: &JournalOptions,
) -> Result<ModelHistory<Row>, JournalError> {
    if !image.contains_key(JOURNAL) {
        return Ok(ModelHistory::new());
    }
    Journal::open(healthy(image), JOURNAL, jopts.clone()).map(|j| model_view(j.fold()))
}

impl SeedRun {
    fn new(seed: u64, jopts: &JournalOptions) -> SeedRun {
        let mut rng = SeedRng::new(seed).stream(Stream::Workload);
        SeedRun {
            disk: Arc::new(SimDisk::new(SimDiskOptions {
                // The log tells the corruption check which append a flipped byte came with.
                log_events: true,
                faults: fault_options(seed),
            })),
            jopts: jopts.clone(),
            model: CrashModel::new(ModelHistory::new()),
            first: rng.random_range(0..8),
            records_before: 0,
        }
    }

    fn run(&mut self, ops: usize, report: &mut FaultedReport) -> Result<(), Broken> {
        let origin = Origin::Main;
        let mut journal = match self.restart(0, report, true)? {
            Some(j) => j,
            None => return Ok(()),
        };
        for i in 0..ops {
            let op = next_op(self.first + i, self.model.latest(), &origin);
            let before = self.model.latest().clone();
            let issued = self
                .model
                .issue(&op.model_op())
                .map_err(|e| (i, BugId::J10, format!("model refused op {i}: {e}")))?;
            self.records_before = classify_image(&self.disk.bytes(JOURNAL)).records;
            let result = op.run(&mut journal, &origin);
            if self.corrupted_check(i, &before, report)? {
                return Ok(());
            }
            match result {
                Ok(receipt) => {
                    report.mutations_ok += 1;
                    op.check_one_record(i, &receipt)
                        .map_err(|e| (i, BugId::J15, e))?;
                    self.model.make_durable(issued);
                    self.resolved(i, &op, &journal)?;
                }
                Err(e) => {
                    report.mutations_failed += 1;
                    let matched = self.failed(i, &op, &e, &before, &mut journal)?;
                    self.model = CrashModel::new(matched);
                    drop(journal);
                    journal = match self.restart(i, report, false)? {
                        Some(j) => j,
                        None => return Ok(()),
                    };
                }
            }
        }
        Ok(())
    }

    /// A resolved mutation shows the model's history in the writer and after a crash (J9).
    fn resolved(&self, i: usize, op: &WorkloadOp, journal: &Journal) -> Result<(), Broken> {
        let what = format!("op {i} ({}) resolved but the writer", op.kind());
        self.shows_the_model(i, &what, journal)?;
        let crashed = reopen(self.disk.durable_image(), &self.jopts);
        if crashed.as_ref().ok() != Some(self.model.latest()) {
            return Err((
                i,
                BugId::J9,
                format!(
                    "op {i} ({}) resolved, but a crash right after it reopens as {}: it was not durable",
                    op.kind(),
                    show(&crashed)
                ),
            ));
        }
        Ok(())
    }

    /// J10: `journal` (`what`, for the message: `resume after op 3`) shows the model's history
    /// after op `i`.
    fn shows_the_model(&self, i: usize, what: &str, journal: &Journal) -> Result<(), Broken> {
        let shown = model_view(journal.fold());
        if &shown != self.model.latest() {
            return Err((
                i,
                BugId::J10,
                format!(
                    "{what} shows {}, the model {}",
                    describe(&shown),
                    describe(self.model.latest())
                ),
            ));
        }
        Ok(())
    }

    /// A failed mutation changed nothing (or, after a poisoning sync, shows either state), on
    /// disk and after a crash; a poisoned writer refuses to write. Returns the state the file
    /// shows.
    fn failed(
        &self,
        i: usize,
        op: &WorkloadOp,
        e: &JournalError,
        before: &ModelHistory<Row>,
        journal: &mut Journal,
    ) -> Result<ModelHistory<Row>, Broken> {
        let poisoned = journal.poisoned().is_some();
        // The states the bytes may show: the one before; after a failed sync also the op's own
        // (issued, maybe durable).
        let allowed: Vec<ModelHistory<Row>> = if poisoned {
            vec![before.clone(), self.model.latest().clone()]
        } else {
            vec![before.clone()]
        };
        let matched = self.failed_file_shows(i, op, e, &allowed)?;
        let crashed = reopen(self.disk.durable_image(), &self.jopts);
        if !crashed.as_ref().is_ok_and(|h| allowed.contains(h)) {
            return Err((
                i,
                BugId::J9,
                format!(
                    "op {i} ({}) failed ({e}); a crash now reopens as {}",
                    op.kind(),
                    show(&crashed)
                ),
            ));
        }
        if poisoned {
            self.poisoned_refuses(i, &matched, journal)?;
        } else {
            let shown = model_view(journal.fold());
            if &shown != before {
                return Err((
                    i,
                    BugId::J10,
                    format!(
                        "op {i} ({}) failed ({e}) but the writer shows {}, not the history before it {}",
                        op.kind(),
                        describe(&shown),
                        describe(before)
                    ),
                ));
            }
        }
        Ok(matched)
    }

    /// The history the file reopens as after a failed op, when it is one of `allowed`.
    fn failed_file_shows(
        &self,
        i: usize,
        op: &WorkloadOp,
        e: &JournalError,
        allowed: &[ModelHistory<Row>],
    ) -> Result<ModelHistory<Row>, Broken> {
        let on_disk = reopen(self.disk.image(), &self.jopts);
        if let Some(h) = on_disk.as_ref().ok().filter(|h| allowed.contains(h)) {
            return Ok(h.clone());
        }
        // A replacement left open in the file and shown anyway is J1's mix; a one-record shape
        // that left more than one record is J15's.
        let facts = classify_image(&self.disk.bytes(JOURNAL));
        let one_record_shape = matches!(
            op,
            WorkloadOp::SuffixCut(_) | WorkloadOp::Clear | WorkloadOp::Compress { .. }
        );
        let id = if facts.open_txn.is_some() {
            BugId::J1
        } else if one_record_shape && facts.records > self.records_before + 1 {
            BugId::J15
        } else {
            BugId::J10
        };
        Err((
            i,
            id,
            format!(
                "op {i} ({}) failed ({e}); its file now reopens as {}, but the model allows {}",
                op.kind(),
                show(&on_disk),
                allowed
                    .iter()
                    .map(describe)
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ))
    }

    /// A writer poisoned by a failed sync writes nothing more.
    fn poisoned_refuses(
        &self,
        i: usize,
        matched: &ModelHistory<Row>,
        journal: &mut Journal,
    ) -> Result<(), Broken> {
        let bytes = self.disk.bytes(JOURNAL);
        let next = next_op(self.first + i + 1, matched, &Origin::Main);
        if next.run(journal, &Origin::Main).is_ok() || self.disk.bytes(JOURNAL) != bytes {
            return Err((
                i,
                BugId::J10,
                format!(
                    "after a failed sync poisoned the writer, op {} ({}) still wrote to the file",
                    i + 1,
                    next.kind()
                ),
            ));
        }
        Ok(())
    }

    /// A new process: creates the journal (first start) or resumes it on the faulty disk,
    /// retrying; `None` when every attempt failed. A resumed journal must show the model's
    /// history with no transaction open.
    fn restart(
        &mut self,
        i: usize,
        report: &mut FaultedReport,
        first: bool,
    ) -> Result<Option<Journal>, Broken> {
        for _ in 0..RESUME_ATTEMPTS {
            let attempt = if first && self.disk.bytes(JOURNAL).is_empty() {
                // A failed create may leave nothing or an empty file; start over either way.
                let _ = Storage::remove(self.disk.as_ref(), JOURNAL);
                Journal::create(self.disk.clone(), JOURNAL, self.jopts.clone(), None)
            } else {
                resume_journal(self.disk.clone(), JOURNAL, self.jopts.clone())
            };
            let Ok(j) = attempt else { continue };
            if let Some(txn) = j.open_txn() {
                return Err((
                    i,
                    BugId::J2,
                    format!("resume after op {i} left transaction {txn} open"),
                ));
            }
            self.shows_the_model(i, &format!("resume after op {i}"), &j)?;
            if !first {
                report.resumes += 1;
            }
            return Ok(Some(j));
        }
        report.seeds_given_up += 1;
        Ok(None)
    }

    /// When a silent corruption is in the file: checks what a reader makes of it and returns
    /// true (the seed is over). The model's rule (accepted loss, J10): the damaged record is
    /// unrecoverable; a reopen reports it by its offset and leaves the file as it was, or, when
    /// it is the last record, discards it as a torn tail and shows the history before the op.
    fn corrupted_check(
        &self,
        i: usize,
        before: &ModelHistory<Row>,
        report: &mut FaultedReport,
    ) -> Result<bool, Broken> {
        let Some(&flipped) = self.disk.corruptions(JOURNAL).first() else {
            return Ok(false);
        };
        let events = self.disk.events();
        let frame = events.iter().rev().find_map(|e| match e {
            DiskEvent::Append {
                file,
                offset,
                bytes,
            } if file == JOURNAL && (*offset..*offset + bytes.len() as u64).contains(&flipped) => {
                Some((*offset, *offset + bytes.len() as u64))
            }
            _ => None,
        });
        let (start, end) =
            frame.expect("a corruption the disk recorded lies in an append it logged");
        let parsable = self.disk.corruption_is_parsable(JOURNAL, flipped);
        if parsable {
            let bytes = self.disk.bytes(JOURNAL);
            let payload =
                &bytes[start as usize + history::journal::frame::HEADER_BYTES..end as usize];
            let kind = serde_json::from_slice::<serde_json::Value>(payload)
                .ok()
                .and_then(|v| v["kind"].as_str().map(str::to_string))
                .unwrap_or_default();
            report
                .coverage
                .hit(&format!("crash.corrupt_parsable.{kind}"));
        }
        let image = self.disk.image();
        let len = image.get(JOURNAL).map_or(0, |b| b.len() as u64);
        let reader = healthy(image.clone());
        let opened = Journal::open(reader.clone(), JOURNAL, self.jopts.clone());
        let untouched = reader.image() == image;
        match opened {
            Err(e) if e.offset() == Some(start) && untouched => {
                report.corruptions_reported += 1;
                Ok(true)
            }
            Ok(j) if end == len && &model_view(j.fold()) == before => {
                report.corruptions_discarded += 1;
                Ok(true)
            }
            other => Err((
                i,
                self.misread_id(parsable, &other, before),
                format!(
                    "op {i} flipped byte {flipped} of the record at {start}..{end} (file length {len}{}); \
                     reopening gave {}{}",
                    if parsable { ", the payload still parses" } else { "" },
                    match &other {
                        Ok(j) => format!("a history {}", describe(&model_view(j.fold()))),
                        Err(e) => format!("the error `{e}`"),
                    },
                    if untouched { "" } else { " and changed the file" }
                ),
            )),
        }
    }
}

impl SeedRun {
    /// The ID of a corrupt record a reopen did not report: J20 when only the checksum could tell
    /// (the payload parses) and the reader applied it anyway (a row no model state has), J10
    /// when it was dropped (a history without it, or an error at a later record: the gap).
    fn misread_id(
        &self,
        parsable: bool,
        opened: &Result<Journal, JournalError>,
        before: &ModelHistory<Row>,
    ) -> BugId {
        let foreign = |j: &Journal| {
            let known = [before.rows(), self.model.latest().rows()].concat();
            model_view(j.fold())
                .rows()
                .iter()
                .any(|row| !known.contains(row))
        };
        match opened {
            Ok(j) if parsable && foreign(j) => BugId::J20,
            _ => BugId::J10,
        }
    }
}

fn show(r: &Result<ModelHistory<Row>, JournalError>) -> String {
    match r {
        Ok(h) => describe(h),
        Err(e) => format!("an error: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_switch_different_faults_on() {
        let all: Vec<FaultOptions> = (0..40).map(fault_options).collect();
        assert!(all.iter().any(|o| o.append_corrupt_probability > 0.0));
        assert!(all.iter().any(|o| o.append_corrupt_probability == 0.0));
        assert!(all.iter().any(|o| o.capacity_bytes.is_some()));
        assert!(all.iter().any(|o| o.sync_eio_probability > 0.0));
        assert_eq!(fault_options(7), fault_options(7));
    }
}
