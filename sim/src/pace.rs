//! Seeds a second over the course of a campaign: how many seeds finished in each bucket of wall
//! time since it started, kept in `summary.json` for the campaign page's chart.
//!
//! Wall time varies with the machine's load: the series is a figure to look at, never compared,
//! hashed or judged (a report's deterministic view leaves it out).

use serde::{Deserialize, Serialize};

/// The most buckets a series keeps, however long the campaign: the chart stays small.
pub const BUCKETS_MAX: usize = 200;

/// Seeds finished per bucket of `bucket_s` wall seconds, from the campaign's start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedsOverTime {
    /// The width of a bucket: a power of two seconds, the smallest that keeps the series within
    /// [`BUCKETS_MAX`] buckets.
    pub bucket_s: u64,
    /// Seeds finished in bucket `i`, which covers `[i * bucket_s, (i + 1) * bucket_s)` seconds.
    pub seeds: Vec<u64>,
}

impl SeedsOverTime {
    /// The series of seeds that finished `finished_ms` wall milliseconds after the start.
    pub fn of(finished_ms: &[u64]) -> SeedsOverTime {
        let last_s = finished_ms.iter().max().map_or(0, |ms| ms / 1000);
        let mut bucket_s = 1;
        while last_s / bucket_s >= BUCKETS_MAX as u64 {
            bucket_s *= 2;
        }
        let mut seeds = vec![
            0;
            if finished_ms.is_empty() {
                0
            } else {
                (last_s / bucket_s) as usize + 1
            }
        ];
        for ms in finished_ms {
            seeds[(ms / 1000 / bucket_s) as usize] += 1;
        }
        debug_assert!(seeds.len() <= BUCKETS_MAX);
        SeedsOverTime { bucket_s, seeds }
    }

    /// The same seeds in buckets of `bucket_s` (a multiple of this series' width, both powers of
    /// two): each bucket falls whole into one wider bucket, so no count is split or guessed.
    fn widened(&self, bucket_s: u64) -> Vec<u64> {
        debug_assert!(bucket_s.is_multiple_of(self.bucket_s.max(1)));
        let factor = (bucket_s / self.bucket_s.max(1)).max(1) as usize;
        self.seeds
            .chunks(factor)
            .map(|chunk| chunk.iter().sum())
            .collect()
    }

    /// The series of shards run side by side, each counted from its own start (CI starts them
    /// together): bucket by bucket sums, in the widest bucket of any part, widened again while
    /// longer than [`BUCKETS_MAX`].
    pub fn merged(parts: &[&SeedsOverTime]) -> SeedsOverTime {
        let mut bucket_s = parts.iter().map(|p| p.bucket_s).max().unwrap_or(1).max(1);
        let longest = |w: u64| parts.iter().map(|p| p.widened(w).len()).max().unwrap_or(0);
        while longest(bucket_s) > BUCKETS_MAX {
            bucket_s *= 2;
        }
        let mut seeds = vec![0; longest(bucket_s)];
        for p in parts {
            for (i, n) in p.widened(bucket_s).into_iter().enumerate() {
                seeds[i] += n;
            }
        }
        SeedsOverTime { bucket_s, seeds }
    }

    /// Seeds a second in each bucket.
    pub fn per_second(&self) -> impl Iterator<Item = f64> + '_ {
        let width = self.bucket_s.max(1) as f64;
        self.seeds.iter().map(move |n| *n as f64 / width)
    }

    pub fn total(&self) -> u64 {
        self.seeds.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_campaign_is_counted_second_by_second() {
        let s = SeedsOverTime::of(&[0, 999, 1000, 1500, 3999]);
        assert_eq!(s.bucket_s, 1);
        assert_eq!(s.seeds, [2, 2, 0, 1]);
        assert_eq!(s.total(), 5);
        assert_eq!(s.per_second().collect::<Vec<_>>(), [2.0, 2.0, 0.0, 1.0]);
        assert_eq!(
            SeedsOverTime::of(&[]),
            SeedsOverTime {
                bucket_s: 1,
                seeds: Vec::new()
            }
        );
    }

    #[test]
    fn a_long_campaign_keeps_at_most_the_bucket_bound_and_every_seed() {
        // Ten hours, a seed every 100 ms.
        let finished: Vec<u64> = (0..360_000).map(|i| i * 100).collect();
        let s = SeedsOverTime::of(&finished);
        assert!(s.seeds.len() <= BUCKETS_MAX, "{} buckets", s.seeds.len());
        assert!(s.seeds.len() > BUCKETS_MAX / 2, "{} buckets", s.seeds.len());
        assert!(s.bucket_s.is_power_of_two());
        assert_eq!(s.total(), 360_000);
        // Every whole bucket holds ten seeds a second.
        assert!(s.per_second().take(s.seeds.len() - 1).all(|r| r == 10.0));
        // 199 s fit in 200 one-second buckets; 200 s need two-second ones.
        assert_eq!(SeedsOverTime::of(&[199_999]).bucket_s, 1);
        assert_eq!(SeedsOverTime::of(&[200_000]).bucket_s, 2);
    }

    #[test]
    fn shards_merge_bucket_by_bucket_in_the_widest_width() {
        let a = SeedsOverTime {
            bucket_s: 1,
            seeds: vec![1, 2, 3, 4, 5],
        };
        let b = SeedsOverTime {
            bucket_s: 2,
            seeds: vec![10, 20],
        };
        let m = SeedsOverTime::merged(&[&a, &b]);
        assert_eq!(m.bucket_s, 2);
        assert_eq!(m.seeds, [13, 27, 5]);
        assert_eq!(m.total(), a.total() + b.total());
        let long = SeedsOverTime {
            bucket_s: 1,
            seeds: vec![1; 199],
        };
        let longer = SeedsOverTime {
            bucket_s: 1,
            seeds: vec![1; 201],
        };
        let m = SeedsOverTime::merged(&[&long, &longer]);
        assert_eq!((m.bucket_s, m.seeds.len(), m.total()), (2, 101, 400));
    }
}
