//! The rule about user-scoped reads, R19, against [`model::runs::RunTruth`] restricted to the
//! runs a scope admits: a thread's messages read in one user's scope are exactly the messages
//! of the runs acting for that user (a legacy run without a user is nobody's), in the order the
//! thread's history has them, and the scoped count is their number; every user's scope sees
//! every run. Where the two backends answered one of these reads differently, R9.

use super::context::{of_row, Context};
use super::record::ReadKind;
use super::truth::Snapshots;
use crate::outcome::Findings;
use history::BugId;
use model::runs::ExpectedMessage;

/// R19: each user-scoped read against the model of the runs its scope admits.
pub fn user_reads_match_the_model(cx: &Context<'_>, f: &mut Findings) {
    let mut snapshots = Snapshots::new(cx.scenario, &cx.record.truth);
    for read in &cx.record.reads {
        let ReadKind::UserMessages { user, rows, count } = &read.kind else {
            continue;
        };
        let truth = snapshots.before(read.op);
        let (t, tid) = (&read.thread, cx.thread_id(&read.thread));
        let how = format!(
            "{t}'s messages read as {}",
            user.as_deref()
                .map_or("every user".into(), |u| format!("user {u}"))
        );
        let (Ok(rows), Ok(count)) = (rows.primary(cx.primary), count.primary(cx.primary)) else {
            continue;
        };
        if rows.len() as u64 != *count {
            f.add(
                BugId::R19,
                format!("{how}: {} rows, count_messages {count}", rows.len()),
            );
            continue;
        }
        let owner_of = |run_id: &str| {
            cx.scenario
                .runs
                .iter()
                .find(|r| r.id == run_id && &r.thread == t)
                .and_then(|r| r.user.as_deref())
        };
        let admitted = |run_id: &str| user.is_none() || owner_of(run_id) == user.as_deref();
        let expected = truth.restricted_to(tid, admitted);
        let observed: Vec<ExpectedMessage> = rows.iter().map(of_row).collect();
        if let Err(m) = expected.check_history(tid, &observed) {
            let stranger = rows
                .iter()
                .find(|r| !admitted(&r.run_id))
                .map(|r| format!(" (seq {} of run {}, user {:?})", r.seq, r.run_id, r.user_id))
                .unwrap_or_default();
            f.add(
                BugId::R19,
                format!("{how}: not exactly the scope's runs' messages{stranger}: {m:?}"),
            );
        }
    }
}

/// R9 for the user-scoped reads: both backends answer them alike.
pub fn user_answers_agree(cx: &Context<'_>, f: &mut Findings) {
    for read in &cx.record.reads {
        let ReadKind::UserMessages { user, rows, count } = &read.kind else {
            continue;
        };
        if rows.memory != rows.sqlite || count.memory != count.sqlite {
            f.add(
                BugId::R9,
                format!(
                    "{}'s messages read as {user:?}: the backends differ (counts: {} {:?}, sqlite {:?})",
                    read.thread, cx.record.first_slot, count.memory, count.sqlite
                ),
            );
        }
    }
}
