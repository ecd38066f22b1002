//! The options a seed derives for the runs workload (swarm testing).
//!
//! Each seed switches a random subset of features and faults on, each with its own chance, and
//! draws a probability for the ones that are on; every probability defaults to zero. Sizes come
//! from a sub-stream of their own so that adding a probability does not resize old seeds' worlds.
//! Long threads (past 200, 500 and 1000 messages, exact multiples of the page size and one past)
//! are generated in a share of seeds only, so that the default campaign stays fast.

use crate::rng::{swarm_draws, swarm_probability, SeedRng, Stream};
use rand::seq::IndexedRandom;
use rand::Rng;
use serde::Serialize;

/// Message counts of the long thread of a seed that has one: around 200, 500 and 1000, exact
/// multiples of the default page size (500) and one past them.
pub const LONG_THREAD_MESSAGES: [u32; 10] = [199, 201, 500, 501, 999, 1000, 1001, 1500, 1501, 1250];

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunsOptions {
    /// Worker hosts (1 to 3).
    pub workers: u8,
    /// Threads of the ordinary runs (1 to 3).
    pub threads: u8,
    /// Ordinary runs (2 to 8).
    pub runs: u8,
    /// The journals' flush threshold.
    pub flush_threshold_events: usize,
    /// The views' page size.
    pub page_size_events: usize,
    /// Messages of one extra long thread (0: none).
    pub long_thread_messages: u32,
    /// Chance that the client starts the next run before it waits for this one (concurrent
    /// runs; on the same thread and worker more often than not).
    pub concurrent_probability: f64,
    /// Chance, per step of a run, of a tool call step (1 to 3 calls) before the answer.
    pub tool_probability: f64,
    /// Chance that a run has a second human turn.
    pub second_turn_probability: f64,
    /// Chance that a run summarizes its checkpoint over a random token budget.
    pub summarize_probability: f64,
    /// Chance that a run is killed hard at a random message (its journal dropped).
    pub kill_probability: f64,
    /// Chance that a run is cancelled at a random message.
    pub cancel_probability: f64,
    /// Chance that a run errors at a random message.
    pub error_probability: f64,
    /// Chance, per message, of a pause of 1 to 2 ms before it (otherwise the same instant).
    pub pause_probability: f64,
    /// Chance of one worker host crash at a random time.
    pub crash_probability: f64,
    /// Chance, per write call, that the batch write fails.
    pub write_failure_probability: f64,
    /// Chance that a run is a legacy one with a NULL user_id.
    pub legacy_user_probability: f64,
    /// Chance, after a wait, of reading the thread's views.
    pub views_probability: f64,
    /// Chance, after a wait, of raw pages and a paginated full read with random limits/cursors.
    pub page_probability: f64,
    /// Chance, after a wait, of rating an old AI message.
    pub rate_old_probability: f64,
    /// Chance, after a wait, of rating the new run's answer right away.
    pub rate_live_probability: f64,
    /// Chance of crashes (one or two) of the store's host at random times.
    pub store_crash_probability: f64,
    /// Chance, after a wait, of deleting the run (`delete_by_run`) when no rating follows on
    /// its thread.
    pub delete_probability: f64,
    /// Chance, after a start or a wait, of writing the run's receipt (`put_if_absent`), and
    /// of retrying it later.
    pub receipt_probability: f64,
    /// Chance, after a wait, of paging the run's messages (`list_messages_by_run`).
    pub run_pages_probability: f64,
    /// Chance, per run, of delegating subagent tasks (`subagent.*` events tagged with a task id).
    pub subagent_probability: f64,
    /// Chance, after a wait, of reading the run's events through a filter (types, task),
    /// paging with `after_seq`.
    pub filtered_events_probability: f64,
    /// Chance, after a wait, of asking the last visible AI message of the thread's runs.
    pub last_answers_probability: f64,
    /// Chance that the client reads a thread's messages in one user's scope after a wait.
    pub user_reads_probability: f64,
    /// Chance, after a wait, of feedback calls beyond a rating (anonymous ratings,
    /// withdrawals, every feedback read), and after a deletion of a rating on its thread.
    pub feedback_probability: f64,
    /// Chance, before a run starts on a thread whose runs have all stopped, of deleting the
    /// thread (`delete_by_thread`) when no rating follows on it.
    pub thread_delete_probability: f64,
    /// Chance that a thread deletion is the API's (`DELETE /threads/{id}`: run events,
    /// feedback and checkpoints) rather than the store's `delete_by_thread` alone.
    pub thread_delete_everywhere_probability: f64,
    /// Chance, after a wait, of reading the thread in the default scope of a request acting
    /// for the run (`user_id` AUTO: its user the current one).
    pub default_scope_reads_probability: f64,
    /// Chance, per ordinary run, that its AI messages carry `metadata.caller` values: a
    /// middleware's own AI message (`middleware:title`, ...) journaled among them, and callers
    /// that only look like one (`Middleware:title`, a number) on the lead agent's answers.
    pub middleware_caller_probability: f64,
    /// The JSONL store (on the world's simulated disk) plays the first slot of the pair, where
    /// the memory store plays otherwise: about a third of seeds.
    pub jsonl_store: bool,
}

impl RunsOptions {
    /// A quiet world: one worker, one thread, no faults, no optional features.
    pub fn quiet(runs: u8) -> Self {
        RunsOptions {
            workers: 1,
            threads: 1,
            runs,
            flush_threshold_events: 20,
            page_size_events: 500,
            long_thread_messages: 0,
            concurrent_probability: 0.0,
            tool_probability: 0.0,
            second_turn_probability: 0.0,
            summarize_probability: 0.0,
            kill_probability: 0.0,
            cancel_probability: 0.0,
            error_probability: 0.0,
            pause_probability: 0.0,
            crash_probability: 0.0,
            write_failure_probability: 0.0,
            legacy_user_probability: 0.0,
            views_probability: 0.0,
            page_probability: 0.0,
            rate_old_probability: 0.0,
            rate_live_probability: 0.0,
            store_crash_probability: 0.0,
            delete_probability: 0.0,
            receipt_probability: 0.0,
            run_pages_probability: 0.0,
            subagent_probability: 0.0,
            filtered_events_probability: 0.0,
            last_answers_probability: 0.0,
            user_reads_probability: 0.0,
            feedback_probability: 0.0,
            thread_delete_probability: 0.0,
            thread_delete_everywhere_probability: 0.0,
            default_scope_reads_probability: 0.0,
            middleware_caller_probability: 0.0,
            jsonl_store: false,
        }
    }

    /// The options of `seed`.
    pub fn from_seed(seed: SeedRng) -> Self {
        swarm_draws!(seed.stream(Stream::Options);
            concurrent_probability = (0.5, 0.2, 0.8),
            tool_probability = (0.8, 0.3, 0.8),
            second_turn_probability = (0.4, 0.1, 0.5),
            summarize_probability = (0.5, 0.3, 1.0),
            kill_probability, cancel_probability, error_probability = (0.4, 0.1, 0.4),
            pause_probability = (0.7, 0.2, 0.9),
            crash_probability = (0.3, 0.3, 1.0),
            write_failure_probability = (0.4, 0.05, 0.3),
            legacy_user_probability = (0.4, 0.2, 0.6),
            views_probability = (0.8, 0.3, 0.9),
            page_probability = (0.5, 0.2, 0.7),
            rate_old_probability = (0.6, 0.3, 0.9),
            rate_live_probability = (0.6, 0.3, 0.9),
            // Drawn last: the probabilities above stay what they were before store crashes existed.
            store_crash_probability = (0.3, 0.3, 1.0),
            // The store's wider API (deletion, receipts, per-run pages), after everything older.
            delete_probability = (0.5, 0.2, 0.7),
            receipt_probability = (0.5, 0.3, 0.9),
            run_pages_probability = (0.5, 0.2, 0.7),
            // Subagent events, the filtered and the user-scoped reads, after everything older.
            subagent_probability, filtered_events_probability, last_answers_probability =
                (0.5, 0.3, 0.9),
            user_reads_probability = (0.5, 0.2, 0.7),
            // Thread deletions (rare: an emptied thread ends the long histories the other rules
            // need), then the default-scope reads, drawn after everything older.
            thread_delete_probability = (0.3, 0.1, 0.4),
            default_scope_reads_probability = (0.5, 0.2, 0.6),
        );
        let sizes = Sizes::from_seed(seed);
        RunsOptions {
            workers: sizes.workers,
            threads: sizes.threads,
            runs: sizes.runs,
            flush_threshold_events: sizes.flush_threshold_events,
            page_size_events: sizes.page_size_events,
            long_thread_messages: sizes.long_thread_messages,
            concurrent_probability,
            tool_probability,
            second_turn_probability,
            summarize_probability,
            kill_probability,
            cancel_probability,
            error_probability,
            pause_probability,
            crash_probability,
            write_failure_probability,
            legacy_user_probability,
            views_probability,
            page_probability,
            rate_old_probability,
            rate_live_probability,
            store_crash_probability,
            delete_probability,
            receipt_probability,
            run_pages_probability,
            subagent_probability,
            filtered_events_probability,
            last_answers_probability,
            user_reads_probability,
            feedback_probability: feedback_probability(seed),
            thread_delete_probability,
            thread_delete_everywhere_probability: thread_delete_everywhere_probability(seed),
            default_scope_reads_probability,
            middleware_caller_probability: middleware_caller_probability(seed),
            jsonl_store: jsonl_store(seed),
        }
    }
}

/// The feedback calls' probability, from a sub-stream of its own (21, after R21): drawing it
/// changes no other option of any seed, whatever else is drawn after the options above.
fn feedback_probability(seed: SeedRng) -> f64 {
    swarm_probability(&mut seed.substream(Stream::Options, 21), 0.5, 0.3, 0.9)
}

/// The share of thread deletions made through the API, from a sub-stream of its own (27, after
/// the catalog ID of its rule, R27), so every other option of every seed stays what it was.
fn thread_delete_everywhere_probability(seed: SeedRng) -> f64 {
    swarm_probability(&mut seed.substream(Stream::Options, 27), 0.7, 0.5, 1.0)
}

/// The callers' probability, from a sub-stream of its own (18, after the catalog ID whose
/// caller rule it reaches, R18), so every other option of every seed stays what it was.
fn middleware_caller_probability(seed: SeedRng) -> f64 {
    swarm_probability(&mut seed.substream(Stream::Options, 18), 0.5, 0.3, 0.9)
}

/// Whether the JSONL store plays the pair's first slot: from a sub-stream of its own (numbered
/// after the catalog ID it was once to have, R25), so every other draw of a seed stays what it was.
fn jsonl_store(seed: SeedRng) -> bool {
    seed.substream(Stream::Options, JSONL_SUBSTREAM)
        .random_bool(JSONL_SHARE)
}

/// The options sub-stream of the JSONL store's draw.
const JSONL_SUBSTREAM: u64 = 25;
/// The share of seeds whose first store is the JSONL one.
const JSONL_SHARE: f64 = 1.0 / 3.0;

/// The sizes of a seed's world, from a sub-stream of their own.
struct Sizes {
    workers: u8,
    threads: u8,
    runs: u8,
    flush_threshold_events: usize,
    page_size_events: usize,
    long_thread_messages: u32,
}

impl Sizes {
    fn from_seed(seed: SeedRng) -> Sizes {
        let mut rng = seed.substream(Stream::Options, 1);
        let long_thread_messages = if rng.random_bool(0.08) {
            *LONG_THREAD_MESSAGES.choose(&mut rng).unwrap_or(&1001)
        } else {
            0
        };
        // Long threads test full reads, not flushing: they flush in batches of the seed's size
        // or larger, so that one seed does not cost a thousand transactions.
        let thresholds: &[usize] = if long_thread_messages > 0 {
            &[20, 25, 50]
        } else {
            &[1, 2, 3, 4, 6, 10, 20, 25]
        };
        Sizes {
            workers: rng.random_range(1..=3),
            threads: rng.random_range(1..=3),
            runs: rng.random_range(2..=8),
            flush_threshold_events: *thresholds.choose(&mut rng).unwrap_or(&20),
            page_size_events: if rng.random_bool(0.6) {
                500
            } else {
                rng.random_range(2..=40)
            },
            long_thread_messages,
        }
    }
}

crate::workload_items::options_display!(RunsOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload_items::switch_subsets;

    #[test]
    fn swarming_switches_different_subsets_on_and_long_threads_are_a_share() {
        let all: Vec<RunsOptions> = (0..200)
            .map(|s| RunsOptions::from_seed(SeedRng::new(s)))
            .collect();
        let subsets = switch_subsets(&all, |o| {
            vec![
                o.concurrent_probability > 0.0,
                o.kill_probability > 0.0,
                o.summarize_probability > 0.0,
                o.write_failure_probability > 0.0,
            ]
        });
        assert!(subsets > 8, "only {subsets} subsets");
        let long = all.iter().filter(|o| o.long_thread_messages > 0).count();
        assert!((4..40).contains(&long), "{long} long threads in 200 seeds");
        let jsonl = all.iter().filter(|o| o.jsonl_store).count();
        assert!((40..100).contains(&jsonl), "{jsonl} JSONL seeds in 200");
    }

    #[test]
    fn printed_options_name_every_field() {
        let text = RunsOptions::quiet(2).to_string();
        assert!(text.contains("workers = 1"));
        assert!(text.contains("kill_probability = off"));
    }
}
