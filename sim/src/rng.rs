//! One seed, many independent random streams.
//!
//! A run derives everything from one `u64` seed. Each concern (derived options, the workload, the
//! faults, turmoil's network) draws from its own ChaCha stream, so adding a draw to one concern
//! never shifts the numbers another concern sees: the same seed keeps the same faults when the
//! workload generator changes, and the other way round.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The named sub-streams. Their numbers are part of the seed format: never renumber one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// The swarm options a seed switches on.
    Options = 1,
    /// Conversations, runs, sessions: what the agents do.
    Workload = 2,
    /// Duplicates, delays, drops, disconnects, crashes, disk faults.
    Faults = 3,
    /// The seed handed to turmoil for its own network randomness.
    Network = 4,
    /// Which workload a seed of a mixed campaign runs.
    Mix = 5,
}

/// Swarm testing: a feature is on for a seed with chance `chance_on`, and when on its
/// probability is drawn from `lo..=hi`; off is 0.0. (Draws the range only when on.)
pub fn swarm_probability(rng: &mut impl Rng, chance_on: f64, lo: f64, hi: f64) -> f64 {
    if rng.random_bool(chance_on) {
        rng.random_range(lo..=hi)
    } else {
        0.0
    }
}

/// The root of a seed's randomness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRng {
    seed: u64,
}

impl SeedRng {
    pub fn new(seed: u64) -> Self {
        SeedRng { seed }
    }

    pub fn seed(self) -> u64 {
        self.seed
    }

    /// A fresh generator for `stream`, independent of every other stream of this seed.
    pub fn stream(self, stream: Stream) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(stream as u64);
        rng
    }

    /// A sub-stream of `stream` for the `index`-th instance of something (a replica, a session),
    /// so that adding an instance does not shift the others.
    pub fn substream(self, stream: Stream, index: u64) -> ChaCha8Rng {
        let mut base = self.stream(stream);
        let mut rng = ChaCha8Rng::seed_from_u64(base.random::<u64>() ^ index.rotate_left(17));
        rng.set_stream(stream as u64);
        rng
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a = SeedRng::new(42);
        let mut w1 = a.stream(Stream::Workload);
        let mut w2 = a.stream(Stream::Workload);
        let mut f = a.stream(Stream::Faults);
        let w1v: Vec<u64> = (0..8).map(|_| w1.random()).collect();
        let w2v: Vec<u64> = (0..8).map(|_| w2.random()).collect();
        let fv: Vec<u64> = (0..8).map(|_| f.random()).collect();
        assert_eq!(w1v, w2v);
        assert_ne!(w1v, fv);
        let other: Vec<u64> = {
            let mut r = SeedRng::new(43).stream(Stream::Workload);
            (0..8).map(|_| r.random()).collect()
        };
        assert_ne!(w1v, other);
    }

    #[test]
    fn substreams_differ_by_index() {
        let s = SeedRng::new(7);
        let a: u64 = s.substream(Stream::Faults, 0).random();
        let b: u64 = s.substream(Stream::Faults, 1).random();
        let a2: u64 = s.substream(Stream::Faults, 0).random();
        assert_ne!(a, b);
        assert_eq!(a, a2);
    }
}
