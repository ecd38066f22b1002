//! Coverage-guided simulation of the spool workload: libFuzzer's input decodes into a spool
//! scenario (sim::fuzz::input: byte-seeded generator, or a scenario file), played in the
//! deterministic world against the model and checkers; a violation prints its catalog ID and aborts.
//! `HISTSIM_PLANTED=<ID>` switches one planted bug on.
#![no_main]

sim::sim_fuzz_target!("spool");
