//! The client: dispatches runs, reads the views, pages through messages and rates answers; after
//! the last op it waits for every run to stop (liveness) and reads every thread once more.

use super::state::*;
use crate::runs::observations::Observation;
use crate::runs::record::*;
use crate::runs::scenario::{Op, Target};
use history::runs::{
    content_text, thread_history, thread_messages, FeedbackMapper, MessageCursor, RunEvent,
    RunEventStore, RunStoreError,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::TcpStream;

#[derive(Default)]
pub(in crate::runs) struct Client {
    /// Per thread key: what the client renders (shared with a rating in progress, which only
    /// reads it; a long thread's thousand messages are not copied for each rating).
    pub(in crate::runs) rendered: BTreeMap<String, Rc<Vec<Value>>>,
    /// Per thread key: the rendered positions streamed by the run it waited for last.
    pub(in crate::runs) live: BTreeMap<String, Range<usize>>,
    /// Per thread key: every rendered position that came from a live stream.
    pub(in crate::runs) streamed: BTreeMap<String, BTreeSet<usize>>,
    pub(in crate::runs) mappers: BTreeMap<String, FeedbackMapper>,
    /// Per thread key: the feedback ids the store gave the client's ratings, with their user
    /// (`None`: anonymous), in the order given.
    pub(in crate::runs) feedback_ids: BTreeMap<String, Vec<(Option<String>, u64)>>,
    /// Per run: the waits for it still to come among the scenario's ops. At its last wait the
    /// client moves what the run streamed out of the world instead of copying it (a long
    /// thread's run streamed a thousand messages); no other op reads it.
    pub(in crate::runs) waits_left: BTreeMap<usize, usize>,
}

pub(in crate::runs) async fn dispatch(worker: u8, run: usize) -> std::io::Result<()> {
    let host = format!("worker-{worker}");
    let mut stream = TcpStream::connect((host.as_str(), WORKER_PORT)).await?;
    stream.write_all(&(run as u32).to_be_bytes()).await?;
    let mut ack = [0u8; 1];
    stream.read_exact(&mut ack).await?;
    Ok(())
}

/// A message users can rate: a final AI answer (no tool calls).
pub(in crate::runs) fn is_final_ai(m: &Value) -> bool {
    m.get("type").and_then(Value::as_str) == Some("ai")
        && m.get("tool_calls")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

/// Every message by paging through the store's cursors, as a client of `list_messages` would.
pub(crate) fn paginate(
    store: &dyn RunEventStore,
    thread_id: &str,
    limit: usize,
    backward: bool,
) -> Result<Vec<RunEvent>, RunStoreError> {
    let mut pages = page_through(limit, backward, |cursor| {
        store.list_messages(thread_id, limit, cursor)
    })?;
    if backward {
        pages.reverse();
    }
    Ok(pages.into_iter().flatten().collect())
}

/// The pages a client reads with `fetch`, in the order it reads them: forward from `after 0`
/// with `after` cursors, or backward from the latest page with `before` cursors, until a page
/// comes back short, empty or without moving the cursor (at most `PAGES_MAX`).
pub(in crate::runs) fn page_through(
    limit: usize,
    backward: bool,
    mut fetch: impl FnMut(MessageCursor) -> Result<Vec<RunEvent>, RunStoreError>,
) -> Result<Vec<Vec<RunEvent>>, RunStoreError> {
    let mut pages: Vec<Vec<RunEvent>> = Vec::new();
    let mut cursor = if backward {
        MessageCursor::None
    } else {
        MessageCursor::After(0)
    };
    for _ in 0..PAGES_MAX {
        let page = fetch(cursor)?;
        let full = page.len() >= limit;
        let next = if backward {
            page.first().map(|e| MessageCursor::Before(e.seq))
        } else {
            page.last().map(|e| MessageCursor::After(e.seq))
        };
        pages.push(page);
        match next {
            Some(n) if full && n != cursor => cursor = n,
            _ => break,
        }
    }
    Ok(pages)
}

/// Dispatches the run to its worker (without waiting for it to finish) and records how the
/// dispatch went.
async fn start(world: &World, run: &str) {
    let Some(r) = world.scenario.run_index(run) else {
        return;
    };
    let worker = world.scenario.runs[r].worker;
    let result = tokio::time::timeout(
        Duration::from_millis(DISPATCH_TIMEOUT_MS),
        dispatch(worker, r),
    )
    .await;
    world.progress.borrow_mut().settle(r);
    let how = match result {
        Ok(Ok(())) => "ok".to_string(),
        Ok(Err(e)) => format!("failed: {e}"),
        Err(_) => "timed out".to_string(),
    };
    world.record(format_args!("dispatch {run} to worker-{worker} {how}"));
}

/// The `list_messages` cursor of a page op's `before` and `after`.
pub(crate) fn page_cursor(before: Option<u64>, after: Option<u64>) -> MessageCursor {
    match (before, after) {
        (None, None) => MessageCursor::None,
        (Some(b), None) => MessageCursor::Before(b),
        (None, Some(a)) => MessageCursor::After(a),
        (Some(b), Some(a)) => MessageCursor::Both {
            before: b,
            after: a,
        },
    }
}

impl Client {
    pub(in crate::runs) fn mapper(&mut self, world: &World, thread: &str) -> &mut FeedbackMapper {
        self.mappers.entry(thread.to_string()).or_insert_with(|| {
            let mut m = FeedbackMapper::new(world.thread_id(thread), world.view_options());
            let _ = m.refresh(world.store(world.primary));
            m
        })
    }

    pub(in crate::runs) fn push_read(&self, world: &World, op: u64, thread: &str, kind: ReadKind) {
        world.observe(Observation::Read(Read {
            op,
            at_us: now_us(),
            thread: thread.to_string(),
            kind,
        }));
    }

    pub(in crate::runs) async fn play(&mut self, world: &World, op: &Op) {
        if !super::declared_calls::op_served(world, op) {
            return;
        }
        match op {
            Op::Start { run } => start(world, run).await,
            Op::Wait { run } => self.wait(world, run).await,
            Op::Sleep { ms } => sleep_ms(u64::from(*ms)).await,
            Op::Views { thread } => self.views(world, thread),
            Op::Page {
                thread,
                limit,
                before,
                after,
            } => self.page(world, thread, *limit as usize, page_cursor(*before, *after)),
            Op::Paginate {
                thread,
                limit,
                backward,
            } => self.paginate(world, thread, *limit as usize, *backward),
            Op::Events { run } => self.events(world, run),
            Op::DeleteRun { run } => self.delete_run(world, run),
            Op::Receipt { run, attempt } => self.receipt(world, run, *attempt),
            Op::LateWrite { run } => self.late_write(world, run),
            Op::RunMessages {
                run,
                limit,
                backward,
            } => self.run_messages(world, run, *limit as usize, *backward),
            Op::FilteredEvents {
                run,
                event_types,
                task,
                limit,
            } => self.filtered_events(
                world,
                run,
                event_types.clone(),
                task.clone(),
                *limit as usize,
            ),
            Op::LastAnswers { thread } => self.last_answers(world, thread),
            Op::UserMessages { thread, user } => self.user_messages(world, thread, user.as_deref()),
            Op::Rate {
                thread,
                user,
                up,
                target,
            } => self.rate(world, thread, Some(user), *up, *target),
            Op::RateAnonymously { thread, up, target } => {
                self.rate(world, thread, None, *up, *target)
            }
            Op::Withdraw { thread, user, nth } => {
                self.withdraw(world, thread, user.as_deref(), *nth)
            }
            Op::WithdrawRun { run, user } => self.withdraw_run(world, run, user),
            Op::FeedbackReads { thread, user } => {
                self.feedback_reads(world, thread, user.as_deref())
            }
            Op::DeleteThread { thread, everywhere } => {
                self.delete_thread(world, thread, *everywhere)
            }
            Op::DefaultScopeMessages { thread, run } => {
                self.default_scope_messages(world, thread, run)
            }
            Op::EditRead { thread, limit } => self.edit_read(world, thread, *limit as usize),
            Op::EditWritten { run } => self.edit_written(world, run),
        }
    }

    /// Waits until the run has been dispatched (or given up on) and has stopped, then renders
    /// what it streamed.
    async fn wait(&mut self, world: &World, run: &str) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        while !world.progress.borrow().over(r) {
            sleep_ms(1).await;
        }
        self.saw_run_end(world, r);
    }

    /// One raw `list_messages` page from both backends.
    fn page(&self, world: &World, thread: &str, limit: usize, cursor: MessageCursor) {
        let tid = world.thread_id(thread);
        let op = world.next_op();
        let rows = world.both(|s| s.list_messages(&tid, limit, cursor));
        world.record(format_args!(
            "page {thread} limit={limit} {cursor:?} {}",
            world.rows_words(&rows)
        ));
        self.push_read(
            world,
            op,
            thread,
            ReadKind::Page {
                limit,
                cursor,
                rows,
            },
        );
    }

    /// Every message of the thread, paged through on both backends.
    fn paginate(&self, world: &World, thread: &str, limit: usize, backward: bool) {
        let tid = world.thread_id(thread);
        let op = world.next_op();
        let count = world.both(|s| s.count_messages(&tid));
        let rows = world.both(|s| paginate(s, &tid, limit, backward));
        world.record(format_args!(
            "paginate {thread} limit={limit} backward={backward} {}",
            world.rows_words(&rows)
        ));
        self.push_read(
            world,
            op,
            thread,
            ReadKind::Paginate {
                limit,
                backward,
                count,
                rows,
            },
        );
    }

    /// `list_events` of one run from both backends.
    fn events(&self, world: &World, run: &str) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        if !world.serves(super::system::LIST_EVENTS) {
            // Left out, not weakened in silence: counted for the report, and in the trace.
            world.record(format_args!("events {run} left out: no list_events"));
            world.observe(Observation::LeftOut(
                "the client's `events` reads (the system does not serve list_events)".to_string(),
            ));
            return;
        }
        let spec = &world.scenario.runs[r];
        let tid = world.thread_id(&spec.thread);
        let op = world.next_op();
        let rows = world.both(|s| s.list_events(&tid, &spec.id));
        world.record(format_args!("events {run} {}", world.rows_words(&rows)));
        self.push_read(world, op, &spec.thread, ReadKind::Events { run: r, rows });
    }

    /// The client saw the run's stream end: it renders what streamed (when the run finished)
    /// and tells its mapper that a run ended.
    pub(in crate::runs) fn saw_run_end(&mut self, world: &World, r: usize) {
        let waits_after_this = self.waits_left.get_mut(&r).map_or(0, |n| {
            *n = n.saturating_sub(1);
            *n
        });
        let thread = world.scenario.runs[r].thread.clone();
        let outcome = world.progress.borrow().outcome(r);
        world.record(format_args!(
            "wait {} -> {outcome:?}",
            world.scenario.runs[r].id
        ));
        if outcome.is_none() {
            return; // never started: nothing streamed
        }
        let rendered = Rc::make_mut(self.rendered.entry(thread.clone()).or_default());
        match outcome {
            Some(o) if o.is_complete() => {
                let keep = waits_after_this > 0;
                let streamed = world.progress.borrow_mut().streamed(r, keep);
                let from = rendered.len();
                rendered.extend(streamed);
                let to = rendered.len();
                self.streamed
                    .entry(thread.clone())
                    .or_default()
                    .extend(from..to);
                self.live.insert(thread.clone(), from..to);
            }
            _ => {
                self.live.remove(&thread);
            }
        }
        match self.mappers.get_mut(&thread) {
            Some(mapper) => {
                let _ = mapper.on_run_end(world.store(world.primary));
            }
            // Built now, the mapper reads the rows as they are at the run's end: the refresh
            // `on_run_end` makes would read the same rows (nothing runs in between), or do nothing.
            None => {
                self.mapper(world, &thread);
            }
        }
    }

    pub(in crate::runs) fn views(&mut self, world: &World, thread: &str) {
        let tid = world.thread_id(thread);
        let options = world.view_options();
        let op = world.next_op();
        let count = world.both(|s| s.count_messages(&tid));
        let history = world.both(|s| thread_history(s, &world.checkpointer, &tid, &options));
        let messages = world.both(|s| thread_messages(s, &tid, &options));
        world.record(format_args!(
            "views {thread} count={:?} history={:016x} messages={:016x} agree={}",
            count.primary(world.primary),
            hash_of(history.primary(world.primary)),
            hash_of(messages.primary(world.primary)),
            count.agree() && history.agree() && messages.agree()
        ));
        let rendered = match history.primary(world.primary) {
            Ok(Some(h)) => h.messages.clone(),
            _ => Vec::new(),
        };
        self.rendered.insert(thread.to_string(), Rc::new(rendered));
        self.live.remove(thread);
        self.streamed.remove(thread);
        self.push_read(
            world,
            op,
            thread,
            ReadKind::Views {
                count,
                history,
                messages,
            },
        );
    }

    pub(in crate::runs) fn rate(
        &mut self,
        world: &World,
        thread: &str,
        user: Option<&str>,
        up: bool,
        target: Target,
    ) {
        let rendered = self.rendered.get(thread).cloned().unwrap_or_default();
        let Some(index) = self.rated_index(thread, &rendered, target) else {
            world.record(format_args!("rate {thread} {target:?}: nothing to rate"));
            return;
        };
        let message = &rendered[index];
        let text = content_text(message.get("content").unwrap_or(&Value::Null));
        let source = self.rated_from(thread, message, index);
        let primary = world.store(world.primary);
        let client = self.mapper(world, thread).run_for(&rendered, index);
        // Beside the client's answer, what a mapper refreshed just now says (a store that fails
        // the read leaves it nothing to say).
        let fresh = FeedbackMapper::fresh_run_for(
            &world.thread_id(thread),
            world.view_options(),
            primary,
            &rendered,
            index,
        )
        .ok()
        .flatten();
        let (op, at_us) = (world.next_op(), now_us());
        // A known user's rating traces as before anonymous ones existed.
        let by = user.unwrap_or("nobody (anonymous)");
        world.record(format_args!(
            "rate {thread} {target:?} by {by} up={up} `{text}` -> {client:?} (fresh {fresh:?})"
        ));
        if let Some(run_id) = &client {
            let message_id = message
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string);
            self.store_rating(world, thread, user, up, message_id, run_id);
        }
        world.observe(Observation::Rating(RatingRecord {
            op,
            at_us,
            thread: thread.to_string(),
            user: user.map(str::to_string),
            up,
            text,
            source,
            client,
            fresh,
        }));
    }

    /// The rendered position of the final AI message the target names, if there is one.
    fn rated_index(&self, thread: &str, rendered: &[Value], target: Target) -> Option<usize> {
        match target {
            Target::Live => self.live.get(thread).and_then(|range| {
                range
                    .clone()
                    .rev()
                    .find(|&i| rendered.get(i).is_some_and(is_final_ai))
            }),
            Target::Old(n) => {
                let finals: Vec<usize> = (0..rendered.len())
                    .filter(|&i| is_final_ai(&rendered[i]))
                    .collect();
                (!finals.is_empty()).then(|| finals[n as usize % finals.len()])
            }
        }
    }

    /// Where the rendered message at `index` came from.
    fn rated_from(&self, thread: &str, message: &Value, index: usize) -> RatedFrom {
        if message.get("run_id").is_some() {
            RatedFrom::View
        } else if self
            .streamed
            .get(thread)
            .is_some_and(|s| s.contains(&index))
        {
            RatedFrom::Stream
        } else {
            RatedFrom::Checkpoint
        }
    }
}

/// After the last op, how long every run has to stop (simulated ms) before it is a liveness failure.
pub(in crate::runs) const LIVENESS_BOUND_MS: u64 = 30_000;

pub(in crate::runs) async fn client(world: Rc<World>) -> turmoil::Result {
    let mut cx = Client::default();
    for op in &world.scenario.ops {
        if let Op::Wait { run } = op {
            if let Some(r) = world.scenario.run_index(run) {
                *cx.waits_left.entry(r).or_default() += 1;
            }
        }
    }
    for op in &world.scenario.ops {
        cx.play(&world, op).await;
    }
    // Heal and settle: no op injects anything more; crashed workers come back after their down
    // time and each failing write fails once. Every run must then stop within a bound
    // (liveness); then the last look at every thread.
    let mut waited_ms = 0;
    loop {
        let running = world.progress.borrow().running();
        if running.is_empty() {
            world.observe(Observation::AllStopped {
                after_ms: waited_ms,
            });
            break;
        }
        if waited_ms >= LIVENESS_BOUND_MS {
            let stuck = running;
            world.record(format_args!(
                "liveness: runs {stuck:?} still running after {waited_ms} ms"
            ));
            world.observe_all(stuck.into_iter().map(Observation::Stuck));
            break;
        }
        sleep_ms(1).await;
        waited_ms += 1;
    }
    let threads: Vec<String> = world.scenario.threads.keys().cloned().collect();
    for thread in &threads {
        if super::declared_calls::declared_for_thread(&world, thread).is_none() {
            cx.views(&world, thread);
        }
    }
    super::declared_calls::count_declared_marks(&world);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::runs::{Category, ChatMessage, MemoryRunEventStore, NewRunEvent};
    use history::Planted;
    use serde_json::json;

    fn store_with(n: usize) -> MemoryRunEventStore {
        let store = MemoryRunEventStore::new(Planted::none());
        let events = (0..n)
            .map(|i| NewRunEvent {
                thread_id: "t".into(),
                run_id: "r".into(),
                user_id: None,
                event_type: if i % 3 == 2 {
                    "llm_response"
                } else {
                    "human_message"
                }
                .into(),
                category: if i % 3 == 2 {
                    Category::Trace
                } else {
                    Category::Message
                },
                content: ChatMessage::human(format!("m{i}")).to_content().into(),
                metadata: json!({}),
                created_at_ns: i as i64,
            })
            .collect();
        store.put_batch(events).expect("writes");
        store
    }

    #[test]
    fn paging_reads_every_message_in_order_both_ways() {
        for n in [0, 1, 9, 10, 15] {
            let store = store_with(n);
            let all = store.count_messages("t").expect("counts") as usize;
            for limit in [1, 2, 3, 7, 500] {
                for backward in [false, true] {
                    let rows = paginate(&store, "t", limit, backward).expect("reads");
                    assert_eq!(rows.len(), all, "n {n} limit {limit} backward {backward}");
                    assert!(rows.windows(2).all(|w| w[0].seq < w[1].seq));
                }
            }
        }
    }

    #[test]
    fn only_final_ai_answers_are_rated() {
        assert!(is_final_ai(&json!({"type": "ai", "content": "x"})));
        assert!(is_final_ai(
            &json!({"type": "ai", "content": "x", "tool_calls": []})
        ));
        assert!(!is_final_ai(
            &json!({"type": "ai", "content": "x", "tool_calls": [{"id": "c"}]})
        ));
        assert!(!is_final_ai(&json!({"type": "human", "content": "x"})));
    }
}
