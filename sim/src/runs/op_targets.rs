//! What each op of a runs scenario names: a thread by its key, a run by its id, or both (a
//! default-scope read names the thread it reads and the run it acts for). The shrinker keeps
//! the threads ops still name; a world finds the thread an op acts on.

use super::scenario::Op;

impl Op {
    /// The thread key the op names itself (not through a run) and the run id it names. Every
    /// op is listed, so that a new op says what it names.
    pub fn names(&self) -> (Option<&str>, Option<&str>) {
        match self {
            Op::Sleep { .. } => (None, None),
            Op::Start { run }
            | Op::Wait { run }
            | Op::Events { run }
            | Op::DeleteRun { run }
            | Op::Receipt { run, .. }
            | Op::LateWrite { run }
            | Op::RunMessages { run, .. }
            | Op::FilteredEvents { run, .. }
            | Op::EditWritten { run }
            | Op::WithdrawRun { run, .. } => (None, Some(run)),
            Op::Views { thread }
            | Op::Page { thread, .. }
            | Op::Paginate { thread, .. }
            | Op::LastAnswers { thread }
            | Op::UserMessages { thread, .. }
            | Op::Rate { thread, .. }
            | Op::RateAnonymously { thread, .. }
            | Op::Withdraw { thread, .. }
            | Op::FeedbackReads { thread, .. }
            | Op::DeleteThread { thread, .. }
            | Op::EditRead { thread, .. } => (Some(thread), None),
            Op::DefaultScopeMessages { thread, run } => (Some(thread), Some(run)),
        }
    }
}
