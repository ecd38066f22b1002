//! How a workload's world starts its turmoil simulation: the scenario's network seed, the
//! epoch its clocks start at, how long it may run and how far one step moves them.

use std::time::{Duration, UNIX_EPOCH};

/// The one-way latency of a message between hosts, drawn by turmoil from the network seed:
/// at least this many microseconds...
const LATENCY_US_MIN: u64 = 100;
/// ... and at most this many.
const LATENCY_US_MAX: u64 = 900;

/// A world's clock: the epoch its hosts' clocks read at the start, how long it may run and
/// how far one step of the simulation moves it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    epoch_secs: u64,
    simulation_secs: u64,
    tick: Duration,
}

impl Clock {
    pub(crate) const fn new(epoch_secs: u64, simulation_secs: u64, tick: Duration) -> Clock {
        Clock {
            epoch_secs,
            simulation_secs,
            tick,
        }
    }

    /// A simulation on this clock, its network drawn from `network_seed` (turmoil's own
    /// message latency).
    pub(crate) fn simulation(self, network_seed: u64) -> turmoil::Sim<'static> {
        self.builder(network_seed).build()
    }

    /// A simulation on this clock whose messages between hosts take [`LATENCY_US_MIN`] to
    /// [`LATENCY_US_MAX`] microseconds, drawn from `network_seed`.
    pub(crate) fn networked_simulation(self, network_seed: u64) -> turmoil::Sim<'static> {
        self.builder(network_seed)
            .min_message_latency(Duration::from_micros(LATENCY_US_MIN))
            .max_message_latency(Duration::from_micros(LATENCY_US_MAX))
            .build()
    }

    fn builder(self, network_seed: u64) -> turmoil::Builder {
        let mut builder = turmoil::Builder::new();
        builder
            .rng_seed(network_seed)
            .epoch(UNIX_EPOCH + Duration::from_secs(self.epoch_secs))
            .simulation_duration(Duration::from_secs(self.simulation_secs))
            .tick_duration(self.tick);
        builder
    }
}
