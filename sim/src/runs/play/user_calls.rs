//! The client's user-scoped reads: a thread's message rows and their count as one user's
//! request sees them (`list_messages` and `count_messages` with `user_id`), or every user's, or
//! in the default scope of a request acting for a run (`user_id` AUTO: the run's user).
//! Both go to both backends and are recorded for the checker (`user_rules`); a system under
//! test that does not serve them has them left out, counted and traced.

use super::client::Client;
use super::state::*;
use crate::runs::record::*;
use history::runs::{MessageCursor, RunEvent, UserScope};

pub const LIST_MESSAGES_AS: &str = "list_messages_as";
pub const COUNT_MESSAGES_AS: &str = "count_messages_as";
const WHOLE_THREAD: usize = WHOLE_READ;

impl Client {
    /// The thread's message rows read whole, and their count, in `user`'s scope (`None`:
    /// every user's, `user_id=None`).
    pub(in crate::runs) fn user_messages(&self, world: &World, thread: &str, user: Option<&str>) {
        for op in [LIST_MESSAGES_AS, COUNT_MESSAGES_AS] {
            if !Client::serves_read(world, "user-scoped reads", thread, op) {
                return;
            }
        }
        let tid = world.thread_id(thread);
        let scope = user.map_or(UserScope::All, |u| UserScope::Only(u.to_string()));
        let op = world.next_op();
        let (rows, count, words) = read_in_scope(world, &tid, &scope);
        world.record(format_args!("user messages {thread} as {user:?}: {words}"));
        let kind = ReadKind::UserMessages {
            user: user.map(str::to_string),
            rows,
            count,
        };
        self.push_read(world, op, thread, kind);
    }

    /// The thread's message rows read whole, and their count, in the default scope of a
    /// request acting for `run` (upstream's `user_id` AUTO: the current user is the run's; a
    /// legacy run's request has none).
    pub(in crate::runs) fn default_scope_messages(&self, world: &World, thread: &str, run: &str) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        for op in [LIST_MESSAGES_AS, COUNT_MESSAGES_AS] {
            if !Client::serves_read(world, "default-scope reads", thread, op) {
                return;
            }
        }
        let tid = world.thread_id(thread);
        let user = world.scenario.runs[r].user.clone();
        let scope = UserScope::Current(user.clone());
        let op = world.next_op();
        let (rows, count, words) = read_in_scope(world, &tid, &scope);
        world.record(format_args!(
            "default-scope messages {thread} for {run} (current user {user:?}): {words}"
        ));
        let kind = ReadKind::DefaultScopeMessages {
            run: r,
            user,
            rows,
            count,
        };
        self.push_read(world, op, thread, kind);
    }
}

/// The thread's message rows read whole and their count, both in `scope`, from both stores,
/// with how the trace tells them: `rows=` the hash of the primary store's rows, `count=` its
/// count, `agree=` whether both stores answered both alike.
fn read_in_scope(
    world: &World,
    tid: &str,
    scope: &UserScope,
) -> (Both<Answer<Vec<RunEvent>>>, Both<Answer<u64>>, String) {
    let rows = world.both(|s| s.list_messages_as(tid, WHOLE_THREAD, MessageCursor::None, scope));
    let count = world.both(|s| s.count_messages_as(tid, scope));
    let words = format!(
        "rows={:016x} count={:?} agree={}",
        hash_of(rows.primary(world.primary)),
        count.primary(world.primary),
        rows.agree() && count.agree()
    );
    (rows, count, words)
}
