//! Integration tests of the simulator, grouped by area.

mod bad_input;
mod browser;
mod campaigns;
mod catalog;
mod determinism;
mod differences;
mod error_answers;
mod examples;
mod first_divergence;
mod first_wrong_answers;
mod fuzz;
mod hostile_text;
mod inspect;
mod journal;
mod live;
mod plain_messages;
mod planted;
mod project;
mod readme;
mod rules;
mod runs;
mod scenarios;
mod shrinking;
mod spool;
mod store_crash;
mod store_differences;
mod sut;
mod sut_time;
mod sut_world;
mod tidy;
mod user_workflow;

/// Runs the `histsim` binary with `args`: its exit code, and its stdout then stderr.
fn histsim_cli<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_histsim"))
        .args(args)
        .output()
        .expect("histsim runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text)
}
