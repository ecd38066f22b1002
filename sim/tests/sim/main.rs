//! Integration tests of the simulator, grouped by area.

mod campaigns;
mod catalog;
mod determinism;
mod differences;
mod inspect;
mod journal;
mod planted;
mod project;
mod runs;
mod scenarios;
mod spool;
mod store_crash;
mod sut;
mod sut_world;
mod tidy;
