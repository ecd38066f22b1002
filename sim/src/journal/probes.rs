//! The journal workload's coverage probes: every fault the world injected and every operation
//! and recovery path the sessions exercised.

use super::map;
use super::record::{
    AttachSeen, Happened, Outcome, Seen, SendSeen, SharedSeen, SoloSeen, SwitchSeen,
};
use super::scenario::{Action, DisposeFault, JournalScenario, SharedAction};
use super::world::WorldRecord;
use crate::coverage::{join_probes, Coverage};
use crate::hostile_text::hit_classes;

/// Every probe this workload can fire: its own, then the generator map's cells.
pub const PROBES: &[&str] = &join_probes::<{ OWN.len() + map::CELL_COUNT }>(OWN, &map::PROBES);

/// The probes of faults, operations and recovery paths.
const OWN: &[&str] = &[
    "journal.fault.crash",
    "journal.fault.crash_lose_unsynced",
    "journal.fault.crash_keep_unsynced",
    "journal.fault.crash_kill_keeps_page_cache",
    "journal.fault.crash_inside_recovery",
    "journal.fault.crash_torn_write",
    "journal.fault.crash_reordered_writes",
    "journal.fault.crash_mid_replace",
    "journal.fault.append_eio",
    "journal.fault.mirror_append_eio",
    "journal.fault.resume_fails_after_publish",
    "journal.fault.dispose_scratch_remove",
    "journal.fault.dispose_recorder_sync",
    "journal.fault.corrupt_bit_flip",
    "journal.fault.corrupt_text_flip",
    "journal.fault.corrupt_stale_sector",
    "journal.fault.recorded_storage_crash_states",
    "journal.feature.append",
    "journal.feature.replace",
    "journal.feature.replace_with_arrivals",
    "journal.feature.rewind",
    "journal.feature.clear",
    "journal.feature.compress",
    "journal.feature.density",
    "journal.feature.density_large",
    "journal.feature.insert",
    "journal.feature.read",
    "journal.feature.estimate",
    "journal.feature.send_truncated",
    "journal.feature.fork",
    "journal.feature.clone",
    "journal.feature.switch",
    "journal.feature.resume_again",
    "journal.feature.arrivals_during_resume",
    "journal.feature.several_origins",
    "journal.feature.shared_rewind",
    "journal.feature.shared_rollback",
    "journal.feature.mirror_late_attach",
    "journal.feature.shared_resume",
    "journal.feature.slow_mirrors",
    "journal.feature.dispose",
    "journal.recovery.open_txn_aborted",
    "journal.recovery.torn_tail_cut",
    "journal.recovery.dead_scratch_swept",
    "journal.recovery.corruption_reported",
    "journal.text.line_separator",
    "journal.text.paragraph_separator",
    "journal.text.nel",
    "journal.text.nul",
    "journal.text.c0_control",
    "journal.text.crlf",
    "journal.text.escapes",
    "journal.text.astral",
    "journal.text.bidi",
    "journal.text.zero_width",
    "journal.text.combining",
    "journal.text.long",
];

/// Probes of what the scenario asked for and what the world's record shows happened.
pub fn probes(scenario: &JournalScenario, record: &WorldRecord, cov: &mut Coverage) {
    text_probes(scenario, cov);
    for (script, session) in scenario.sessions.iter().zip(&record.sessions) {
        if script.subagents.len() >= 2 {
            cov.hit("journal.feature.several_origins");
        }
        for h in &session.happened {
            match h {
                Happened::Op { op, seen } => {
                    if let Some(script_op) = script.ops.get(*op) {
                        op_probes(scenario, &script_op.action, seen, cov);
                    }
                }
                Happened::Corrupted { restart, .. }
                    if restart
                        .shown
                        .as_ref()
                        .is_err_and(|(_, o)| *o == Some(restart.injected.frame_start)) =>
                {
                    cov.hit("journal.recovery.corruption_reported");
                }
                Happened::Restart { solo, .. } => {
                    if solo.facts_before.open_txn.is_some() && solo.facts_after.open_txn.is_none() {
                        cov.hit("journal.recovery.open_txn_aborted");
                    }
                    if solo.facts_before.torn_tail {
                        cov.hit("journal.recovery.torn_tail_cut");
                    }
                }
                Happened::Started { dead, scratch, .. }
                    if !dead.is_empty()
                        && scratch
                            .iter()
                            .all(|f| dead.iter().all(|d| !f.contains(d.as_str()))) =>
                {
                    cov.hit("journal.recovery.dead_scratch_swept");
                }
                _ => {}
            }
        }
    }
}

fn op_probes(scenario: &JournalScenario, action: &Action, seen: &Seen, cov: &mut Coverage) {
    let written = match seen {
        Seen::Solo(SoloSeen { outcome, .. }) | Seen::Shared(SharedSeen { outcome, .. }) => {
            outcome.is_written()
        }
        _ => true,
    };
    match (action, seen) {
        (Action::Replace { arrivals, .. }, _) if written => {
            cov.hit("journal.feature.replace");
            if !arrivals.is_empty() {
                cov.hit("journal.feature.replace_with_arrivals");
            }
        }
        (
            Action::Density {
                rewrite,
                rewrite_bytes,
                ..
            },
            _,
        ) if written => {
            cov.hit("journal.feature.density");
            if u64::from(*rewrite_bytes) * rewrite.len() as u64 > 64 * 1024 {
                cov.hit("journal.feature.density_large");
            }
        }
        (Action::Send { .. }, Seen::Send(SendSeen { replacements, .. })) if *replacements > 0 => {
            cov.hit("journal.feature.send_truncated")
        }
        (Action::Switch { .. }, Seen::Switch(SwitchSeen { result: Ok(()), .. })) => {
            cov.hit("journal.feature.switch")
        }
        (Action::Shared { op, .. }, Seen::Shared(SharedSeen { outcome, .. })) => {
            if matches!(outcome, Outcome::Failed(_)) {
                cov.hit("journal.feature.shared_rollback");
            }
            if matches!(op, SharedAction::Rewind { .. }) && outcome.is_written() {
                cov.hit("journal.feature.shared_rewind");
            }
            if scenario.mirror_settle_ms > 0 && outcome.is_written() {
                cov.hit("journal.feature.slow_mirrors");
            }
        }
        (
            Action::AttachMirror { .. },
            Seen::AttachMirror(AttachSeen {
                mirror: Some(_), ..
            }),
        ) => cov.hit("journal.feature.mirror_late_attach"),
        (Action::Dispose { fault }, _) => {
            cov.hit("journal.feature.dispose");
            match fault {
                Some(DisposeFault::ScratchRemove) => {
                    cov.hit("journal.fault.dispose_scratch_remove")
                }
                Some(DisposeFault::RecorderSync) => cov.hit("journal.fault.dispose_recorder_sync"),
                None => {}
            }
        }
        (a, _) if written => plain_op_probe(a, cov),
        _ => {}
    }
}

/// The probe of a written operation with nothing more to tell.
fn plain_op_probe(a: &Action, cov: &mut Coverage) {
    let probe = match a {
        Action::Append { .. } => "journal.feature.append",
        Action::Rewind { .. } => "journal.feature.rewind",
        Action::Clear => "journal.feature.clear",
        Action::Compress { .. } => "journal.feature.compress",
        Action::Insert { .. } => "journal.feature.insert",
        Action::Read => "journal.feature.read",
        Action::Estimate { .. } => "journal.feature.estimate",
        Action::Fork { .. } => "journal.feature.fork",
        Action::Clone { .. } => "journal.feature.clone",
        Action::ResumeAgain => "journal.feature.resume_again",
        Action::SharedResume => "journal.feature.shared_resume",
        _ => return,
    };
    cov.hit(probe);
}

/// The hostile-text classes of the rows' texts the sessions write: every `text` string of the
/// scenario's rows (one walk of its data, whatever action holds them).
fn text_probes(scenario: &JournalScenario, cov: &mut Coverage) {
    fn walk(v: &serde_json::Value, cov: &mut Coverage) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("text", serde_json::Value::String(t)) => {
                            hit_classes(t, "journal", PROBES, cov)
                        }
                        _ => walk(v, cov),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, cov)),
            _ => {}
        }
    }
    if let Ok(v) = serde_json::to_value(&scenario.sessions) {
        walk(&v, cov);
    }
}
