//! Coverage probes: how often each fault and workload feature fired (FoundationDB's code probes).
//!
//! A campaign that never exercised a fault proves nothing about it. Every workload declares the
//! probes it can fire; each seed counts the ones that fired; a campaign sums them and can require
//! that none stayed at zero (`histsim run --require-coverage`).

use serde::Serialize;
use std::collections::BTreeMap;

/// Counts of fired probes, by name (`fault.duplicate`, `feature.hitl`, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    pub counts: BTreeMap<String, u64>,
}

impl Coverage {
    pub fn hit(&mut self, probe: &str) {
        self.hit_n(probe, 1);
    }

    pub fn hit_n(&mut self, probe: &str, n: u64) {
        if n == 0 {
            return;
        }
        // The name is copied only the first time: a probe is hit once a delivery or more, and
        // a copy a hit was 1.5 % of the display workload's allocations.
        match self.counts.get_mut(probe) {
            Some(count) => *count += n,
            None => {
                self.counts.insert(probe.to_string(), n);
            }
        }
    }

    pub fn add(&mut self, other: &Coverage) {
        for (probe, n) in &other.counts {
            *self.counts.entry(probe.clone()).or_default() += n;
        }
    }

    pub fn get(&self, probe: &str) -> u64 {
        self.counts.get(probe).copied().unwrap_or(0)
    }

    /// The probes of `declared` that never fired.
    pub fn never_fired<'a>(&self, declared: &[&'a str]) -> Vec<&'a str> {
        declared
            .iter()
            .copied()
            .filter(|p| self.get(p) == 0)
            .collect()
    }
}

/// Joins two lists of probe names at compile time: a workload's own probes and its generator
/// map's cells (`display/map.rs`, `journal/map.rs`), which a macro spells out.
pub const fn join_probes<const N: usize>(
    a: &[&'static str],
    b: &[&'static str],
) -> [&'static str; N] {
    assert!(a.len() + b.len() == N);
    let mut out = [""; N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - a.len()];
        i += 1;
    }
    out
}

/// A generator map's cube of probe names, `const CUBE = "prefix", A [..], B [..], C [..]`: each
/// axis's names as a constant of its own (`A`, `B`, `C`, attributes and visibility as given),
/// and `CUBE[a][b][c]` the probe `prefix.a.b.c` of every combination, spelled at compile time
/// (`display/map.rs`, `journal/map.rs`).
macro_rules! probe_cube {
    (
        $vis:vis const $cube:ident = $prefix:literal,
        $(#[$am:meta])* $av:vis $an:ident $as:tt,
        $(#[$bm:meta])* $bv:vis $bn:ident $bs:tt,
        $(#[$cm:meta])* $cv:vis $cn:ident $cs:tt $(,)?
    ) => {
        $(#[$am])* $av const $an: [&str; $as.len()] = $as;
        $(#[$bm])* $bv const $bn: [&str; $bs.len()] = $bs;
        $(#[$cm])* $cv const $cn: [&str; $cs.len()] = $cs;
        $vis const $cube: [[[&str; $cs.len()]; $bs.len()]; $as.len()] =
            $crate::coverage::probe_cube!(@a $prefix, $as, $bs, $cs);
    };
    (@a $prefix:literal, [$($a:literal),+ $(,)?], $bs:tt, $cs:tt) => {
        [$($crate::coverage::probe_cube!(@b $prefix, $a, $bs, $cs)),+]
    };
    (@b $prefix:literal, $a:literal, [$($b:literal),+ $(,)?], $cs:tt) => {
        [$($crate::coverage::probe_cube!(@c $prefix, $a, $b, $cs)),+]
    };
    (@c $prefix:literal, $a:literal, $b:literal, [$($c:literal),+ $(,)?]) => {
        [$(concat!($prefix, ".", $a, ".", $b, ".", $c)),+]
    };
}
pub(crate) use probe_cube;

/// The probes of the cells of `cube` that can exist, in the cube's order, as a constant:
/// `|i, j, k| possible` names the indices and says whether cell `[i][j][k]` can exist, and
/// exactly `count` cells must.
macro_rules! possible_cells {
    ($cube:expr, $count:expr, |$i:ident, $j:ident, $k:ident| $possible:expr $(,)?) => {{
        let cube = &$cube;
        let mut out = [""; $count];
        let mut n = 0;
        let mut $i = 0;
        while $i < cube.len() {
            let mut $j = 0;
            while $j < cube[$i].len() {
                let mut $k = 0;
                while $k < cube[$i][$j].len() {
                    if $possible {
                        out[n] = cube[$i][$j][$k];
                        n += 1;
                    }
                    $k += 1;
                }
                $j += 1;
            }
            $i += 1;
        }
        assert!(n == $count);
        out
    }};
}
pub(crate) use possible_cells;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_and_zeroes_are_named() {
        let mut a = Coverage::default();
        a.hit("fault.drop");
        a.hit_n("fault.delay", 3);
        a.hit_n("fault.never", 0);
        let mut b = Coverage::default();
        b.hit("fault.drop");
        b.add(&a);
        assert_eq!(b.get("fault.drop"), 2);
        assert_eq!(b.get("fault.delay"), 3);
        assert_eq!(
            b.never_fired(&["fault.drop", "fault.never", "fault.delay"]),
            vec!["fault.never"]
        );
    }
}
