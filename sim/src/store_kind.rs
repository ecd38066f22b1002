//! The stores a world can put behind its system, by name: one file so that the SUT client (which
//! names the store in `open`) and the workloads share it without importing each other.

/// Which store backs the replicas (display) or is the primary of the pair (runs). Workloads
/// without a store ignore it. `Jsonl` is the runs world's only: the JSONL store plays the
/// first slot of the pair (where `memory` plays otherwise) and is the primary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    Memory,
    Sqlite,
    Jsonl,
}

impl StoreKind {
    /// The store's name, as the command line and the SUT protocol's `open` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Memory => "memory",
            StoreKind::Sqlite => "sqlite",
            StoreKind::Jsonl => "jsonl",
        }
    }
}
