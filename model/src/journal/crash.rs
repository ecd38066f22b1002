//! What a journal may show after a crash: the last durable commit, or any later commit that was
//! already issued.
//!
//! The model keeps the history after every operation. An operation is issued when its first
//! write starts and durable when its sync returns. A crash while operations `d+1 ..= i` are
//! issued but only `..= d` are durable may reopen as any of the states `d ..= i`: the file keeps a
//! prefix of what was written, and each operation is atomic (a replacement through its commit
//! record, everything else by being one record).

use super::history::{ModelError, ModelHistory, ModelOp};

/// Histories after each operation, and how far they are durable.
#[derive(Clone, Debug)]
pub struct CrashModel<R> {
    states: Vec<ModelHistory<R>>,
    durable: usize,
}

impl<R: Clone + Eq> Default for CrashModel<R> {
    fn default() -> Self {
        Self::new(ModelHistory::new())
    }
}

impl<R: Clone + Eq> CrashModel<R> {
    /// A model whose durable state is `initial`.
    pub fn new(initial: ModelHistory<R>) -> Self {
        CrashModel {
            states: vec![initial],
            durable: 0,
        }
    }

    /// Issues an operation; returns the index of the state after it.
    pub fn issue(&mut self, op: &ModelOp<R>) -> Result<usize, ModelError> {
        let next = self.latest().apply(op)?;
        self.states.push(next);
        Ok(self.states.len() - 1)
    }

    /// Every state up to `index` is durable now.
    pub fn make_durable(&mut self, index: usize) {
        assert!(index < self.states.len(), "state {index} was never issued");
        self.durable = self.durable.max(index);
    }

    /// The newest issued state.
    pub fn latest(&self) -> &ModelHistory<R> {
        self.states
            .last()
            .expect("a model always has its initial state")
    }

    /// The state after operation `index` (0 is the initial state).
    pub fn state(&self, index: usize) -> &ModelHistory<R> {
        &self.states[index]
    }

    /// The states a crash now may reopen as.
    pub fn allowed(&self) -> &[ModelHistory<R>] {
        &self.states[self.durable..]
    }

    /// The states a crash may reopen as when states `..= durable` were durable and states
    /// `..= issued` issued at the time: for crash points in the past of this model.
    pub fn allowed_between(&self, durable: usize, issued: usize) -> &[ModelHistory<R>] {
        assert!(
            durable <= issued && issued < self.states.len(),
            "bad crash window"
        );
        &self.states[durable..=issued]
    }

    /// The index of the first allowed state equal to `shown`, within a crash window.
    pub fn matching(
        &self,
        durable: usize,
        issued: usize,
        shown: &ModelHistory<R>,
    ) -> Option<usize> {
        self.allowed_between(durable, issued)
            .iter()
            .position(|s| s == shown)
            .map(|p| p + durable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_states_run_from_durable_to_issued() {
        let mut m: CrashModel<&str> = CrashModel::default();
        let a = m.issue(&ModelOp::Append(vec!["a"])).expect("issue");
        m.make_durable(a);
        let b = m.issue(&ModelOp::Replace(vec!["b"])).expect("issue");
        assert_eq!(m.allowed().len(), 2);
        assert_eq!(m.allowed()[0].rows(), ["a"]);
        assert_eq!(m.allowed()[1].rows(), ["b"]);
        assert_eq!(m.matching(a, b, m.state(b)), Some(b));
        assert_eq!(m.matching(a, a, m.state(b)), None);
        m.make_durable(b);
        assert_eq!(m.allowed().len(), 1);
        assert!(m.issue(&ModelOp::SuffixCut(5)).is_err());
    }
}
