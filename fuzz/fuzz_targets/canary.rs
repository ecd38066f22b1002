//! Fuzz target meant to FAIL: proof that the fuzzing set-up finds a planted crash.
//!
//! A fuzzer that never reports anything may be broken (no instrumentation, a target that returns
//! early). This canary panics on inputs that start with a fixed word; libFuzzer's comparison
//! tracing finds one within seconds. Run it by hand (`cargo fuzz run --sanitizer none canary`)
//! when changing the fuzz set-up: it must stop with a crash. CI only builds it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.starts_with(b"histsim!") {
        panic!("canary found: the fuzzer and its instrumentation work");
    }
});
