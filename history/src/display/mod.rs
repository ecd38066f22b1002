//! Persisted display events of an agent platform and the display-scoped chat history rebuilt
//! from them (seed 000; contract `docs/display-projection.md`; catalog P1 to P14).
//!
//! - [`DisplayEventStore`]: raw rows in insertion order, the two-stage thread query (visible
//!   displays, then family rows on them), a quarantine for unindexable rows. Two backends,
//!   [`MemoryDisplayStore`] and [`SqliteDisplayStore`], give identical answers.
//! - [`Persister`]: what each API replica runs on the fan-out bus; duplicates reach the store.
//! - [`project`]: the pure projector, rows in, [`Projection`] (OpenAI chat messages plus
//!   metadata-only [`Warning`]s) out. Never a `Result`, never a panic.
//! - [`reconstruct`] and [`ReplicaNode`]: a replica answering a follow-up request.
//!
//! **Architecture invariant:** rows of classes outside the five [`Family`]s are never parsed
//! beyond their envelope; `event_data` of every row is a borrowed raw value until a family's rule
//! asks for one documented field.

mod chat;
mod envelope;
mod family;
mod identity;
mod json;
mod media;
mod memory_store;
mod payload;
mod persister;
mod projector;
mod replica;
mod service;
mod sqlite_store;
mod store;
mod thread_id;
mod visible;
mod walk;
mod warning;

pub use chat::{ChatMessage, ContentPart, Role};
pub use envelope::IDENTITY_FIELDS;
pub use family::Family;
pub use identity::AgentIdentity;
pub use memory_store::MemoryDisplayStore;
pub use persister::{Persister, PersisterStats};
pub use projector::{project, Projection, ProjectorOptions};
pub use replica::ReplicaNode;
pub use service::{reconstruct, ReconstructError};
pub use sqlite_store::SqliteDisplayStore;
pub use store::{Admission, DisplayEventStore, StoreError, StoreOptions, StoredRow};
pub use thread_id::canonical_thread_id;
pub use warning::{Warning, WarningCode};

/// `event_type` of rows that take part in history: the stored value of the platform's topic
/// constant for display events (a store option, [`StoreOptions::display_event_type`], defaults to
/// it).
pub const DISPLAY_EVENT: &str = "display_event";
/// `event_type` of control rows (never part of history): the stored value of the platform's topic
/// constant for control events.
pub const CONTROL_EVENT: &str = "control_event";
/// `agent_class` of the agent that stands for the client: its user turns mark displays visible.
pub const USER_AGENT_CLASS: &str = "UserAgent";
