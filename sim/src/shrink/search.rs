//! The search a shrink makes: which candidate it plays next, and when it stops.
//!
//! Each play of a candidate may cost a round trip through a slow system under test, so the
//! search spends its budget where it removes most. Candidates are sorted by the size they leave
//! (the largest cut first, which is also the cheapest to play) and split in two tiers: the
//! large cuts (a sixteenth of the steps or more, and the smallest value of every integer that
//! scales the work, such as a page size a long thread must exceed) are tried until none keeps.
//! A tier is tried round from where its last kept candidate stood, not from its start again at
//! once: the larger cuts before it just failed. Then each integer that scales the work is
//! bisected between its smallest value (which just failed) and its current one, as proptest
//! shrinks integers; then the small cuts; then the other integers (times, indexes). Whatever
//! kept something starts a new round, until a whole round keeps nothing or the budget is
//! spent. Nothing here depends on the clock but the time cap, so the
//! same input gives the same shrunk scenario whenever the cap is not reached.

use crate::workload::{AnyScenario, Integer, ScenarioSize};
use std::time::{Duration, Instant};

/// How much a shrink may spend: wall-clock time, and optionally a number of plays (a budget
/// that does not depend on the machine's load, for tests).
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub time_cap: Duration,
    pub attempts_max: Option<usize>,
}

impl Budget {
    pub fn time(time_cap: Duration) -> Self {
        Budget {
            time_cap,
            attempts_max: None,
        }
    }
}

/// Which candidates a cycle tries: the large cuts (and the smallest value of each integer that
/// scales the work) before the small ones.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tier {
    Large = 0,
    Small = 1,
}

/// A shrink under way: the smallest scenario kept so far and what it cost.
pub(super) struct Search<K> {
    pub current: AnyScenario,
    keeps: K,
    budget: Budget,
    start: Instant,
    pub attempts: usize,
    /// The budget ran out before a round kept nothing.
    pub capped: bool,
}

impl<K: FnMut(&AnyScenario) -> bool> Search<K> {
    pub fn new(scenario: &AnyScenario, budget: Budget, keeps: K) -> Self {
        Search {
            current: scenario.clone(),
            keeps,
            budget,
            start: Instant::now(),
            attempts: 0,
            capped: false,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Shrinks until a whole round keeps nothing or the budget is spent.
    pub fn run(&mut self) {
        let mut from = [0; 2];
        while self.round(&mut from).unwrap_or(false) {}
    }

    /// The large cuts until none keeps, then the small ones, then the integers' bisection:
    /// whether another round may keep something (`None`: the budget is spent).
    fn round(&mut self, from: &mut [usize; 2]) -> Option<bool> {
        self.cycle(Tier::Large, &mut from[Tier::Large as usize])?;
        // The integers that scale the work before the small cuts: on a slow system a filler
        // block bisected from 1,000 messages to 20 saves more plays than it costs.
        let again = self.bisect_round(true)?
            || self.cycle(Tier::Small, &mut from[Tier::Small as usize])?
            || self.bisect_round(false)?;
        if !again {
            return Some(false);
        }
        *from = [0; 2];
        Some(true)
    }

    /// Plays `candidate` and makes it the current scenario when it keeps; `None`: the budget is
    /// spent, nothing was played.
    fn attempt(&mut self, candidate: &AnyScenario) -> Option<bool> {
        let over_attempts = self.budget.attempts_max.is_some_and(|m| self.attempts >= m);
        if over_attempts || self.start.elapsed() >= self.budget.time_cap {
            self.capped = true;
            return None;
        }
        self.attempts += 1;
        let kept = (self.keeps)(candidate);
        if kept {
            self.current = candidate.clone();
        }
        Some(kept)
    }

    /// The valid simplifications of the current scenario in `tier` (the workload's moves, and
    /// each integer at its smallest), the smallest result first; ties keep the workload's
    /// order.
    fn candidates(&self, tier: Tier) -> Vec<AnyScenario> {
        let workload = self.current.workload();
        let size = self.current.size();
        // A large cut removes a sixteenth of the steps or more.
        let large = |c: &AnyScenario| c.size().steps + size.steps.div_ceil(16).max(1) <= size.steps;
        let mut all: Vec<AnyScenario> = workload
            .shrink_candidates(&self.current)
            .into_iter()
            .filter(|c| (tier == Tier::Large) == large(c))
            .collect();
        all.extend(
            workload
                .shrink_integers(&self.current)
                .iter()
                .map(|i| (i.scales, (i.set)(&self.current, i.min)))
                .filter(|(scales, c)| (tier == Tier::Large) == (*scales || large(c)))
                .map(|(_, c)| c)
                .filter(|c| workload.validate(c).is_ok() && *c != self.current),
        );
        let mut keyed: Vec<(ScenarioSize, usize, AnyScenario)> = all
            .into_iter()
            .enumerate()
            .map(|(k, c)| (c.size(), k, c))
            .collect();
        keyed.sort_by_key(|a| (a.0, a.1));
        keyed.into_iter().map(|(_, _, c)| c).collect()
    }

    /// The candidates of `tier` tried round from position `from`, listed again after each one
    /// kept and tried on from its position (the cuts before it just failed), until a whole
    /// cycle keeps nothing: whether one was kept.
    fn cycle(&mut self, tier: Tier, from: &mut usize) -> Option<bool> {
        let mut kept_any = false;
        'listed: loop {
            let candidates = self.candidates(tier);
            let n = candidates.len();
            for k in 0..n {
                let i = (*from + k) % n;
                if self.attempt(&candidates[i])? {
                    *from = i;
                    kept_any = true;
                    continue 'listed;
                }
            }
            return Some(kept_any);
        }
    }

    /// Every integer that scales the work (`scales`) or every other one bisected, the one whose
    /// smallest value leaves the smallest scenario first: whether one moved.
    fn bisect_round(&mut self, scales: bool) -> Option<bool> {
        let workload = self.current.workload();
        let mut order: Vec<(ScenarioSize, usize, String)> = workload
            .shrink_integers(&self.current)
            .into_iter()
            .filter(|i| i.scales == scales)
            .enumerate()
            .map(|(k, i)| ((i.set)(&self.current, i.min).size(), k, i.path))
            .collect();
        order.sort();
        let mut moved = false;
        for (_, _, path) in order {
            // Listed again: an integer set before may have changed what `set` starts from.
            let integers = workload.shrink_integers(&self.current);
            if let Some(integer) = integers.iter().find(|i| i.path == path) {
                moved |= self.bisect(integer)?;
            }
        }
        Some(moved)
    }

    /// The smallest value of `integer` that keeps, by bisection between its smallest value
    /// (taken as failing: the round of cuts just tried it) and its current one; whether it
    /// moved.
    fn bisect(&mut self, integer: &Integer<AnyScenario>) -> Option<bool> {
        let workload = self.current.workload();
        let (mut failing, mut kept) = (integer.min, integer.value);
        let mut moved = false;
        while kept - failing > 1 {
            let mid = failing + (kept - failing) / 2;
            let candidate = (integer.set)(&self.current, mid);
            let valid = workload.validate(&candidate).is_ok() && candidate != self.current;
            if valid && self.attempt(&candidate)? {
                kept = mid;
                moved = true;
            } else {
                failing = mid;
            }
        }
        Some(moved)
    }
}
