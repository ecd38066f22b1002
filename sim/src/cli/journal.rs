//! `histsim journal`: tools for history journal files.

use crate::verdict::Verdict;
use clap::Subcommand;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub(crate) enum JournalAction {
    /// Print a journal file's records as JSON lines (a torn tail as its own line; corruption
    /// ends the dump with an error naming its byte offset, exit 2).
    Dump {
        /// The journal file.
        file: PathBuf,
    },
}

pub(crate) fn cmd(action: JournalAction) -> Verdict {
    match action {
        JournalAction::Dump { file } => dump(&file),
    }
}

fn dump(file: &Path) -> Verdict {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return Verdict::Usage;
        }
    };
    for line in history::journal::dump_records(&bytes) {
        match line {
            Ok(record) => println!("{record}"),
            Err(e) => {
                eprintln!(
                    "error: {}: corrupt {e} (byte offset {})",
                    file.display(),
                    e.offset
                );
                return Verdict::Usage;
            }
        }
    }
    Verdict::Clean
}
