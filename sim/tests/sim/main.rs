//! Integration tests of the simulator, grouped by area.

mod campaigns;
mod determinism;
mod planted;
mod runs;
mod scenarios;
