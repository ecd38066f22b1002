//! histsim: deterministic simulation of conversation-history systems.
//!
//! A run is a function of one `u64` seed: the seed derives the workload's options (swarm
//! testing), a scripted scenario, and turmoil's network randomness; the world plays the scenario
//! against the real components of the `history` crate; checkers compare what replicas answered
//! with what the independent `model` says the client must see, and name every difference by its
//! catalog ID (`docs/catalog.md`).
//!
//! ```no_run
//! use sim::run::{run_seed, RunConfig};
//! let report = run_seed(42, &RunConfig::new());
//! println!("trace-hash: {} violations: {}", report.trace_hash, report.violations.len());
//! ```

// The crate is the `histsim` command's library: its docs are for its developers, who read them
// in the source or with `cargo doc --document-private-items`, so a public item's doc may point
// at a private one.
#![allow(rustdoc::private_intra_doc_links)]

pub mod bugs;
pub mod campaign;
pub mod cli;
pub(crate) mod compression;
pub(crate) mod coverage;
pub(crate) mod determinism;
pub mod disk;
pub mod display;
pub mod divergence;
pub mod fuzz;
pub mod hostile_text;
pub mod huge_pages;
pub(crate) mod inspect;
pub mod journal;
pub(crate) mod json_digest;
pub(crate) mod left_out;
pub(crate) mod live;
pub(crate) mod merge;
pub(crate) mod options_text;
pub mod outcome;
pub(crate) mod pace;
pub mod picture;
pub mod registry;
pub mod report;
pub mod rng;
pub mod run;
pub mod runs;
pub mod scenario_file;
pub mod shrink;
pub mod spool;
pub(crate) mod store_kind;
pub mod sut;
pub(crate) mod trace;
pub(crate) mod turmoil_clock;
pub mod verdict;
pub mod workload;
pub(crate) mod workload_items;
