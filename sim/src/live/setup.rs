//! What a live run is asked to do: the seed's scenario and fault plan, where the bus comes
//! from, the run's directory, and how a replica process is started.

use super::children::ReplicaCommand;
use super::plan::LivePlan;
use crate::display::scenario::DisplayScenario;
use std::path::PathBuf;

/// Where the bus comes from.
#[derive(Clone, Debug)]
pub enum Nats {
    /// Start this nats-server binary (and restart it as the plan says).
    Server(PathBuf),
    /// Use the server at this URL (never restarted).
    Url(String),
}

/// What a live run is asked to do.
#[derive(Clone, Debug)]
pub struct LiveSetup {
    pub seed: u64,
    pub scenario: DisplayScenario,
    pub plan: LivePlan,
    pub nats: Nats,
    /// The run's directory: the shared store and every child's log.
    pub dir: PathBuf,
    /// How to start a replica, given its index.
    pub replica_args: fn(&LiveSetup, u8, &str) -> ReplicaCommand,
    pub planted: history::Planted,
    /// The subject prefix of this run.
    pub subject: String,
    /// The system under test each replica writes through (`--sut`); `None`: histsim's own
    /// replica on the shared SQLite file.
    pub sut: Option<String>,
}

impl LiveSetup {
    pub fn store(&self) -> PathBuf {
        self.dir.join("display.sqlite")
    }
}
