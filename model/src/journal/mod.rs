//! The reference model of the history journal (seed 004): a list of rows with transaction
//! semantics ([`ModelHistory`]), and for every crash point the set of histories a reopened journal
//! may show ([`CrashModel`]).
//!
//! Rows are any `R: Clone + Eq`; the model never looks inside them, so the simulator can use the
//! system's own row type without the model importing it.

mod crash;
mod history;

pub use crash::CrashModel;
pub use history::{ModelError, ModelHistory, ModelOp};
