//! Play: the simulated deployment that plays a scenario, through the stores, hosts and clocks it
//! keeps live, and appends what happened to the observation log the checks read.

pub(in crate::runs) mod caller_edits;
pub(in crate::runs) mod client;
pub(in crate::runs) mod declared_calls;
pub(in crate::runs) mod event_calls;
pub(in crate::runs) mod feedback_calls;
pub(in crate::runs) mod fence_calls;
pub(crate) mod host;
pub(crate) mod hosted;
pub(crate) mod journal_calls;
pub(in crate::runs) mod journal_host;
pub(crate) mod jsonl_host;
pub(in crate::runs) mod progress;
pub(in crate::runs) mod sqlite_pool;
pub(in crate::runs) mod state;
pub(in crate::runs) mod store_calls;
pub(crate) mod system;
pub(in crate::runs) mod table_read_calls;
pub(in crate::runs) mod tap;
pub(in crate::runs) mod thread_calls;
pub(in crate::runs) mod user_calls;
pub(in crate::runs) mod worker;
pub mod world;

// The client's reads of one store, for live mode's client (sim/src/live/runs/client_reads.rs).
pub(crate) use client::{page_cursor, paginate};
pub(crate) use event_calls::{filtered_pages, NO_SUCH_RUN};
pub(crate) use state::{text_of, WHOLE_READ};
pub(crate) use store_calls::run_pages;
