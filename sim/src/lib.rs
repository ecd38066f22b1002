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
//!
//! # The facade
//!
//! Modules are `pub(crate)` unless something outside the library names them: the `histsim`
//! binary (`src/main.rs`), the integration tests (`tests/sim/`), the benches (`benches/`) and the
//! `sim_fuzz_target!` macro expanded in the fuzz crate (`fuzz/fuzz_targets/`). Inside the public
//! modules, the submodules and items nothing outside names are `pub(crate)` too, except the types
//! a public signature or field carries. The public modules, and who needs each:
//!
//! - [`run`]: one seed or scenario file end to end (the example above, tests, benches).
//! - [`workload`]: the world's configuration and store kinds every test plays with.
//! - [`runs`], [`display`]: workloads whose scenarios, worlds, records and checkers tests drive
//!   step by step (`benches/floor.rs` plays both).
//! - [`journal`], [`spool`]: the journal's crash explorers and the spool's oracle, which tests
//!   call directly.
//! - [`sut`]: the system under test as a child process and its protocol (tests, `benches/sut.rs`).
//! - [`fuzz`]: the libFuzzer targets' entry points, named by `sim_fuzz_target!` in the fuzz
//!   crate; its inputs, statistics and summaries are tested.
//! - [`cli`]: the command line `src/main.rs` runs.
//! - [`bugs`], [`campaign`], [`report`], [`shrink`], [`registry`], [`scenario_file`],
//!   [`hostile_text`]: hunting planted bugs, campaigns and their reports, shrinking, the
//!   workload registry, scenario files and hostile text classes, each tested through its module.
//!
//! Single items tests, benches and the binary name are re-exported at the root instead of
//! opening their modules: [`Violation`], [`ViolationKind`], [`Divergence`], [`Verdict`],
//! [`SeedRng`], [`Persistence`], [`fuzz_page`] and [`refuse_transparent_huge_pages`].

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
pub(crate) mod disk;
pub mod display;
pub(crate) mod divergence;
pub mod fuzz;
pub mod hostile_text;
pub(crate) mod huge_pages;
pub(crate) mod inspect;
pub mod journal;
pub(crate) mod json_digest;
pub(crate) mod left_out;
pub(crate) mod live;
pub(crate) mod merge;
pub(crate) mod options_text;
pub(crate) mod outcome;
pub(crate) mod pace;
pub(crate) mod picture;
pub mod registry;
pub mod report;
pub(crate) mod rng;
pub mod run;
pub mod runs;
pub mod scenario_file;
pub mod shrink;
pub mod spool;
pub(crate) mod store_kind;
pub mod sut;
pub(crate) mod trace;
pub(crate) mod turmoil_clock;
pub(crate) mod verdict;
pub mod workload;
pub(crate) mod workload_items;

pub use disk::Persistence;
pub use divergence::Divergence;
pub use huge_pages::refuse_transparent_huge_pages;
pub use outcome::{Violation, ViolationKind};
pub use picture::fuzz_page;
pub use rng::SeedRng;
pub use verdict::Verdict;
