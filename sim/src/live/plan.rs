//! The live run's fault plan: which process fault happens at which wall time, decided from the
//! seed before anything starts (so a seed's live runs inject the same faults at the same offsets;
//! only what the OS and the bus then do differs).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A fault the live run injects into real processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveFault {
    /// SIGKILL the replica, then start it again `down_ms` later (a crashed API replica).
    KillRestart { replica: u8, down_ms: u64 },
    /// SIGSTOP the replica, SIGCONT it `ms` later (a slow consumer: the server holds its
    /// deliveries, which then arrive late and in a burst).
    Pause { replica: u8, ms: u64 },
    /// SIGKILL nats-server, start it again on the same port `down_ms` later (NATS Core keeps
    /// nothing: what is published meanwhile may reach nobody).
    ServerRestart { down_ms: u64 },
}

impl LiveFault {
    pub fn name(self) -> &'static str {
        match self {
            LiveFault::KillRestart { .. } => "kill+restart",
            LiveFault::Pause { .. } => "pause",
            LiveFault::ServerRestart { .. } => "server restart",
        }
    }
}

/// A fault and when it starts, in milliseconds after the run started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedFault {
    pub at_ms: u64,
    pub fault: LiveFault,
}

/// When the run publishes and which faults it injects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivePlan {
    /// The agents publish the scenario's events spread over this many milliseconds.
    pub publish_ms: u64,
    pub faults: Vec<TimedFault>,
}

/// One fault in every window of this many milliseconds: faults never overlap, so each one's
/// effect on delivery can be told apart.
const FAULT_WINDOW_MS: u64 = 4_000;

impl LivePlan {
    /// The plan of `seed` for a run of `seconds` with `replicas` replicas; `server_faults` is
    /// false when the server is not ours to restart (`--nats-url`).
    pub fn of_seed(seed: u64, seconds: u64, replicas: u8, server_faults: bool) -> LivePlan {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6c69_7665_2d66_6c74);
        // Two thirds publishing under faults, the rest for the replicas to settle.
        let publish_ms = (seconds * 1000 * 2 / 3).max(1_000);
        let windows = publish_ms.saturating_sub(1_000) / FAULT_WINDOW_MS;
        let mut kinds: Vec<u8> = if server_faults {
            vec![0, 1, 2]
        } else {
            vec![0, 1]
        };
        let faults = (0..windows)
            .map(|w| {
                let kind = if (w as usize) < kinds.len() {
                    // The first windows take every kind once, in a seeded order.
                    let pick = rng.random_range(w as usize..kinds.len());
                    kinds.swap(w as usize, pick);
                    kinds[w as usize]
                } else {
                    kinds[rng.random_range(0..kinds.len())]
                };
                let replica = rng.random_range(0..replicas);
                let fault = match kind {
                    0 => LiveFault::KillRestart {
                        replica,
                        down_ms: rng.random_range(300..1_500),
                    },
                    1 => LiveFault::Pause {
                        replica,
                        ms: rng.random_range(300..1_500),
                    },
                    _ => LiveFault::ServerRestart {
                        down_ms: rng.random_range(300..1_000),
                    },
                };
                TimedFault {
                    at_ms: 1_000 + w * FAULT_WINDOW_MS + rng.random_range(0..1_000),
                    fault,
                }
            })
            .collect();
        LivePlan { publish_ms, faults }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_plan_and_thirty_seconds_bring_every_kind() {
        let plan = LivePlan::of_seed(7, 30, 3, true);
        assert_eq!(plan, LivePlan::of_seed(7, 30, 3, true));
        assert_eq!(plan.publish_ms, 20_000);
        for name in ["kill+restart", "pause", "server restart"] {
            assert!(plan.faults.iter().any(|f| f.fault.name() == name), "{name}");
        }
        for pair in plan.faults.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let a_ends = a.at_ms
                + match a.fault {
                    LiveFault::KillRestart { down_ms, .. } => down_ms,
                    LiveFault::Pause { ms, .. } => ms,
                    LiveFault::ServerRestart { down_ms } => down_ms,
                };
            assert!(a_ends < b.at_ms, "{a:?} overlaps {b:?}");
        }
    }

    #[test]
    fn an_external_server_is_never_restarted() {
        let plan = LivePlan::of_seed(3, 60, 3, false);
        assert!(!plan.faults.is_empty());
        assert!(plan
            .faults
            .iter()
            .all(|f| !matches!(f.fault, LiveFault::ServerRestart { .. })));
    }
}
