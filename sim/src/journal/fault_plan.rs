//! The journal world's fault plan, from the fault stream only, over the session scripts the
//! workload produced: injected write failures, host crashes (what each keeps of the unsynced
//! writes), crashes inside a recovery, and corruption of a crashed image.

use super::options::JournalSimOptions;
use super::scenario::{
    Action, Corruption, Crash, DisposeFault, Pending, RecoveryCrash, RowSpec, SessionScript,
    SpeakerSpec,
};
use crate::rng::chance;
use crate::rng::{SeedRng, Stream};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// What a crash keeps of the unsynced writes.
fn pending(rng: &mut ChaCha8Rng, o: &JournalSimOptions) -> Pending {
    if chance(rng, o.pending_reorder_probability) {
        Pending::Reorder { seed: rng.random() }
    } else if chance(rng, o.pending_keep_probability) {
        Pending::Keep
    } else if chance(rng, o.pending_cut_probability) {
        Pending::Cut {
            bytes: rng.random_range(1..=600),
        }
    } else {
        Pending::Lose
    }
}

/// The fault plan: from the fault stream only, over the scripts the workload produced. Sets the
/// operations' injected failures and returns the host crashes.
pub(super) fn faults(
    seed: SeedRng,
    o: &JournalSimOptions,
    sessions: &mut [SessionScript],
) -> Vec<Crash> {
    let mut rng = seed.stream(Stream::Faults);
    // Corruptions come from a sub-stream of their own: seeds keep the crashes they had.
    let mut corrupt_rng = seed.substream(Stream::Faults, CORRUPTION_SUBSTREAM);
    let mut crashes = Vec::new();
    for (s, session) in sessions.iter_mut().enumerate() {
        let mut attached = session.mirrors.clone();
        let mut crashed = 0;
        for (k, op) in session.ops.iter_mut().enumerate() {
            match &mut op.action {
                a if a.is_solo_mutation() => op.fail = chance(&mut rng, o.append_eio_probability),
                Action::Switch { arrivals, .. } => {
                    op.fail = !arrivals.is_empty() && chance(&mut rng, o.switch_fail_probability)
                }
                Action::Shared { fail_mirror, .. }
                    if !attached.is_empty() && chance(&mut rng, o.mirror_fail_probability) =>
                {
                    *fail_mirror = attached.choose(&mut rng).cloned();
                }
                Action::AttachMirror { origin } => attached.push(origin.clone()),
                Action::Dispose { fault } if chance(&mut rng, o.dispose_fault_probability) => {
                    *fault = Some(if rng.random_bool(0.5) {
                        DisposeFault::ScratchRemove
                    } else {
                        DisposeFault::RecorderSync
                    });
                }
                _ => {}
            }
            if crashed >= 4 {
                continue;
            }
            let during = match &op.action {
                Action::Replace { groups, .. }
                    if chance(&mut rng, o.crash_mid_replace_probability) =>
                {
                    Some(rng.random_range(0..=groups.len() as u32))
                }
                _ if chance(&mut rng, o.crash_probability) => None,
                _ => continue,
            };
            crashed += 1;
            let pending = pending(&mut rng, o);
            let arrivals = if chance(&mut rng, o.restart_arrivals_probability) {
                (0..rng.random_range(1..=2))
                    .map(|i| RowSpec::plain(SpeakerSpec::Human, format!("typed{s}o{k}i{i}")))
                    .collect()
            } else {
                Vec::new()
            };
            crashes.push(Crash {
                session: s as u32,
                op: k as u32,
                during,
                pending,
                down_ms: rng.random_range(1..=30),
                arrivals,
                corrupt: corruption(&mut corrupt_rng, o),
                recovery: None,
            });
        }
    }
    recovery_faults(seed, o, sessions, &mut crashes);
    crashes
}

/// The fault sub-stream crashes inside recovery and process kills are drawn from.
const RECOVERY_SUBSTREAM: u64 = 8;

/// Crashes inside recovery, and process kills that keep the page cache followed later by a power
/// cut: from a sub-stream of their own, so seeds without them keep every other fault.
fn recovery_faults(
    seed: SeedRng,
    o: &JournalSimOptions,
    sessions: &[SessionScript],
    crashes: &mut Vec<Crash>,
) {
    if o.kill_probability <= 0.0 && o.recovery_crash_probability <= 0.0 {
        return;
    }
    let mut rng = seed.substream(Stream::Faults, RECOVERY_SUBSTREAM);
    let mut power_cuts = Vec::new();
    for c in crashes.iter_mut() {
        if chance(&mut rng, o.recovery_crash_probability) {
            let pending = match rng.random_range(0..4) {
                0 | 1 => Pending::Cut {
                    bytes: rng.random_range(1..=120),
                },
                2 => Pending::Lose,
                _ => Pending::Kill,
            };
            c.recovery = Some(RecoveryCrash {
                after_writes: rng.random_range(0..=3),
                pending,
            });
        }
        let ops = sessions[c.session as usize].ops.len() as u32;
        if c.corrupt.is_none() && chance(&mut rng, o.kill_probability) {
            c.pending = Pending::Kill;
            if c.op + 1 < ops {
                power_cuts.push(Crash {
                    session: c.session,
                    op: rng.random_range(c.op + 1..ops),
                    during: None,
                    pending: Pending::Lose,
                    down_ms: rng.random_range(1..=30),
                    arrivals: Vec::new(),
                    corrupt: None,
                    recovery: None,
                });
            }
        }
    }
    for cut in power_cuts {
        let taken = crashes
            .iter()
            .any(|c| (c.session, c.op, c.during) == (cut.session, cut.op, None));
        if !taken && crashes.len() < super::scenario::CRASHES_MAX {
            crashes.push(cut);
        }
    }
}

/// The fault sub-stream silent corruptions are drawn from.
const CORRUPTION_SUBSTREAM: u64 = 7;

/// Whether a crash's restart meets a silent corruption, and of which kind (a third each).
fn corruption(rng: &mut ChaCha8Rng, o: &JournalSimOptions) -> Option<Corruption> {
    if o.corrupt_probability <= 0.0 || !rng.random_bool(o.corrupt_probability.min(1.0)) {
        return None;
    }
    let pick = rng.random::<u32>();
    Some(match rng.random_range(0..3) {
        0 => Corruption::BitFlip {
            pick,
            bit: rng.random_range(0..8),
        },
        1 => Corruption::TextFlip { pick },
        _ => Corruption::StaleSector { pick },
    })
}
