//! The client's thread deletion: `delete_by_thread` of a thread whose runs have all stopped, on
//! both backends, and the reads right after that say whether the thread reads empty everywhere
//! (its numbering, its messages and their count, every run's events). Recorded for the checker
//! (`thread_rules`); a system under test that does not serve one of these ops has the deletion
//! left out, counted and traced.

use super::client::Client;
use super::state::*;
use crate::runs::feedback_record::FeedbackEntry;
use crate::runs::observations::Observation;
use crate::runs::record::*;
use history::runs::{
    thread_history, MessageCursor, RunEvent, RunEventStore, RunStoreError, ThreadDeleted,
    ThreadRecords, UserScope,
};

/// The ops a thread deletion needs: the deletion and the reads after it.
pub const DELETE_THREAD_OPS: [&str; 5] = [
    "delete_by_thread",
    "max_seq",
    "count_messages",
    "list_messages",
    "list_events",
];
const WHOLE_THREAD: usize = WHOLE_READ;

/// `list_events` of each run in `run_ids`, one after another.
fn events_of_runs(
    store: &dyn RunEventStore,
    thread_id: &str,
    run_ids: &[String],
) -> Result<Vec<RunEvent>, RunStoreError> {
    let mut rows = Vec::new();
    for run_id in run_ids {
        rows.extend(store.list_events(thread_id, run_id)?);
    }
    Ok(rows)
}

impl Client {
    /// Deletes every row of the thread (with `everywhere`, through the API's deletion, which
    /// also deletes its feedback and checkpoints), then reads what is left of it.
    pub(in crate::runs) fn delete_thread(&mut self, world: &World, thread: &str, everywhere: bool) {
        for op in DELETE_THREAD_OPS {
            if !Client::serves_read(world, "thread deletions", thread, op) {
                return;
            }
        }
        let tid = world.thread_id(thread);
        let runs: Vec<usize> = (0..world.scenario.runs.len())
            .filter(|&r| world.scenario.runs[r].thread == thread)
            .collect();
        let run_ids: Vec<String> = runs
            .iter()
            .map(|&r| world.scenario.runs[r].id.clone())
            .collect();
        let (deleted, op) = if everywhere {
            self.delete_everywhere(world, thread, &tid)
        } else {
            let deleted = world.both(|s| s.delete_by_thread(&tid, &UserScope::All));
            (deleted, world.next_op())
        };
        if let Some(&r) = runs.first() {
            // The truth event names the thread by one of its runs.
            world.observe(Observation::Truth {
                op,
                run: r,
                event: TruthEvent::ThreadDeleted,
            });
        }
        let max_seq_after = world.both(|s| s.max_seq(&tid));
        let count_after = world.both(|s| s.count_messages(&tid));
        let messages_after =
            world.both(|s| s.list_messages(&tid, WHOLE_THREAD, MessageCursor::None));
        let events_after = world.both(|s| events_of_runs(s, &tid, &run_ids));
        world.record(format_args!(
            "delete thread {thread}: deleted {:?} max_seq {:?} count {:?}",
            deleted.primary(world.primary),
            max_seq_after.primary(world.primary),
            count_after.primary(world.primary)
        ));
        world.observe(Observation::ThreadDeletion(ThreadDeletionRecord {
            op,
            at_us: super::state::now_us(),
            thread: thread.to_string(),
            thread_id: tid,
            answers: DeletionAnswers {
                deleted,
                max_seq_after,
                events_after,
                messages_after,
            },
            count_after,
        }));
    }

    /// The API's deletion of the thread through each backend (its feedback and checkpoints go
    /// with the first), then `/history` and the thread's feedback read back; the store's part
    /// of its answer (the rows deleted) and the op it took.
    fn delete_everywhere(
        &self,
        world: &World,
        thread: &str,
        tid: &str,
    ) -> (Both<Answer<u64>>, u64) {
        let records = ThreadRecords {
            checkpointer: &world.checkpointer,
            feedback: &world.feedback,
            planted: world.planted,
        };
        let deleted = world.both(|s| records.delete_thread(s, tid));
        let op = world.next_op();
        let at_us = super::state::now_us();
        world.observe(Observation::Feedback(FeedbackEntry::ThreadDeleted {
            thread_id: tid.to_string(),
        }));
        let options = world.view_options();
        let history_after = world.both(|s| thread_history(s, &world.checkpointer, tid, &options));
        let feedback_after = world.feedback.list_thread(tid);
        let checkpoint_after = world.checkpointer.latest(tid).is_some();
        let rows = Both::new(
            deleted.memory.clone().map(|d| d.rows),
            deleted.sqlite.clone().map(|d| d.rows),
        );
        // The feedback and checkpoints go with the first call: the trace names what both calls
        // removed of them, the same whichever store the client reads.
        let removed = |d: &Answer<ThreadDeleted>| {
            d.as_ref()
                .map_or((0, false), |d| (d.feedback, d.checkpoint))
        };
        let (memory, sqlite) = (removed(&deleted.memory), removed(&deleted.sqlite));
        world.record(format_args!(
            "delete thread {thread} everywhere: rows {:?} feedback {} checkpoint {} history {:016x} feedback left {} checkpoint left {checkpoint_after}",
            rows.primary(world.primary),
            memory.0 + sqlite.0,
            memory.1 || sqlite.1,
            hash_of(history_after.primary(world.primary)),
            feedback_after.len()
        ));
        world.observe(Observation::EverywhereDeletion(EverywhereDeletionRecord {
            op,
            at_us,
            thread: thread.to_string(),
            thread_id: tid.to_string(),
            deleted,
            history_after,
            feedback_after,
            checkpoint_after,
        }));
        (rows, op)
    }
}
