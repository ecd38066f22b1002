//! The writers a thread deletion fences (R28): a late commit of a run's last batch, admitted
//! before the run's thread was deleted and committed after it (`put_batch` of one
//! `workspace_changes` row, on both backends), and the gate every write of a run its thread's
//! deletion removed passes first. A system that does not declare `thread_fence` in `hello`
//! (docs/sut-protocol.md: it keeps no fence, as DeerFlow's published stores) has those writes
//! left out, counted and traced, instead of failing a rule it never claimed.

use super::client::Client;
use super::state::*;
use crate::runs::observations::Observation;
use crate::runs::record::*;
use history::runs::{current, Category, THREAD_FENCE};
use serde_json::json;

/// Whether a deletion of run `r`'s thread came after the run started: a write of the run now
/// carries a run the deletion removed (when it had rows then).
pub(in crate::runs) fn thread_deleted_since_start(world: &World, r: usize) -> bool {
    let log = world.log.borrow();
    let started = (log.truth().iter())
        .find(|(_, run, e)| *run == r && matches!(e, TruthEvent::Start))
        .map(|(op, _, _)| *op);
    let thread = &world.scenario.runs[r].thread;
    started.is_some_and(|started| {
        (log.thread_deletions().iter()).any(|d| d.thread == *thread && d.op > started)
    })
}

/// Whether run `r` held a row of its thread when a deletion of the thread came (a row the
/// store acknowledged before it, not deleted with the run since): only then did the deletion
/// remove the run, and only then is a late write of it one of the deleted thread's. A run that
/// wrote nothing before (every write failed, or it was killed first) or was deleted on its own
/// has no late write: its batch would be the thread's new era, which no rule expects of it.
fn held_a_row_at_a_deletion(world: &World, r: usize) -> bool {
    let log = world.log.borrow();
    let (run, tid) = (
        &world.scenario.runs[r].id,
        world.thread_id(&world.scenario.runs[r].thread),
    );
    let deleted_since = |w_op: u64, d_op: u64| {
        (log.deletions().iter())
            .any(|x| x.run_id == *run && x.thread_id == tid && w_op < x.op && x.op < d_op)
    };
    (log.thread_deletions().iter().filter(|d| d.thread_id == tid)).any(|d| {
        (log.written().iter()).any(|w| {
            w.event.run_id == *run
                && w.event.thread_id == tid
                && w.op < d.op
                && !deleted_since(w.op, d.op)
        })
    })
}

impl Client {
    /// Whether a write of run `r` (`kind`, e.g. `receipts`) may be sent: always, unless its
    /// thread was deleted since it started and the system keeps no fence (left out, counted).
    pub(in crate::runs) fn fence_served(world: &World, kind: &str, r: usize) -> bool {
        if world.serves(THREAD_FENCE) || !thread_deleted_since_start(world, r) {
            return true;
        }
        let run = &world.scenario.runs[r].id;
        world.record(format_args!("{kind} of {run} left out: no {THREAD_FENCE}"));
        world.observe(Observation::LeftOut(format!(
            "the client's {kind} after a thread deletion (the system does not serve {THREAD_FENCE})"
        )));
        false
    }

    /// The late commit of run `run`'s last batch, after its thread's deletion.
    pub(in crate::runs) fn late_write(&mut self, world: &World, run: &str) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        if !thread_deleted_since_start(world, r) || !held_a_row_at_a_deletion(world, r) {
            // Its thread's deletion was left out (counted there), or removed nothing of the
            // run: no late commit of the deleted thread either.
            world.record(format_args!(
                "late write of {run} not made: no deletion of its thread removed a row of it"
            ));
            return;
        }
        if !Client::served(world, "late writes", run, &["put_batch"])
            || !Client::fence_served(world, "late writes", r)
        {
            return;
        }
        let event = super::store_calls::client_event(
            world,
            r,
            current::WORKSPACE_CHANGES,
            Category::Workspace,
            json!({ "late": true }),
        );
        let answer = world.both(|s| s.put_batch(vec![event.clone()]));
        let op = world.next_op();
        let at_us = super::state::now_us();
        world.record(format_args!(
            "late write {run}: {:?}",
            answer.primary(world.primary)
        ));
        // Only a store without the fence takes it: a row like any acknowledged one.
        let rows = |seqs: &Answer<Vec<u64>>| -> Vec<_> {
            let seqs = seqs.iter().flatten();
            seqs.map(|&seq| event.clone().with_seq(seq)).collect()
        };
        world.observe_stored(
            (op, at_us),
            rows(answer.primary(world.primary)),
            rows(&answer.sqlite),
        );
        world.observe(Observation::LateWrite(LateWriteRecord {
            op,
            at_us,
            run: r,
            event,
            answer,
        }));
    }
}
