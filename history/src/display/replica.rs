//! One API replica: its persister on the fan-out bus and its request handler.
//!
//! Every replica reads the shared store, so any replica answers a request identically (P12); a
//! read before persistence settles sees a subset of the settled history (accepted, P14). Two
//! legacy shortcuts can be planted: answering from the replica's own deliveries (P12) and a naive
//! read-your-writes overlay of runs still streaming (P14).

use std::collections::BTreeMap;

use super::chat::{ChatMessage, ContentPart, Role};
use super::envelope::{self, Envelope};
use super::family::Family;
use super::identity::AgentIdentity;
use super::json;
use super::memory_store::MemoryDisplayStore;
use super::persister::{Persister, PersisterStats};
use super::projector::{Projection, ProjectorOptions};
use super::service::{reconstruct, ReconstructError};
use super::store::{Admission, DisplayEventStore, StoreError};
use crate::BugId;

/// `(thread_id, display_id, run_id)` of a run seen streaming by planted P14.
type RunKey = (String, String, String);

/// One API replica.
#[derive(Debug)]
pub struct ReplicaNode<S> {
    persister: Persister<S>,
    options: ProjectorOptions,
    /// Planted P12 only: the rows this replica's persister received.
    local: Option<MemoryDisplayStore>,
    /// Planted P14 only: chunk text of runs whose stop this replica has not seen yet.
    in_flight: BTreeMap<RunKey, String>,
}

impl<S: DisplayEventStore> ReplicaNode<S> {
    /// A replica persisting into and reading from `shared_store`.
    pub fn new(shared_store: S, options: ProjectorOptions) -> Self {
        // planted P12: the legacy replica kept and served its own copy of what it received.
        let local = options
            .planted
            .is(BugId::P12)
            .then(|| MemoryDisplayStore::new(options.planted));
        ReplicaNode {
            persister: Persister::new(shared_store),
            options,
            local,
            in_flight: BTreeMap::new(),
        }
    }

    /// The persister: appends one delivery to the shared store.
    pub fn deliver(&mut self, bytes: &[u8]) -> Result<Admission, StoreError> {
        let delivered_before = self.persister.stats().delivered;
        let admission = self.persister.deliver(bytes)?;
        // Every delivery reaches the shared store through the persister, counted there.
        debug_assert_eq!(self.persister.stats().delivered, delivered_before + 1);
        if let Some(local) = &self.local {
            local.append(bytes)?;
        }
        if self.options.planted.is(BugId::P14) {
            self.track_in_flight(bytes);
        }
        Ok(admission)
    }

    /// Handles a follow-up request: the thread's history as the client saw it.
    pub fn reconstruct(
        &self,
        thread_id: &str,
        primary: Option<&AgentIdentity>,
    ) -> Result<Projection, ReconstructError> {
        let store: &dyn DisplayEventStore = match &self.local {
            Some(local) => local,
            None => self.persister.store(),
        };
        let mut projection = reconstruct(store, thread_id, primary, &self.options)?;
        // Post-condition: the replica answers what the service reconstructed; only planted P14
        // adds to it.
        let reconstructed = projection.messages.len();
        if self.options.planted.is(BugId::P14) {
            // planted P14: the legacy handler appended what it had seen streaming, unchecked.
            let visible = store.visible_displays(thread_id)?;
            for ((thread, display, _run), text) in &self.in_flight {
                if thread == thread_id && visible.contains(display) && !text.is_empty() {
                    let part = ContentPart::Text { text: text.clone() };
                    projection.messages.push(ChatMessage {
                        role: Role::Assistant,
                        content: vec![part],
                    });
                }
            }
        }
        debug_assert!(
            self.options.planted.is(BugId::P14) || projection.messages.len() == reconstructed
        );
        Ok(projection)
    }

    /// The persister's counters.
    pub fn persister_stats(&self) -> PersisterStats {
        self.persister.stats()
    }

    /// Planted P14's bookkeeping: chunk text per run until the run's stop arrives.
    fn track_in_flight(&mut self, bytes: &[u8]) {
        let Ok(env) = Envelope::parse(bytes) else {
            return;
        };
        let Some(parents) = env.parents() else { return };
        let key = (
            env.str_field(envelope::THREAD_ID),
            env.str_field(envelope::DISPLAY_ID),
            env.str_field(envelope::RUN_ID),
        );
        let (Some(thread), Some(display), Some(run)) = key else {
            return;
        };
        let key = (thread.into_owned(), display.into_owned(), run.into_owned());
        match Family::of_parents(&parents, self.options.planted) {
            Some(Family::Chunk) => {
                let content = env
                    .data()
                    .and_then(|d| json::raw_object_fields(d, &["content"]))
                    .and_then(|[c]| c)
                    .and_then(json::as_str);
                if let Some(content) = content {
                    self.in_flight.entry(key).or_default().push_str(&content);
                }
            }
            Some(Family::Stop) => {
                self.in_flight.remove(&key);
            }
            _ => {}
        }
    }
}
