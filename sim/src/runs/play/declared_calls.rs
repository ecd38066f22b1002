//! What a world leaves out for the known differences its system declares in `hello`
//! ([`crate::runs::store_differences`]): every op on a thread whose id has a shape the system declares
//! it refuses (S4 to S6), and, once a world, the DB store's content marks its answers leave out
//! (S1 to S3). Each is counted under its ID in the left-out table and traced, never passed in
//! silence; histsim's own stores declare nothing and are judged on everything.

use super::state::World;
use crate::runs::observations::Observation;
use crate::runs::scenario::Op;
use crate::runs::store_differences::{left_out_entry, shape_of, StoreDifference, ALL};

/// The thread key `op` acts on, if any (through its run for a run's op).
fn thread_of<'a>(world: &'a World, op: &'a Op) -> Option<&'a str> {
    let run = |id: &str| {
        let r = world.scenario.run_index(id)?;
        Some(world.scenario.runs[r].thread.as_str())
    };
    match op {
        Op::Sleep { .. } => None,
        Op::Start { run: r }
        | Op::Wait { run: r }
        | Op::Events { run: r }
        | Op::DeleteRun { run: r }
        | Op::Receipt { run: r, .. }
        | Op::LateWrite { run: r }
        | Op::RunMessages { run: r, .. }
        | Op::FilteredEvents { run: r, .. }
        | Op::EditWritten { run: r }
        | Op::WithdrawRun { run: r, .. } => run(r),
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
        | Op::DefaultScopeMessages { thread, .. }
        | Op::EditRead { thread, .. } => Some(thread.as_str()),
    }
}

/// The declared difference that keeps thread `key` from the system: its id has the shape of an
/// S4 to S6 the system declares.
pub(in crate::runs) fn declared_for_thread(world: &World, key: &str) -> Option<StoreDifference> {
    let d = shape_of(&world.thread_id(key))?;
    world.declares(d.id).then_some(d)
}

/// Whether `op` may be sent: not when it acts on a thread a declared difference keeps from the
/// system (left out, counted under the ID, traced).
pub(in crate::runs) fn op_served(world: &World, op: &Op) -> bool {
    let Some(key) = thread_of(world, op) else {
        return true;
    };
    let Some(d) = declared_for_thread(world, key) else {
        return true;
    };
    world.record(format_args!(
        "op on thread {key} left out: {} declared ({})",
        d.id, d.summary
    ));
    world.observe(Observation::LeftOut(left_out_entry(
        "the client's ops on a thread whose id the system refuses",
        d,
    )));
    false
}

/// Counts, once a world, each declared S1 to S3: the system's answers leave the DB store's
/// content marks out, so the comparison never sees them.
pub(in crate::runs) fn count_declared_marks(world: &World) {
    for d in ALL.iter().take(3).filter(|d| world.declares(d.id)) {
        world.observe(Observation::LeftOut(left_out_entry(
            "the content marks of the system's answers",
            *d,
        )));
    }
}
