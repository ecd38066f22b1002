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

/// Whether an event of probability `p` happens: no draw at all when `p` is 0 (so a switched-off
/// feature leaves the stream as it was), and `p` above 1 counts as 1. Every generator's coin.
pub fn chance(rng: &mut impl Rng, p: f64) -> bool {
    p > 0.0 && rng.random_bool(p.min(1.0))
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

/// Binds each `name = (chance_on, lo, hi)` to a [`swarm_probability`] drawn from `rng` (each of
/// `a, b = (chance_on, lo, hi)` to its own draw), one after the other in the order listed: that
/// order is part of every seed's options (and so of every trace), so a new option's draw goes
/// last.
macro_rules! swarm_draws {
    ($rng:expr; $($($name:ident),+ = ($chance_on:expr, $lo:expr, $hi:expr)),+ $(,)?) => {
        let rng = &mut $rng;
        $($(let $name = $crate::rng::swarm_probability(rng, $chance_on, $lo, $hi);)+)+
    };
}
pub(crate) use swarm_draws;

/// The root of a seed's randomness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRng {
    seed: u64,
    /// Each stream's own seed, when they were given one by one (a fuzz input): index
    /// `stream as usize - 1`. `None`: every stream derives from `seed`.
    streams: Option<[u64; STREAMS]>,
}

/// How many named streams there are ([`Stream`] numbers them 1 to 5).
pub const STREAMS: usize = 5;

impl SeedRng {
    pub fn new(seed: u64) -> Self {
        SeedRng {
            seed,
            streams: None,
        }
    }

    /// A root whose streams each start from their own seed, read from `bytes`: byte `k` is
    /// byte `k / 5` (little-endian) of stream `k % 5`'s seed, in [`Stream`] order, zeros once
    /// `bytes` run out. Interleaved, so that even a 5-byte fuzz input moves every stream; a
    /// coverage-guided fuzzer mutates these bytes, and a change to one stream's bytes keeps what
    /// the others decide. [`SeedRng::seed`] is then the first stream's seed, for display only.
    pub fn from_stream_bytes(bytes: &[u8]) -> Self {
        let mut streams = [0u64; STREAMS];
        for (k, &b) in bytes.iter().take(STREAMS * 8).enumerate() {
            streams[k % STREAMS] |= u64::from(b) << (8 * (k / STREAMS));
        }
        SeedRng {
            seed: streams[0],
            streams: Some(streams),
        }
    }

    pub fn seed(self) -> u64 {
        self.seed
    }

    /// A fresh generator for `stream`, independent of every other stream of this seed.
    pub fn stream(self, stream: Stream) -> ChaCha8Rng {
        let root = match self.streams {
            Some(seeds) => seeds[stream as usize - 1],
            None => self.seed,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(root);
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

    #[test]
    fn stream_bytes_seed_each_stream_on_its_own() {
        let mut bytes = [7u8; 40];
        let a = SeedRng::from_stream_bytes(&bytes);
        bytes[2 + 5 * 3] ^= 1; // the third stream (Faults), its fourth byte
        let b = SeedRng::from_stream_bytes(&bytes);
        let draw = |r: SeedRng, s: Stream| -> u64 { r.stream(s).random() };
        assert_eq!(draw(a, Stream::Workload), draw(b, Stream::Workload));
        assert_eq!(draw(a, Stream::Options), draw(b, Stream::Options));
        assert_ne!(draw(a, Stream::Faults), draw(b, Stream::Faults));
        // Short input: zeros for what is missing, and the same root as the explicit zeros.
        let short = SeedRng::from_stream_bytes(&[1]);
        let padded = SeedRng::from_stream_bytes(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(short, padded);
        assert_eq!(
            draw(short, Stream::Network),
            draw(SeedRng::new(0), Stream::Network)
        );
    }
}
