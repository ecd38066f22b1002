//! The client's calls of the store's wider API (the operations DeerFlow's store has beyond the
//! seed's): deleting a run, writing a run's receipt once (`put_if_absent`), and paging one run's
//! messages. Each goes to both backends and is recorded for the checkers (`store_rules`); a
//! system under test that does not serve one has it left out, counted and traced.

use super::client::{page_through, Client};
use super::state::*;
use crate::runs::observations::Observation;
use crate::runs::record::*;
use history::runs::{
    current, Category, MessageCursor, NewRunEvent, RunEvent, RunEventStore, RunStoreError,
    UserScope,
};
use serde_json::json;

/// The ops a deletion needs: the deletion and the reads around it.
pub const DELETE_OPS: [&str; 4] = [
    "delete_by_run",
    "max_seq",
    "list_events",
    "list_messages_by_run",
];
pub const PUT_IF_ABSENT: &str = "put_if_absent";
pub const LIST_MESSAGES_BY_RUN: &str = "list_messages_by_run";

/// A row the client writes for run `r` itself (a receipt, a late write): the run's ids from
/// its script, stamped now.
pub(in crate::runs) fn client_event(
    world: &World,
    r: usize,
    event_type: &str,
    category: Category,
    content: serde_json::Value,
) -> NewRunEvent {
    let spec = &world.scenario.runs[r];
    NewRunEvent {
        thread_id: world.thread_id(&spec.thread),
        run_id: spec.id.clone(),
        user_id: spec.user.clone(),
        event_type: event_type.to_string(),
        category,
        content: content.into(),
        metadata: json!({}),
        created_at_ns: now_ns(),
    }
}

/// Every message of one run by paging `list_messages_by_run` (forward with `after`, backward
/// with `before`), the pages in the order they were read.
pub(crate) fn run_pages(
    store: &dyn RunEventStore,
    thread_id: &str,
    run_id: &str,
    limit: usize,
    backward: bool,
) -> Result<Vec<Vec<RunEvent>>, RunStoreError> {
    page_through(limit, backward, |cursor| {
        store.list_messages_by_run(thread_id, run_id, limit, cursor, &UserScope::All)
    })
}

impl Client {
    /// Whether the pair serves `ops`; if not, the call (`kind`, e.g. `deletions`, on `run`) is
    /// left out, counted by kind and missing op, and traced.
    pub(in crate::runs) fn served(world: &World, kind: &str, run: &str, ops: &[&str]) -> bool {
        if let Some(op) = ops.iter().find(|op| !world.serves(op)) {
            world.record(format_args!("{kind} of {run} left out: no {op}"));
            world.observe(Observation::LeftOut(format!(
                "the client's {kind} (the system does not serve {op})"
            )));
            return false;
        }
        true
    }

    /// Deletes one stopped run's rows, reading the numbering before and after and the run's
    /// rows after.
    pub(in crate::runs) fn delete_run(&mut self, world: &World, run: &str) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        if !Client::served(world, "deletions", run, &DELETE_OPS) {
            return;
        }
        let spec = &world.scenario.runs[r];
        let tid = world.thread_id(&spec.thread);
        let max_seq_before = world.both(|s| s.max_seq(&tid));
        let deleted = world.both(|s| s.delete_by_run(&tid, &spec.id, &UserScope::All));
        let op = world.next_op();
        world.observe(Observation::Truth {
            op,
            run: r,
            event: TruthEvent::Deleted,
        });
        let max_seq_after = world.both(|s| s.max_seq(&tid));
        let events_after = world.both(|s| s.list_events(&tid, &spec.id));
        let messages_after = world.both(|s| {
            s.list_messages_by_run(
                &tid,
                &spec.id,
                WHOLE_READ,
                MessageCursor::None,
                &UserScope::All,
            )
        });
        world.record(format_args!(
            "delete {run}: deleted {:?} max_seq {:?} -> {:?}",
            deleted.primary(world.primary),
            max_seq_before.primary(world.primary),
            max_seq_after.primary(world.primary)
        ));
        world.observe(Observation::Deletion(DeletionRecord {
            op,
            at_us: super::state::now_us(),
            run: r,
            run_id: spec.id.clone(),
            thread_id: tid,
            max_seq_before,
            answers: DeletionAnswers {
                deleted,
                max_seq_after,
                events_after,
                messages_after,
            },
        }));
    }

    /// Writes the run's delivery receipt unless it is there; a row written is recorded as
    /// every accepted write is.
    pub(in crate::runs) fn receipt(&mut self, world: &World, run: &str, attempt: u32) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        if !Client::served(world, "receipts", run, &[PUT_IF_ABSENT])
            || !Client::fence_served(world, "receipts", r)
        {
            return;
        }
        let event = client_event(
            world,
            r,
            current::RUN_DELIVERY,
            Category::Outputs,
            json!({ "attempt": attempt }),
        );
        let answer = world.both(|s| s.put_if_absent(event.clone()));
        let op = world.next_op();
        let created = |a: &Answer<(RunEvent, bool)>| match a {
            Ok((row, true)) => Some(row.clone()),
            _ => None,
        };
        let at_us = super::state::now_us();
        if !answer.agree() {
            world.observe(Observation::WriteDisagreement(receipt_disagreement(
                op,
                at_us,
                world.first_slot,
                &answer,
            )));
        }
        world.observe_stored(
            (op, at_us),
            created(answer.primary(world.primary)),
            created(&answer.sqlite),
        );
        world.record(format_args!(
            "receipt {run} attempt {attempt}: {:?}",
            answer
                .primary(world.primary)
                .as_ref()
                .map(|(row, c)| (row.seq, *c))
        ));
        world.observe(Observation::Receipt(ReceiptRecord {
            op,
            at_us,
            run: r,
            event,
            answer,
        }));
    }

    /// Every message of one run, paged through `list_messages_by_run` on both backends.
    pub(in crate::runs) fn run_messages(
        &self,
        world: &World,
        run: &str,
        limit: usize,
        backward: bool,
    ) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        if !Client::served(world, "per-run pages", run, &[LIST_MESSAGES_BY_RUN]) {
            return;
        }
        let spec = &world.scenario.runs[r];
        let tid = world.thread_id(&spec.thread);
        let op = world.next_op();
        let pages = world.both(|s| run_pages(s, &tid, &spec.id, limit, backward));
        world.record(format_args!(
            "run messages {run} limit={limit} backward={backward} {}",
            world.rows_words(&pages)
        ));
        let kind = ReadKind::RunMessages {
            run: r,
            limit,
            backward,
            pages,
        };
        self.push_read(world, op, &spec.thread, kind);
    }
}

/// The two stores' different answers to a receipt's `put_if_absent`, in words.
fn receipt_disagreement(
    op: u64,
    at_us: u64,
    first_slot: &'static str,
    answer: &Both<Answer<(RunEvent, bool)>>,
) -> WriteDisagreement {
    let words = |a: &Answer<(RunEvent, bool)>| match a {
        Ok((row, true)) => format!("stored as seq {}", row.seq),
        Ok((row, false)) => format!("already stored as seq {}", row.seq),
        Err(e) => format!("error: {e}"),
    };
    WriteDisagreement {
        op,
        at_us,
        call: "put_if_absent (a run receipt)".into(),
        first_slot,
        first: words(&answer.memory),
        sqlite: words(&answer.sqlite),
    }
}
