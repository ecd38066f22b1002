//! Seed -> scenario: lead agents running multi-run threads as the platform's workers do.
//!
//! Runs ask a question, call tools (1 to 3 calls a step, their results following), answer, and
//! sometimes take a second turn; some summarize their checkpoint over a random token budget, some
//! run as legacy runs with a NULL user; some are killed hard, cancelled or error at a random
//! message. The client starts runs (the next one before this one ends, often on the same thread
//! and worker: concurrent writers), waits for them, reads the views, pages through the messages
//! with random limits and cursors, and rates old answers and the answer it just saw streamed. A
//! share of seeds adds a long thread (past 200, 500 or 1000 messages, exact page multiples and
//! one past). Every text names its run, so texts are unique per thread.
//!
//! The workload stream decides what agents and the client do; the fault stream decides which
//! batch writes fail, when a worker crashes and when the store's host crashes.

pub(in crate::runs) mod caller_edits;
pub(in crate::runs) mod feedback_ops;
pub(in crate::runs) mod generate_event_ops;
pub(in crate::runs) mod generate_late_writes;
pub(in crate::runs) mod generate_store_ops;
pub(in crate::runs) mod generate_thread_ops;
pub(in crate::runs) mod generate_user_ops;
pub(crate) mod tight_windows;
pub(in crate::runs) mod weaving;

use super::options::RunsOptions;
use super::scenario::{
    Crash, MessageSpec, Op, RunSpec, RunsScenario, Stop, StoreCrash, Summarize, Target, ToolSpec,
};
use crate::hostile_text::{HostileMix, HostileText};
use crate::rng::{SeedRng, Stream};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

const TOOLS: [&str; 4] = ["web_search", "read_file", "python", "fetch_url"];
const USERS: [&str; 2] = ["user-1", "user-2"];
/// The thread key of the long thread.
pub const LONG_THREAD: &str = "long";

/// The client's calls of the store's wider API woven into `ops`, and subagent tasks given to
/// some `runs`: each kind from a sub-stream of its own, in the order they came into the
/// workload, so a seed keeps everything it had before a later kind existed.
fn weave_wider_calls(
    ops: Vec<Op>,
    runs: &mut [RunSpec],
    options: &RunsOptions,
    seed: SeedRng,
) -> Vec<Op> {
    use self::weaving::Weaving;
    let ops = self::generate_store_ops::weave(
        ops,
        Weaving { runs, options },
        seed.substream(Stream::Workload, 2),
    );
    // Subagent tasks and the filtered reads.
    let mut events_rng = seed.substream(Stream::Workload, 3);
    self::generate_event_ops::add_tasks(runs, options, &mut events_rng);
    let ops = self::generate_event_ops::weave(ops, Weaving { runs, options }, events_rng);
    // The user-scoped reads.
    let ops = self::generate_user_ops::weave(
        ops,
        Weaving { runs, options },
        seed.substream(Stream::Workload, 4),
    );
    // The default-scope reads.
    let scope_rng = seed.substream(
        Stream::Workload,
        self::generate_user_ops::DEFAULT_SCOPE_SUBSTREAM,
    );
    let ops =
        self::generate_user_ops::weave_default_scope(ops, Weaving { runs, options }, scope_rng);
    // Thread deletions: only where no rating follows on the thread.
    let thread_rng = seed.substream(Stream::Workload, self::generate_thread_ops::SUBSTREAM);
    let ops = self::generate_thread_ops::weave(ops, Weaving { runs, options }, thread_rng);
    let api_rng = seed.substream(
        Stream::Workload,
        self::generate_thread_ops::EVERYWHERE_SUBSTREAM,
    );
    let ops = self::generate_thread_ops::through_the_api(ops, options, api_rng);
    // The feedback calls beyond a rating (sub-stream 21, after R21: other kinds of calls that
    // come into the workload at the same time take numbers of their own), none on a thread
    // after its deletion.
    let ops = self::feedback_ops::weave(
        ops,
        Weaving { runs, options },
        seed.substream(Stream::Workload, 21),
    );
    // Late writes of runs whose thread a deletion fenced (R28).
    let late_rng = seed.substream(Stream::Workload, self::generate_late_writes::SUBSTREAM);
    let ops = self::generate_late_writes::weave(ops, runs, late_rng);
    let edit_rng = seed.substream(Stream::Workload, self::caller_edits::SUBSTREAM);
    let ops = self::caller_edits::weave(ops, runs, edit_rng);
    // Last, the AI messages' callers: the runs may grow by a middleware's messages, which no
    // draw above saw, so every op and fault of a seed stays what it was.
    let mut caller_rng =
        seed.substream(Stream::Workload, self::generate_event_ops::CALLER_SUBSTREAM);
    self::generate_event_ops::add_callers(runs, options, &mut caller_rng);
    // Hostile material in the texts, last of all (callers' messages included).
    let text_rng = seed.substream(Stream::Workload, TEXT_SUBSTREAM);
    add_hostile_material(runs, text_rng);
    // What the model calls carry besides each user turn: no text of the script changes.
    let mut input_rng = seed.substream(Stream::Workload, super::model_input::SUBSTREAM);
    super::model_input::add_model_inputs(runs, &mut input_rng);
    // Invocations nested inside the runs' roots.
    let mut nested_rng = seed.substream(Stream::Workload, super::nested::SUBSTREAM);
    super::nested::add_nested(runs, &mut nested_rng);
    // Tight keep windows on later requests of a thread (R29).
    let mut tight_rng = seed.substream(Stream::Workload, self::tight_windows::SUBSTREAM);
    self::tight_windows::add_tight_windows(runs, &mut tight_rng);
    ops
}

/// The scenario `seed` plays with the options it draws (no command-line override).
#[cfg(test)]
pub fn of_seed(seed: u64) -> RunsScenario {
    let seed = SeedRng::new(seed);
    generate(seed, &RunsOptions::from_seed(seed))
}

/// Builds the scenario of `seed` under `options`.
pub fn generate(seed: SeedRng, options: &RunsOptions) -> RunsScenario {
    let mut ids = seed.substream(Stream::Workload, 1);
    let mut threads = BTreeMap::new();
    let keys: Vec<String> = (0..options.threads).map(|i| format!("t{i}")).collect();
    for k in &keys {
        threads.insert(k.clone(), uuid_like(&mut ids));
    }
    let mut gen = Generator {
        rng: seed.stream(Stream::Workload),
        options,
        runs: Vec::new(),
        ops: Vec::new(),
        messages_on: BTreeMap::new(),
    };
    let mut pending: Vec<usize> = Vec::new();
    let mut overlap: Option<(String, u8)> = None;
    for i in 0..options.runs as usize {
        let (thread, worker) = gen.place(overlap.take(), &keys);
        let r = gen.ordinary_run(i, thread.clone(), worker);
        gen.ops.push(Op::Start {
            run: gen.runs[r].id.clone(),
        });
        pending.push(r);
        if i + 1 < options.runs as usize && gen.chance(options.concurrent_probability) {
            overlap = Some((thread, worker));
            continue;
        }
        for r in std::mem::take(&mut pending) {
            gen.wait_and_look(r);
        }
    }
    for r in std::mem::take(&mut pending) {
        gen.wait_and_look(r);
    }
    if options.long_thread_messages > 0 {
        threads.insert(LONG_THREAD.to_string(), uuid_like(&mut ids));
        gen.long_thread(options.long_thread_messages);
    }
    let Faults {
        failing_write_calls,
        crashes,
        store_crashes,
    } = faults(seed, options, &gen.runs);
    let ops = weave_wider_calls(gen.ops, &mut gen.runs, options, seed);
    let network_seed = seed.stream(Stream::Network).random::<u64>() & (i64::MAX as u64);
    // Long model outputs in traces and the journals' bound, last of all.
    let mut trace_rng = seed.substream(Stream::Workload, super::long_traces::SUBSTREAM);
    let (max_trace_content_bytes, long_traces) =
        super::long_traces::draw(&gen.runs, &mut trace_rng);
    // Thread ids of the shapes some systems refuse (S4 to S6), in a few seeds, last of all.
    let mut shape_rng = seed.substream(Stream::Workload, super::store_differences::SUBSTREAM);
    super::store_differences::draw(&mut threads, &mut shape_rng);
    RunsScenario {
        // Reads of the store's table the model answers, asked at the end, last of all.
        table_reads: super::table_read_steps::draw(&threads, &gen.runs, seed),
        network_seed,
        workers: options.workers,
        flush_threshold_events: options.flush_threshold_events,
        page_size_events: options.page_size_events,
        failing_write_calls,
        crashes,
        store_crashes,
        threads,
        runs: gen.runs,
        ops,
        jsonl_store: options.jsonl_store,
        max_trace_content_bytes,
        long_traces,
    }
}

// Hostile material in the runs' texts: a pass over the generated runs, from a sub-stream of
// its own and after every other draw, so a seed keeps its runs, ops and faults. Every message
// text and tool result keeps the words that make it unique on its thread (`run-3 answer 0`)
// and may gain material of a special class after them. Empty and whitespace-only texts are
// never whole texts here: a message is identified by its text, and validation rejects an empty
// one.

/// The workload sub-stream the texts' hostile material is drawn from.
pub const TEXT_SUBSTREAM: u64 = 0x7e57;

/// A seed has a few dozen texts.
const TEXT_MIX: HostileMix = HostileMix {
    hostile_probability: 0.25,
    long_probability: 0.02,
};

/// Puts hostile material after the texts of `runs`. Each text draws from a stream of its own,
/// keyed by the text (unique on its thread), so that messages added or left out elsewhere (a
/// middleware's) leave every other text as it was.
pub fn add_hostile_material(runs: &mut [RunSpec], mut rng: ChaCha8Rng) {
    let base: u64 = rng.random();
    let decorate = |text: &mut String| {
        let key = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let mut texts = HostileText::new(ChaCha8Rng::seed_from_u64(base ^ key), TEXT_MIX);
        *text = texts.around(text, "x");
    };
    for run in runs.iter_mut() {
        for message in &mut run.messages {
            match message {
                MessageSpec::Human { text, .. } | MessageSpec::Ai { text, .. } => decorate(text),
                MessageSpec::ToolStep { text, calls, .. } => {
                    decorate(text);
                    for call in calls {
                        decorate(&mut call.result);
                    }
                }
                MessageSpec::Bulk { .. } => {}
            }
        }
    }
}

/// A version-4-looking uuid, as thread ids look.
fn uuid_like(rng: &mut ChaCha8Rng) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        rng.random::<u32>(),
        rng.random::<u16>(),
        rng.random::<u16>() & 0xfff,
        rng.random::<u16>() & 0xfff,
        rng.random::<u64>() & 0xffff_ffff_ffff
    )
}

/// Messages a spec expands to.
fn expanded_len(messages: &[MessageSpec]) -> u32 {
    messages
        .iter()
        .map(|m| match m {
            MessageSpec::Human { .. } | MessageSpec::Ai { .. } => 1,
            MessageSpec::ToolStep { calls, .. } => 1 + calls.len() as u32,
            MessageSpec::Bulk { messages } => *messages,
        })
        .sum()
}

struct Generator<'a> {
    rng: ChaCha8Rng,
    options: &'a RunsOptions,
    runs: Vec<RunSpec>,
    ops: Vec<Op>,
    /// Messages scripted per thread so far: the scale of cursors and limits.
    messages_on: BTreeMap<String, u32>,
}

impl Generator<'_> {
    fn chance(&mut self, p: f64) -> bool {
        crate::rng::chance(&mut self.rng, p)
    }

    fn pick(&mut self, keys: &[String]) -> String {
        keys.choose(&mut self.rng).cloned().unwrap_or_default()
    }

    /// The thread and worker of the next run: after a run it overlaps, more often than not the
    /// same thread and worker (concurrent writers); otherwise any.
    fn place(&mut self, overlap: Option<(String, u8)>, keys: &[String]) -> (String, u8) {
        let workers = self.options.workers;
        match overlap {
            Some((t, w)) => {
                let thread = if self.rng.random_bool(0.7) {
                    t
                } else {
                    self.pick(keys)
                };
                let worker = if self.rng.random_bool(0.6) {
                    w
                } else {
                    self.rng.random_range(0..workers)
                };
                (thread, worker)
            }
            None => {
                let t = self.pick(keys);
                (t, self.rng.random_range(0..workers))
            }
        }
    }

    fn pause(&mut self) -> u32 {
        if self.chance(self.options.pause_probability) {
            self.rng.random_range(1..=2)
        } else {
            0
        }
    }

    fn ordinary_run(&mut self, i: usize, thread: String, worker: u8) -> usize {
        let o = self.options;
        let id = format!("run-{i}");
        let mut messages = Vec::new();
        let turns = 1 + usize::from(self.chance(o.second_turn_probability));
        for t in 0..turns {
            let after_ms = self.pause();
            messages.push(MessageSpec::Human {
                text: format!("{id} question {t}"),
                after_ms,
            });
            let mut s = 0;
            while s < 4 && self.chance(o.tool_probability) {
                let step = self.tool_step(&id, t, s);
                messages.push(step);
                s += 1;
            }
            let after_ms = self.pause();
            messages.push(MessageSpec::Ai {
                text: format!("{id} answer {t}"),
                after_ms,
                caller: None,
            });
        }
        let len = expanded_len(&messages);
        let stop = self.stop(len);
        let summarize = self.summarize();
        let user = if self.chance(o.legacy_user_probability) {
            None
        } else {
            USERS.choose(&mut self.rng).map(|u| u.to_string())
        };
        *self.messages_on.entry(thread.clone()).or_default() += len;
        self.runs.push(RunSpec {
            worker,
            user,
            summarize,
            stop,
            ..RunSpec::plain(id, thread, messages)
        });
        self.runs.len() - 1
    }

    /// An AI step calling one to three tools, each with its result.
    fn tool_step(&mut self, id: &str, t: usize, s: usize) -> MessageSpec {
        let calls = (0..self.rng.random_range(1..=3))
            .map(|j| {
                let after_ms = self.pause();
                ToolSpec {
                    name: TOOLS
                        .choose(&mut self.rng)
                        .copied()
                        .unwrap_or("python")
                        .into(),
                    result: format!("{id} result {t}.{s}.{j}"),
                    after_ms,
                }
            })
            .collect();
        let after_ms = self.pause();
        MessageSpec::ToolStep {
            text: format!("{id} step {t}.{s}"),
            calls,
            after_ms,
        }
    }

    /// How a run of `len` expanded messages stops: killed, cancelled or errored after some of
    /// them, or a normal end.
    fn stop(&mut self, len: u32) -> Stop {
        let o = self.options;
        if self.chance(o.kill_probability) {
            Stop::Kill {
                after: self.rng.random_range(0..=len),
            }
        } else if self.chance(o.cancel_probability) {
            Stop::Cancel {
                after: self.rng.random_range(0..=len),
            }
        } else if self.chance(o.error_probability) {
            Stop::Error {
                after: self.rng.random_range(0..=len),
            }
        } else {
            Stop::End
        }
    }

    fn summarize(&mut self) -> Option<Summarize> {
        if !self.chance(self.options.summarize_probability) {
            return None;
        }
        let keep_messages = if self.rng.random_bool(0.4) {
            20
        } else {
            self.rng.random_range(1..=8)
        };
        Some(Summarize {
            budget_tokens: self.rng.random_range(20..=300),
            keep_messages,
        })
    }

    /// Waits for run `r`, then maybe rates its answer right away, reads, pages and rates.
    fn wait_and_look(&mut self, r: usize) {
        let o = self.options;
        let (id, thread) = (self.runs[r].id.clone(), self.runs[r].thread.clone());
        self.ops.push(Op::Wait { run: id.clone() });
        if self.chance(o.rate_live_probability) {
            self.rate(&thread, Target::Live);
        }
        if self.chance(o.views_probability) {
            self.ops.push(Op::Views {
                thread: thread.clone(),
            });
        }
        if self.chance(o.page_probability) {
            self.pages(&thread);
            if self.rng.random_bool(0.3) {
                self.ops.push(Op::Events { run: id });
            }
        }
        if self.chance(o.rate_old_probability) {
            let n = self.rng.random_range(0..8);
            self.rate(&thread, Target::Old(n));
        }
        if self.rng.random_bool(0.2) {
            let ms = self.rng.random_range(1..=5);
            self.ops.push(Op::Sleep { ms });
        }
    }

    fn rate(&mut self, thread: &str, target: Target) {
        let user = USERS.choose(&mut self.rng).copied().unwrap_or("user-1");
        let up = self.rng.random_bool(0.7);
        self.ops.push(Op::Rate {
            thread: thread.to_string(),
            user: user.to_string(),
            up,
            target,
        });
    }

    /// A raw page with a random cursor and limit, then a paginated full read.
    fn pages(&mut self, thread: &str) {
        let scale = u64::from(self.messages_on.get(thread).copied().unwrap_or(1)) * 2 + 10;
        let limit = if self.rng.random_bool(0.2) {
            self.rng.random_range(0..=2000)
        } else {
            self.rng.random_range(0..=30)
        };
        let mut seq = || self.rng.random_range(0..=scale);
        let (before, after) = match seq() % 4 {
            0 => (None, None),
            1 => (Some(seq()), None),
            2 => (None, Some(seq())),
            _ => {
                let (a, b) = (seq(), seq());
                (Some(a.max(b)), Some(a.min(b)))
            }
        };
        self.ops.push(Op::Page {
            thread: thread.to_string(),
            limit,
            before,
            after,
        });
        // Small pages over short threads, large ones (still random) over long threads.
        let limit = if scale > 800 || self.rng.random_bool(0.3) {
            self.rng.random_range(50..=700)
        } else {
            self.rng.random_range(1..=25)
        };
        let backward = self.rng.random_bool(0.4);
        self.ops.push(Op::Paginate {
            thread: thread.to_string(),
            limit,
            backward,
        });
    }

    /// One or two runs whose messages add up to exactly `total`, then reads of every kind.
    fn long_thread(&mut self, total: u32) {
        let parts = if total >= 400 && self.rng.random_bool(0.5) {
            let first = self.rng.random_range(100..=total - 100);
            vec![first, total - first]
        } else {
            vec![total]
        };
        let worker = self.rng.random_range(0..self.options.workers);
        for (k, part) in parts.into_iter().enumerate() {
            let id = format!("long-{k}");
            let summarize = self.summarize();
            let user = USERS.choose(&mut self.rng).map(|u| u.to_string());
            let messages = vec![
                MessageSpec::Human {
                    text: format!("{id} question"),
                    after_ms: 1,
                },
                MessageSpec::Bulk {
                    messages: part.saturating_sub(2).max(1),
                },
                MessageSpec::Ai {
                    text: format!("{id} answer"),
                    after_ms: 1,
                    caller: None,
                },
            ];
            self.runs.push(RunSpec {
                worker,
                user,
                summarize,
                ..RunSpec::plain(id.clone(), LONG_THREAD, messages)
            });
            *self.messages_on.entry(LONG_THREAD.into()).or_default() += part;
            self.ops.push(Op::Start { run: id.clone() });
            self.ops.push(Op::Wait { run: id });
        }
        self.ops.push(Op::Views {
            thread: LONG_THREAD.into(),
        });
        if self.rng.random_bool(0.5) {
            self.pages(LONG_THREAD);
        }
        let n = self.rng.random_range(0..8);
        self.rate(LONG_THREAD, Target::Old(n));
    }
}

/// The faults of a scenario.
struct Faults {
    failing_write_calls: Vec<u64>,
    crashes: Vec<Crash>,
    store_crashes: Vec<StoreCrash>,
}

/// Failing batch writes, a worker crash and crashes of the store's host, from the fault stream
/// only (store crashes drawn last, so older seeds keep their other faults).
fn faults(seed: SeedRng, options: &RunsOptions, runs: &[RunSpec]) -> Faults {
    let mut rng = seed.stream(Stream::Faults);
    let events: u32 = runs
        .iter()
        .map(|r| expanded_len(&r.messages) * 3 / 2 + 2)
        .sum();
    let calls = (u64::from(events) / options.flush_threshold_events as u64 + runs.len() as u64 * 2)
        .min(400);
    let mut failing = Vec::new();
    if options.write_failure_probability > 0.0 {
        for call in 0..calls {
            if rng.random_bool(options.write_failure_probability) {
                failing.push(call);
            }
        }
    }
    // Roughly how long the ordinary runs play, in simulated ms: crashes fall inside it.
    let ordinary: u32 = runs
        .iter()
        .filter(|r| !r.id.starts_with("long-"))
        .map(|r| expanded_len(&r.messages))
        .sum();
    let span =
        (f64::from(ordinary) * options.pause_probability * 1.5) as u32 + 4 * runs.len() as u32 + 5;
    let mut crashes = Vec::new();
    if options.crash_probability > 0.0 && rng.random_bool(options.crash_probability) {
        crashes.push(Crash {
            worker: rng.random_range(0..options.workers),
            at_ms: rng.random_range(1..=span),
            down_ms: rng.random_range(1..=20),
        });
    }
    let mut store_crashes = Vec::new();
    if options.store_crash_probability > 0.0 && rng.random_bool(options.store_crash_probability) {
        for _ in 0..rng.random_range(1..=2) {
            store_crashes.push(StoreCrash {
                at_ms: rng.random_range(1..=span),
            });
        }
        store_crashes.sort_by_key(|c| c.at_ms);
    }
    Faults {
        failing_write_calls: failing,
        crashes,
        store_crashes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The callers come from their own sub-stream: stripping the middlewares' messages and
    /// every caller from a seed's scenario gives the scenario it had with callers switched off,
    /// but for the nested invocations (R26), whose spans are drawn over the run's messages, the
    /// middlewares' included.
    #[test]
    fn callers_leave_everything_else_of_a_seed_as_it_was() {
        let (mut middleware, mut lookalike) = (0, 0);
        for s in 0..200 {
            let seed = SeedRng::new(s);
            let options = RunsOptions::from_seed(seed);
            let mut stripped = generate(seed, &options);
            for run in &mut stripped.runs {
                run.messages.retain(|m| {
                    !matches!(m, MessageSpec::Ai { caller: Some(c), .. }
                        if crate::runs::script::is_middleware_caller(c))
                });
                for m in &mut run.messages {
                    if let MessageSpec::Ai { caller, .. } = m {
                        lookalike += usize::from(caller.take().is_some());
                    }
                }
            }
            middleware += generate(seed, &options)
                .runs
                .iter()
                .map(|r| r.message_count())
                .sum::<usize>()
                - stripped
                    .runs
                    .iter()
                    .map(|r| r.message_count())
                    .sum::<usize>();
            let without = RunsOptions {
                middleware_caller_probability: 0.0,
                ..options
            };
            let mut expected = generate(seed, &without);
            for run in stripped.runs.iter_mut().chain(expected.runs.iter_mut()) {
                run.nested.clear();
            }
            // A long trace names an AI message by its place among the run's, callers' messages
            // included (it is drawn after them): the callers move it, nothing else.
            stripped.long_traces.clear();
            expected.long_traces.clear();
            assert_eq!(stripped, expected, "seed {s}");
        }
        assert!(
            middleware > 20 && lookalike > 20,
            "{middleware} middleware messages, {lookalike} look-alike callers"
        );
    }

    #[test]
    fn long_threads_hit_their_exact_message_count() {
        for &total in &crate::runs::options::LONG_THREAD_MESSAGES {
            let mut options = RunsOptions::quiet(2);
            options.long_thread_messages = total;
            let s = generate(SeedRng::new(u64::from(total)), &options);
            let on_long: u32 = s
                .runs
                .iter()
                .filter(|r| r.thread == LONG_THREAD)
                .map(|r| expanded_len(&r.messages))
                .sum();
            assert_eq!(on_long, total);
        }
    }

    #[test]
    fn some_seeds_run_concurrent_runs_on_one_thread_and_worker() {
        let found = (0..200).any(|s| {
            let scenario = of_seed(s);
            scenario.ops.windows(2).any(|w| match (&w[0], &w[1]) {
                (Op::Start { run: a }, Op::Start { run: b }) => {
                    let (a, b) = (scenario.run_index(a), scenario.run_index(b));
                    matches!((a, b), (Some(a), Some(b)) if scenario.runs[a].thread == scenario.runs[b].thread
                        && scenario.runs[a].worker == scenario.runs[b].worker)
                }
                _ => false,
            })
        });
        assert!(found);
    }
}
