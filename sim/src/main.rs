//! `histsim`: run campaigns, replay seeds, hunt planted bugs, replay scenario files. The command
//! line lives in [`sim::cli`] so its parsing and verdicts are tested with the library.

fn main() -> std::process::ExitCode {
    sim::cli::main()
}
