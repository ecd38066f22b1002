//! The exploration loop: run the workload once on a logging disk, then check every crash state.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use history::journal::{Journal, JournalOptions, Origin, Row, SharedStorage};
use history::BugId;
use model::journal::{CrashModel, ModelHistory};

use super::check::{check_state, keep_start, Window, JOURNAL};
use super::view::{describe, model_view};
use super::workload::next_op;
use super::{CrashFailure, CrashOptions, CrashReport};
use crate::disk::crash::{for_each_crash_state, CrashPointOptions};
use crate::disk::states::{for_each_model_state, ModelStateOptions};
use crate::disk::{CrashPoint, DiskEvent, Persistence, SimDisk, SimDiskOptions};

/// One workload operation's place in the disk log.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    /// Index of its first disk event.
    start: usize,
    /// One past its last disk event (its sync).
    end: usize,
    /// The model state after it.
    state: usize,
    atomic: bool,
}

/// Runs the workload and checks every crash state of it under `opts.persistence`.
pub fn explore(opts: &CrashOptions) -> CrashReport {
    assert!(opts.ops >= 1, "a workload of no operations");
    let jopts = JournalOptions::planted(opts.planted);
    let mut report = CrashReport {
        persistence: opts.persistence,
        ..CrashReport::default()
    };
    let (disk, model, spans) = match run_workload(opts.ops, 0, &jopts) {
        Ok(run) => run,
        Err((id, description)) => return workload_failed(report, opts, id, description),
    };
    let events = disk.events();
    report.mutations = spans.len();
    report.disk_events = events.len();
    let checker = Checker {
        synced: synced_lengths(&events),
        spans,
        model,
        jopts,
        opts,
    };
    let mut kept = BTreeMap::new();
    let mut keep = |point: usize, image: &BTreeMap<String, Vec<u8>>| {
        if opts.crash_depth >= 2 {
            keep_start(&mut kept, opts.starts_per_point, point, image.clone());
        }
    };
    if opts.persistence == Persistence::Prefix {
        let points = CrashPointOptions {
            cut_step_bytes: opts.cut_step_bytes,
            lose_unsynced: opts.lose_unsynced,
        };
        for_each_crash_state(&events, points, &mut |point, image| {
            report.points += 1;
            keep(point.event, &image);
            checker.check(&mut report, point, image)
        });
        report.space = u128::from(report.points);
        checker.explore_sequences(&mut report, &events, kept);
        return report;
    }
    let states = ModelStateOptions {
        model: opts.persistence,
        cap_per_point: opts.cap_per_point,
        sample_seed: opts.sample_seed,
    };
    let counts = for_each_model_state(&events, states, &mut |event, image| {
        let point = CrashPoint {
            event,
            cut_bytes: None,
            lose_unsynced: false,
        };
        keep(event, &image);
        checker.check(&mut report, point, image)
    });
    report.points = counts.points;
    report.space = counts.space;
    report.sampled_points = counts.sampled_points;
    checker.explore_sequences(&mut report, &events, kept);
    report
}

/// The workload itself failed before any crash: reported as one failed state.
pub(super) fn workload_failed(
    mut report: CrashReport,
    opts: &CrashOptions,
    bug_id: BugId,
    description: String,
) -> CrashReport {
    report.states_checked = 1;
    let failure = CrashFailure {
        bug_id,
        write_index: 0,
        cut_at: None,
        lose_unsynced: false,
        op_index: None,
        depth: 1,
        description,
    };
    record(&mut report, opts, failure);
    report
}

/// What checking a crash state needs of the run.
pub(super) struct Checker<'a> {
    spans: Vec<Span>,
    /// The journal's synced length at each point.
    synced: Vec<u64>,
    model: CrashModel<Row>,
    pub(super) jopts: JournalOptions,
    pub(super) opts: &'a CrashOptions,
}

impl Checker<'_> {
    fn check(
        &self,
        report: &mut CrashReport,
        point: CrashPoint,
        image: BTreeMap<String, Vec<u8>>,
    ) -> ControlFlow<()> {
        report.states_checked += 1;
        self.check_image(
            report,
            point,
            self.synced[point.event],
            image,
            1,
            point.event,
        );
        ControlFlow::Continue(())
    }

    /// Checks one state the `depth`th crash left (at event `at` of its log) against the window
    /// of the first crash, at `first`; `synced` is the journal's durable length there.
    pub(super) fn check_image(
        &self,
        report: &mut CrashReport,
        first: CrashPoint,
        synced: u64,
        image: BTreeMap<String, Vec<u8>>,
        depth: u8,
        at: usize,
    ) {
        let (window, op_index) = window_of(&self.spans, first);
        if let Err((bug_id, description)) =
            check_state(image, window, synced, &self.model, &self.jopts)
        {
            let description = if depth == 1 {
                description
            } else {
                format!("crash {depth}, inside recovery at its disk event {at}: {description}")
            };
            let failure = CrashFailure {
                bug_id,
                write_index: first.event,
                cut_at: first.cut_bytes,
                lose_unsynced: first.lose_unsynced,
                op_index,
                depth,
                description,
            };
            record(report, self.opts, failure);
        }
    }
}

/// The journal's synced length after each prefix of `events` (index `k`: after `..k`).
pub(super) fn synced_lengths(events: &[DiskEvent]) -> Vec<u64> {
    let (mut current, mut synced) = (0u64, 0u64);
    let mut out = vec![0];
    for e in events {
        match e {
            DiskEvent::Append { file, bytes, .. } if file == JOURNAL => {
                current += bytes.len() as u64
            }
            DiskEvent::Truncate { file, len } if file == JOURNAL => {
                current = *len;
                synced = synced.min(*len);
            }
            DiskEvent::Sync { file } if file == JOURNAL => synced = current,
            _ => {}
        }
        out.push(synced);
    }
    out
}

pub(super) type Run = (Arc<SimDisk>, CrashModel<Row>, Vec<Span>);

/// Runs `ops` mutations (the cycle of [`next_op`] from `first`) on a fresh logging disk,
/// checking each against the model as it goes.
pub(super) fn run_workload(
    ops: usize,
    first: usize,
    jopts: &JournalOptions,
) -> Result<Run, (BugId, String)> {
    let disk = Arc::new(SimDisk::new(SimDiskOptions {
        log_events: true,
        ..SimDiskOptions::default()
    }));
    let (model, spans) = run_ops(disk.clone(), ops, first, jopts, &|| disk.event_count())?;
    Ok((disk, model, spans))
}

/// Runs `ops` mutations (the cycle of [`next_op`] from `first`) on `storage`, checking each
/// against the model as it goes; `position` is the length of the storage's log, so each
/// operation's span says which logged calls it made.
pub(super) fn run_ops(
    storage: SharedStorage,
    ops: usize,
    first: usize,
    jopts: &JournalOptions,
    position: &dyn Fn() -> usize,
) -> Result<(CrashModel<Row>, Vec<Span>), (BugId, String)> {
    let mut journal = Journal::create(storage, JOURNAL, jopts.clone(), None)
        .map_err(|e| (BugId::J10, format!("creating the journal failed: {e}")))?;
    let mut model: CrashModel<Row> = CrashModel::new(ModelHistory::new());
    let spans = (0..ops)
        .map(|i| run_one(&mut journal, first + i, i, &mut model, position))
        .collect::<Result<Vec<Span>, _>>()?;
    Ok((model, spans))
}

/// Runs the `cycle`th operation of the cycle of [`next_op`] (the workload's `i`th) on
/// `journal`, checked against `model`, which issues it and makes it durable.
pub(super) fn run_one(
    journal: &mut Journal,
    cycle: usize,
    i: usize,
    model: &mut CrashModel<Row>,
    position: &dyn Fn() -> usize,
) -> Result<Span, (BugId, String)> {
    let origin = Origin::Main;
    let op = next_op(cycle, model.latest(), &origin);
    let start = position();
    let receipt = op.run(journal, &origin).map_err(|e| {
        (
            BugId::J10,
            format!("workload op {i} ({}) failed: {e}", op.kind()),
        )
    })?;
    op.check_one_record(i, &receipt)
        .map_err(|e| (BugId::J15, format!("workload {e}")))?;
    let state = model
        .issue(&op.model_op())
        .map_err(|e| (BugId::J10, format!("model refused op {i}: {e}")))?;
    let shown = model_view(journal.fold());
    if &shown != model.latest() {
        return Err((
            BugId::J10,
            format!(
                "after op {i} ({}) the writer holds {} but the model {}",
                op.kind(),
                describe(&shown),
                describe(model.latest())
            ),
        ));
    }
    model.make_durable(state);
    Ok(Span {
        start,
        end: position(),
        state,
        atomic: op.atomic_with(&receipt),
    })
}

/// The model states a crash at `point` may show, and the operation it interrupted.
pub(super) fn window_of(spans: &[Span], point: CrashPoint) -> (Window, Option<usize>) {
    let happened = point.event;
    let durable = spans
        .iter()
        .rev()
        .find(|s| s.end <= happened)
        .map_or(0, |s| s.state);
    let issued = spans
        .iter()
        .rev()
        .find(|s| s.start <= happened)
        .map_or(0, |s| s.state);
    let in_progress = spans
        .iter()
        .position(|s| s.start <= happened && happened < s.end);
    let window = Window {
        durable,
        issued: issued.max(durable),
        in_non_atomic_op: in_progress.is_some_and(|i| !spans[i].atomic),
    };
    (window, in_progress)
}

pub(super) fn record(report: &mut CrashReport, opts: &CrashOptions, failure: CrashFailure) {
    report.states_failed += 1;
    let mut by_id: BTreeMap<BugId, u64> = report.failed_by_id.iter().copied().collect();
    *by_id.entry(failure.bug_id).or_insert(0) += 1;
    report.failed_by_id = by_id.into_iter().collect();
    if report.failures.len() < opts.failures_kept {
        report.failures.push(failure);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn under(persistence: Persistence, planted: history::Planted) -> CrashReport {
        explore(&CrashOptions {
            persistence,
            planted,
            crash_depth: 1,
            ..CrashOptions::default()
        })
    }

    #[test]
    fn a_clean_journal_survives_every_crash_state_of_every_model() {
        for p in Persistence::ALL {
            let report = under(p, history::Planted::none());
            assert!(report.mutations >= 6, "{}", report.summary());
            // The workload's records are small: a sync span holds a sector or two, so the
            // per-file models have far fewer states than every byte cut of the log.
            let least = if p == Persistence::Prefix { 1_000 } else { 40 };
            assert!(report.states_checked > least, "{}", report.summary());
            assert!(report.space >= u128::from(report.states_checked));
            assert_eq!(report.states_failed, 0, "{p}: {:#?}", report.failures);
        }
    }

    #[test]
    fn reorder_allows_more_states_than_ext4_ordered() {
        let ext4 = under(Persistence::Ext4Ordered, history::Planted::none());
        let reorder = under(Persistence::Reorder, history::Planted::none());
        assert!(
            ext4.space < reorder.space,
            "{} / {}",
            ext4.summary(),
            reorder.summary()
        );
    }

    #[test]
    fn block_cuts_check_fewer_states() {
        let bytes = explore(&CrashOptions {
            ops: 6,
            persistence: Persistence::Prefix,
            crash_depth: 1,
            ..CrashOptions::default()
        });
        let blocks = explore(&CrashOptions {
            ops: 6,
            cut_step_bytes: 64,
            persistence: Persistence::Prefix,
            crash_depth: 1,
            ..CrashOptions::default()
        });
        assert!(blocks.states_checked < bytes.states_checked);
        assert_eq!(blocks.states_failed, 0, "{:#?}", blocks.failures);
    }

    fn planted_report(p: Persistence, id: BugId) -> CrashReport {
        under(p, history::Planted::only(id))
    }

    #[test]
    fn planted_j1_j2_j10_are_found_and_named_under_prefix_and_reorder() {
        // J10's planted reader skips corrupt records; only byte cuts of several records make
        // one before the tail, and the writer's barrier (J19) keeps reorder from making one.
        let cases = [
            (Persistence::Prefix, BugId::J1),
            (Persistence::Prefix, BugId::J2),
            (Persistence::Prefix, BugId::J10),
            (Persistence::Reorder, BugId::J1),
            (Persistence::Reorder, BugId::J2),
        ];
        for (p, id) in cases {
            {
                let report = planted_report(p, id);
                assert!(report.names(id), "{p} {id}: {}", report.summary());
                assert!(
                    report.failures.iter().all(|f| f.bug_id == id),
                    "{p} {id}: {:#?}",
                    report.failures
                );
            }
        }
    }

    #[test]
    fn planted_j15_is_found_and_named() {
        let report = planted_report(Persistence::Prefix, BugId::J15);
        assert!(report.names(BugId::J15), "{}", report.summary());
    }

    #[test]
    fn planted_j19_is_found_only_where_writes_reorder() {
        let report = planted_report(Persistence::Reorder, BugId::J19);
        assert!(report.names(BugId::J19), "{}", report.summary());
        assert!(
            report.failures.iter().all(|f| f.bug_id == BugId::J19),
            "{:#?}",
            report.failures
        );
        for p in [Persistence::Prefix, Persistence::Ext4Ordered] {
            let report = planted_report(p, BugId::J19);
            assert_eq!(report.states_failed, 0, "{p}: {:#?}", report.failures);
        }
    }
}
