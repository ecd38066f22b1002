//! Live mode (`histsim live`): the display workload's topology on real processes. A real
//! nats-server fans every event out (NATS Core) to N replica processes, each persisting into one
//! shared SQLite file, while the seed's faults kill, pause and restart real processes. It runs on
//! the wall clock, records everything, and is judged by the display workload's own model and
//! checks; a failing run is written as a scenario file the simulation plays.
//!
//! Nothing here runs inside a simulated world: live mode alone uses real time and processes.

pub mod backend;
pub mod children;
pub mod compare;
pub mod delivery;
pub mod judge;
pub mod line;
pub mod outcome;
pub mod patterns;
pub mod plan;
pub mod read;
pub mod recording;
pub mod regression;
pub mod replica;
pub mod report;
pub mod run;
pub mod runs;
pub mod schedule;
mod settle;
pub mod setup;
pub mod state;
pub mod store_rows;
pub mod sut_store;
