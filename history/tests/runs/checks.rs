//! One check per rule: builds a scenario, runs the code under test with the given planted
//! switches, and returns `Err(what was violated)` instead of panicking, so the same body proves
//! the rule (fixed code, `Ok`) and proves the planted bug breaks it (`Err`).

use std::collections::{BTreeMap, BTreeSet};

use history::runs::*;
use history::Planted;
use serde_json::Value;

use crate::support::*;

pub type Check = Result<(), String>;

fn ensure(cond: bool, what: impl FnOnce() -> String) -> Check {
    if cond {
        Ok(())
    } else {
        Err(what())
    }
}

fn view_options(planted: Planted, page_size_events: usize) -> ViewOptions {
    ViewOptions {
        page_size_events,
        planted,
    }
}

/// R2: `thread_history` returns every message: count_messages rows, contiguous by seq, equal to
/// the reference read of the dump.
pub fn history_is_complete(backend: Backend, planted: Planted, n: usize, page: usize) -> Check {
    let store = open(backend, planted);
    fill_thread(&*store, "t", n, 97);
    let (seqs, reference) = reference_messages(&*store, "t");
    let count = store.count_messages("t").map_err(|e| e.to_string())?;
    ensure(count as usize == reference.len(), || {
        format!(
            "count_messages {count} but {} message rows",
            reference.len()
        )
    })?;
    ensure(seqs.windows(2).all(|w| w[0] < w[1]), || {
        "seqs not increasing".into()
    })?;
    let history = thread_history(
        &*store,
        &Checkpointer::new(),
        "t",
        &view_options(planted, page),
    )
    .map_err(|e| e.to_string())?;
    let got = history.map_or_else(Vec::new, |h| h.messages);
    ensure(got == reference, || {
        format!(
            "{backend:?}: history has {} messages, the store {} (first: {:?})",
            got.len(),
            reference.len(),
            got.first().map(type_and_text)
        )
    })
}

/// R7: `thread_messages` returns the same rows as `thread_history`, in the same order, with the
/// same ids, and every seq.
pub fn views_agree(backend: Backend, planted: Planted, n: usize, page: usize) -> Check {
    let store = open(backend, planted);
    fill_thread(&*store, "t", n, 50);
    let (seqs, reference) = reference_messages(&*store, "t");
    let options = view_options(planted, page);
    let views = thread_messages(&*store, "t", &options).map_err(|e| e.to_string())?;
    let history = thread_history(&*store, &Checkpointer::new(), "t", &options)
        .map_err(|e| e.to_string())?
        .map_or_else(Vec::new, |h| h.messages);
    let view_messages: Vec<Value> = views.iter().map(|v| v.message.clone()).collect();
    let view_seqs: Vec<u64> = views.iter().map(|v| v.seq).collect();
    ensure(view_messages == history, || {
        format!(
            "{backend:?}: /messages has {} rows, /history {}",
            view_messages.len(),
            history.len()
        )
    })?;
    ensure(view_seqs == seqs && view_messages == reference, || {
        format!(
            "{backend:?}: /messages is not every message row ({} of {})",
            views.len(),
            seqs.len()
        )
    })
}

/// One write or read against a store.
#[derive(Clone, Debug)]
pub enum StoreOp {
    /// (thread index, is message, has user) per event.
    Batch(Vec<(u8, bool, bool)>),
    List {
        thread: u8,
        limit: usize,
        cursor: MessageCursor,
    },
    Count(u8),
    Events {
        thread: u8,
        run: u8,
    },
}

fn thread_name(i: u8) -> String {
    format!("thread-{}", i % 3)
}

/// The page the documented cursor semantics select from `rows` (one thread's message rows,
/// ascending): written here from the documentation, independently of both backends.
pub fn reference_page(rows: &[RunEvent], limit: usize, cursor: MessageCursor) -> Vec<RunEvent> {
    let pick_last = |v: Vec<&RunEvent>| {
        let skip = v.len().saturating_sub(limit);
        v.into_iter().skip(skip).cloned().collect()
    };
    let pick_first = |v: Vec<&RunEvent>| v.into_iter().take(limit).cloned().collect();
    match cursor {
        MessageCursor::None => pick_last(rows.iter().collect()),
        MessageCursor::Before(b) => pick_last(rows.iter().filter(|r| r.seq < b).collect()),
        MessageCursor::After(a) => pick_first(rows.iter().filter(|r| r.seq > a).collect()),
        MessageCursor::Both { before, after } => pick_first(
            rows.iter()
                .filter(|r| r.seq > after && r.seq < before)
                .collect(),
        ),
    }
}

/// R9: the in-memory, SQLite and JSONL stores give identical answers to the same operations,
/// and those answers follow the documented semantics.
pub fn backends_agree(planted: Planted, ops: &[StoreOp]) -> Check {
    let mem = open(Backend::Memory, planted);
    let others = [Backend::Sqlite, Backend::Jsonl].map(|b| (b, open(b, planted)));
    let agree = |i: usize, what: &str, read: &dyn Fn(&dyn RunEventStore) -> Answer| {
        agree_with_memory(i, what, mem.as_ref(), &others, read)
    };
    let mut t = 0i64;
    for (i, op) in ops.iter().enumerate() {
        match op {
            StoreOp::Batch(events) => {
                let batch: Vec<NewRunEvent> = events
                    .iter()
                    .map(|&(thread, is_message, has_user)| {
                        t += 1;
                        let mut e = trace_event(&thread_name(thread), &format!("run-{}", t % 4), t);
                        if is_message {
                            e.category = Category::Message;
                            e.event_type = HUMAN_MESSAGE.into();
                            e.content = ChatMessage::human(format!("m{t}")).to_content().into();
                        }
                        e.user_id = has_user.then(|| "user-a".to_string());
                        e
                    })
                    .collect();
                agree(i, "put_batch seqs", &|s| {
                    s.put_batch(batch.clone())
                        .map(|v| Read::new(&v, format!("{v:?}")))
                })?;
            }
            StoreOp::List {
                thread,
                limit,
                cursor,
            } => {
                let name = thread_name(*thread);
                let seqs = |v: &[RunEvent]| v.iter().map(|e| e.seq).collect::<Vec<_>>();
                let what = format!("list_messages({limit}, {cursor:?})");
                agree(i, &what, &|s| {
                    s.list_messages(&name, *limit, *cursor)
                        .map(|rows| Read::new(&rows, format!("{:?}", seqs(&rows))))
                })?;
                let a = mem
                    .list_messages(&name, *limit, *cursor)
                    .map_err(|e| e.to_string())?;
                let all: Vec<RunEvent> = mem
                    .dump()
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .filter(|e| e.thread_id == name && e.category == Category::Message)
                    .collect();
                let want = reference_page(&all, *limit, *cursor);
                ensure(a == want, || {
                    format!(
                        "op {i}: {what} = {:?}, documented {:?}",
                        seqs(&a),
                        seqs(&want)
                    )
                })?;
            }
            StoreOp::Count(thread) => {
                let name = thread_name(*thread);
                agree(i, "count_messages", &|s| {
                    s.count_messages(&name)
                        .map(|n| Read::new(&n, n.to_string()))
                })?;
            }
            StoreOp::Events { thread, run } => {
                let (name, run) = (thread_name(*thread), format!("run-{}", run % 4));
                agree(i, "list_events", &|s| {
                    let rows = s.list_events(&name, &run)?;
                    Ok(Read::new(&rows, format!("{} rows", rows.len())))
                })?;
            }
        }
    }
    agree(ops.len(), "dumps", &|s| {
        let rows = s.dump()?;
        Ok(Read::new(&rows, format!("{} rows", rows.len())))
    })
}

/// One backend's answer to a read: everything it said (compared) and a short form (reported).
pub struct Read {
    full: String,
    short: String,
}

impl Read {
    fn new(answer: &impl std::fmt::Debug, short: String) -> Read {
        Read {
            full: format!("{answer:?}"),
            short,
        }
    }
}

type Answer = Result<Read, RunStoreError>;

/// R9's comparison: every other backend's answer to `read` equals the memory store's.
fn agree_with_memory(
    i: usize,
    what: &str,
    mem: &dyn RunEventStore,
    others: &[(Backend, Box<dyn RunEventStore>)],
    read: &dyn Fn(&dyn RunEventStore) -> Answer,
) -> Check {
    let a = read(mem).map_err(|e| e.to_string())?;
    for (b, store) in others {
        let other = read(store.as_ref()).map_err(|e| e.to_string())?;
        ensure(a.full == other.full, || {
            let name = format!("{b:?}").to_lowercase();
            format!(
                "op {i}: {what}: memory {} vs {name} {}",
                a.short, other.short
            )
        })?;
    }
    Ok(())
}

/// R3: no read changes the store: views, the mapper and mutated copies of list results.
pub fn reads_leave_the_store_unchanged(
    backend: Backend,
    planted: Planted,
    runs: &[RunScript],
) -> Check {
    let store = open(backend, planted);
    write_conversation(&*store, "t", runs);
    let before = store.dump().map_err(|e| e.to_string())?;
    let options = view_options(planted, 7);
    let cps = Checkpointer::new();
    for _ in 0..2 {
        thread_history(&*store, &cps, "t", &options).map_err(|e| e.to_string())?;
        thread_messages(&*store, "t", &options).map_err(|e| e.to_string())?;
        let mut mapper = FeedbackMapper::new("t", options);
        mapper.refresh(&*store).map_err(|e| e.to_string())?;
        let mut rows = store
            .list_messages("t", 1000, MessageCursor::None)
            .map_err(|e| e.to_string())?;
        for r in &mut rows {
            std::sync::Arc::make_mut(&mut r.content)["id"] = Value::String("scribbled".into());
        }
    }
    let after = store.dump().map_err(|e| e.to_string())?;
    let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
    ensure(before == after, || {
        format!("{backend:?}: {changed} stored rows changed by reads")
    })
}

/// R10: ids are stable across reads (also after more messages arrive), unique, uuid5 for rows
/// stored without one, and the model's own id for AI messages.
pub fn ids_are_stable(
    backend: Backend,
    planted: Planted,
    first: &[RunScript],
    more: &[RunScript],
) -> Check {
    let store = open(backend, planted);
    let options = view_options(planted, 5);
    write_conversation(&*store, "t", first);
    let ids = |store: &dyn RunEventStore| -> Result<BTreeMap<u64, String>, String> {
        let views = thread_messages(store, "t", &options).map_err(|e| e.to_string())?;
        Ok(views
            .iter()
            .map(|v| (v.seq, rendered_id(&v.message).unwrap_or("").to_string()))
            .collect())
    };
    let before = ids(&*store)?;
    write_conversation(&*store, "t", more);
    let after = ids(&*store)?;
    let (_, reference) = reference_messages(&*store, "t");
    let reference_ids: Vec<&str> = reference.iter().filter_map(rendered_id).collect();
    let after_ids: Vec<&str> = after.values().map(String::as_str).collect();
    ensure(after_ids == reference_ids, || {
        format!("{backend:?}: ids are not uuid5/model ids")
    })?;
    for (seq, id) in &before {
        ensure(after.get(seq) == Some(id), || {
            format!("{backend:?}: the id of seq {seq} changed")
        })?;
    }
    let unique: BTreeSet<&str> = after_ids.iter().copied().collect();
    ensure(unique.len() == after_ids.len(), || "duplicate ids".into())
}

/// How a run stops in [`journal_keeps_events`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    End,
    Error,
    Cancel,
    /// Hard kill after this many recorded events (the journal is dropped).
    Kill(usize),
}

/// R4: a run that ends, errors or is cancelled has every event stored, in order (a failed final
/// flush is retried while the store fails); a killed run has a prefix stored.
pub fn journal_keeps_events(
    backend: Backend,
    planted: Planted,
    events: usize,
    threshold: usize,
    failing_calls: &[u64],
    stop: Stop,
) -> Check {
    let store = FaultyRunStore::new(
        open(backend, planted),
        FaultSchedule::failing(failing_calls.iter().copied()),
    );
    let options = RunJournalOptions {
        flush_threshold_events: threshold,
        max_trace_content_bytes: None,
        planted,
    };
    let mut journal = RunJournal::new(&store, "t", "run-1", Some("user-a".into()), options);
    let recorded = match stop {
        Stop::Kill(k) => k.min(events),
        _ => events,
    };
    let entries: Vec<JournalEntry> = (0..recorded)
        .map(|i| {
            if i % 4 == 3 {
                JournalEntry::other(
                    Category::Trace,
                    "llm_response",
                    serde_json::json!(i),
                    i as i64,
                )
            } else {
                JournalEntry::message(&ChatMessage::human(format!("m{i}")), i as i64)
            }
        })
        .collect();
    for e in &entries {
        // A failed threshold flush keeps the events buffered; recording goes on.
        let _ = block_on(journal.record(e.clone()));
    }
    let stored = |store: &FaultyRunStore<Box<dyn RunEventStore>>| -> Result<Vec<i64>, String> {
        Ok(store
            .list_events("t", "run-1")
            .map_err(|e| e.to_string())?
            .iter()
            .map(|e| e.created_at_ns)
            .collect())
    };
    let want: Vec<i64> = (0..recorded as i64).collect();
    let mut result = match stop {
        Stop::End => block_on(journal.end()),
        Stop::Error => block_on(journal.error()),
        Stop::Cancel => block_on(journal.cancel()),
        Stop::Kill(_) => {
            drop(journal);
            let got = stored(&store)?;
            return ensure(want.starts_with(&got), || {
                format!("{backend:?}: after a kill the stored events {got:?} are not a prefix")
            });
        }
    };
    // The store recovers: a failed final flush is retried (each failing call fails once).
    for _ in 0..=failing_calls.len() {
        if result.is_ok() {
            break;
        }
        result = block_on(journal.flush()).map(|_| ());
    }
    let got = stored(&store)?;
    ensure(journal.buffered() == 0 && got == want, || {
        format!(
            "{backend:?} {stop:?}: {} of {} events stored, {} still buffered",
            got.len(),
            want.len(),
            journal.buffered()
        )
    })
}

/// One writer: records `n` human messages (times `base..`), awaiting between them as an agent
/// awaits its model, then ends the run.
async fn write_run(
    journal: &mut RunJournal<&dyn RunEventStore>,
    n: usize,
    base: i64,
) -> Result<(), RunStoreError> {
    for i in 0..n {
        let m = ChatMessage::human(format!("m{i}"));
        // A failed threshold flush keeps the events buffered; recording goes on.
        let _ = journal
            .record(JournalEntry::message(&m, base + i as i64))
            .await;
        YieldNow::new().await;
    }
    journal.end().await
}

/// R5: two journals writing one thread, interleaved at every await: seqs stay unique and strictly
/// increasing, and each run has all its events in order.
pub fn seqs_survive_racing_writers(
    backend: Backend,
    planted: Planted,
    counts: (usize, usize),
    thresholds: (usize, usize),
    schedule: &[bool],
) -> Check {
    let store = open(backend, planted);
    let options = |threshold| RunJournalOptions {
        flush_threshold_events: threshold,
        max_trace_content_bytes: None,
        planted,
    };
    let mut ja = RunJournal::new(&*store, "t", "run-a", None, options(thresholds.0));
    let mut jb = RunJournal::new(&*store, "t", "run-b", None, options(thresholds.1));
    let (ra, rb) = drive_two(
        write_run(&mut ja, counts.0, 0),
        write_run(&mut jb, counts.1, 1_000_000),
        schedule,
    );
    // Conflicts caught by the unique guard leave batches buffered: retry them now.
    for (j, mut r) in [(&mut ja, ra), (&mut jb, rb)] {
        for _ in 0..4 {
            if r.is_ok() && j.buffered() == 0 {
                break;
            }
            r = block_on(j.flush()).map(|_| ());
        }
    }
    let rows = store.dump().map_err(|e| e.to_string())?;
    let seqs: Vec<u64> = rows.iter().map(|e| e.seq).collect();
    ensure(seqs.windows(2).all(|w| w[0] < w[1]), || {
        format!("{backend:?}: seqs not unique and increasing: {seqs:?}")
    })?;
    for (run, n, base) in [("run-a", counts.0, 0i64), ("run-b", counts.1, 1_000_000)] {
        let got: Vec<i64> = rows
            .iter()
            .filter(|e| e.run_id == run)
            .map(|e| e.created_at_ns)
            .collect();
        let want: Vec<i64> = (0..n as i64).map(|i| base + i).collect();
        ensure(got == want, || {
            format!(
                "{backend:?}: {run} stored {} of {n} events in order",
                got.len()
            )
        })?;
    }
    Ok(())
}

/// Plays a conversation like an agent does: every message is recorded by the run's journal and
/// appended to the checkpoint, and the summarization middleware runs after every message.
/// Returns the checkpointer and how many times summarization rewrote the checkpoint.
pub fn play(
    store: &dyn RunEventStore,
    planted: Planted,
    runs: &[RunScript],
    summarization: SummarizationOptions,
) -> Result<(Checkpointer, usize), String> {
    let cps = Checkpointer::new();
    let mw = SummarizationMiddleware::new(summarization);
    let mut summaries = 0;
    let mut t = 0;
    for run in runs {
        let options = RunJournalOptions {
            flush_threshold_events: 5,
            max_trace_content_bytes: None,
            planted,
        };
        let mut journal =
            RunJournal::new(store, "t", run.run_id.clone(), run.user_id.clone(), options);
        for m in &run.messages {
            t += 1;
            block_on(journal.record(JournalEntry::message(m, t))).map_err(|e| e.to_string())?;
            let mut cp = cps.latest("t").unwrap_or_default();
            cp.title.get_or_insert_with(|| "a thread".to_string());
            cp.messages.push(m.clone());
            if let Some(summarized) = mw.apply(&cp) {
                cp = summarized;
                summaries += 1;
            }
            cps.put("t", cp);
        }
        block_on(journal.end()).map_err(|e| e.to_string())?;
    }
    Ok((cps, summaries))
}

/// R1: after any number of summarizations, `/history` holds every message every run emitted,
/// in order, and the newest checkpoint's title. Returns how many summarizations happened.
pub fn history_survives_summarization(
    backend: Backend,
    planted: Planted,
    runs: &[RunScript],
    budget_tokens: usize,
) -> Result<usize, String> {
    let store = open(backend, planted);
    let mut summarization = SummarizationOptions::with_budget(budget_tokens);
    summarization.keep_messages = 4;
    let (cps, summaries) = play(&*store, planted, runs, summarization)?;
    let history = thread_history(&*store, &cps, "t", &view_options(planted, 3))
        .map_err(|e| e.to_string())?
        .ok_or("no history")?;
    let got: Vec<(String, String)> = history.messages.iter().map(type_and_text).collect();
    let want: Vec<(String, String)> = runs
        .iter()
        .flat_map(|r| r.messages.iter().map(|m| type_and_text(&m.to_content())))
        .collect();
    ensure(got == want, || {
        format!(
            "{backend:?}: history has {} messages (first {:?}), the runs emitted {}",
            got.len(),
            got.first(),
            want.len()
        )
    })?;
    ensure(history.title.as_deref() == Some("a thread"), || {
        "title lost".into()
    })?;
    Ok(summaries)
}

/// R11: every summarization keeps each tool result together with its call, and keeps a suffix of
/// the messages it had. Returns how many summarizations happened.
pub fn summaries_keep_tool_pairs(
    planted: Planted,
    runs: &[RunScript],
    budget_tokens: usize,
    keep: usize,
) -> Result<usize, String> {
    let mw = SummarizationMiddleware::new(SummarizationOptions {
        budget_tokens,
        keep_messages: keep,
        // The tool-pair rule alone: the current request's rescue (R29) would keep it whole.
        keep_current_request: false,
        planted,
    });
    let mut cp = Checkpoint::default();
    let mut summaries = 0;
    for m in runs.iter().flat_map(|r| &r.messages) {
        cp.messages.push(m.clone());
        if let Some(next) = mw.apply(&cp) {
            summaries += 1;
            let kept = &next.messages[1..];
            ensure(cp.messages.ends_with(kept), || {
                "the kept messages are not a suffix".into()
            })?;
            ensure(next.messages[0].text().starts_with(SUMMARY_PREFIX), || {
                "no summary".into()
            })?;
            let orphans = orphaned_tool_results(&next.messages);
            ensure(orphans.is_empty(), || {
                format!("tool results {orphans:?} kept without their call (keep {keep})")
            })?;
            cp = next;
        }
    }
    Ok(summaries)
}

fn emitter_of(runs: &[RunScript], message: &Value) -> Option<String> {
    let (kind, text) = type_and_text(message);
    runs.iter()
        .find(|r| {
            r.messages
                .iter()
                .any(|m| type_and_text(&m.to_content()) == (kind.clone(), text.clone()))
        })
        .map(|r| r.run_id.clone())
}

/// R6: rating any AI message of the rendered history (multi-run, tool calls, summarized
/// checkpoint) stores the rating on the run that produced it.
pub fn ratings_land_on_their_run(backend: Backend, planted: Planted, runs: &[RunScript]) -> Check {
    let store = open(backend, planted);
    let mut summarization = SummarizationOptions::with_budget(60);
    summarization.keep_messages = 3;
    let (cps, _) = play(&*store, planted, runs, summarization)?;
    let options = view_options(planted, 4);
    let rendered = thread_history(&*store, &cps, "t", &options)
        .map_err(|e| e.to_string())?
        .ok_or("no history")?
        .messages;
    let mut mapper = FeedbackMapper::new("t", options);
    mapper.refresh(&*store).map_err(|e| e.to_string())?;
    let feedback = FeedbackStore::new();
    for (i, m) in rendered.iter().enumerate() {
        if m.get("type").and_then(Value::as_str) != Some("ai") {
            continue;
        }
        let want = emitter_of(runs, m).ok_or("rendered message nobody emitted")?;
        let got = mapper.run_for(&rendered, i);
        ensure(got.as_deref() == Some(want.as_str()), || {
            format!("{backend:?}: rendered message {i} of {want} maps to {got:?}")
        })?;
        let stored = feedback
            .submit(FeedbackInput {
                thread_id: "t".into(),
                run_id: want.clone(),
                user_id: "rater".into(),
                message_id: rendered_id(m).map(str::to_string),
                rating: Rating::Up,
                comment: None,
                created_at_ns: i as i64,
            })
            .map_err(|e| e.to_string())?;
        ensure(stored.run_id == want, || "stored on another run".into())?;
    }
    Ok(())
}

/// R8: right after a new run ends, rating its answer as the client shows it (streamed, without
/// run_id) targets the new run.
pub fn rating_after_a_new_run(backend: Backend, planted: Planted, runs: &[RunScript]) -> Check {
    let Some((new_run, old_runs)) = runs.split_last() else {
        return Ok(());
    };
    let store = open(backend, planted);
    let options = view_options(planted, 6);
    let summarization = SummarizationOptions::with_budget(usize::MAX);
    let (cps, _) = play(&*store, planted, old_runs, summarization)?;
    let mut rendered = thread_history(&*store, &cps, "t", &options)
        .map_err(|e| e.to_string())?
        .map_or_else(Vec::new, |h| h.messages);
    let mut mapper = FeedbackMapper::new("t", options);
    mapper.refresh(&*store).map_err(|e| e.to_string())?;
    play(
        &*store,
        planted,
        std::slice::from_ref(new_run),
        summarization,
    )?;
    mapper.on_run_end(&*store).map_err(|e| e.to_string())?;
    // The client shows the new run's messages as they streamed in.
    rendered.extend(new_run.messages.iter().map(ChatMessage::to_content));
    let answer = rendered.len() - 1;
    let got = mapper.run_for(&rendered, answer);
    ensure(got.as_deref() == Some(new_run.run_id.as_str()), || {
        format!(
            "{backend:?}: the new run's answer maps to {got:?}, not {}",
            new_run.run_id
        )
    })
}
