//! The `histsim` command line: one file a command, each ending in a [`Verdict`](crate::verdict::Verdict) whose exit code
//! is the same for every command (see [`crate::verdict`]).
//!
//! Exit codes: 0 clean; 1 a safety invariant was violated (or a planted bug went undetected);
//! 2 bad usage or input; 3 the simulated world itself broke down (a hang, a host error) or a
//! seed was nondeterministic; 4 only liveness failed (histories did not converge after healing);
//! 5 clean, but some coverage probe never fired, or some work was left out that
//! `--allow-left-out` does not name, under `--require-coverage`; 6 no seed ran, so nothing was
//! checked (never a pass).

mod args;
mod bugs;
mod crash;
mod diff;
mod extended_json;
mod fuzz;
mod invoked;
mod journal;
mod live;
mod live_runs;
mod live_verdict;
mod project;
mod replay;
mod report;
mod run;
mod runs;
mod scenarios;
mod serve;
mod shard;
mod shrink;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "histsim",
    version,
    about = "Deterministic simulation of conversation-history systems"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a campaign over a range of seeds; on a violation print how to replay it.
    Run(run::RunArgs),
    /// Run one seed and print its options, trace hash and violations.
    Replay(replay::ReplayArgs),
    /// For every planted bug, run seeds until an invariant fires; it must be the bug's own ID.
    Bugs(bugs::BugsArgs),
    /// Minimise a failing seed into a scenario file under `--regressions-dir`
    /// (scenarios/regressions/, or ./histsim-regressions/ with `--sut`).
    Shrink(shrink::ShrinkArgs),
    /// Work with campaign reports.
    Report {
        #[command(subcommand)]
        action: report::ReportAction,
    },
    /// Crash-point exploration of the history journal: run a workload of mutations once, then
    /// reopen, resume and write after every crash state of it (every append cut at every byte,
    /// every point with unsynced writes lost) and check each against the model.
    Crash(crash::CrashArgs),
    /// Work with history journal files.
    Journal {
        #[command(subcommand)]
        action: journal::JournalAction,
    },
    /// Replay scenario files: each must fail for its ID with its bug planted, and pass without.
    Scenarios(scenarios::ScenariosArgs),
    /// Run the same seeds through two systems under test; report and shrink the first seed whose
    /// answers differ (a differential test: each system is the other's second opinion).
    Diff(diff::DiffArgs),
    /// Serve histsim's own components over the SUT protocol on stdin and stdout (the reference
    /// adapter; see docs/sut-protocol.md).
    Serve(serve::ServeArgs),
    /// Project a thread's history from an export of persisted display-event rows (one JSON row a
    /// line, MongoDB extended JSON accepted); `--check` runs the row-level checks on them.
    Project(project::ProjectArgs),
    /// Work with DeerFlow run-event stores brought from elsewhere.
    Runs {
        #[command(subcommand)]
        action: runs::RunsAction,
    },
    /// Run a seed's display scenario live on this machine: a real nats-server fanning out to
    /// replica processes that share one SQLite file, real process faults; judged by the same
    /// model and checks (docs/live.md).
    Live(live::LiveArgs),
    /// One replica process of `histsim live` (started by it).
    #[command(hide = true)]
    LiveReplica(live::LiveReplicaArgs),
    /// One run worker process of `histsim live --workload runs` (started by it).
    #[command(hide = true)]
    LiveRunsWorker(live_runs::LiveRunsWorkerArgs),
    /// Coverage-guided simulation: libFuzzer chooses the scenario (targets in fuzz/).
    Fuzz {
        #[command(subcommand)]
        action: fuzz::FuzzAction,
    },
}

/// Parses the command line, runs the command, and returns its verdict's exit code.
pub fn main() -> ExitCode {
    end_quietly_when_stdout_closes();
    let cli = invoked::in_invoked_names(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&cli).unwrap_or_else(|e| e.exit());
    let verdict = match cli.command {
        Command::Run(a) => run::cmd(a),
        Command::Replay(a) => replay::cmd(a),
        Command::Bugs(a) => bugs::cmd(a),
        Command::Shrink(a) => shrink::cmd(a),
        Command::Report { action } => report::cmd(action),
        Command::Crash(a) => crash::cmd(a),
        Command::Journal { action } => journal::cmd(action),
        Command::Scenarios(a) => scenarios::cmd(a),
        Command::Serve(a) => serve::cmd(a),
        Command::Diff(a) => diff::cmd(a),
        Command::Project(a) => project::cmd(a),
        Command::Runs { action } => runs::cmd(action),
        Command::Live(a) => live::cmd(a),
        Command::LiveReplica(a) => live::replica_cmd(a),
        Command::LiveRunsWorker(a) => live_runs::worker_cmd(a),
        Command::Fuzz { action } => fuzz::cmd(action),
    };
    verdict.into()
}

/// The exit status of a process that wrote to a closed pipe (128 + SIGPIPE), as a shell shows it.
pub(crate) const CLOSED_STDOUT_EXIT: i32 = 141;

/// A reader that stops reading histsim's output (`histsim run | head`) ends histsim quietly,
/// with the status a process killed by SIGPIPE has, instead of a panic from `println!`.
/// Restoring SIGPIPE's default action would do the same for stdout, but would also let a system
/// under test that died kill histsim when histsim next writes a request to it; that write must
/// fail with an error histsim can report (docs/sut-protocol.md), so SIGPIPE stays ignored.
fn end_quietly_when_stdout_closes() {
    let report_panic = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(CLOSED_STDOUT_EXIT);
        }
        report_panic(info)
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_flags_parse_into_their_args() {
        let cli = Cli::try_parse_from([
            "histsim",
            "run",
            "--seeds",
            "5..9",
            "--workload",
            "runs",
            "--shard",
            "1/3",
            "--shrink-out",
            "out",
        ])
        .expect("parses");
        let Command::Run(a) = cli.command else {
            panic!("not run")
        };
        assert_eq!(a.seeds, 5..9);
        assert_eq!(a.world.config().expect("fits").workload_name(), "runs");
        assert_eq!(
            a.shard,
            Some(shard::ShardSpec::Fixed { index: 1, count: 3 })
        );
        assert_eq!(a.shrink_out, Some(std::path::PathBuf::from("out")));
    }

    #[test]
    fn a_bad_flag_is_a_usage_error_naming_it() {
        let e = Cli::try_parse_from(["histsim", "run", "--workload", "displays"])
            .err()
            .expect("refused");
        assert!(e.to_string().contains("no workload `displays`"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}
