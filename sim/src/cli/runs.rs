//! `histsim runs inspect PATH`: bring your own DeerFlow run-event store (a SQLite database or a
//! JSONL store directory) and see what seed 003's bugs left in it, thread by thread.

use crate::inspect::{self, checks};
use crate::verdict::Verdict;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub(crate) enum RunsAction {
    /// Check a DeerFlow run-event store per thread: seq gaps and duplicates, rows out of order,
    /// messages a latest-1000 read would hide, runs with no end event, feedback on the wrong
    /// run. The store is opened read-only and never modified. Exit 0: nothing found; 1:
    /// findings (unreadable rows among them); 2: not a store that can be read.
    Inspect(InspectArgs),
}

#[derive(clap::Args)]
pub(crate) struct InspectArgs {
    /// A `run_events` SQLite database file, or a JSONL store's base directory (the one holding
    /// `threads/`, or its parent holding `.deer-flow/`).
    path: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Print every thread, also those with nothing found.
    #[arg(long)]
    all: bool,
}

pub(crate) fn cmd(action: RunsAction) -> Verdict {
    let RunsAction::Inspect(args) = action;
    let input = match inspect::read(&args.path) {
        Ok(input) => input,
        Err(e) => {
            eprintln!("error: {e}");
            return Verdict::Usage;
        }
    };
    let report = checks::check(&input);
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: cannot write the report: {e}");
                return Verdict::Usage;
            }
        }
    } else {
        print_text(&args, &report);
    }
    if report.findings() == 0 {
        Verdict::Clean
    } else {
        Verdict::Violation
    }
}

fn print_text(args: &InspectArgs, report: &checks::Report) {
    println!(
        "histsim runs inspect {}: {}, {} threads, {} events, {} feedback rows",
        args.path.display(),
        report.kind,
        report.threads.len(),
        report.events,
        report.feedback_rows
    );
    for t in &report.threads {
        if t.findings.is_empty() && !args.all {
            continue;
        }
        let verdict = if t.findings.is_empty() { "ok" } else { "FOUND" };
        println!(
            "thread {}: {verdict} ({} events, {} messages, {} runs)",
            t.thread_id, t.events, t.messages, t.runs
        );
        for f in &t.findings {
            println!("  {}: {}", f.kind, f.text);
        }
    }
    for u in &report.unreadable {
        println!("unreadable: {u}");
    }
    let with = report
        .threads
        .iter()
        .filter(|t| !t.findings.is_empty())
        .count();
    match report.findings() {
        0 => println!("clean: nothing found in {} threads", report.threads.len()),
        n => println!(
            "FOUND: {n} findings ({with} threads with findings, {} unreadable rows)",
            report.unreadable.len()
        ),
    }
}
