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

/// The thread key and the answers of read op `op` on `store`; `None` for another op or a run
/// the scenario does not have.
pub fn read(
    scenario: &RunsScenario,
    store: &dyn RunEventStore,
    op: &Op,
) -> Option<(String, ReadKind)> {
    let tid = |thread: &str| scenario.threads.get(thread).cloned().unwrap_or_default();
    let run_of = |run: &str| scenario.run_index(run).map(|r| (r, &scenario.runs[r]));
    let kind = match op {
        Op::Page {
            thread,
            limit,
            before,
            after,
        } => {
            let cursor = page_cursor(*before, *after);
            let rows = one(store.list_messages(&tid(thread), *limit as usize, cursor));
            (
                thread.clone(),
                ReadKind::Page {
                    limit: *limit as usize,
                    cursor,
                    rows,
                },
            )
        }
        Op::Paginate {
            thread,
            limit,
            backward,
        } => {
            let t = tid(thread);
            let count = one(store.count_messages(&t));
            let rows = one(paginate(store, &t, *limit as usize, *backward));
            let (limit, backward) = (*limit as usize, *backward);
            (
                thread.clone(),
                ReadKind::Paginate {
                    limit,
                    backward,
                    count,
                    rows,
                },
            )
        }
        Op::Events { run } => {
            let (r, spec) = run_of(run)?;
            let rows = one(store.list_events(&tid(&spec.thread), &spec.id));
            (spec.thread.clone(), ReadKind::Events { run: r, rows })
        }
        Op::RunMessages {
            run,
            limit,
            backward,
        } => {
            let (r, spec) = run_of(run)?;
            let (limit, backward) = (*limit as usize, *backward);
            let pages = one(run_pages(
                store,
                &tid(&spec.thread),
                &spec.id,
                limit,
                backward,
            ));
            (
                spec.thread.clone(),
                ReadKind::RunMessages {
                    run: r,
                    limit,
                    backward,
                    pages,
                },
            )
        }
        Op::FilteredEvents {
            run,
            event_types,
            task,
            limit,
        } => {
            let (r, spec) = run_of(run)?;
            let filter = EventFilter {
                event_types: event_types.clone(),
                task_id: task.clone(),
                after_seq: None,
                limit: *limit as usize,
            };
            let pages = one(filtered_pages(store, &tid(&spec.thread), &spec.id, &filter));
            (
                spec.thread.clone(),
                ReadKind::FilteredEvents {
                    run: r,
                    filter,
                    pages,
                },
            )
        }
        Op::UserMessages { thread, user } => {
            let scope = user.clone().map_or(UserScope::All, UserScope::Only);
            let (rows, count) = scoped(store, &tid(thread), &scope);
            (
                thread.clone(),
                ReadKind::UserMessages {
                    user: user.clone(),
                    rows,
                    count,
                },
            )
        }
        Op::DefaultScopeMessages { thread, run } => {
            let (r, spec) = run_of(run)?;
            let user = spec.user.clone();
            let (rows, count) = scoped(store, &tid(thread), &UserScope::Current(user.clone()));
            (
                thread.clone(),
                ReadKind::DefaultScopeMessages {
                    run: r,
                    user,
                    rows,
                    count,
                },
            )
        }
        Op::LastAnswers { thread } => {
            let t = tid(thread);
            let mut run_ids: BTreeSet<String> = (scenario.runs.iter())
                .filter(|r| &r.thread == thread)
                .map(|r| r.id.clone())
                .collect();
            run_ids.insert(NO_SUCH_RUN.to_string());
            let answer = one(store.get_last_visible_ai_seq_by_run(&t, &run_ids, &UserScope::All));
            let messages = one(store.list_messages(&t, WHOLE_READ, MessageCursor::None));
            (
                thread.clone(),
                ReadKind::LastAnswers {
                    run_ids,
                    answer,
                    messages,
                },
            )
        }
        _ => return None,
    };
    debug_assert!(is_read(op));
    Some(kind)
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
