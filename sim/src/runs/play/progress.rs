//! Where each run of the world stands while it plays: started, running on which worker, how it
//! stopped, whether its dispatch is over, and the messages the client saw it stream. The driving
//! loop, the workers and the client consult it to play; no verdict reads it (the checks read
//! the observation log, where every start and stop is a ground-truth observation too).

use model::runs::RunOutcome;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default)]
pub(in crate::runs) struct RunProgress {
    started: BTreeSet<usize>,
    /// Runs playing now, with their worker.
    running: BTreeMap<usize, u8>,
    outcomes: BTreeMap<usize, RunOutcome>,
    /// Runs whose dispatch attempt is over (acknowledged or not).
    settled: BTreeSet<usize>,
    /// Per run: the message dumps the client saw streamed live.
    streamed: BTreeMap<usize, Vec<Value>>,
}

impl RunProgress {
    /// Whether `run` was started (a run starts at most once: a second dispatch is ignored).
    pub(in crate::runs) fn started(&self, run: usize) -> bool {
        self.started.contains(&run)
    }

    pub(in crate::runs) fn start(&mut self, run: usize, worker: u8) {
        let first = self.started.insert(run);
        debug_assert!(first, "run {run} started twice");
        self.running.insert(run, worker);
    }

    /// Records how `run` stopped; `false` when it was not running (already stopped: a worker's
    /// crash and the run's own end may both report it).
    pub(in crate::runs) fn stop(&mut self, run: usize, outcome: RunOutcome) -> bool {
        if self.running.remove(&run).is_none() {
            return false;
        }
        self.outcomes.insert(run, outcome);
        true
    }

    /// The runs `worker` is playing now.
    pub(in crate::runs) fn running_on(&self, worker: u8) -> Vec<usize> {
        (self.running.iter())
            .filter(|(_, w)| **w == worker)
            .map(|(r, _)| *r)
            .collect()
    }

    /// Every run playing now.
    pub(in crate::runs) fn running(&self) -> Vec<usize> {
        self.running.keys().copied().collect()
    }

    pub(in crate::runs) fn outcome(&self, run: usize) -> Option<RunOutcome> {
        self.outcomes.get(&run).copied()
    }

    /// The client's dispatch of `run` is over, acknowledged or not.
    pub(in crate::runs) fn settle(&mut self, run: usize) {
        self.settled.insert(run);
    }

    /// Whether a wait for `run` is over: its dispatch settled and it is not running.
    pub(in crate::runs) fn over(&self, run: usize) -> bool {
        self.settled.contains(&run) && !self.running.contains_key(&run)
    }

    /// The client saw `run` stream one more message.
    pub(in crate::runs) fn stream(&mut self, run: usize, message: Value) {
        self.streamed.entry(run).or_default().push(message);
    }

    /// What `run` streamed, kept for a later wait when `keep`, taken out otherwise.
    pub(in crate::runs) fn streamed(&mut self, run: usize, keep: bool) -> Vec<Value> {
        let streamed = if keep {
            self.streamed.get(&run).cloned()
        } else {
            self.streamed.remove(&run)
        };
        streamed.unwrap_or_default()
    }
}
