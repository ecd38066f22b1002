//! Coverage-guided simulation of the merge workload: libFuzzer's input decodes into a merge
//! scenario (sim::fuzz::input: byte-seeded generator, or a scenario file), played in the
//! deterministic world against the model and checkers; a violation prints its catalog ID and aborts.
//! `HISTSIM_PLANTED=<ID>` switches one planted bug on.
#![no_main]

use libfuzzer_sys::{fuzz_target, Corpus};
use sim::fuzz::probes::COUNTERS;
use sim::fuzz::target::CorpusFate;

/// mimalloc, as in the `histsim` binary: glibc's malloc and free were a fifth of an execution.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The workload's coverage probes (counts and pairs), read by libFuzzer after every input
/// beside its code edges: libFuzzer collects every array in this section (Linux).
#[link_section = "__libfuzzer_extra_counters"]
static mut PROBES: [u8; COUNTERS] = [0; COUNTERS];

fuzz_target!(
    |data: &[u8]| -> Corpus {
        // SAFETY: libFuzzer runs one input at a time on this thread, and reads the section only
        // between inputs.
        let counters = unsafe { &mut *std::ptr::addr_of_mut!(PROBES) };
        match sim::fuzz::target::fuzz_one("merge", data, counters) {
            CorpusFate::Keep => Corpus::Keep,
            CorpusFate::Reject => Corpus::Reject,
        }
    }
);
