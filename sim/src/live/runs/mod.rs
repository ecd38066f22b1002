//! Live mode of the runs workload (`histsim live --workload runs`): the seed's runs scenario
//! played by worker processes, each running history's run journal for the runs dispatched to it
//! into ONE shared SQLite run-event store file (real concurrent writers), while a client reads
//! the views and the seed's faults SIGKILL (and restart) and pause workers at wall times. The
//! recording is mapped onto the runs world's record and judged by the runs workload's own
//! checks; a failing run is written as a runs scenario file the simulation plays. No network:
//! the workers take their dispatches on stdin and report on stdout.

pub mod client_reads;
pub mod compare;
pub mod line;
pub mod outcome;
pub mod processes;
pub mod recording;
pub mod regression;
pub mod report;
pub mod run;
pub mod scenario;
pub mod setup;
pub mod store_tap;
pub mod stored;
pub mod to_world;
pub mod worker;
