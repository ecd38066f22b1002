//! A thread deletion fences its writers (R28). `delete_by_thread` fences every run whose rows it
//! removed: afterwards the store refuses any write of the thread that carries one of those runs
//! (`put_batch`, `insert_numbered`, `put_if_absent`) with [`RunStoreError::ThreadDeleted`], and
//! writes nothing of it. A writer that began before the deletion (a journal's batch admitted and
//! committed late, a receipt retried with the run it was given) can then never bring rows of the
//! deleted thread back.
//!
//! The thread id itself stays usable: a run the deletion did not remove (a new run) writes the
//! thread's new era, numbered from 1. Fences are never lifted; a thread deleted twice keeps the
//! runs of both deletions fenced. A run deletion (`delete_by_run`) fences nothing.

use std::collections::{BTreeMap, BTreeSet};

use super::error::RunStoreError;

/// The capability a run-event store under test declares (the SUT protocol's `hello`) when its
/// thread deletions fence their writers.
pub const THREAD_FENCE: &str = "thread_fence";

/// Per thread, the runs its deletions fenced.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fences {
    runs: BTreeMap<String, BTreeSet<String>>,
}

impl Fences {
    /// Fences `runs` of `thread_id` (a deletion removed their rows).
    pub(crate) fn fence<'a>(&mut self, thread_id: &str, runs: impl IntoIterator<Item = &'a str>) {
        let mut runs = runs.into_iter().peekable();
        if runs.peek().is_none() {
            return;
        }
        let fenced = self.runs.entry(thread_id.to_string()).or_default();
        fenced.extend(runs.map(str::to_string));
        debug_assert!(!fenced.is_empty());
    }

    /// Whether a deletion of `thread_id` fenced `run_id`.
    pub(crate) fn fenced(&self, thread_id: &str, run_id: &str) -> bool {
        self.runs
            .get(thread_id)
            .is_some_and(|runs| runs.contains(run_id))
    }

    /// Refuses a write of which some row carries a fenced run: the first such row names it.
    pub(crate) fn admit<'a>(
        &self,
        rows: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(), RunStoreError> {
        if self.runs.is_empty() {
            return Ok(());
        }
        for (thread_id, run_id) in rows {
            if self.fenced(thread_id, run_id) {
                return Err(thread_deleted(thread_id, run_id));
            }
        }
        // Post-condition: every fenced thread still names a run (fences are never empty).
        debug_assert!(self.runs.values().all(|runs| !runs.is_empty()));
        Ok(())
    }
}

/// The refusal of a write of `run_id` on `thread_id`, fenced by a deletion of the thread.
pub(crate) fn thread_deleted(thread_id: &str, run_id: &str) -> RunStoreError {
    RunStoreError::ThreadDeleted {
        thread_id: thread_id.to_string(),
        run_id: run_id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_run_is_refused_on_its_thread_only() {
        let mut f = Fences::default();
        assert!(f.admit([("t", "r")]).is_ok());
        f.fence("t", ["r", "s"]);
        f.fence("u", std::iter::empty());
        assert!(f.fenced("t", "s") && !f.fenced("u", "r") && !f.fenced("t", "new"));
        assert!(f.admit([("t", "new"), ("u", "r")]).is_ok());
        let refused = f.admit([("t", "new"), ("t", "s")]).unwrap_err();
        assert_eq!(refused, thread_deleted("t", "s"));
        assert!(refused.is_thread_deleted());
        assert!(refused
            .to_string()
            .starts_with("thread deleted: thread `t`"));
    }
}
