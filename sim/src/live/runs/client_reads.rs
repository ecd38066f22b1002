//! The client's reads of the scenario beyond the views, on the one shared store, with the
//! calls the runs world's client makes (its own paging loops): a raw page, paging through a
//! thread, a run's events, a run's messages page by page, a run's events through a filter, a
//! thread's messages in one user's scope or in a run's default scope, the last visible AI
//! message of a thread's runs. Each answer fills both slots of the world's pair (one store).

use crate::runs::play::{
    filtered_pages, page_cursor, paginate, run_pages, text_of, NO_SUCH_RUN, WHOLE_READ,
};
use crate::runs::record::{Answer, Both, ReadKind};
use crate::runs::scenario::{Op, RunsScenario};
use history::runs::{EventFilter, MessageCursor, RunEventStore, RunStoreError, UserScope};
use std::collections::BTreeSet;

/// One store's answer in both slots.
fn one<T: Clone + PartialEq>(answer: Result<T, RunStoreError>) -> Both<Answer<T>> {
    let answer = text_of(answer);
    Both::new(answer.clone(), answer)
}

/// Whether live mode's client plays `op` as a read (`read` answers it).
pub fn is_read(op: &Op) -> bool {
    matches!(
        op,
        Op::Page { .. }
            | Op::Paginate { .. }
            | Op::Events { .. }
            | Op::RunMessages { .. }
            | Op::FilteredEvents { .. }
            | Op::UserMessages { .. }
            | Op::DefaultScopeMessages { .. }
            | Op::LastAnswers { .. }
    )
}

/// The thread key read op `op` reads.
pub fn thread_of(scenario: &RunsScenario, op: &Op) -> Option<String> {
    let of_run = |run: &str| {
        scenario
            .run_index(run)
            .map(|r| scenario.runs[r].thread.clone())
    };
    match op {
        Op::Page { thread, .. }
        | Op::Paginate { thread, .. }
        | Op::UserMessages { thread, .. }
        | Op::DefaultScopeMessages { thread, .. }
        | Op::LastAnswers { thread } => Some(thread.clone()),
        Op::Events { run } | Op::RunMessages { run, .. } | Op::FilteredEvents { run, .. } => {
            of_run(run)
        }
        _ => None,
    }
}

/// The answers of read op `op` on `store`; `None` for another op or a run the scenario does
/// not have.
pub fn read(scenario: &RunsScenario, store: &dyn RunEventStore, op: &Op) -> Option<ReadKind> {
    debug_assert!(is_read(op));
    let kind = match op {
        Op::Events { run } | Op::RunMessages { run, .. } | Op::FilteredEvents { run, .. } => {
            let r = scenario.run_index(run)?;
            run_read(scenario, store, r, op)
        }
        Op::DefaultScopeMessages { run, .. } if scenario.run_index(run).is_none() => return None,
        _ => {
            let thread = thread_of(scenario, op)?;
            let tid = scenario.threads.get(&thread).cloned().unwrap_or_default();
            thread_read(scenario, store, &tid, op)
        }
    };
    Some(kind)
}

/// A read of one run's (`r`) rows.
fn run_read(scenario: &RunsScenario, store: &dyn RunEventStore, r: usize, op: &Op) -> ReadKind {
    let spec = &scenario.runs[r];
    let tid = scenario
        .threads
        .get(&spec.thread)
        .cloned()
        .unwrap_or_default();
    match op {
        Op::RunMessages {
            limit, backward, ..
        } => {
            let (limit, backward) = (*limit as usize, *backward);
            let pages = one(run_pages(store, &tid, &spec.id, limit, backward));
            let (run, limit) = (r, limit);
            ReadKind::RunMessages {
                run,
                limit,
                backward,
                pages,
            }
        }
        Op::FilteredEvents {
            event_types,
            task,
            limit,
            ..
        } => {
            let filter = EventFilter {
                event_types: event_types.clone(),
                task_id: task.clone(),
                after_seq: None,
                limit: *limit as usize,
            };
            let pages = one(filtered_pages(store, &tid, &spec.id, &filter));
            ReadKind::FilteredEvents {
                run: r,
                filter,
                pages,
            }
        }
        _ => ReadKind::Events {
            run: r,
            rows: one(store.list_events(&tid, &spec.id)),
        },
    }
}

/// A read of one thread's (`tid`) rows.
fn thread_read(scenario: &RunsScenario, store: &dyn RunEventStore, tid: &str, op: &Op) -> ReadKind {
    match op {
        Op::Page {
            limit,
            before,
            after,
            ..
        } => {
            let (limit, cursor) = (*limit as usize, page_cursor(*before, *after));
            let rows = one(store.list_messages(tid, limit, cursor));
            ReadKind::Page {
                limit,
                cursor,
                rows,
            }
        }
        Op::Paginate {
            limit, backward, ..
        } => ReadKind::Paginate {
            limit: *limit as usize,
            backward: *backward,
            count: one(store.count_messages(tid)),
            rows: one(paginate(store, tid, *limit as usize, *backward)),
        },
        Op::UserMessages { user, .. } => {
            let scope = user.clone().map_or(UserScope::All, UserScope::Only);
            let (rows, count) = scoped(store, tid, &scope);
            let user = user.clone();
            ReadKind::UserMessages { user, rows, count }
        }
        Op::DefaultScopeMessages { run, .. } => {
            let r = scenario.run_index(run).unwrap_or_default();
            let user = scenario.runs.get(r).and_then(|spec| spec.user.clone());
            let (rows, count) = scoped(store, tid, &UserScope::Current(user.clone()));
            ReadKind::DefaultScopeMessages {
                run: r,
                user,
                rows,
                count,
            }
        }
        _ => last_answers(scenario, store, tid, op),
    }
}

/// The last visible AI message of every run of the thread and of a run id nobody has, with
/// the thread's message rows read right after.
fn last_answers(
    scenario: &RunsScenario,
    store: &dyn RunEventStore,
    tid: &str,
    op: &Op,
) -> ReadKind {
    let thread = match op {
        Op::LastAnswers { thread } => thread.as_str(),
        _ => "",
    };
    let mut run_ids: BTreeSet<String> = (scenario.runs.iter())
        .filter(|r| r.thread == thread)
        .map(|r| r.id.clone())
        .collect();
    run_ids.insert(NO_SUCH_RUN.to_string());
    let answer = one(store.get_last_visible_ai_seq_by_run(tid, &run_ids, &UserScope::All));
    let messages = one(store.list_messages(tid, WHOLE_READ, MessageCursor::None));
    ReadKind::LastAnswers {
        run_ids,
        answer,
        messages,
    }
}

/// A thread's message rows read whole, and their count, in `scope`.
fn scoped(
    store: &dyn RunEventStore,
    thread_id: &str,
    scope: &UserScope,
) -> (
    Both<Answer<Vec<history::runs::RunEvent>>>,
    Both<Answer<u64>>,
) {
    let rows = one(store.list_messages_as(thread_id, WHOLE_READ, MessageCursor::None, scope));
    let count = one(store.count_messages_as(thread_id, scope));
    (rows, count)
}
