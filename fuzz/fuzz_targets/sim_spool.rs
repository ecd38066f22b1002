//! Coverage-guided simulation of the spool workload: libFuzzer's input decodes into a spool
//! scenario (sim::fuzz::input: byte-seeded generator, or a scenario file), played in the
//! deterministic world against the model and checkers; a violation panics with its catalog ID.
//! `HISTSIM_PLANTED=<ID>` switches one planted bug on.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sim::fuzz::target::fuzz_one("spool", data));
