//! The fence a thread deletion sets (R28, docs/sut-protocol.md, `delete_by_thread`): once a deletion of a thread has
//! returned, the thread is empty, and a write of it that carries a run the deletion removed (a
//! run that held rows of it then) must be refused, whenever that writer began; nothing of it may
//! land. A run the deletion did not remove writes the thread's new era. Fences are never lifted.

use std::collections::{BTreeMap, BTreeSet};

/// Per thread, the runs its deletions fenced.
#[derive(Clone, Debug, Default)]
pub struct WriteFence {
    fenced: BTreeMap<String, BTreeSet<String>>,
}

impl WriteFence {
    pub fn new() -> WriteFence {
        WriteFence::default()
    }

    /// The thread is deleted while `runs` held rows of it: each of them is fenced.
    pub fn delete_thread<S: Into<String>>(
        &mut self,
        thread_id: &str,
        runs: impl IntoIterator<Item = S>,
    ) {
        let fenced = self.fenced.entry(thread_id.to_string()).or_default();
        fenced.extend(runs.into_iter().map(Into::into));
    }

    /// Whether a write of `run_id` on `thread_id` may land (`false`: it must be refused).
    pub fn admits(&self, thread_id: &str, run_id: &str) -> bool {
        !self
            .fenced
            .get(thread_id)
            .is_some_and(|runs| runs.contains(run_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deletion_fences_the_runs_it_removed_on_their_thread_and_for_good() {
        let mut f = WriteFence::new();
        assert!(f.admits("t", "r1"));
        f.delete_thread("t", ["r1", "r2"]);
        assert!(!f.admits("t", "r1") && !f.admits("t", "r2"));
        // A new run writes the new era; the same run id elsewhere is another writer.
        assert!(f.admits("t", "r3") && f.admits("u", "r1"));
        f.delete_thread("t", ["r3"]);
        assert!(!f.admits("t", "r1") && !f.admits("t", "r3"));
    }
}
