//! Integration tests of the simulator, grouped by area.

mod campaigns;
mod determinism;
mod journal;
mod planted;
mod runs;
mod scenarios;
mod sut;
mod tidy;
