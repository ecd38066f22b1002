//! The runs workload as data: threads, the runs lead agents play on them (messages, tool calls,
//! summarization budgets, how each run stops), the faults (failing batch writes, worker crashes,
//! crashes of the store's host), and what the client does (dispatches, waits, reads, ratings),
//! in order.
//!
//! A random seed is turned into one of these by [`super::generate`]; a scenario file holds one
//! written by hand or by the shrinker. The world ([`super::play::world`]) plays it; nothing else about a
//! run is random except turmoil's network jitter, which `network_seed` fixes.
//!
//! Message texts are unique per thread (the checkers identify a message by its text), so
//! hand-written texts must differ from each other and may not contain `#`, which generated filler
//! (`bulk`) texts use.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

fn default_flush_threshold() -> usize {
    20
}

fn default_page_size() -> usize {
    500
}

fn default_keep_messages() -> usize {
    20
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_end(s: &Stop) -> bool {
    *s == Stop::End
}

/// The largest `bulk` block: long threads are made of a few of these.
pub(crate) const BULK_MESSAGES_MAX: u32 = 5000;
/// At most this many worker hosts.
pub(crate) const WORKERS_MAX: u8 = 4;

/// The whole script of one world.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunsScenario {
    /// Seed of turmoil's own network randomness (below 2^63).
    #[serde(default)]
    pub network_seed: u64,
    /// Worker hosts (1 to 4), `worker-0` ...; each plays the runs dispatched to it.
    pub workers: u8,
    /// Every run journal flushes when this many events are buffered (the seed's default: 20).
    #[serde(default = "default_flush_threshold")]
    pub flush_threshold_events: usize,
    /// Message rows per page of the views' full reads (the seed's helper: 500).
    #[serde(default = "default_page_size")]
    pub page_size_events: usize,
    /// Write calls (batch writes of every journal, counted from 0 in the order they reach the
    /// store) that fail; each fails once, nothing of it is written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_write_calls: Vec<u64>,
    /// Hard crashes of worker hosts (every run on it is killed: its journal buffer is lost).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crashes: Vec<Crash>,
    /// Crashes of the store's host, each between two store calls: the `sqlite` store of the
    /// pair is killed without a clean close and opened again on its data (`runs::host`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub store_crashes: Vec<StoreCrash>,
    /// Threads by key: their thread_id.
    pub threads: BTreeMap<String, String>,
    /// The runs, each played once when an op starts it.
    pub runs: Vec<RunSpec>,
    /// What the client does, in order. After the last op it waits for every run to stop and
    /// reads every thread's views once more.
    pub ops: Vec<Op>,
    /// The first store of the pair is the JSONL one, on the world's simulated disk (crashed
    /// with the store's host), where the memory store is otherwise. Played in process only: a
    /// system under test plays its `memory` store there unless `--store jsonl` asks for its
    /// `jsonl` one.
    #[serde(default, skip_serializing_if = "is_false")]
    pub jsonl_store: bool,
    /// Every run journal keeps a trace event's content to at most this many bytes, cut and
    /// marked (`history::runs::truncate_trace`); absent: traces are kept whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_trace_content_bytes: Option<usize>,
    /// AI messages whose `llm_response` trace carries a long model output
    /// ([`super::long_traces`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub long_traces: Vec<LongTrace>,
    /// Reads of the store's table the model answers, asked once the world ended
    /// (`table_read_steps.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_reads: Vec<super::table_reads::TableReadStep>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One AI message whose `llm_response` trace carries a long output ([`super::long_traces`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongTrace {
    /// The run's id.
    pub run: String,
    /// Which AI message of the run (0: its first `ai_message`, as emitted).
    pub ai: u32,
    /// The output's size in bytes (UTF-8).
    pub bytes: u32,
}

/// A worker host crash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    pub worker: u8,
    /// Simulated milliseconds after the start of the world.
    pub at_ms: u32,
    /// How long the host stays down before it restarts (dispatches to it fail meanwhile).
    pub down_ms: u32,
}

/// A crash of the store's host (killed, then restarted at once on the same data).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreCrash {
    /// Simulated milliseconds after the start of the world (1 to the simulation's bound).
    pub at_ms: u32,
}

/// The latest a crash may be scheduled: the bound of simulated time.
pub(crate) const CRASH_AT_MS_MAX: u32 = 300_000;

/// One run of the lead agent on a thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// The run_id its events carry; unique in the scenario.
    pub id: String,
    /// Thread key.
    pub thread: String,
    /// The worker host that plays it (0-based).
    #[serde(default)]
    pub worker: u8,
    /// The user the run acts for; absent: a legacy row with a NULL user_id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Summarization of the checkpoint before each AI message, when over the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarize: Option<Summarize>,
    /// How the run stops.
    #[serde(default, skip_serializing_if = "is_end")]
    pub stop: Stop,
    /// What the run emits, in order.
    pub messages: Vec<MessageSpec>,
    /// Subagent tasks the run delegates, written between its messages ([`super::tasks`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<super::tasks::TaskSpec>,
    /// What the model calls answering each of its user turns carry besides the turn
    /// ([`super::model_input`]).
    #[serde(default, skip_serializing_if = "ModelInput::is_plain")]
    pub model_input: ModelInput,
    /// Invocations nested inside the run's root (tool nodes, middleware, subgraphs) around
    /// spans of its messages ([`super::nested`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nested: Vec<NestedSpec>,
}

/// One invocation nested inside a run's root graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NestedSpec {
    pub kind: NestedKind,
    /// It starts just before the run's message `at` (counted as `Stop::after` counts them).
    pub at: u32,
    /// It ends after this many messages (0: at once), before the root ends; still open when
    /// the run errors or is cancelled, it fails with the run.
    #[serde(default)]
    pub messages: u32,
}

/// What a nested invocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NestedKind {
    Tools,
    Middleware,
    Subgraph,
}

/// What each of a run's user turns brings to the model calls that answer it
/// ([`super::model_input`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInput {
    /// Hidden (`hide_from_ui`) reminders the agent's call carries around the user's message.
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub reminders: u8,
    /// How many of `reminders` come after the user's message (the rest come just before it),
    /// as a middleware that appends its reminder to the call places it.
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub reminders_after: u8,
    /// The title middleware makes its own call, with its own human prompt, before the agent's.
    #[serde(default, skip_serializing_if = "is_false")]
    pub middleware_prompt: bool,
    /// The agent's call receives the user's text wrapped by an input-sanitization middleware,
    /// the original kept aside.
    #[serde(default, skip_serializing_if = "is_false")]
    pub wrapped: bool,
}

fn is_zero_u8(v: &u8) -> bool {
    *v == 0
}

impl ModelInput {
    pub fn is_plain(&self) -> bool {
        *self == ModelInput::default()
    }
}

/// The summarization middleware's settings for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summarize {
    /// Summarize when the checkpoint's messages estimate more tokens than this (o200k).
    pub budget_tokens: usize,
    /// Messages kept verbatim after the summary.
    #[serde(default = "default_keep_messages")]
    pub keep_messages: usize,
}

/// How a run stops. `after` counts emitted messages (tool results included; a `bulk` block
/// counts each of its messages).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Stop {
    /// Every message, then `run_end`.
    #[default]
    End,
    /// After `after` messages, `run_error` and the journal's error path.
    Error { after: u32 },
    /// After `after` messages, the journal's cancel path (the worker's `finally`).
    Cancel { after: u32 },
    /// After `after` messages the worker process dies: the journal is dropped unflushed.
    Kill { after: u32 },
}

impl Stop {
    /// Messages emitted before the stop (`None`: all of them).
    pub fn after(self) -> Option<u32> {
        match self {
            Stop::End => None,
            Stop::Error { after } | Stop::Cancel { after } | Stop::Kill { after } => Some(after),
        }
    }
}

/// What a run emits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum MessageSpec {
    /// A `human_message` (stored without an id).
    Human {
        text: String,
        /// Simulated milliseconds before it (0: same instant as the previous event).
        #[serde(default, skip_serializing_if = "is_zero")]
        after_ms: u32,
    },
    /// An `ai_tool_call` carrying `text` and one call per entry of `calls`, then one
    /// `tool_result` per call (stored without ids).
    ToolStep {
        text: String,
        calls: Vec<ToolSpec>,
        #[serde(default, skip_serializing_if = "is_zero")]
        after_ms: u32,
    },
    /// An `ai_message`: the lead agent's final text, with the id the model gave it.
    Ai {
        text: String,
        #[serde(default, skip_serializing_if = "is_zero")]
        after_ms: u32,
        /// The `metadata.caller` it is journaled with (absent: none), any JSON value. A string
        /// starting with `middleware:` makes it a middleware's own model call (a title, a
        /// summary: [`super::script::is_middleware_caller`]): journaled like any AI message,
        /// never in the agent's state, and never its run's answer (R18). Other callers
        /// (`lead_agent`, `Middleware:title`, a number) leave it the lead agent's answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caller: Option<serde_json::Value>,
    },
    /// Filler for long threads: `messages` messages, alternating a one-call `ai_tool_call` and
    /// its `tool_result` (an odd count ends with an `ai_message`), texts `<run_id>#<n> ...`.
    Bulk { messages: u32 },
}

/// One tool call of a tool step and the result that answers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    pub result: String,
    /// Simulated milliseconds before the result.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub after_ms: u32,
}

/// What the client does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    /// Dispatch a run to its worker (does not wait for it to finish).
    Start {
        run: String,
    },
    /// Wait until the run has stopped; the client has then seen its messages streamed live.
    Wait {
        run: String,
    },
    Sleep {
        ms: u32,
    },
    /// Read the thread's `/history`, `/messages` and `count_messages`, from both backends; the
    /// client then renders `/history`.
    Views {
        thread: String,
    },
    /// One raw `list_messages` page from both backends (no cursor, `before`, `after` or both).
    Page {
        thread: String,
        limit: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<u64>,
    },
    /// Page through every message of the thread with `limit` per page, forwards with `after`
    /// cursors or backwards with `before` cursors, on both backends.
    Paginate {
        thread: String,
        limit: u32,
        #[serde(default)]
        backward: bool,
    },
    /// `list_events` of one run, from both backends.
    Events {
        run: String,
    },
    /// Deletes one run's rows from both backends (`delete_by_run`, every user's). The run must
    /// have been waited for; its feedback stays (upstream's event store deletes events only).
    /// The client reads the thread's `max_seq` before and after, and the run's
    /// events and messages after.
    DeleteRun {
        run: String,
    },
    /// The run's delivery receipt through `put_if_absent` on both backends (`run.delivery`,
    /// category `outputs`, content `{"attempt": attempt}`), as a worker and its recovery path
    /// may both write it. The run must have been started.
    Receipt {
        run: String,
        attempt: u32,
    },
    /// Every message of one run by paging `list_messages_by_run`, `limit` a page, forward
    /// (`after` cursors) or backward (`before` cursors), on both backends.
    RunMessages {
        run: String,
        limit: u32,
        #[serde(default)]
        backward: bool,
    },
    /// The run's events through one `list_events` filter (`event_types`, `task`: at least one
    /// of them; a receipt is the client's row, not the run's), paged with `after_seq` cursors,
    /// `limit` a page, on both backends. The run must have been waited for.
    FilteredEvents {
        run: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event_types: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
        limit: u32,
    },
    /// `get_last_visible_ai_seq_by_run` for every run of the thread (started or not) and one
    /// id no run has, with the thread's message rows read at the same instant, on both
    /// backends.
    LastAnswers {
        thread: String,
    },
    /// The thread's message rows and their count in one user's scope (`list_messages` and
    /// `count_messages` with `user_id`): that user's (`user`), or every user's (absent:
    /// `user_id=None`, legacy rows without a user included), read whole on both backends.
    UserMessages {
        thread: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
    },
    /// A user rates an AI message the client renders for the thread.
    Rate {
        thread: String,
        user: String,
        up: bool,
        target: Target,
    },
    /// A rating without a user (`create` with no `user_id`): one more each time.
    RateAnonymously {
        thread: String,
        up: bool,
        target: Target,
    },
    /// Delete by id: the `nth` (modulo their number) feedback id the client was given on the
    /// thread for `user` (absent: an anonymous rating), deleted in that user's scope.
    Withdraw {
        thread: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
        nth: u32,
    },
    /// `delete_by_run`: the user withdraws their rating of the run.
    WithdrawRun {
        run: String,
        user: String,
    },
    /// Every feedback read of the thread in one scope (`user`; absent: every user's): each
    /// feedback id the client was given, `list_by_run` and `aggregate_by_run` of every run, the
    /// grouped listing, `list_by_run_ids` of every other run, and `/messages` with feedback.
    FeedbackReads {
        thread: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
    },
    /// Deletes every row of the thread from both backends (`delete_by_thread`, every user's),
    /// which leaves it empty: later runs may start on it, numbered from 1 again. Every run of
    /// the thread started before must have been waited for, and no feedback call may follow on
    /// it (the model of ratings knows no thread deletion). The client reads the thread's `max_seq`,
    /// messages and count, and the events of each of its runs, right after.
    ///
    /// With `everywhere`, the API's deletion of the thread (`DELETE /threads/{id}`,
    /// [`history::runs::ThreadRecords::delete_thread`]): its run events, its feedback and its
    /// checkpoints; the client then also reads `/history` and the thread's feedback, and ratings
    /// given before are gone from the model too.
    DeleteThread {
        thread: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        everywhere: bool,
    },
    /// A late commit of `run`'s last batch (one `workspace_changes` row), admitted before a
    /// deletion of its thread and committed after it, on both backends: the deletion fenced
    /// the run, so both must refuse it (R28). The run must have been waited for, and its thread
    /// deleted since.
    LateWrite {
        run: String,
    },
    /// The thread's message rows and their count in the default scope (upstream's `user_id`
    /// AUTO, the request's current user), read whole on both backends by a request acting for
    /// `run`: its user is the current one; a legacy run's request has none, and the store must
    /// refuse rather than read every user's rows. The run must have been started.
    DefaultScopeMessages {
        thread: String,
        run: String,
    },
    /// A reader edits what a read handed it: the thread's newest `limit` messages from both
    /// backends, a nested object of each row's content edited on the reader's copy (R3).
    EditRead {
        thread: String,
        limit: u32,
    },
    /// The run's writer edits a nested object of the last message it wrote that has one,
    /// after the write (R3). The run must have been waited for.
    EditWritten {
        run: String,
    },
}

/// The thread key of run `run` among `runs` (a scenario's, or a generator's before its scenario
/// exists); `None` when no run has that id.
pub(crate) fn thread_of<'a>(runs: &'a [RunSpec], run: &str) -> Option<&'a str> {
    runs.iter().find(|r| r.id == run).map(|r| r.thread.as_str())
}

/// Which rendered message a rating targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The last final AI message streamed live by the run the client waited for last on this
    /// thread: a rating right after the stream ends (the message has no run_id yet).
    Live,
    /// The n-th final AI message (modulo their number) of everything the client renders.
    Old(u32),
}

impl RunsScenario {
    /// The index of the run with this id.
    pub fn run_index(&self, id: &str) -> Option<usize> {
        self.runs.iter().position(|r| r.id == id)
    }

    /// The ids of the runs on `thread`, in the scenario's order.
    pub fn run_ids_on<'a>(&'a self, thread: &'a str) -> impl Iterator<Item = String> + 'a {
        (self.runs.iter())
            .filter(move |r| r.thread == thread)
            .map(|r| r.id.clone())
    }

    /// Checks what a file can get wrong, naming the field. The generator's output passes by
    /// construction (a test asserts it).
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=WORKERS_MAX).contains(&self.workers) {
            return Err(format!(
                "workers: expected 1 to {WORKERS_MAX}, found {}",
                self.workers
            ));
        }
        if self.flush_threshold_events == 0 {
            return Err("flush_threshold_events: expected at least 1".into());
        }
        if self.page_size_events == 0 {
            return Err("page_size_events: expected at least 1".into());
        }
        if self.network_seed > i64::MAX as u64 {
            return Err("network_seed: expected a value below 2^63".into());
        }
        if self.threads.is_empty() {
            return Err("threads: expected at least one thread".into());
        }
        for (key, id) in &self.threads {
            if id.is_empty() {
                return Err(format!("threads.{key}: empty thread id"));
            }
        }
        for (c, crash) in self.crashes.iter().enumerate() {
            if crash.worker >= self.workers {
                return Err(format!("crashes[{c}].worker: no worker {}", crash.worker));
            }
        }
        for (c, crash) in self.store_crashes.iter().enumerate() {
            if !(1..=CRASH_AT_MS_MAX).contains(&crash.at_ms) {
                return Err(format!(
                    "store_crashes[{c}].at_ms: expected 1 to {CRASH_AT_MS_MAX}, found {}",
                    crash.at_ms
                ));
            }
        }
        let mut run_ids = BTreeSet::new();
        let mut texts: BTreeSet<(&str, &str)> = BTreeSet::new();
        for (r, run) in self.runs.iter().enumerate() {
            let at = format!("runs[{r}]");
            self.validate_run(&at, run, &mut run_ids)?;
            for (m, message) in run.messages.iter().enumerate() {
                run.validate_message(&format!("{at}.messages[{m}]"), message, &mut texts)?;
            }
            super::tasks::validate(&at, &run.tasks, run.message_count())?;
            for (k, n) in run.nested.iter().enumerate() {
                let end = n.at as usize + n.messages as usize;
                if end > run.message_count() {
                    return Err(format!(
                        "{at}.nested[{k}]: ends after message {end}, the run has {}",
                        run.message_count()
                    ));
                }
            }
        }
        self.validate_ops()
    }

    /// One run's own fields at `at`; `run_ids` collects the ids seen so far.
    fn validate_run<'a>(
        &self,
        at: &str,
        run: &'a RunSpec,
        run_ids: &mut BTreeSet<&'a str>,
    ) -> Result<(), String> {
        if run.id.is_empty() {
            return Err(format!("{at}.id: empty run id"));
        }
        if !run_ids.insert(run.id.as_str()) {
            return Err(format!("{at}.id: run id `{}` is used twice", run.id));
        }
        if !self.threads.contains_key(&run.thread) {
            return Err(format!("{at}.thread: no thread with key `{}`", run.thread));
        }
        if run.worker >= self.workers {
            return Err(format!("{at}.worker: no worker {}", run.worker));
        }
        if run.user.as_deref() == Some("") {
            return Err(format!("{at}.user: empty (omit it for a NULL user)"));
        }
        if let Some(s) = run.summarize {
            if s.budget_tokens == 0 || s.keep_messages == 0 {
                return Err(format!(
                    "{at}.summarize: budget_tokens and keep_messages must be at least 1"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A scenario of thread `t` (its id `thread_id`) with `runs` and `ops`: one worker, a
    /// batch of 20 events, pages of 500, no fault, no JSONL store, no long or cut traces.
    pub(crate) fn on_one_thread(thread_id: &str, runs: Vec<RunSpec>, ops: Vec<Op>) -> RunsScenario {
        RunsScenario {
            network_seed: 0,
            workers: 1,
            flush_threshold_events: 20,
            page_size_events: 500,
            failing_write_calls: Vec::new(),
            crashes: Vec::new(),
            store_crashes: Vec::new(),
            jsonl_store: false,
            max_trace_content_bytes: None,
            long_traces: Vec::new(),
            table_reads: Vec::new(),
            threads: [("t".to_string(), thread_id.to_string())].into(),
            runs,
            ops,
        }
    }

    fn small() -> RunsScenario {
        on_one_thread(
            "thread-1",
            vec![RunSpec {
                user: Some("u".into()),
                ..RunSpec::plain(
                    "run-1",
                    "t",
                    vec![
                        MessageSpec::Human {
                            text: "hello".into(),
                            after_ms: 0,
                        },
                        MessageSpec::Ai {
                            text: "hi".into(),
                            after_ms: 1,
                            caller: None,
                        },
                    ],
                )
            }],
            vec![
                Op::Start {
                    run: "run-1".into(),
                },
                Op::Wait {
                    run: "run-1".into(),
                },
            ],
        )
    }

    #[test]
    fn a_small_scenario_is_valid() {
        assert_eq!(small().validate(), Ok(()));
    }

    #[test]
    fn the_wider_calls_need_their_run_stopped_and_a_rating_may_follow_a_deletion() {
        let run = || "run-1".to_string();
        let mut s = small();
        s.ops.insert(1, Op::DeleteRun { run: run() });
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("ops[1].run: run `run-1` is deleted before a wait"));
        let mut s = small();
        s.ops.push(Op::DeleteRun { run: run() });
        s.ops.push(Op::Receipt {
            run: run(),
            attempt: 0,
        });
        s.ops.push(Op::RunMessages {
            run: run(),
            limit: 2,
            backward: true,
        });
        assert_eq!(s.validate(), Ok(()));
        s.ops.push(Op::Rate {
            thread: "t".into(),
            user: "u".into(),
            up: true,
            target: Target::Old(0),
        });
        assert_eq!(s.validate(), Ok(()), "its feedback outlives the run's rows");
        s.ops.push(Op::WithdrawRun {
            run: run(),
            user: String::new(),
        });
        assert!(s.validate().unwrap_err().starts_with("ops[6].user: empty"));
        s.ops.pop();
        s.ops.push(Op::FeedbackReads {
            thread: "x".into(),
            user: None,
        });
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("ops[6].thread: no thread"));
        let mut s = small();
        s.ops.insert(
            0,
            Op::Receipt {
                run: run(),
                attempt: 0,
            },
        );
        assert!(s.validate().unwrap_err().starts_with("ops[0].run"));
        let mut s = small();
        s.ops.push(Op::RunMessages {
            run: run(),
            limit: 0,
            backward: false,
        });
        assert!(s.validate().unwrap_err().starts_with("ops[2].limit"));
    }

    #[test]
    fn a_thread_deletion_needs_its_runs_stopped_and_no_feedback_call_after() {
        let delete = || Op::DeleteThread {
            thread: "t".into(),
            everywhere: false,
        };
        let mut s = small();
        s.ops.insert(1, delete());
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("ops[1].thread: run `run-1` of thread `t` is started and not waited"));
        let mut s = small();
        s.ops.insert(0, delete());
        s.ops.push(delete());
        s.ops.push(Op::Receipt {
            run: "run-1".into(),
            attempt: 1,
        });
        assert_eq!(s.validate(), Ok(()), "an idle thread, even never written");
        s.ops.push(Op::Rate {
            thread: "t".into(),
            user: "u".into(),
            up: true,
            target: Target::Live,
        });
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("ops[5]: a feedback call on thread `t` after its deletion"));
        s.ops.pop();
        s.ops.push(Op::FeedbackReads {
            thread: "t".into(),
            user: None,
        });
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("ops[5]: a feedback call on thread `t` after its deletion"));
        let mut s = small();
        s.ops.push(Op::DeleteThread {
            thread: "x".into(),
            everywhere: false,
        });
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("ops[2].thread: no thread"));
    }

    #[test]
    fn a_default_scope_read_names_a_started_run_of_its_thread() {
        let read = |thread: &str| Op::DefaultScopeMessages {
            thread: thread.into(),
            run: "run-1".into(),
        };
        let mut s = small();
        s.ops.push(read("t"));
        assert_eq!(s.validate(), Ok(()));
        let mut s = small();
        s.ops.insert(0, read("t"));
        assert!(s.validate().unwrap_err().starts_with("ops[0].run"));
        let mut s = small();
        s.threads.insert("u".into(), "tid-u".into());
        s.ops.push(read("u"));
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("ops[2].run: run `run-1` is on thread `t`, not `u`"));
    }

    /// A caller is any JSON value in a scenario file, and a message without one is written
    /// without the key, as files were before callers existed.
    #[test]
    fn callers_round_trip_through_a_scenario_file() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Messages {
            messages: Vec<MessageSpec>,
        }
        let text = r#"messages = [
  { kind = "ai", text = "a" },
  { kind = "ai", text = "b", caller = "middleware:title" },
  { kind = "ai", text = "c", caller = 7 },
]
"#;
        let read: Messages = toml::from_str(text).expect("parses");
        let callers: Vec<Option<serde_json::Value>> = read
            .messages
            .iter()
            .map(|m| match m {
                MessageSpec::Ai { caller, .. } => caller.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(
            callers,
            [
                None,
                Some(serde_json::json!("middleware:title")),
                Some(serde_json::json!(7))
            ]
        );
        let written = toml::to_string(&read).expect("writes");
        assert_eq!(written.matches("caller").count(), 2, "{written}");
        assert_eq!(
            toml::from_str::<Messages>(&written).expect("reads back"),
            read
        );
    }

    #[test]
    fn errors_name_the_field() {
        let mut s = small();
        s.runs[0].worker = 3;
        assert!(s.validate().unwrap_err().starts_with("runs[0].worker"));
        let mut s = small();
        s.runs[0].messages.push(MessageSpec::Human {
            text: "hello".into(),
            after_ms: 0,
        });
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("runs[0].messages[2].text"));
        let mut s = small();
        s.ops.insert(
            0,
            Op::Wait {
                run: "run-1".into(),
            },
        );
        assert!(s.validate().unwrap_err().starts_with("ops[0].run"));
        let mut s = small();
        s.store_crashes.push(StoreCrash { at_ms: 0 });
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("store_crashes[0].at_ms"));
        let mut s = small();
        s.ops.push(Op::Views {
            thread: "nope".into(),
        });
        assert!(s.validate().unwrap_err().starts_with("ops[2].thread"));
    }
}
