//! Coverage-guided simulation: libFuzzer chooses the scenario, histsim plays and checks it.
//!
//! A fuzz input ([`input`]) decodes into a scenario of one workload that is valid by
//! construction (generated from byte-given stream seeds, then cut down by byte-chosen shrink
//! steps) or read from a scenario file; [`target`] plays it in the deterministic world with the
//! model and checkers and panics with the catalog ID on a violation, which libFuzzer reports as a
//! crash, and hands the workload's coverage probes to libFuzzer as extra counters ([`probes`]).
//! [`corpus`] turns the repository's scenario files into seed inputs, [`import`] turns a
//! crash input into a shrunk scenario file, and [`campaign`] runs `cargo fuzz` for a time budget
//! and reads libFuzzer's figures ([`stats`]) and its CPU time ([`cpu`]), showing its progress ([`progress`]) and sampling its coverage over time ([`coverage_series`]), written as a report with [`junit`]; [`reach`]
//! plays a corpus (or random seeds) again to say which probes and pairs of probes it reaches. The targets themselves are in `fuzz/`.

pub(crate) mod campaign;
pub(crate) mod corpus;
pub mod coverage_series;
pub(crate) mod cpu;
pub(crate) mod import;
pub mod input;
pub(crate) mod junit;
pub mod probes;
pub(crate) mod progress;
pub(crate) mod reach;
pub mod stats;
pub mod summary;
pub mod target;
