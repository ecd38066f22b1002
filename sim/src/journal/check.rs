//! The invariant checkers of the journal workload: J1 to J13 and J15 to J21 (J22, the
//! production storage under crash states, is `recorded_storage.rs`).
//!
//! Checkers only check. They rebuild, from the scenario alone and from the faults the world
//! injected, what every journal must hold (`model::journal::ModelHistory`, one per journal
//! file, one for the shared history), and compare it with what the operations returned, what
//! reopened journals showed and what the disk images hold. Where the model needs to know
//! whether an operation took effect, it asks the scenario: an operation with an injected fault
//! must fail and change nothing, any other must succeed; a replacement a crash interrupted never
//! happened.
//!
//! Each rule of [`OP_RULES`] checks one operation against one invariant ([`super::op_rules`],
//! [`super::shared_rules`]); crashes and disk images are checked by [`super::crash_rules`]; the
//! model they compare with is [`super::expect`].
//!
//! Violations come out in a fixed priority order ([`ATTRIBUTION`]), most specific first, so a world
//! with one defect reports that defect's ID first even when its effects also break broader
//! invariants (a resume that forgot to abort a replacement also leaves the next append inside
//! it: that is J2 before J3). Differences no specific invariant explains come last.

use super::corrupt_rules::corrupted_restart;
use super::crash_rules::{check_image, restart};
use super::expect::{OpSeen, SessionCheck};
use super::op_rules::{
    copies_start_outside_transactions, disposal_reports_its_failures,
    incremental_reads_touch_only_what_was_appended, mutations_read_nothing_back,
    recording_follows_the_model, resuming_again_changes_nothing,
    shared_mutations_read_nothing_back, single_record_mutations, switching_keeps_the_recording,
    token_counters_are_independent, truncation_visits_each_row_once,
};
use super::picture::ModelsAtRestarts;
use super::record::{
    AttachSeen, CopySeen, DisposeSeen, Happened, ReadSeen, ResumeAgainSeen, Seen, SendSeen,
    SessionRecord, SharedRestart, SharedSeen, SoloSeen, SwitchSeen,
};
use super::scenario::JournalScenario;
use super::shared_rules::{
    late_mirrors_start_in_sync, shared_history_follows_the_model, shared_reopened,
    shared_resumes_keep_mirrors,
};
use super::step::Step;
use super::world::WorldRecord;
use crate::journal::crash::classify_image;
use crate::journal::crash::invariants::check_swept;
use crate::outcome::{Attribution, Findings, Unexplained, Violation};
use history::BugId;

/// The order violations are reported in: the invariant most specific to a defect first.
/// Differences no specific invariant explains come last, each under the ID of its area.
pub static ATTRIBUTION: Attribution = Attribution {
    priority: &[
        BugId::J17,
        BugId::J13,
        BugId::J12,
        BugId::J19,
        BugId::J20,
        BugId::J21,
        BugId::J22,
        BugId::J10,
        BugId::J1,
        BugId::J2,
        BugId::J11,
        BugId::J16,
        BugId::J15,
        BugId::J3,
        BugId::J5,
        BugId::J6,
        BugId::J4,
        BugId::J8,
        BugId::J9,
        BugId::J7,
        BugId::J18,
    ],
    secondary: &[],
    merge_up_to: None,
    unexplained: Unexplained::Each,
};

/// A rule about one kind of operation: it reads what an operation of that kind returned (`T`).
pub type Rule<T> = fn(&mut SessionCheck<'_>, &OpSeen<'_, T>, &mut Findings);

/// One rule about an operation, by the kind of operation it reads.
pub enum OpRule {
    Solo(Rule<SoloSeen>),
    Read(Rule<ReadSeen>),
    Estimate(Rule<[u64]>),
    Send(Rule<SendSeen>),
    Copy(Rule<CopySeen>),
    Switch(Rule<SwitchSeen>),
    ResumeAgain(Rule<ResumeAgainSeen>),
    Shared(Rule<SharedSeen>),
    AttachMirror(Rule<AttachSeen>),
    SharedResume(Rule<SharedRestart>),
    Dispose(Rule<DisposeSeen>),
}

impl OpRule {
    /// Runs the rule on `o` when `o` is of the rule's kind; passes it otherwise.
    fn check(&self, sc: &mut SessionCheck<'_>, o: &OpSeen<'_>, found: &mut Findings) {
        match (self, o.seen) {
            (OpRule::Solo(rule), Seen::Solo(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::Read(rule), Seen::Read(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::Estimate(rule), Seen::Estimate { counts }) => {
                rule(sc, &o.of(counts.as_slice()), found)
            }
            (OpRule::Send(rule), Seen::Send(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::Copy(rule), Seen::Copy(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::Switch(rule), Seen::Switch(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::ResumeAgain(rule), Seen::ResumeAgain(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::Shared(rule), Seen::Shared(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::AttachMirror(rule), Seen::AttachMirror(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::SharedResume(rule), Seen::SharedResume(seen)) => rule(sc, &o.of(seen), found),
            (OpRule::Dispose(rule), Seen::Dispose(seen)) => rule(sc, &o.of(seen), found),
            _ => {}
        }
    }
}

/// Every rule about an operation: the kind of operation it reads, the invariant it checks, in
/// the order they run. A rule may name a narrower ID its evidence points at (a copy with a
/// transaction its writer did not open is J1, not J2).
pub const OP_RULES: &[(BugId, OpRule)] = &[
    (BugId::J12, OpRule::Solo(mutations_read_nothing_back)),
    (
        BugId::J12,
        OpRule::Shared(shared_mutations_read_nothing_back),
    ),
    (BugId::J10, OpRule::Solo(recording_follows_the_model)),
    (BugId::J15, OpRule::Solo(single_record_mutations)),
    (
        BugId::J11,
        OpRule::Read(incremental_reads_touch_only_what_was_appended),
    ),
    (BugId::J17, OpRule::Estimate(token_counters_are_independent)),
    (BugId::J13, OpRule::Send(truncation_visits_each_row_once)),
    (BugId::J2, OpRule::Copy(copies_start_outside_transactions)),
    (BugId::J4, OpRule::Switch(switching_keeps_the_recording)),
    (
        BugId::J5,
        OpRule::ResumeAgain(resuming_again_changes_nothing),
    ),
    (BugId::J8, OpRule::Shared(shared_history_follows_the_model)),
    (BugId::J7, OpRule::AttachMirror(late_mirrors_start_in_sync)),
    (BugId::J9, OpRule::SharedResume(shared_resumes_keep_mirrors)),
    (BugId::J18, OpRule::Dispose(disposal_reports_its_failures)),
];

/// Checks every session of a played scenario, keeping in `models` (when given) the model's
/// history at each restart, for the seed's page.
pub fn check_keeping(
    scenario: &JournalScenario,
    record: &WorldRecord,
    mut models: Option<&mut ModelsAtRestarts>,
) -> Vec<Violation> {
    let mut found = Findings::new(&ATTRIBUTION);
    for (s, (script, record)) in scenario.sessions.iter().zip(&record.sessions).enumerate() {
        let models = models.as_deref_mut();
        session(SessionCheck::new(s, script), record, &mut found, models);
    }
    found.into_violations()
}

/// J18 at every start, then every operation, crash and restart in the order they happened, then
/// the disk at the end (J10, J16, J3).
fn session(
    mut sc: SessionCheck<'_>,
    record: &SessionRecord,
    found: &mut Findings,
    mut models: Option<&mut ModelsAtRestarts>,
) {
    let s = sc.s;
    // The op the last crash hit: the restart after it names it.
    let mut crashed = 0;
    for (i, h) in record.happened.iter().enumerate() {
        let at_us = record.happened_at.get(i).map_or(0, |(at_us, _)| *at_us);
        if let (Happened::Restart { solo, .. }, Some(m)) = (h, models.as_deref_mut()) {
            m.insert((s, i), sc.latest_ref(&solo.journal).rows());
        }
        match h {
            Happened::Started {
                incarnation,
                dead,
                scratch,
                sweep_error,
            } => started(
                &Step::start(s, *incarnation, at_us),
                (dead, scratch),
                sweep_error.as_ref(),
                found,
            ),
            Happened::Op { op, seen } => {
                let script_op = &sc.script.ops[*op];
                let at = Step::op(s, *op, script_op.action.kind(), at_us);
                let o = OpSeen {
                    at: &at,
                    k: *op,
                    op: script_op,
                    seen,
                };
                for (_, rule) in OP_RULES {
                    rule.check(&mut sc, &o, found);
                }
            }
            Happened::Interrupted { .. } => {}
            Happened::Crash {
                op, image, synced, ..
            } => {
                crashed = *op;
                let when = format!("after the crash at op {op}");
                check_image(s, &when, image, Some(synced), found);
                sc.crash_image = image.clone();
                sc.crash_synced = synced.clone();
            }
            Happened::Corrupted { op, restart } => {
                let step = Step::restart(s, *op, &restart.injected.file, at_us);
                corrupted_restart(&sc, &step, *op, restart, found);
            }
            Happened::Restart { solo, shared } => {
                restart(
                    &mut sc,
                    &Step::restart(s, crashed, &solo.journal, at_us),
                    solo,
                    found,
                );
                if let Some(r) = shared {
                    let step = Step::shared_restart(s, Some(crashed), crashed, at_us);
                    shared_reopened(&mut sc, &step, r, found);
                }
            }
        }
    }
    at_the_end(s, record, found);
}

/// J18 at a process start (`at`): its journal store opened, and no scratch of a dead process
/// (`dead`) survived its sweep (`scratch`: what is left).
fn started(
    at: &Step,
    (dead, scratch): (&[String], &[String]),
    sweep_error: Option<&String>,
    found: &mut Findings,
) {
    if let Some(e) = sweep_error {
        found.add_at(
            BugId::J18,
            at.answers(format!("error {e}"), "the journal store opened"),
            format!("{at} could not open its journal store: {e}"),
        );
    }
    if let Err(v) = check_swept(dead, scratch) {
        found.add_at(
            BugId::J18,
            at.answers(
                format!("scratch left: {}", scratch.join(", ")),
                "no scratch of a dead process left",
            ),
            format!("{at} started: {}", v.message),
        );
    }
}

/// The disk at the end (J10, J16, J3) and the recording's last record (J10).
fn at_the_end(s: usize, record: &SessionRecord, found: &mut Findings) {
    if matches!(record.happened.last(), Some(Happened::Corrupted { .. })) {
        // The script ended at a restart that met the corruption the plan injected: the file
        // still holds it, which is the fault, not a defect.
        return;
    }
    check_image(s, "at the end", &record.final_image, None, found);
    if let Some((journal, written)) = &record.final_recording {
        let bytes = record
            .final_image
            .get(journal)
            .map_or(&[][..], Vec::as_slice);
        let facts = classify_image(bytes);
        if facts.last_seq < *written {
            // A whole-state rule: the recording's bytes at the end, after every operation.
            found.add_whole_state(
                BugId::J10,
                format!("the bytes of {journal} at the end"),
                format!(
                    "session {s} at the end: the writer wrote {journal} up to record {written} but it reads back only to record {} (image: {facts})",
                    facts.last_seq
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn priority_lists_every_checked_id_once() {
        let set: BTreeSet<BugId> = ATTRIBUTION.priority.iter().copied().collect();
        assert_eq!(set.len(), ATTRIBUTION.priority.len());
        assert!(!set.contains(&BugId::J14));
    }
}
