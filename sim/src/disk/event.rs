//! One logged disk operation: what crash enumeration replays.

/// One logged disk operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiskEvent {
    /// `bytes` landed at `offset` (the file's end).
    Append {
        file: String,
        offset: u64,
        bytes: Vec<u8>,
    },
    Truncate {
        file: String,
        len: u64,
    },
    Sync {
        file: String,
    },
    Remove {
        file: String,
    },
}
