//! Validation of a runs scenario's ops: each op's fields, and what it requires of the ops before
//! it (a run started before its wait, stopped before its deletion, every run of a thread
//! stopped before the thread's deletion, no feedback call after the deletion of its thread).

use super::scenario::{Op, RunsScenario};
use std::collections::BTreeSet;

impl RunsScenario {
    /// Every op in order, each at `ops[i]` in an error.
    pub(super) fn validate_ops(&self) -> Result<(), String> {
        let mut seen = OpsSeen::default();
        for (o, op) in self.ops.iter().enumerate() {
            let at = format!("ops[{o}]");
            self.validate_op(&at, op, &mut seen.started)?;
            self.validate_store_op(&at, op, &mut seen)?;
            self.validate_thread_op(&at, op, &mut seen)?;
        }
        // The table reads, asked once every op was played.
        super::table_read_steps::validate(self)
    }

    /// The ops of the store's wider API at `at` (deletion, receipts, per-run reads) and what
    /// they require of the ops before them; `seen` collects what those need.
    fn validate_store_op(&self, at: &str, op: &Op, seen: &mut OpsSeen) -> Result<(), String> {
        let started = |run: &str| self.started_run(at, run, &seen.started);
        match op {
            Op::Wait { run } => {
                seen.waited.extend(self.run_index(run));
            }
            Op::DeleteRun { run } => {
                let r = started(run)?;
                if !seen.waited.contains(&r) {
                    return Err(format!(
                        "{at}.run: run `{run}` is deleted before a wait for it (it may still write)"
                    ));
                }
            }
            Op::Receipt { run, .. } => {
                started(run)?;
            }
            Op::EditWritten { run } => {
                let r = started(run)?;
                if !seen.waited.contains(&r) {
                    return Err(format!(
                        "{at}.run: run `{run}` edits what it wrote before a wait for it (it may still write)"
                    ));
                }
            }
            Op::FilteredEvents {
                run,
                event_types,
                task,
                limit,
            } => {
                let r = started(run)?;
                if !seen.waited.contains(&r) {
                    return Err(format!(
                        "{at}.run: run `{run}` is read before a wait for it (it may still write)"
                    ));
                }
                if event_types
                    .iter()
                    .flatten()
                    .any(|t| t == history::runs::current::RUN_DELIVERY)
                {
                    return Err(format!(
                        "{at}.event_types: `run.delivery` is the client's receipt, not the run's event"
                    ));
                }
                if event_types.is_none() && task.is_none() {
                    return Err(format!(
                        "{at}: expected event_types, task or both (an unfiltered read is `events`)"
                    ));
                }
                if *limit == 0 {
                    return Err(format!("{at}.limit: expected at least 1"));
                }
            }
            Op::RunMessages { run, limit, .. } => {
                started(run)?;
                if *limit == 0 {
                    return Err(format!("{at}.limit: expected at least 1"));
                }
            }
            Op::WithdrawRun { run, .. } => {
                started(run)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A thread's deletion at `at` (every run of the thread started so far stopped) and a
    /// default-scope read (its run started, on its thread).
    fn validate_thread_op(&self, at: &str, op: &Op, seen: &mut OpsSeen) -> Result<(), String> {
        let started = |run: &str| self.started_run(at, run, &seen.started);
        match op {
            Op::DefaultScopeMessages { thread, run } => {
                let r = started(run)?;
                if self.runs[r].thread != *thread {
                    return Err(format!(
                        "{at}.run: run `{run}` is on thread `{}`, not `{thread}`",
                        self.runs[r].thread
                    ));
                }
            }
            Op::DeleteThread { thread, .. } => {
                let running = seen
                    .started
                    .iter()
                    .find(|&&r| self.runs[r].thread == *thread && !seen.waited.contains(&r));
                if let Some(&r) = running {
                    return Err(format!(
                        "{at}.thread: run `{}` of thread `{thread}` is started and not waited for before the thread's deletion (it may still write)",
                        self.runs[r].id
                    ));
                }
                seen.threads_deleted.insert(thread.clone());
                let gone = seen
                    .waited
                    .iter()
                    .filter(|&&r| self.runs[r].thread == *thread);
                seen.deleted_with_thread
                    .extend(gone.copied().collect::<Vec<_>>());
            }
            Op::LateWrite { run } => {
                let r = started(run)?;
                if !seen.deleted_with_thread.contains(&r) {
                    return Err(format!(
                        "{at}.run: run `{run}` is written late before its thread's deletion (expected a wait for it, then a `delete_thread` of its thread)"
                    ));
                }
            }
            Op::Rate { thread, .. }
            | Op::RateAnonymously { thread, .. }
            | Op::Withdraw { thread, .. }
            | Op::FeedbackReads { thread, .. } => feedback_after(at, thread, seen)?,
            Op::WithdrawRun { run, .. } => {
                let r = started(run)?;
                feedback_after(at, &self.runs[r].thread, seen)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// One op at `at`; `started` collects the runs started so far.
    fn validate_op(&self, at: &str, op: &Op, started: &mut BTreeSet<usize>) -> Result<(), String> {
        let run_of = |id: &str| {
            self.run_index(id)
                .ok_or_else(|| format!("{at}.run: no run with id `{id}`"))
        };
        let thread_of = |key: &str| {
            if self.threads.contains_key(key) {
                Ok(())
            } else {
                Err(format!("{at}.thread: no thread with key `{key}`"))
            }
        };
        match op {
            Op::Start { run } => {
                let r = run_of(run)?;
                if !started.insert(r) {
                    return Err(format!("{at}.run: run `{run}` is started twice"));
                }
            }
            Op::DeleteRun { .. }
            | Op::Receipt { .. }
            | Op::RunMessages { .. }
            | Op::FilteredEvents { .. } => {}
            Op::Wait { run } | Op::Events { run } => {
                let r = run_of(run)?;
                if !started.contains(&r) {
                    return Err(format!("{at}.run: run `{run}` is not started before"));
                }
            }
            Op::Sleep { .. } | Op::LateWrite { .. } | Op::EditWritten { .. } => {}
            Op::Views { thread }
            | Op::Page { thread, .. }
            | Op::LastAnswers { thread }
            | Op::DeleteThread { thread, .. }
            | Op::DefaultScopeMessages { thread, .. } => thread_of(thread)?,
            Op::UserMessages { thread, user } => {
                thread_of(thread)?;
                if user.as_deref() == Some("") {
                    return Err(format!("{at}.user: empty (omit it for every user's rows)"));
                }
            }
            Op::Paginate { thread, limit, .. } | Op::EditRead { thread, limit } => {
                thread_of(thread)?;
                if *limit == 0 {
                    return Err(format!("{at}.limit: expected at least 1"));
                }
            }
            Op::Rate { thread, user, .. } => {
                thread_of(thread)?;
                if user.is_empty() {
                    return Err(format!("{at}.user: empty"));
                }
            }
            Op::RateAnonymously { thread, .. } => thread_of(thread)?,
            Op::Withdraw { thread, user, .. } | Op::FeedbackReads { thread, user } => {
                thread_of(thread)?;
                if user.as_deref() == Some("") {
                    return Err(format!(
                        "{at}.user: empty (omit it for anonymous feedback or every user's)"
                    ));
                }
            }
            Op::WithdrawRun { user, .. } => {
                if user.is_empty() {
                    return Err(format!("{at}.user: empty"));
                }
            }
        }
        Ok(())
    }
}

impl RunsScenario {
    /// The index of run `run`, named at `at`, which must be among the runs `started` so far.
    fn started_run(&self, at: &str, run: &str, started: &BTreeSet<usize>) -> Result<usize, String> {
        match self.run_index(run) {
            Some(r) if started.contains(&r) => Ok(r),
            Some(_) => Err(format!("{at}.run: run `{run}` is not started before")),
            None => Err(format!("{at}.run: no run with id `{run}`")),
        }
    }
}

/// A feedback call at `at` on `thread`: refused after the thread's deletion, which the model of
/// ratings does not know.
fn feedback_after(at: &str, thread: &str, seen: &OpsSeen) -> Result<(), String> {
    if seen.threads_deleted.contains(thread) {
        return Err(format!(
            "{at}: a feedback call on thread `{thread}` after its deletion (the ratings model knows no thread deletion)"
        ));
    }
    Ok(())
}

/// What validation of the ops has seen so far.
#[derive(Default)]
struct OpsSeen {
    started: BTreeSet<usize>,
    waited: BTreeSet<usize>,
    /// Thread keys deleted whole.
    threads_deleted: BTreeSet<String>,
    /// Runs waited for before a deletion of their thread: a late write of one comes after
    /// the deletion that fenced it (R28).
    deleted_with_thread: BTreeSet<usize>,
}
