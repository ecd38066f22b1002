//! The options a seed derives for the merge workload (swarm testing): how long the session
//! is, how many threads it visits, how large its pages are and how often each kind of step
//! comes. Printed by the run like every workload's options.

use crate::rng::{swarm_draws, SeedRng, Stream};
use rand::Rng;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MergeSimOptions {
    pub threads: u8,
    pub steps: u16,
    /// The largest page a load asks for (pages draw 1 to this).
    pub page_limit_max: u8,
    /// Each kind of step's chance, against the agent writing a message (the rest).
    pub send_probability: f64,
    pub load_probability: f64,
    pub reset_probability: f64,
    pub reconnect_probability: f64,
    pub optimistic_probability: f64,
    pub inject_probability: f64,
    pub switch_probability: f64,
    pub stray_probability: f64,
    /// Chance that a text carries material storage and serialization layers treat specially.
    pub hostile_probability: f64,
    /// Chance, after each step, that the client reopens the open thread (a reload).
    pub reopen_probability: f64,
    /// Chance that a streamed message's later frames come after a page load.
    pub page_mid_stream_probability: f64,
}

impl MergeSimOptions {
    pub fn from_seed(seed: SeedRng) -> Self {
        swarm_draws!(seed.stream(Stream::Options);
            reset_probability = (0.8, 0.02, 0.12),
            reconnect_probability = (0.7, 0.02, 0.08),
            optimistic_probability = (0.8, 0.3, 1.0),
            inject_probability = (0.6, 0.03, 0.1),
            switch_probability = (0.6, 0.01, 0.05),
            stray_probability = (0.5, 0.01, 0.05),
            hostile_probability = (0.7, 0.05, 0.3),
        );
        // Drawn apart, so the options above and the session's shape stay what they were.
        swarm_draws!(seed.substream(Stream::Options, 2);
            reopen_probability = (0.5, 0.01, 0.06),
            page_mid_stream_probability = (0.6, 0.1, 0.5),
        );
        let mut rng = seed.substream(Stream::Options, 1);
        MergeSimOptions {
            threads: rng.random_range(1..=3),
            steps: rng.random_range(20..=160),
            page_limit_max: [3, 8, 20, 60][rng.random_range(0..4)],
            send_probability: rng.random_range(0.05..=0.2),
            load_probability: rng.random_range(0.05..=0.25),
            reset_probability,
            reconnect_probability,
            optimistic_probability,
            inject_probability,
            switch_probability,
            stray_probability,
            hostile_probability,
            reopen_probability,
            page_mid_stream_probability,
        }
    }
}

crate::workload_items::options_display!(MergeSimOptions);
