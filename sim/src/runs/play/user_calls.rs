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
        let read = ScopedRead::of(world, &tid, &scope);
        let words = read.words(world);
        world.record(format_args!("user messages {thread} as {user:?}: {words}"));
        let ScopedRead { rows, count } = read;
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
        let read = ScopedRead::of(world, &tid, &scope);
        let words = read.words(world);
        world.record(format_args!(
            "default-scope messages {thread} for {run} (current user {user:?}): {words}"
        ));
        let ScopedRead { rows, count } = read;
        let kind = ReadKind::DefaultScopeMessages {
            run: r,
            user,
            rows,
            count,
        };
        self.push_read(world, op, thread, kind);
    }
}

/// The thread's message rows read whole and their count, both in `scope`, from both stores.
struct ScopedRead {
    rows: Both<Answer<Vec<RunEvent>>>,
    count: Both<Answer<u64>>,
}

impl ScopedRead {
    fn of(world: &World, tid: &str, scope: &UserScope) -> ScopedRead {
        ScopedRead {
            rows: world.both(|s| s.list_messages_as(tid, WHOLE_THREAD, MessageCursor::None, scope)),
            count: world.both(|s| s.count_messages_as(tid, scope)),
        }
    }

    /// How the trace tells it: `rows=` the hash of the primary store's rows, `count=` its
    /// count, `agree=` whether both stores answered both alike.
    fn words(&self, world: &World) -> String {
        format!(
            "rows={:016x} count={:?} agree={}",
            hash_of(self.rows.primary(world.primary)),
            self.count.primary(world.primary),
            self.rows.agree() && self.count.agree()
        )
    }
}
