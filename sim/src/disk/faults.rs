//! Faults the simulated disk injects, decided by a seeded schedule and never by the OS.
//!
//! Faults by operation:
//! - append: EIO (nothing written), ENOSPC (past `capacity_bytes`), a short write (a prefix
//!   lands, then EIO), a silent corruption (one byte of what lands is flipped, success returned),
//!   a parsable silent corruption (the lowest bit of a letter or digit of a row's text, or of a
//!   number's last digit, flips: the payload still parses as JSON and only its checksum tells);
//! - sync: EIO (nothing becomes durable);
//! - read: EIO.
//!
//! Every probability defaults to zero. Scripted faults ([`super::SimDisk::fail`]) come on top and
//! fire on every matching operation until cleared.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Probabilities (0.0 ..= 1.0) of each fault, per operation, and the capacity bound.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultOptions {
    /// Seed of the fault schedule.
    pub seed: u64,
    pub append_eio_probability: f64,
    pub append_short_probability: f64,
    pub append_corrupt_probability: f64,
    /// Chance of a corruption that leaves the payload parsable. Drawn from a stream of its own,
    /// only when above zero, so schedules without it decide exactly what they did before.
    pub append_corrupt_parsable_probability: f64,
    pub sync_eio_probability: f64,
    pub read_eio_probability: f64,
    /// Total bytes the disk holds (every file's current length); appends beyond fail with ENOSPC.
    pub capacity_bytes: Option<u64>,
}

/// What the schedule decided for one append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendFault {
    None,
    Eio,
    /// Only this many bytes land, then EIO.
    Short {
        kept_bytes: usize,
    },
    /// The byte at this index of the written data is flipped with this mask.
    Corrupt {
        index: usize,
        xor: u8,
    },
    /// The `pick`th (modulo their number) place of the frame where a flip keeps the payload
    /// parsable is flipped; nothing when the frame has none.
    CorruptParsable {
        pick: u32,
    },
}

/// The seeded decision stream.
#[derive(Clone, Debug)]
pub struct FaultSchedule {
    opts: FaultOptions,
    rng: ChaCha8Rng,
    parsable_rng: ChaCha8Rng,
}

impl FaultSchedule {
    pub fn new(opts: FaultOptions) -> FaultSchedule {
        for p in [
            opts.append_eio_probability,
            opts.append_short_probability,
            opts.append_corrupt_probability,
            opts.append_corrupt_parsable_probability,
            opts.sync_eio_probability,
            opts.read_eio_probability,
        ] {
            assert!(
                (0.0..=1.0).contains(&p),
                "fault probability {p} outside 0..=1"
            );
        }
        let mut parsable_rng = ChaCha8Rng::seed_from_u64(opts.seed);
        parsable_rng.set_stream(1);
        FaultSchedule {
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
            parsable_rng,
            opts,
        }
    }

    /// Decides the fault of an append of `len` bytes. Always draws the same number of values,
    /// so one decision never shifts the ones after it.
    pub fn append(&mut self, len: usize) -> AppendFault {
        let eio = self.rng.random_bool(self.opts.append_eio_probability);
        let short = self.rng.random_bool(self.opts.append_short_probability);
        let corrupt = self.rng.random_bool(self.opts.append_corrupt_probability);
        let at = self.rng.random_range(0..len.max(1));
        let xor = self.rng.random_range(1..=255u8);
        let p = self.opts.append_corrupt_parsable_probability;
        let parsable = p > 0.0 && self.parsable_rng.random_bool(p);
        let pick = if p > 0.0 {
            self.parsable_rng.random::<u32>()
        } else {
            0
        };
        if eio {
            AppendFault::Eio
        } else if short && len > 0 {
            AppendFault::Short { kept_bytes: at }
        } else if corrupt && len > 0 {
            AppendFault::Corrupt { index: at, xor }
        } else if parsable && len > 0 {
            AppendFault::CorruptParsable { pick }
        } else {
            AppendFault::None
        }
    }

    pub fn sync_fails(&mut self) -> bool {
        self.rng.random_bool(self.opts.sync_eio_probability)
    }

    pub fn read_fails(&mut self) -> bool {
        self.rng.random_bool(self.opts.read_eio_probability)
    }

    /// Whether `used + more` exceeds the capacity.
    pub fn out_of_space(&self, used: u64, more: u64) -> bool {
        self.opts.capacity_bytes.is_some_and(|c| used + more > c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_decides_the_same_faults() {
        let opts = FaultOptions {
            seed: 7,
            append_eio_probability: 0.2,
            append_short_probability: 0.2,
            append_corrupt_probability: 0.2,
            ..FaultOptions::default()
        };
        let mut a = FaultSchedule::new(opts.clone());
        let mut b = FaultSchedule::new(opts);
        let da: Vec<_> = (0..200).map(|i| a.append(i % 50)).collect();
        let db: Vec<_> = (0..200).map(|i| b.append(i % 50)).collect();
        assert_eq!(da, db);
        assert!(da.contains(&AppendFault::Eio));
        assert!(da.iter().any(|f| matches!(f, AppendFault::Short { .. })));
        assert!(da.iter().any(|f| matches!(f, AppendFault::Corrupt { .. })));
    }

    #[test]
    fn zero_probabilities_never_fault() {
        let mut s = FaultSchedule::new(FaultOptions::default());
        assert!((0..100).all(|i| s.append(i) == AppendFault::None));
        assert!(!s.sync_fails() && !s.read_fails());
        assert!(!s.out_of_space(u64::MAX / 2, 1));
    }
}
