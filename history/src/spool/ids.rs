//! Tool-call id mapping in one streaming pass.
//!
//! Raw tool-call ids come from whatever model made the call: some repeat across turns, some break a
//! provider's id syntax. The request carries mapped ids instead, numbered in order of appearance:
//!
//! - each tool call gets the next number;
//! - a tool result gets the number of the OLDEST still-unanswered call with its raw id, and that
//!   call counts as answered;
//! - a result that matches no unanswered call (an orphan) gets the next number, like a call.
//!
//! The mapper keeps only unanswered calls, so its state is bounded by the number of tool calls and
//! in a well-formed history by the calls in flight, never by the number of rows.

use std::collections::{BTreeMap, VecDeque};

/// The streaming id mapper. One per request body.
#[derive(Debug, Default)]
pub struct ToolIdMapper {
    next: u64,
    /// raw id -> numbers of its unanswered calls, oldest first. Empty queues are removed.
    pending: BTreeMap<String, VecDeque<u64>>,
    pending_calls: usize,
}

impl ToolIdMapper {
    pub fn new() -> Self {
        ToolIdMapper::default()
    }

    /// The number of the tool call with raw id `raw`.
    pub fn call(&mut self, raw: &str) -> u64 {
        let n = self.fresh();
        match self.pending.get_mut(raw) {
            Some(queue) => queue.push_back(n),
            None => {
                self.pending.insert(raw.to_string(), VecDeque::from([n]));
            }
        }
        self.pending_calls += 1;
        n
    }

    /// The number of the tool result answering raw id `raw`.
    pub fn result(&mut self, raw: &str) -> u64 {
        let Some(queue) = self.pending.get_mut(raw) else {
            return self.fresh();
        };
        let n = queue
            .pop_front()
            .expect("invariant: empty queues are removed from `pending`");
        if queue.is_empty() {
            self.pending.remove(raw);
        }
        self.pending_calls -= 1;
        n
    }

    /// Calls not answered yet: the mapper's whole state.
    pub fn pending_calls(&self) -> usize {
        debug_assert_eq!(
            self.pending_calls,
            self.pending.values().map(VecDeque::len).sum::<usize>()
        );
        self.pending_calls
    }

    fn fresh(&mut self) -> u64 {
        let n = self.next;
        self.next += 1;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers `m` gives each of `steps` in turn: `+x` a call of raw id `x`, `-x` a result
    /// of it.
    fn numbers(m: &mut ToolIdMapper, steps: &[&str]) -> Vec<u64> {
        let number = |m: &mut ToolIdMapper, step: &str| match step.split_at(1) {
            ("+", id) => m.call(id),
            (_, id) => m.result(id),
        };
        steps.iter().map(|step| number(m, step)).collect()
    }

    #[test]
    fn results_take_their_calls_number_and_release_it() {
        let mut m = ToolIdMapper::new();
        assert_eq!(numbers(&mut m, &["+a", "+b"]), [0, 1]);
        assert_eq!(m.pending_calls(), 2);
        assert_eq!(numbers(&mut m, &["-b", "-a"]), [1, 0]);
        assert_eq!(m.pending_calls(), 0);
    }

    #[test]
    fn a_reused_raw_id_gets_a_new_number_per_call() {
        let mut m = ToolIdMapper::new();
        assert_eq!(numbers(&mut m, &["+x", "-x", "+x", "-x"]), [0, 0, 1, 1]);
    }

    #[test]
    fn duplicate_pending_ids_are_answered_oldest_first() {
        let mut m = ToolIdMapper::new();
        assert_eq!(numbers(&mut m, &["+x", "+x", "-x", "-x"]), [0, 1, 0, 1]);
    }

    #[test]
    fn orphan_results_get_fresh_numbers() {
        let mut m = ToolIdMapper::new();
        assert_eq!(numbers(&mut m, &["-ghost", "+ghost"]), [0, 1]);
        assert_eq!(m.pending_calls(), 1);
    }
}
