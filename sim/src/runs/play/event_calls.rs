//! The client's filtered reads of run events: one run's events through a `list_events` filter,
//! paged with `after_seq` cursors (R17), and the last visible AI message of a thread's runs
//! (R18). Each goes to both backends and is recorded for [`crate::runs::check::event_rules`]; a system
//! under test that does not serve one has it left out, counted and traced.

use super::client::Client;
use super::state::*;
use crate::runs::observations::Observation;
use crate::runs::record::*;
use history::runs::{
    EventFilter, MessageCursor, RunEvent, RunEventStore, RunStoreError, UserScope,
};
use std::collections::BTreeSet;

pub const LIST_EVENTS_FILTERED: &str = "list_events_filtered";
pub const LAST_VISIBLE_AI: &str = "get_last_visible_ai_seq_by_run";
/// The run id no run of a scenario has (`run-` ids are generated, hand-written ids are checked
/// against it by the rule, which expects no answer for it either way).
pub const NO_SUCH_RUN: &str = "no-such-run";

/// The pages a client reads by paging one run's events through `filter` with `after_seq`
/// cursors, `filter.limit` a page, until a page comes back short or the cursor stops moving
/// (at most `PAGES_MAX` pages).
pub(crate) fn filtered_pages(
    store: &dyn RunEventStore,
    thread_id: &str,
    run_id: &str,
    filter: &EventFilter,
) -> Result<Vec<Vec<RunEvent>>, RunStoreError> {
    let mut pages: Vec<Vec<RunEvent>> = Vec::new();
    let mut cursor = EventFilter {
        after_seq: None,
        ..filter.clone()
    };
    for _ in 0..PAGES_MAX {
        let page = store.list_events_filtered(thread_id, run_id, &cursor, &UserScope::All)?;
        let full = page.len() >= filter.limit;
        let next = page.last().map(|e| e.seq);
        pages.push(page);
        match next {
            Some(n) if full && Some(n) != cursor.after_seq => cursor.after_seq = Some(n),
            _ => break,
        }
    }
    Ok(pages)
}

impl Client {
    /// Whether the pair serves `op`; if not, the read (`kind`, on `what`) is left out, counted
    /// by kind and missing op, and traced.
    pub(in crate::runs) fn serves_read(world: &World, kind: &str, what: &str, op: &str) -> bool {
        if world.serves(op) {
            return true;
        }
        world.record(format_args!("{kind} of {what} left out: no {op}"));
        world.observe(Observation::LeftOut(format!(
            "the client's {kind} (the system does not serve {op})"
        )));
        false
    }

    /// One run's events through a filter, paged with `after_seq`, on both backends.
    pub(in crate::runs) fn filtered_events(
        &self,
        world: &World,
        run: &str,
        event_types: Option<Vec<String>>,
        task: Option<String>,
        limit: usize,
    ) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        if !Client::serves_read(world, "filtered event reads", run, LIST_EVENTS_FILTERED) {
            return;
        }
        let spec = &world.scenario.runs[r];
        let tid = world.thread_id(&spec.thread);
        let filter = EventFilter {
            event_types,
            task_id: task,
            after_seq: None,
            limit,
        };
        let op = world.next_op();
        let pages = world.both(|s| filtered_pages(s, &tid, &spec.id, &filter));
        world.record(format_args!(
            "filtered events {run} types={:?} task={:?} limit={limit} {}",
            filter.event_types,
            filter.task_id,
            world.rows_words(&pages)
        ));
        let kind = ReadKind::FilteredEvents {
            run: r,
            filter,
            pages,
        };
        self.push_read(world, op, &spec.thread, kind);
    }

    /// The last visible AI message of every run of the thread and of a run id nobody has, with
    /// the thread's message rows at the same instant (to tell which message a seq is).
    pub(in crate::runs) fn last_answers(&self, world: &World, thread: &str) {
        if !Client::serves_read(world, "last-answer reads", thread, LAST_VISIBLE_AI) {
            return;
        }
        let tid = world.thread_id(thread);
        let mut run_ids: BTreeSet<String> = world.scenario.run_ids_on(thread).collect();
        run_ids.insert(NO_SUCH_RUN.to_string());
        let op = world.next_op();
        let answer =
            world.both(|s| s.get_last_visible_ai_seq_by_run(&tid, &run_ids, &UserScope::All));
        let messages = world.both(|s| s.list_messages(&tid, WHOLE_READ, MessageCursor::None));
        world.record(format_args!(
            "last answers {thread}: {:?} agree={}",
            answer.primary(world.primary),
            answer.agree()
        ));
        let kind = ReadKind::LastAnswers {
            run_ids,
            answer,
            messages,
        };
        self.push_read(world, op, thread, kind);
    }
}
