//! What a session host does for each operation of its script, and what it records of it.
//!
//! Injected faults (EIO on a journal's appends, a failing mirror, a failing disposal) are set on
//! the disk just around the operation they belong to. A replacement writes its row groups with
//! pauses between them, each pause a point a crash can hit.

use super::meaning::{
    density_positions, insert_after, journal_file, mirror_file, origin_of, rewind_rows,
    rewrite_row, row, rows, transformed,
};
use super::process::{reopen_shared, Process};
use super::record::{
    AttachSeen, CopySeen, DisposeSeen, Happened, MirrorSeen, Outcome, ReadSeen, ResumeAgainSeen,
    Seen, SendSeen, SharedSeen, SoloSeen, SwitchSeen,
};
use super::scenario::{solo_mutation, Action, DisposeFault, Op, SharedAction};
use super::state::{read_rows, sleep_ms, written, Point, Slot, World};
use crate::compression::compression;
use crate::disk::SimDisk;
use crate::journal::crash::classify_image;
use history::journal::{
    clone_journal, fork_journal, plan_truncation, CountsReads, DensityReplacement, FaultOp,
    Journal, JournalError, JournalReader, Origin, Row, SharedHistory, Storage, TruncationOptions,
};
use std::time::Duration;

/// Plays operation `k` of the session's script and records what it returned.
pub(super) async fn run_op(world: &World, proc: &mut Process, k: usize, op: &Op) {
    let s = proc.s;
    let seen = match &op.action {
        solo_mutation!() => solo_mutation(world, proc, k, op).await,
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
        Seen::Solo(o) => format!(
            "{} rows={} read={}",
            outcome(&o.outcome),
            o.rows.len(),
            o.bytes_read
        ),
        Seen::Shared(o) => format!(
            "resolve {} rows={} read={}",
            outcome(&o.outcome),
            o.primary.len(),
            o.bytes_read
        ),
        Seen::Read(r) => format!(
            "rows={:?} read={} appended={}",
            r.result.as_ref().map(|s| s.rows).ok(),
            r.bytes_read,
            r.appended
        ),
        Seen::Estimate { counts } => format!("counts={counts:?}"),
        Seen::Send(r) => format!("rows={} visited={}", r.rows, r.rows_visited),
        Seen::Copy(r) => format!("{} ok={}", r.journal, r.result.is_ok()),
        Seen::Switch(r) => format!("{} ok={}", r.to, r.result.is_ok()),
        Seen::ResumeAgain(r) => format!("bytes {}->{}", r.bytes_before, r.bytes_after),
        Seen::AttachMirror(r) => format!("ok={}", r.result.is_ok()),
        Seen::SharedResume(r) => format!("ok={}", r.resumed.is_ok()),
        Seen::Dispose(r) => format!("ok={}", r.result.is_ok()),
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
    Seen::Solo(SoloSeen {
        journal: name,
        outcome,
        bytes_read,
        rows: proc.rows(),
    })
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
    Seen::Read(ReadSeen {
        result,
        bytes_read,
        appended,
        writer: proc.journal().map(|j| j.fold().statistics()),
    })
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
    Seen::Send(SendSeen {
        rows: rows.len(),
        rows_visited: plan.rows_visited,
        replacements: plan.replacements.len(),
        staged,
    })
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
    Seen::Copy(CopySeen {
        source,
        journal: file.clone(),
        checkpoint,
        result,
        open_txn,
        facts: classify_image(&proc.disk.bytes(&file)),
        rows,
    })
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
    Seen::Switch(SwitchSeen {
        previous,
        to: file,
        loaded,
        result,
        recording: proc.journal().map(|j| j.name().to_string()),
        rows: proc.rows(),
        arrivals,
    })
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
    Seen::ResumeAgain(ResumeAgainSeen {
        result,
        bytes_before,
        bytes_after: size(&proc.disk),
        rows_before,
        rows_after: proc.rows(),
    })
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
    Seen::Shared(SharedSeen {
        outcome,
        bytes_read,
        primary,
        mirrors,
    })
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
        return Seen::AttachMirror(AttachSeen {
            result: Ok(()),
            mirror: None,
        });
    }
    let mut cell = proc.shared.borrow_mut();
    let Some(h) = cell.as_mut() else {
        return Seen::AttachMirror(AttachSeen {
            result: Err("the session has no shared history".into()),
            mirror: None,
        });
    };
    match h.attach_mirror(origin.clone(), &mirror_file(&origin)) {
        Ok(()) => {
            slot.attached.borrow_mut().push(origin.clone());
            Seen::AttachMirror(AttachSeen {
                result: Ok(()),
                mirror: Some(mirror_seen(h, &proc.disk, &origin)),
            })
        }
        Err(e) => Seen::AttachMirror(AttachSeen {
            result: Err(e.to_string()),
            mirror: None,
        }),
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
    Seen::Dispose(DisposeSeen {
        fault_injected: fault.is_some(),
        result,
        scratch_left: proc.disk.list(&area).unwrap_or_default(),
    })
}
