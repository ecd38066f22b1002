//! The run-event store contract, which the in-memory and the SQLite backends both implement with
//! identical answers (R9).
//!
//! Rows are only added, except by the two deletions, and every read returns owned copies (R3).
//! `seq` is assigned per thread at write time, inside one atomic batch (R5).
//!
//! What deletion means for `seq` (R13): a thread's numbers are never handed out twice while the
//! thread lives. `delete_by_run` removes rows but not the thread's high-water mark, so
//! [`RunEventStore::max_seq`] does not go down and the next write is numbered above every row
//! the thread ever had (as DeerFlow's memory store keeps its counter; its DB store, which takes
//! `MAX(seq)` of the remaining rows, would hand a deleted run's numbers, and so its message ids
//! and cursors, to new rows). `delete_by_thread` ends the thread's life when it leaves no row:
//! the mark goes and the next write is numbered 1 again (both upstream backends agree). Counts
//! and every read see only the remaining rows.
//!
//! The operations past the seed's (`put_if_absent`, the deletions, the user-scoped and per-run
//! reads, the filtered event list, the last visible AI message) have a default body that
//! answers [`RunStoreError::Unsupported`]: a wrapper or a system under test that does not
//! offer one says so instead of deriving an answer that would test the derivation. Both of
//! this crate's backends implement all of them, with identical answers (R9).

use std::sync::Arc;

use super::error::RunStoreError;
#[cfg(test)]
use super::event::RunEvent;
use super::ops::OpKind;
use super::query::UserScope;

// The trait: the table's operations, plus the helpers below that no protocol carries.
macro_rules! run_store_trait {
    ({$($extra:tt)*} $($(#[$doc:meta])* $kind:ident fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty,
        default $default:tt; wire $variant:ident { $($field:ident: $fty:ty = $enc:expr),* }
        $(every user ($all:ident))?; serve ($($dec:expr),*) answer $answer:ident; errors $errors:ident;)*) => {
        /// A run-event store. Synchronous, `&self` everywhere (backends use interior
        /// mutability), so that several journals and readers can share one store. The
        /// operations are the table of [`run_store_ops!`](crate::run_store_ops).
        pub trait RunEventStore {
            $(trait_method! { $(#[$doc])* $name($($arg: $ty),*) -> $ret, $default })*
            $($extra)*
        }
    };
}

/// One method of [`RunEventStore`], with the default its table row names.
macro_rules! trait_method {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty, required) => {
        $(#[$doc])*
        fn $name(&self, $($arg: $ty),*) -> Result<$ret, RunStoreError>;
    };
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty, unsupported) => {
        $(#[$doc])*
        fn $name(&self, $($arg: $ty),*) -> Result<$ret, RunStoreError> {
            let _ = ($($arg,)*);
            Err(RunStoreError::Unsupported {
                op: stringify!($name),
            })
        }
    };
    (
        $(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty,
        ($user:ident => $base:ident($($base_arg:ident),*))
    ) => {
        $(#[$doc])*
        fn $name(&self, $($arg: $ty),*) -> Result<$ret, RunStoreError> {
            match $user {
                UserScope::All => self.$base($($base_arg),*),
                _ => Err(RunStoreError::Unsupported {
                    op: stringify!($name),
                }),
            }
        }
    };
}

crate::run_store_ops!(run_store_trait { run_store_methods! {
    /// [`RunEventStore::put_batch`] returning the stored records (upstream's `put_batch`), in
    /// batch order. The default numbers the events with the seqs `put_batch` answered.
    fn put_batch_records(&self, events) {
        let seqs = self.put_batch(events.clone())?;
        if seqs.len() != events.len() {
            return Err(RunStoreError::InvalidEvent {
                field: "seq",
                reason: format!("{} seqs answered for {} events", seqs.len(), events.len()),
            });
        }
        Ok(events
            .into_iter()
            .zip(seqs)
            .map(|(e, s)| e.with_seq(s))
            .collect())
    }

    /// Writes one event and returns its stored record (upstream's `put`).
    fn put(&self, event) {
        let mut records = self.put_batch_records(vec![event])?;
        records.pop().ok_or(RunStoreError::InvalidEvent {
            field: "seq",
            reason: "no record answered for one event".to_string(),
        })
    }

    /// The legacy read of planted R3: hands each selected message row ITSELF to `edit` (the
    /// in-memory store of the seed returned live dicts). Returns `Ok(false)` when the backend can
    /// only hand out copies (nothing is edited then). Production code never calls it.
    #[cfg(feature = "planted")]
    fn legacy_edit_messages(&self, thread_id, limit, cursor, edit) {
        let _ = (thread_id, limit, cursor, edit);
        Ok(false)
    }
} });

/// A store that hands every call to another one (a reference, an `Arc`, a `Box`, a fault
/// injector, a host that may be down): implementing [`ForwardRunStore::forward`] gives the whole
/// [`RunEventStore`], every operation of the table forwarded through it.
pub trait ForwardRunStore {
    /// The store the calls go to.
    type Inner: RunEventStore + ?Sized;
    /// Hands one call of kind `kind` to the inner store (or answers it itself, e.g. with an
    /// injected fault).
    fn forward<T>(
        &self,
        kind: OpKind,
        call: impl FnOnce(&Self::Inner) -> Result<T, RunStoreError>,
    ) -> Result<T, RunStoreError>;
}

macro_rules! forwarded_store {
    ({} $($(#[$doc:meta])* $kind:ident fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty,
        default $default:tt; wire $variant:ident { $($field:ident: $fty:ty = $enc:expr),* }
        $(every user ($all:ident))?; serve ($($dec:expr),*) answer $answer:ident; errors $errors:ident;)*) => {
        impl<W: ForwardRunStore> RunEventStore for W {
            $(fn $name(&self, $($arg: $ty),*) -> Result<$ret, RunStoreError> {
                self.forward(crate::__run_store_kind!($kind), |s| s.$name($($arg),*))
            })*

            run_store_methods! {
                fn put_batch_records(&self, events) {
                    self.forward(OpKind::Write, |s| s.put_batch_records(events))
                }

                fn put(&self, event) {
                    self.forward(OpKind::Write, |s| s.put(event))
                }

                #[cfg(feature = "planted")]
                fn legacy_edit_messages(&self, thread_id, limit, cursor, edit) {
                    self.forward(OpKind::Read, |s| {
                        s.legacy_edit_messages(thread_id, limit, cursor, edit)
                    })
                }
            }
        }
    };
}

crate::run_store_ops!(forwarded_store {});

/// A pointer to a store forwards every call to it.
macro_rules! forward_through_pointer {
    ($($pointer:ty),*) => {$(
        impl<S: RunEventStore + ?Sized> ForwardRunStore for $pointer {
            type Inner = S;
            fn forward<T>(
                &self,
                _: OpKind,
                call: impl FnOnce(&S) -> Result<T, RunStoreError>,
            ) -> Result<T, RunStoreError> {
                call(self)
            }
        }
    )*};
}

forward_through_pointer!(&S, Arc<S>, Box<S>);

/// One field of every row `store` holds, in dump order: what the unit tests compare.
#[cfg(test)]
pub(crate) fn dumped<T>(store: &dyn RunEventStore, field: impl FnMut(RunEvent) -> T) -> Vec<T> {
    store.dump().unwrap().into_iter().map(field).collect()
}
