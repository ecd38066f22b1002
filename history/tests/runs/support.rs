//! Shared helpers: backends, conversation builders, a reference reader and a tiny executor.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use history::journal::MemStorage;
use history::runs::*;
use history::Planted;
use serde_json::{json, Value};

/// The three backends every property runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Sqlite,
    /// The JSONL files, on in-memory storage.
    Jsonl,
}

pub const BACKENDS: [Backend; 3] = [Backend::Memory, Backend::Sqlite, Backend::Jsonl];

/// Asks `check` of every backend in turn: the first failure, named by its backend.
pub fn on_every_backend<T>(check: impl Fn(Backend) -> Result<T, String>) -> Result<(), String> {
    BACKENDS
        .into_iter()
        .try_for_each(|b| check(b).map(drop).map_err(|e| format!("{b:?}: {e}")))
}

pub fn open(backend: Backend, planted: Planted) -> Box<dyn RunEventStore> {
    match backend {
        Backend::Memory => Box::new(MemoryRunEventStore::new(planted)),
        Backend::Sqlite => Box::new(SqliteRunEventStore::open_in_memory(planted).unwrap()),
        Backend::Jsonl => Box::new(
            JsonlRunEventStore::open(std::sync::Arc::new(MemStorage::new()), planted).unwrap(),
        ),
    }
}

/// One run of a conversation: who ran it and the messages it emitted, in order.
#[derive(Clone, Debug)]
pub struct RunScript {
    pub run_id: String,
    pub user_id: Option<String>,
    pub messages: Vec<ChatMessage>,
}

/// Builds a conversation from a shape: one entry per run, one code per step. A step code `c`
/// is a final AI text when `c % 3 == 0`, else an AI tool call with `c % 3` calls followed by
/// their results. Every run opens with a human message and closes with a final AI text. Texts
/// are unique; `words` pads each text (to move token counts).
pub fn conversation(shape: &[Vec<u8>], words: usize) -> Vec<RunScript> {
    named_conversation(shape, words, "")
}

/// [`conversation`] with `prefix` in every run id, model id, call id and text, so that two
/// conversations written to one thread stay distinguishable.
pub fn named_conversation(shape: &[Vec<u8>], words: usize, prefix: &str) -> Vec<RunScript> {
    let pad = " lorem".repeat(words);
    shape
        .iter()
        .enumerate()
        .map(|(r, steps)| {
            let run_id = format!("run-{prefix}{r}");
            let mut messages = vec![ChatMessage::human(format!("question r{prefix}{r}{pad}"))];
            for (s, code) in steps.iter().enumerate() {
                let calls = (code % 3) as usize;
                if calls == 0 {
                    messages.push(ChatMessage::ai(
                        format!("thought r{prefix}{r} s{s}{pad}"),
                        Some(format!("lc_run--{prefix}{r}-{s}")),
                    ));
                    continue;
                }
                let ids: Vec<String> = (0..calls)
                    .map(|c| format!("call-{prefix}{r}-{s}-{c}"))
                    .collect();
                let tool_calls = ids
                    .iter()
                    .map(|id| ToolCall {
                        id: id.clone(),
                        name: "search".into(),
                        args: json!({"q": id}),
                    })
                    .collect();
                let mut call = ChatMessage::ai_tool_calls(
                    Some(format!("lc_run--{prefix}{r}-{s}")),
                    tool_calls,
                );
                call.content = json!(format!("calling r{prefix}{r} s{s}"));
                messages.push(call);
                for id in ids {
                    messages.push(ChatMessage::tool(format!("result {id}{pad}"), id));
                }
            }
            messages.push(ChatMessage::ai(
                format!("answer r{prefix}{r}{pad}"),
                Some(format!("lc_run--{prefix}{r}-final")),
            ));
            RunScript {
                run_id,
                user_id: if r % 2 == 0 {
                    Some("user-a".into())
                } else {
                    None // legacy rows without a user (R9)
                },
                messages,
            }
        })
        .collect()
}

/// A message event of `thread`.
pub fn message_event(thread: &str, run: &RunScript, m: &ChatMessage, t: i64) -> NewRunEvent {
    NewRunEvent {
        thread_id: thread.into(),
        run_id: run.run_id.clone(),
        user_id: run.user_id.clone(),
        event_type: m.event_type().into(),
        category: Category::Message,
        content: m.to_content().into(),
        metadata: json!({}),
        created_at_ns: t,
    }
}

/// A trace event of `thread`.
pub fn trace_event(thread: &str, run_id: &str, t: i64) -> NewRunEvent {
    NewRunEvent {
        thread_id: thread.into(),
        run_id: run_id.into(),
        user_id: None,
        event_type: "llm_request".into(),
        category: Category::Trace,
        content: json!({"t": t}).into(),
        metadata: json!({}),
        created_at_ns: t,
    }
}

/// `n` message events on one thread (human texts `m{i}`), a trace event after every 7th, written
/// in batches of `batch` events.
pub fn fill_thread(store: &dyn RunEventStore, thread: &str, n: usize, batch: usize) {
    let run = RunScript {
        run_id: "run-fill".into(),
        user_id: None,
        messages: Vec::new(),
    };
    let mut events = Vec::new();
    for i in 0..n {
        events.push(message_event(
            thread,
            &run,
            &ChatMessage::human(format!("m{i}")),
            i as i64,
        ));
        if i % 7 == 6 {
            events.push(trace_event(thread, "run-fill", i as i64));
        }
    }
    for chunk in events.chunks(batch.max(1)) {
        store.put_batch(chunk.to_vec()).unwrap();
    }
}

/// Writes a whole conversation directly (no journal), one batch per run.
pub fn write_conversation(store: &dyn RunEventStore, thread: &str, runs: &[RunScript]) {
    let mut t = 0;
    for run in runs {
        let mut batch = vec![trace_event(thread, &run.run_id, t)];
        for m in &run.messages {
            t += 1;
            batch.push(message_event(thread, run, m, t));
        }
        store.put_batch(batch).unwrap();
    }
}

/// What a full read must return, computed from the store dump without the views: every message
/// row of the thread in seq order, ids filled with uuid5 (computed here with the uuid crate),
/// run_id added. Returns (seqs, messages).
pub fn reference_messages(store: &dyn RunEventStore, thread: &str) -> (Vec<u64>, Vec<Value>) {
    let mut rows: Vec<RunEvent> = store
        .dump()
        .unwrap()
        .into_iter()
        .filter(|e| e.thread_id == thread && e.category == Category::Message)
        .collect();
    rows.sort_by_key(|e| e.seq);
    let seqs = rows.iter().map(|e| e.seq).collect();
    let messages = rows
        .into_iter()
        .map(|e| {
            let mut c = std::sync::Arc::unwrap_or_clone(e.content);
            if let Some(map) = c.as_object_mut() {
                if map.get("id").is_none_or(Value::is_null) {
                    let name = format!("{}:{}", e.thread_id, e.seq);
                    let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, name.as_bytes());
                    map.insert("id".into(), json!(id.to_string()));
                }
                map.insert("run_id".into(), json!(e.run_id));
            }
            c
        })
        .collect();
    (seqs, messages)
}

/// (type, text) of a message dump, for comparisons with what was emitted.
pub fn type_and_text(m: &Value) -> (String, String) {
    let kind = m
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    (kind, content_text(m.get("content").unwrap_or(&Value::Null)))
}

/// Polls a future that waits on nothing outside itself to completion.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    let mut f = std::pin::pin!(f);
    for _ in 0..100_000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("future did not finish in 100000 polls");
}

/// Drives two futures on one thread, polling `a` when the next schedule bit is true and `b`
/// otherwise (cycling the schedule; a finished future is skipped), until both finish.
pub fn drive_two<A: Future, B: Future>(a: A, b: B, schedule: &[bool]) -> (A::Output, B::Output) {
    let mut cx = Context::from_waker(Waker::noop());
    let mut a: Pin<&mut A> = std::pin::pin!(a);
    let mut b: Pin<&mut B> = std::pin::pin!(b);
    let (mut ra, mut rb) = (None, None);
    let schedule = if schedule.is_empty() {
        &[true, false][..]
    } else {
        schedule
    };
    for step in 0..1_000_000usize {
        if ra.is_some() && rb.is_some() {
            break;
        }
        let pick_a = (schedule[step % schedule.len()] && ra.is_none()) || rb.is_some();
        if pick_a {
            if let Poll::Ready(v) = a.as_mut().poll(&mut cx) {
                ra = Some(v);
            }
        } else if let Poll::Ready(v) = b.as_mut().poll(&mut cx) {
            rb = Some(v);
        }
    }
    match (ra, rb) {
        (Some(x), Some(y)) => (x, y),
        _ => panic!("two writers did not finish"),
    }
}

/// A feedback row of `run` on `thread`, by `user` (`None`: anonymous), with no message or comment.
pub fn new_feedback(run: &str, thread: &str, rating: Rating, user: Option<&str>) -> NewFeedback {
    NewFeedback {
        thread_id: thread.into(),
        run_id: run.into(),
        user_id: user.map(str::to_string),
        message_id: None,
        rating,
        comment: None,
        created_at_ns: 0,
    }
}
