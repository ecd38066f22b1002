//! The table reads: operations of the store's table (`history::runs::run_store_ops!`) that only
//! read and whose answer the runs model computes ([`model::runs::StoredRows`]), each named here
//! once: how the simulation asks it, what the model answers, which catalog ID a wrong answer
//! breaks, and its coverage probe. Everything else is generic: the generator draws steps that
//! ask them ([`super::table_read_steps`], a sub-stream of its own), play asks each once the
//! world ended and records one observation (`play::table_read_calls`), and one rule compares
//! each answer with the model's (`check::table_read_rules`).
//!
//! A new read of that kind is one row of the store's table, its bodies in the stores, a row
//! here, its function in the model and its section in docs/sut-protocol.md: no play,
//! observation or check code of its own.

use history::runs::{RunEventStore, RunStoreError};
use history::BugId;
use model::runs::StoredRows;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The arguments a table read takes, drawn from the scenario's threads and runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadArgs {
    /// A thread.
    Thread,
    /// A thread and a run (most often one of the thread's own, sometimes another thread's).
    ThreadAndRun,
}

/// The arguments of one table read, resolved to the ids the store knows (`run_id` empty when
/// the read takes no run).
#[derive(Clone, Copy, Debug)]
pub struct Asked<'a> {
    pub thread_id: &'a str,
    pub run_id: &'a str,
}

/// One ask of a table read, once the world ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableReadStep {
    /// The operation: a row of the table reads.
    pub op: String,
    /// The thread's key.
    pub thread: String,
    /// The run's id, for a read that takes a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// One read of the store's table that the model answers.
pub struct TableRead {
    /// The operation's name in the store's table (and on the protocol).
    pub op: &'static str,
    pub args: ReadArgs,
    /// Asks it of a store; the answer as a comparable value.
    pub ask: fn(&dyn RunEventStore, &Asked<'_>) -> Result<Value, RunStoreError>,
    /// What the model says the store must answer, from the rows it must hold.
    pub expect: fn(&StoredRows, &Asked<'_>) -> Value,
    /// The catalog ID a wrong answer breaks (an error answer is R24's: every table read is
    /// `errors Never`).
    pub wrong: BugId,
    /// The coverage probe fired when a store answered it.
    pub probe: &'static str,
}

/// Every table read, in the order the generator draws them.
pub(crate) const TABLE_READS: &[TableRead] = &[TableRead {
    op: "count_events_by_run",
    args: ReadArgs::ThreadAndRun,
    ask: |s, a| Ok(s.count_events_by_run(a.thread_id, a.run_id)?.into()),
    expect: |m, a| m.count_events_by_run(a.thread_id, a.run_id).into(),
    wrong: BugId::R3,
    probe: "runs.table_read.count_events_by_run",
}];

/// The table read called `op`, if the table has one.
pub(crate) fn table_read(op: &str) -> Option<&'static TableRead> {
    TABLE_READS.iter().find(|r| r.op == op)
}

/// Every table read's coverage probe, in the table's order.
pub const PROBES: [&str; TABLE_READS.len()] = {
    let mut out = [""; TABLE_READS.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = TABLE_READS[i].probe;
        i += 1;
    }
    out
};

#[cfg(test)]
mod tests {
    use super::*;
    use history::runs::ContractErrors;

    /// Whether the store's table says `op` only reads and never answers an error: what the
    /// generic rule needs of a table read.
    fn is_judgeable(op: &str) -> bool {
        history::runs::run_store_op(op)
            .is_some_and(|o| o.kind.reads() && o.errors == ContractErrors::Never)
    }

    #[test]
    fn every_table_read_is_a_read_of_the_store_table_that_never_errs() {
        for r in TABLE_READS {
            assert!(
                is_judgeable(r.op),
                "{}: not a `read ... errors Never` row",
                r.op
            );
            assert!(r.probe.starts_with("runs.table_read."), "{}", r.probe);
        }
    }
}
