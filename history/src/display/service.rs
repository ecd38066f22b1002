//! The reconstruction a replica runs for a follow-up request: stage 1, stage 2, project.
//!
//! Reconstruction never fails on content: only a store error is an error. The legacy reader
//! (planted P1) validated unknown events through the UI union and turned one odd custom event into
//! an HTTP 500; that path is the only producer of [`ReconstructError::EventValidation`].

use super::envelope::{self, Envelope};
use super::family::Family;
use super::identity::AgentIdentity;
use super::json;
use super::projector::{project_stored, Projection, ProjectorOptions};
use super::store::{DisplayEventStore, StoreError, StoredRow};
use super::thread_id::canonical_thread_id;
use super::warning::Warning;
use crate::BugId;

/// Why a reconstruction produced no history.
#[derive(Debug, thiserror::Error)]
pub enum ReconstructError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Planted P1 only: a row failed the legacy union's validation (the legacy HTTP 500).
    #[error("event {event_id:?} of class {class:?} failed validation: field `{field}`")]
    EventValidation {
        event_id: String,
        class: String,
        field: String,
    },
}

/// Rebuilds the chat history of `thread_id` (any spelling of it, "Thread ids") as seen by the
/// client (contract, "The two-stage thread query"). A thread without a visible display gets an empty history and exactly one
/// `no_visible_display` warning.
pub fn reconstruct<S: DisplayEventStore + ?Sized>(
    store: &S,
    thread_id: &str,
    primary: Option<&AgentIdentity>,
    options: &ProjectorOptions,
) -> Result<Projection, ReconstructError> {
    let planted = options.planted;
    // The thread is looked up under the canonical id persistence stored its rows under; planted
    // P16: the legacy lookup used the id as the request sent it.
    let canonical = canonical_thread_id(thread_id);
    let thread_id: &str = if planted.is(BugId::P16) {
        thread_id
    } else {
        &canonical
    };
    let mut displays = if planted.is(BugId::P2) {
        // planted P2: the legacy query was scoped by thread only.
        store.thread_displays(thread_id)?
    } else {
        store.visible_displays(thread_id)?
    };
    if displays.is_empty() {
        if !planted.is(BugId::P9) {
            return Ok(Projection {
                messages: Vec::new(),
                warnings: vec![Warning::no_visible_display()],
            });
        }
        // planted P9: the legacy reader treated any display where a user spoke (a user message or
        // HITL answer of any agent class) as visible, silently.
        displays = legacy_user_displays(store, thread_id, options)?;
    }
    // Stage 1's answer: the contract's order (ascending, each display once).
    debug_assert!(super::store::ascending_once(&displays));
    let rows = store.rows_on_displays(thread_id, &displays)?;
    // Stage 2's answer: each row once, in insertion order.
    debug_assert!(super::store::in_insertion_order(&rows));
    if planted.is(BugId::P1) {
        legacy_union_validation(&rows)?;
    }
    Ok(project_stored(&rows, primary, options))
}

/// Planted P9: displays holding a user-message or HITL-answer row, whoever wrote it.
fn legacy_user_displays<S: DisplayEventStore + ?Sized>(
    store: &S,
    thread_id: &str,
    options: &ProjectorOptions,
) -> Result<Vec<String>, StoreError> {
    let all = store.thread_displays(thread_id)?;
    let mut spoken = std::collections::BTreeSet::new();
    for row in store.rows_on_displays(thread_id, &all)? {
        let Ok(key) = envelope::admit(&row.bytes) else {
            continue;
        };
        if matches!(
            Family::of_parents(&key.parents, options.planted),
            Some(Family::UserMessage | Family::HitlResponse)
        ) {
            spoken.insert(key.display_id.into_owned());
        }
    }
    // Post-condition: the displays where a user spoke are displays of the thread.
    debug_assert!(spoken.iter().all(|d| all.contains(d)));
    Ok(spoken.into_iter().collect())
}

/// Planted P1: the legacy union resolved an unknown class to its closest known family and then
/// required that family's field, failing the whole request when it was absent or mistyped.
fn legacy_union_validation(rows: &[StoredRow]) -> Result<(), ReconstructError> {
    for row in rows {
        let Ok(env) = Envelope::parse(&row.bytes) else {
            continue;
        };
        let Some(parents) = env.parents() else {
            continue;
        };
        let (Some(class), Some(family)) = (
            parents.first(),
            Family::of_parents(&parents, Default::default()),
        ) else {
            continue;
        };
        if Family::of_class(class, Default::default()).is_some() {
            continue;
        }
        let field = family.payload_field();
        let value = env
            .data()
            .and_then(|d| json::raw_object_fields(d, &[field]))
            .and_then(|[v]| v);
        let valid = value.is_some_and(|v| match family {
            Family::UserMessage | Family::Stop => json::as_array(v).is_some(),
            Family::HitlResponse => json::as_str(v).is_some() || json::as_bool(v).is_some(),
            Family::HitlRequest | Family::Chunk => json::as_str(v).is_some(),
        });
        if !valid {
            let event_id = env
                .str_field(envelope::EVENT_ID)
                .unwrap_or_default()
                .into_owned();
            return Err(ReconstructError::EventValidation {
                event_id,
                class: class.to_string(),
                field: field.to_string(),
            });
        }
    }
    Ok(())
}
