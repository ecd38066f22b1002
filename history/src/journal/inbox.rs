//! Appends handed to a journal by other producers (another turn, another recorder) while its
//! writer is busy. The writer drains them between its own mutations, never inside a replacement
//! (J3): a `&mut` borrow keeps other code out of the writer, and the inbox is how concurrent work
//! still reaches it, in submission order.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use super::row::{Origin, Row};

/// One queued append: its origin and rows.
type Submission = (Origin, Vec<Row>);

/// A cloneable handle for submitting appends to one journal.
#[derive(Clone, Debug, Default)]
pub struct Inbox {
    queue: Arc<Mutex<VecDeque<Submission>>>,
}

impl Inbox {
    /// Queues an append of `rows` under `origin`. Empty submissions are ignored.
    pub fn submit(&self, origin: Origin, rows: Vec<Row>) {
        if !rows.is_empty() {
            self.lock().push_back((origin, rows));
        }
    }

    /// Appends waiting to be written.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn pop(&self) -> Option<Submission> {
        self.lock().pop_front()
    }

    pub(crate) fn push_front(&self, item: Submission) {
        self.lock().push_front(item);
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<Submission>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}
