//! The client's feedback calls beyond a rating: withdrawals (delete by id, `delete_by_run`) and
//! every read (by id, by run, aggregated, grouped, by run ids, `/messages` with feedback), each
//! logged with its answer for the R21 and R22 checks. Feedback is histsim's own store, beside
//! the event store under test (docs/sut-protocol.md): only `/messages` reads the event store.

use super::client::Client;
use super::state::*;
use crate::runs::feedback_record::{FeedbackEntry, FeedbackRead};
use crate::runs::observations::Observation;
use history::runs::{thread_messages_with_feedback, Feedback, FeedbackInput, NewFeedback, Rating};
use std::collections::BTreeSet;

/// Upstream's default page of `list_by_run`.
const LIST_LIMIT: usize = 100;

impl Client {
    /// Stores a rating of run `run_id` (a user's `submit`, or an anonymous `create`), logs it
    /// and keeps the id the store gave it for later withdrawals and reads.
    pub(in crate::runs) fn store_rating(
        &mut self,
        world: &World,
        thread: &str,
        user: Option<&str>,
        up: bool,
        message_id: Option<String>,
        run_id: &str,
    ) {
        let rating = if up { Rating::Up } else { Rating::Down };
        let thread_id = world.thread_id(thread);
        let stored = match user {
            Some(user) => world.feedback.submit(FeedbackInput {
                thread_id: thread_id.clone(),
                run_id: run_id.to_string(),
                user_id: user.to_string(),
                message_id,
                rating,
                comment: None,
                created_at_ns: now_ns(),
            }),
            None => world.feedback.create(NewFeedback {
                thread_id: thread_id.clone(),
                run_id: run_id.to_string(),
                user_id: None,
                message_id,
                rating,
                comment: None,
                created_at_ns: now_ns(),
            }),
        };
        if let Err(e) = &stored {
            world.record(format_args!("rating refused: {e}"));
        }
        let answer = stored.map(|f| f.feedback_id).map_err(|e| e.to_string());
        if let Ok(id) = answer {
            let given = self.feedback_ids.entry(thread.to_string()).or_default();
            if !given.iter().any(|(_, known)| *known == id) {
                given.push((user.map(str::to_string), id));
            }
        }
        world.observe(Observation::Feedback(FeedbackEntry::Rated {
            op: world.next_op(),
            at_us: now_us(),
            thread_id,
            run_id: run_id.to_string(),
            user: user.map(str::to_string),
            value: rating.value(),
            answer,
        }));
    }

    /// Delete by id: the `nth` id the client was given on the thread for `user` (`None`: an
    /// anonymous rating), in that user's scope.
    pub(in crate::runs) fn withdraw(
        &self,
        world: &World,
        thread: &str,
        user: Option<&str>,
        nth: u32,
    ) {
        let ids: Vec<u64> = self
            .feedback_ids
            .get(thread)
            .into_iter()
            .flatten()
            .filter(|(by, _)| by.as_deref() == user)
            .map(|(_, id)| *id)
            .collect();
        if ids.is_empty() {
            world.record(format_args!(
                "withdraw {thread} {user:?}: no feedback given"
            ));
            return;
        }
        let feedback_id = ids[nth as usize % ids.len()];
        let deleted = world.feedback.delete(feedback_id, user);
        world.record(format_args!(
            "withdraw {thread} {user:?} feedback {feedback_id}: deleted={deleted}"
        ));
        world.observe(Observation::Feedback(FeedbackEntry::Deleted {
            op: world.next_op(),
            at_us: now_us(),
            feedback_id,
            user: user.map(str::to_string),
            deleted,
        }));
    }

    /// `delete_by_run`: the user withdraws their rating of the run.
    pub(in crate::runs) fn withdraw_run(&self, world: &World, run: &str, user: &str) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        let thread_id = world.thread_id(&world.scenario.runs[r].thread);
        let deleted = world.feedback.delete_by_run(&thread_id, run, user);
        world.record(format_args!("withdraw {run} by {user}: deleted={deleted}"));
        world.observe(Observation::Feedback(FeedbackEntry::DeletedByRun {
            op: world.next_op(),
            at_us: now_us(),
            thread_id,
            run_id: run.to_string(),
            user: user.to_string(),
            deleted,
        }));
    }

    /// Every feedback read of the thread in `user`'s scope (`None`: every user's).
    pub(in crate::runs) fn feedback_reads(&self, world: &World, thread: &str, user: Option<&str>) {
        let thread_id = world.thread_id(thread);
        let fb = &world.feedback;
        let runs: Vec<String> = world.scenario.run_ids_on(thread).collect();
        let by_id = self
            .feedback_ids
            .get(thread)
            .into_iter()
            .flatten()
            .map(|(_, id)| (*id, fb.get(*id, user)))
            .collect();
        let by_run = runs
            .iter()
            .map(|r| (r.clone(), fb.list_by_run(&thread_id, r, LIST_LIMIT, user)))
            .collect();
        let aggregates = runs
            .iter()
            .map(|r| fb.aggregate_by_run(&thread_id, r))
            .collect();
        // Every other run: a subset, so that a run asked for and one not asked for both occur.
        let run_ids: BTreeSet<String> = runs.iter().step_by(2).cloned().collect();
        let primary = world.store(world.primary);
        let messages = text_of(thread_messages_with_feedback(
            primary,
            fb,
            &thread_id,
            user,
            &world.view_options(),
        ));
        let read = FeedbackRead {
            op: world.next_op(),
            at_us: now_us(),
            by_id,
            by_run,
            aggregates,
            grouped: fb.list_by_thread_grouped(&thread_id, user),
            by_run_ids: fb.list_by_run_ids(&thread_id, &run_ids, user),
            run_ids,
            messages,
            thread_id,
            user: user.map(str::to_string),
        };
        world.record(format_args!(
            "feedback reads {thread} as {user:?}: {:016x}",
            read_hash(&read)
        ));
        world.observe(Observation::Feedback(FeedbackEntry::Read(Box::new(read))));
    }
}

/// A digest of what a feedback read answered, for the trace.
fn read_hash(read: &FeedbackRead) -> u64 {
    let rows = |v: &[Feedback]| -> Vec<(u64, i8)> {
        v.iter()
            .map(|f| (f.feedback_id, f.rating.value()))
            .collect()
    };
    let mut parts: Vec<(u64, i8)> = Vec::new();
    for (id, got) in &read.by_id {
        parts.push((*id, got.as_ref().map_or(0, |f| f.rating.value())));
    }
    for (_, list) in &read.by_run {
        parts.extend(rows(list));
    }
    for a in &read.aggregates {
        parts.push((a.total, a.positive as i8));
    }
    let grouped: Vec<Feedback> = read.grouped.values().cloned().collect();
    parts.extend(rows(&grouped));
    let attached: Vec<u64> = read
        .messages
        .iter()
        .flatten()
        .filter_map(|m| m.feedback.as_ref().map(|f| f.feedback_id))
        .collect();
    let text = format!("{parts:?}{attached:?}");
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}
