//! The event persister one API replica runs on the fan-out bus.
//!
//! Every replica subscribes to the same subjects and appends every delivery it receives, so the
//! shared store holds duplicates by design (write-side dedup is out of scope; reads dedup, P4).

use super::store::{Admission, DisplayEventStore, StoreError};

/// Counters of one persister.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PersisterStats {
    /// Deliveries handed to [`Persister::deliver`].
    pub delivered: u64,
    /// Deliveries the store indexed.
    pub stored: u64,
    /// Deliveries the store quarantined.
    pub quarantined: u64,
}

/// Appends deliveries to a store as they come.
#[derive(Debug)]
pub struct Persister<S> {
    store: S,
    stats: PersisterStats,
}

impl<S: DisplayEventStore> Persister<S> {
    /// A persister writing to `store`.
    pub fn new(store: S) -> Self {
        Persister {
            store,
            stats: PersisterStats::default(),
        }
    }

    /// Appends one delivery, duplicates included. A store error leaves the delivery counted as
    /// delivered but neither stored nor quarantined.
    pub fn deliver(&mut self, bytes: &[u8]) -> Result<Admission, StoreError> {
        let before = self.stats;
        self.stats.delivered += 1;
        let admission = self.store.append(bytes)?;
        match admission {
            Admission::Stored => self.stats.stored += 1,
            Admission::Quarantined { .. } => self.stats.quarantined += 1,
        }
        debug_assert!(self.stats.stored + self.stats.quarantined <= self.stats.delivered);
        // Post-condition: this delivery was counted once, as the one thing the store did.
        debug_assert_eq!(
            (self.stats.stored + self.stats.quarantined) - (before.stored + before.quarantined),
            1
        );
        Ok(admission)
    }

    /// The counters so far.
    pub fn stats(&self) -> PersisterStats {
        self.stats
    }

    /// The store written to.
    pub fn store(&self) -> &S {
        &self.store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::MemoryDisplayStore;
    use crate::Planted;

    #[test]
    fn appends_every_delivery_and_counts_admissions() {
        let mut p = Persister::new(MemoryDisplayStore::new(Planted::none()));
        let row = br#"{"thread_id":"t","display_id":"d","event_type":"display_event","agent_class":"A","event_parents":[]}"#;
        assert_eq!(p.deliver(row).ok(), Some(Admission::Stored));
        assert_eq!(p.deliver(row).ok(), Some(Admission::Stored));
        assert!(matches!(
            p.deliver(b"garbage"),
            Ok(Admission::Quarantined { .. })
        ));
        assert_eq!(
            p.stats(),
            PersisterStats {
                delivered: 3,
                stored: 2,
                quarantined: 1
            }
        );
        assert_eq!(p.store().row_count().ok(), Some(2));
    }
}
