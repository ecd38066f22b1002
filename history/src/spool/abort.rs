//! How a caller cancels a request: a signal polled between rows while building and between chunks
//! while sending. A fired signal ends the call with [`SpoolError::Aborted`](super::SpoolError) and
//! the spool is removed like on any other failure.
//!
//! A signal is polled, never waited on, so the library needs no threads or runtime; tests and the
//! simulator abort at an exact point with a closure that counts its polls.

use std::sync::atomic::{AtomicBool, Ordering};

/// Something that says whether the call was cancelled.
pub trait AbortSignal {
    fn is_aborted(&self) -> bool;
}

/// A signal that never fires.
#[derive(Clone, Copy, Debug, Default)]
pub struct NeverAbort;

impl AbortSignal for NeverAbort {
    fn is_aborted(&self) -> bool {
        false
    }
}

/// A flag set from elsewhere (another thread, a signal handler).
impl AbortSignal for AtomicBool {
    fn is_aborted(&self) -> bool {
        self.load(Ordering::SeqCst)
    }
}

/// A closure, e.g. one that fires on its n-th poll.
impl<F: Fn() -> bool> AbortSignal for F {
    fn is_aborted(&self) -> bool {
        self()
    }
}
