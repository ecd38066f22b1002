//! Options every journal handle takes.

use super::scan::ScanOptions;
use super::tokens::Tokenizer;
use crate::Planted;

/// How a journal reads, counts and which legacy paths are on.
#[derive(Clone, Debug)]
pub struct JournalOptions {
    /// Legacy behaviours to switch back on (tests and the simulator only).
    pub planted: Planted,
    /// The vocabulary for token estimates; each fold makes its own counter from it (J17).
    pub tokenizer: Tokenizer,
    /// Bytes fetched per storage read while scanning. Default 64 KiB.
    pub read_window_bytes: usize,
    /// Records a resume loads between two calls of its arrivals callback. Default 64.
    pub load_step_records: usize,
}

impl Default for JournalOptions {
    fn default() -> Self {
        JournalOptions {
            planted: Planted::none(),
            tokenizer: Tokenizer::o200k(),
            read_window_bytes: 64 * 1024,
            load_step_records: 64,
        }
    }
}

impl JournalOptions {
    /// The defaults with `planted`.
    pub fn planted(planted: Planted) -> JournalOptions {
        JournalOptions {
            planted,
            ..JournalOptions::default()
        }
    }

    pub(crate) fn scan(&self) -> ScanOptions {
        ScanOptions {
            window_bytes: self.read_window_bytes,
            planted: self.planted,
        }
    }
}
