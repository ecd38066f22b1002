//! Systems under test in other processes: the SUT protocol (`docs/sut-protocol.md`), the client
//! that drives a child process over it, and histsim's own components served behind it
//! (`histsim serve display`), the reference adapter.

pub mod affinity;
mod answer_lines;
mod command;
pub mod display_ops;
pub mod journal_ops;
pub mod journal_wire;
mod liveness;
pub mod opened;
pub mod process;
pub mod protocol;
pub mod serve;
pub mod serve_runs;
pub mod tally;

pub use command::check_command;
pub use opened::OpenedSut;
pub use process::{
    Breach, SutError, SutOptions, SutProcess, REQUEST_TIMEOUT_FLAG, START_TIMEOUT_FLAG,
};
