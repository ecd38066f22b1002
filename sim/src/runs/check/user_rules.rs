//! The rule about user-scoped reads, R19, against [`model::runs::RunTruth`] restricted to the
//! runs a scope admits: a thread's messages read in one user's scope are exactly the messages
//! of the runs acting for that user (a legacy run without a user is nobody's), in the order the
//! thread's history has them, and the scoped count is their number; every user's scope sees
//! every run; the default scope of a request acting for a run is its user's, and a request
//! with no user in its context (a legacy run's) is refused. Where the two backends answered one of these reads differently, R9.

use super::context::{of_row, Context};
use super::truth::Snapshots;
use super::wording::{answered as answered_count, or_none, when, Asked};
use crate::outcome::Findings;
use crate::runs::record::{Answer, ReadKind};
use history::runs::RunEvent;
use history::BugId;
use model::runs::{ExpectedMessage, RunTruth};

/// R19: each user-scoped read against the model of the runs its scope admits. A default-scope
/// read (`user_id` AUTO) acting for a run is the run's user's scope; with no user in the
/// context (a legacy run's request) it must be refused, never answered with every user's rows.
pub fn user_reads_match_the_model(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    for read in cx.record.log.reads() {
        let (user, rows, count, default_for) = match &read.kind {
            ReadKind::UserMessages { user, rows, count } => (user, rows, count, None),
            ReadKind::DefaultScopeMessages {
                run,
                user,
                rows,
                count,
            } => (user, rows, count, Some(*run)),
            _ => continue,
        };
        let truth = snapshots.before(read.op);
        let t = &read.thread;
        let at = Asked::of(cx, read);
        let how = match default_for {
            Some(r) => format!(
                "{}: {t}'s messages read in the default scope for {} (current user {})",
                when(read),
                cx.scenario.runs[r].id,
                or_none(user.as_ref())
            ),
            None => format!("{}: {t}'s messages read as {}", when(read), scope(user)),
        };
        let how = at.saying(how);
        let (rows, count) = (rows.primary(cx.primary), count.primary(cx.primary));
        if default_for.is_some() && user.is_none() {
            if let Some(n) = answered(rows, count) {
                f.add_at(
                    BugId::R19,
                    how.answers(n.clone(), "a refusal: no user in the request's context"),
                    format!("{how}: answered {n} instead of refusing a request with no user in its context"),
                );
            }
            continue;
        }
        let (Ok(rows), Ok(count)) = (rows, count) else {
            continue;
        };
        check_scope(cx, truth, t, user.as_deref(), rows, *count, &how, f);
    }
}

/// A read's scope in words: `user u`, or `every user`.
fn scope(user: &Option<String>) -> String {
    user.as_deref()
        .map_or("every user".into(), |u| format!("user {u}"))
}

/// A row list's length, or the error it failed with.
fn len_of(rows: &Answer<Vec<RunEvent>>) -> String {
    match rows {
        Ok(rows) => rows.len().to_string(),
        Err(e) => format!("error {e}"),
    }
}

/// What a read that had to be refused answered, in words (`None`: both parts refused).
fn answered(rows: &Answer<Vec<RunEvent>>, count: &Answer<u64>) -> Option<String> {
    match (rows, count) {
        (Err(_), Err(_)) => None,
        (Ok(rows), _) => Some(format!("{} rows", rows.len())),
        (_, Ok(c)) => Some(format!("a count of {c}")),
    }
}

/// One scoped read (`user`: that user's scope, `None`: every user's) against the model of the
/// thread's runs the scope admits, and its count against its rows.
#[allow(clippy::too_many_arguments)]
fn check_scope(
    cx: &Context<'_>,
    truth: &RunTruth,
    t: &str,
    user: Option<&str>,
    rows: &[RunEvent],
    count: u64,
    how: &Asked,
    f: &mut Findings,
) {
    let tid = cx.thread_id(t);
    let why = |n, c| format!("{how}: {n} rows, count_messages {c}");
    if how.count_differs(BugId::R19, "rows", (rows.len(), count), why, f) {
        return;
    }
    let owner_of = |run_id: &str| {
        cx.scenario
            .runs
            .iter()
            .find(|r| r.id == run_id && r.thread == t)
            .and_then(|r| r.user.as_deref())
    };
    let admitted = |run_id: &str| user.is_none() || owner_of(run_id) == user;
    let expected = truth.restricted_to(tid, admitted);
    let observed: Vec<ExpectedMessage> = rows.iter().map(of_row).collect();
    if let Err(m) = expected.check_history(tid, &observed) {
        let stranger = rows
            .iter()
            .find(|r| !admitted(&r.run_id))
            .map(|r| {
                format!(
                    " (seq {} of run {}, user {})",
                    r.seq,
                    r.run_id,
                    or_none(r.user_id.as_ref())
                )
            })
            .unwrap_or_default();
        let (answered, expected) = m.sides();
        f.add_at(
            BugId::R19,
            how.answers(answered, expected),
            format!("{how}: not exactly the scope's runs' messages{stranger}: {m}"),
        );
    }
}

/// R9 for the user-scoped reads: both backends answer them alike.
pub fn user_answers_agree(cx: &Context<'_>, f: &mut Findings) {
    for read in cx.record.log.reads() {
        let (user, rows, count) = match &read.kind {
            ReadKind::UserMessages { user, rows, count }
            | ReadKind::DefaultScopeMessages {
                user, rows, count, ..
            } => (user, rows, count),
            _ => continue,
        };
        if !rows.agree() || !count.agree() {
            let slot = cx.record.first_slot;
            let pointer = Asked::of(cx, read).answers(
                format!(
                    "sqlite: {} rows, counted {}",
                    len_of(&rows.sqlite),
                    answered_count(&count.sqlite)
                ),
                format!(
                    "as {slot}: {} rows, counted {}",
                    len_of(&rows.memory),
                    answered_count(&count.memory)
                ),
            );
            f.add_at(
                BugId::R9,
                pointer,
                format!(
                    "{}: {}'s messages read as {}: the backends differ ({} answered {} rows counted {}, sqlite {} rows counted {})",
                    when(read),
                    read.thread,
                    scope(user),
                    cx.record.first_slot,
                    len_of(&rows.memory),
                    answered_count(&count.memory),
                    len_of(&rows.sqlite),
                    answered_count(&count.sqlite)
                ),
            );
        }
    }
}
