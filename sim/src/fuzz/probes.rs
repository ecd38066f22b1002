//! The workloads' coverage probes as libFuzzer feedback: a target hands the counters of its
//! `__libfuzzer_extra_counters` section to [`fill`], so an input that fires a probe more often,
//! or a new pair of probes together (a fault with a feature, two faults), is kept like one that
//! reaches a new code edge.

use crate::coverage::Coverage;

/// Counters a target declares: one per probe, then one per pair of probes (up to 45 probes).
pub const COUNTERS: usize = 2048;

/// Writes `coverage` into `counters`: probe `i`'s count (saturating) at `i`, and 1 at
/// `n + i * n + j` for every pair `i < j` of probes that both fired. Counters past the slice are
/// left out (the slice bounds what a target declared).
pub fn fill(probes: &[&str], coverage: &Coverage, counters: &mut [u8]) {
    let n = probes.len();
    let counts: Vec<u64> = probes.iter().map(|p| coverage.get(p)).collect();
    for (i, &c) in counts.iter().enumerate() {
        if let Some(slot) = counters.get_mut(i) {
            *slot = u8::try_from(c).unwrap_or(u8::MAX);
        }
    }
    for i in 0..n {
        for j in i + 1..n {
            if counts[i] > 0 && counts[j] > 0 {
                if let Some(slot) = counters.get_mut(n + i * n + j) {
                    *slot = 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_pairs_land_in_their_slots() {
        let probes = ["a", "b", "c"];
        let mut cov = Coverage::default();
        cov.hit_n("a", 300);
        cov.hit("c");
        let mut counters = [0u8; 16];
        fill(&probes, &cov, &mut counters);
        assert_eq!(&counters[..3], &[255, 0, 1]);
        assert_eq!(counters[3 + 2], 1, "a with c");
        assert_eq!(counters.iter().filter(|&&c| c > 0).count(), 3);
    }
}
