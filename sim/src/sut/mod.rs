//! Systems under test in other processes: the SUT protocol (`docs/sut-protocol.md`), the client
//! that drives a child process over it, and histsim's own components served behind it
//! (`histsim serve display`), the reference adapter.

pub(crate) mod affinity;
mod answer_lines;
mod command;
pub(crate) mod display_ops;
pub(crate) mod journal_ops;
pub(crate) mod journal_wire;
mod liveness;
pub(crate) mod opened;
pub(crate) mod process;
pub mod protocol;
pub(crate) mod serve;
pub(crate) mod serve_runs;
pub(crate) mod tally;

pub use command::check_command;
pub use opened::OpenedSut;
pub use process::{
    Breach, SutError, SutOptions, SutProcess, REQUEST_TIMEOUT_FLAG, START_TIMEOUT_FLAG,
};
