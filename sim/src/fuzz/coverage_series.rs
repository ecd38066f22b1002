//! Coverage over the course of a fuzzing campaign: libFuzzer's edges and features as its log
//! showed them, sampled on the wall clock while it runs, for the fuzz report's page.
//!
//! Wall time: a figure to look at, never compared or judged.

use serde::Serialize;

/// The most points a series keeps, however long the campaign.
pub(crate) const POINTS_MAX: usize = 200;

/// What the log showed at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CoveragePoint {
    /// Wall seconds since the fuzzer started.
    pub at_s: u64,
    /// Code edges covered (`cov:`).
    pub edges: u64,
    /// Features (`ft:`).
    pub features: u64,
}

/// Points in time order, at most [`POINTS_MAX`]: when full, every other point is dropped (the
/// first and the newest kept) and the series samples half as often from then on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct CoverageSeries {
    pub points: Vec<CoveragePoint>,
    /// Samples offered since the last point kept, and how many make one point.
    #[serde(skip)]
    skipped: u64,
    #[serde(skip)]
    every: u64,
}

impl CoverageSeries {
    /// Offers a sample; one in every `every` is kept (the first always).
    pub fn offer(&mut self, point: CoveragePoint) {
        let every = self.every.max(1);
        self.skipped += 1;
        if self.skipped < every && !self.points.is_empty() {
            return;
        }
        self.skipped = 0;
        self.points.push(point);
        if self.points.len() > POINTS_MAX {
            let newest = self.points.pop();
            let mut k = 0;
            self.points.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            self.points.extend(newest);
            self.every = every * 2;
        }
        debug_assert!(self.points.len() <= POINTS_MAX);
    }

    /// Ends the series with the run's final figures (always kept: the line reaches the end).
    pub fn finish(&mut self, point: CoveragePoint) {
        if self.points.last().is_some_and(|p| p.at_s >= point.at_s) {
            self.points.pop();
        }
        if self.points.len() == POINTS_MAX {
            self.points.remove(self.points.len() - 1);
        }
        self.points.push(point);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: u64) -> CoveragePoint {
        CoveragePoint {
            at_s: s,
            edges: s * 2,
            features: s * 3,
        }
    }

    #[test]
    fn a_long_campaign_keeps_at_most_the_bound_spread_over_its_whole_length() {
        let mut series = CoverageSeries::default();
        for s in 0..7_200 {
            series.offer(at(s));
            assert!(series.points.len() <= POINTS_MAX);
        }
        series.finish(at(7_200));
        let p = &series.points;
        assert!(p.len() > POINTS_MAX / 2, "{} points", p.len());
        assert_eq!(p.first().map(|p| p.at_s), Some(0));
        assert_eq!(p.last().map(|p| p.at_s), Some(7_200));
        assert!(p.windows(2).all(|w| w[0].at_s < w[1].at_s), "in time order");
        // No gap longer than a few of the final sampling intervals: spread, not bunched.
        let widest = p.windows(2).map(|w| w[1].at_s - w[0].at_s).max().unwrap();
        assert!(widest <= 7_200 / 50, "widest gap {widest} s");
    }

    #[test]
    fn a_short_campaign_keeps_every_sample() {
        let mut series = CoverageSeries::default();
        for s in 0..10 {
            series.offer(at(s));
        }
        series.finish(at(10));
        assert_eq!(series.points.len(), 11);
        series.finish(at(10));
        assert_eq!(
            series.points.len(),
            11,
            "a second final point replaces the first"
        );
    }
}
