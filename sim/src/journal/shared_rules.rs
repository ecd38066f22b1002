//! The journal rules about the shared history and its per-origin mirrors: J7, J8 and J9.

use super::expect::{shared_model_op, short, OpSeen, SessionCheck, SharedModel};
use super::meaning::{origin_name, origin_of};
use super::mutation_outcome::{judge_unwritten, model_after_write};
use super::record::{AttachSeen, MirrorSeen, Outcome, SharedRestart, SharedSeen};
use super::scenario::Action;
use super::step::Step;
use crate::journal::crash::invariants::check_origins;
use crate::outcome::Findings;
use history::BugId;

/// J8: a shared mutation succeeds unless a fault was injected, changes the shared history as the
/// model says, keeps every row's origin, and leaves every mirror holding it (J7, J9).
pub fn shared_history_follows_the_model(
    sc: &mut SessionCheck<'_>,
    o: &OpSeen<'_, SharedSeen>,
    found: &mut Findings,
) {
    let SharedSeen {
        outcome,
        primary,
        mirrors,
        ..
    } = o.seen;
    let (at, k, op) = (o.at, o.k, o.op);
    let Action::Shared {
        origin,
        op: action,
        fail_mirror,
    } = &op.action
    else {
        return;
    };
    let Some(sm) = sc.shared.as_mut() else {
        found.unexplained_at(
            BugId::J8,
            at.answers("no shared history", "a shared history"),
            format!("{at}: the session has no shared history"),
        );
        return;
    };
    let origin = origin_of(origin);
    let expected = shared_model_op(k, &origin, action, &sm.truth);
    match (outcome, fail_mirror) {
        (Outcome::Written { .. }, _) => written(at, sm, expected, mirrors, found),
        // The mirror whose append failed holds the history before the mutation until a resume.
        (Outcome::Failed(_), Some(m)) => {
            sm.stale.insert(origin_of(m));
        }
        _ => {
            let (changes, fault) = (expected.is_some(), fail_mirror.is_some());
            judge_unwritten(BugId::J8, at, outcome, changes, fault, found);
        }
    }
    if let Err(v) = check_origins(&sm.truth.rows(), primary) {
        let pointer = at.answers(v.message.clone(), "every row under its own origin");
        found.add_at(BugId::J8, pointer, format!("{at}: {}", v.message));
    }
}

/// J8 (J7, J9): a shared mutation (`at`) was written: the model takes it (`expected`), and
/// every mirror holds it as it resolved.
fn written(
    at: &Step,
    sm: &mut SharedModel,
    expected: Option<model::journal::ModelOp<history::journal::Row>>,
    mirrors: &[MirrorSeen],
    found: &mut Findings,
) {
    let applied = expected.map(|op| sm.truth.apply(&op));
    if let Some(next) = model_after_write(BugId::J8, at, applied, found) {
        sm.before = std::mem::replace(&mut sm.truth, next);
        sm.stale.clear();
        for m in mirrors {
            check_mirror_at_resolve(at, sm, m, found);
        }
    }
}

/// J7: a mirror attached late holds the history's rows of its origin.
pub fn late_mirrors_start_in_sync(
    sc: &mut SessionCheck<'_>,
    o: &OpSeen<'_, AttachSeen>,
    found: &mut Findings,
) {
    let AttachSeen { result, mirror } = o.seen;
    let (at, op) = (o.at, o.op);
    let Some(sm) = sc.shared.as_mut() else {
        return;
    };
    let Action::AttachMirror { origin } = &op.action else {
        return;
    };
    let origin = origin_of(origin);
    if sm.attached.contains(&origin) {
        return;
    }
    match (result, mirror) {
        (Ok(()), Some(m)) => {
            sm.attached.push(origin.clone());
            let want = sm.of(&sm.truth, &origin);
            if m.rows != want || m.durable.as_ref() != Ok(&want) {
                found.add_at(
                    BugId::J7,
                    at.answers(short(&m.rows), short(&want)),
                    format!("{at}: the mirror of {} attached late holds {}; the history's rows of that origin are {}", origin_name(&origin), short(&m.rows), short(&want)),
                );
            }
        }
        (Ok(()), None) => sm.attached.push(origin),
        (Err(e), _) => found.unexplained_at(
            BugId::J7,
            at.answers(format!("error {e}"), "the mirror attached"),
            format!("{at}: attaching failed: {e}"),
        ),
    }
}

/// J9: a shared resume on purpose.
pub fn shared_resumes_keep_mirrors(
    sc: &mut SessionCheck<'_>,
    o: &OpSeen<'_, SharedRestart>,
    found: &mut Findings,
) {
    let step =
        o.at.clone()
            .saying(format!("session {} shared resume", sc.s));
    shared_reopened(sc, &step, o.seen, found);
}

/// J9 (J7, J8): the shared history and its mirrors reopened (`at`: after a crash, or on
/// purpose): every mirror held every mutation resolved before, and holds the history after.
pub fn shared_reopened(
    sc: &mut SessionCheck<'_>,
    at: &Step,
    r: &SharedRestart,
    found: &mut Findings,
) {
    let Some(sm) = sc.shared.as_mut() else {
        return;
    };
    for (origin, held) in &r.mirrors_before {
        if sm.stale.contains(origin) {
            continue;
        }
        let want = sm.of(&sm.truth, origin);
        if held.as_ref() == Ok(&want) {
            continue;
        }
        let behind = held.as_ref() == Ok(&sm.of(&sm.before, origin));
        let id = if behind { BugId::J9 } else { BugId::J7 };
        let held = held
            .as_ref()
            .map_or_else(|e| format!("an unreadable file ({e})"), |h| short(h));
        found.add_at(
            id,
            at.answers(format!("before the resume: {held}"), short(&want)),
            format!("{at}: before the resume the mirror of {} holds {held}; every mutation resolved before, which needs {}", origin_name(origin), short(&want)),
        );
    }
    if let Err(e) = &r.resumed {
        found.unexplained_at(
            BugId::J7,
            at.answers(format!("error {e}"), "the shared history resumed"),
            format!("{at}: resuming the shared history failed: {e}"),
        );
        return;
    }
    if let Err(v) = check_origins(&sm.truth.rows(), &r.primary) {
        let pointer = at.answers(v.message.clone(), "every row under its own origin");
        found.add_at(BugId::J8, pointer, format!("{at}: {}", v.message));
    }
    for (origin, held) in &r.mirrors {
        let want = sm.of(&sm.truth, origin);
        if *held != want {
            found.add_at(
                BugId::J7,
                at.answers(short(held), short(&want)),
                format!("{at}: the resumed mirror of {} holds {}; the history's rows of that origin are {}", origin_name(origin), short(held), short(&want)),
            );
        }
    }
    sm.stale.clear();
}

/// A mirror right after a mutation resolved: it must hold the mutation, durably.
fn check_mirror_at_resolve(at: &Step, sm: &SharedModel, m: &MirrorSeen, found: &mut Findings) {
    let want = sm.of(&sm.truth, &m.origin);
    if m.rows == want && m.durable.as_ref() == Ok(&want) {
        return;
    }
    let prev = sm.of(&sm.before, &m.origin);
    let behind = m.rows == prev || m.durable.as_ref() == Ok(&prev);
    let durable = m
        .durable
        .as_ref()
        .map_or_else(|e| format!("an unreadable file ({e})"), |d| short(d));
    let pointer = at.answers(
        format!("{} ({durable} durably)", short(&m.rows)),
        short(&want),
    );
    if behind {
        found.add_at(
            BugId::J9,
            pointer,
            format!("{at}: the mutation resolved but the mirror of {} holds {} ({durable} durably): the history before it", origin_name(&m.origin), short(&m.rows)),
        );
    } else {
        found.add_at(
            BugId::J7,
            pointer,
            format!("{at}: the mirror of {} holds {} ({durable} durably); the history's rows of that origin are {}", origin_name(&m.origin), short(&m.rows), short(&want)),
        );
    }
}
