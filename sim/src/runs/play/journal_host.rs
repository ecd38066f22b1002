//! What the run journal hears beside the events it is handed (an invocation's start, end and
//! failure, a model call's start: `history::runs::journal_callbacks`), heard by histsim's own
//! journal or, when the system under test hosts the journal (it declares the journal ops in
//! `hello`, [`crate::sut::journal_ops`]), by the system's: the system answers the records its
//! journal makes of each callback, and histsim's journal buffers and writes them through the
//! store ops as it writes everything else. The checks (R25, R26) judge the rows written, either
//! way.

use super::journal_calls::{hear_itself, Callback};
use super::state::{now_us, World};
use super::system::OverProtocolStore;
use super::tap::JournalStore;
use crate::runs::observations::Observation;
use crate::runs::record::WriteError;
use crate::sut::journal_ops::JOURNAL_OPS;
use crate::sut::journal_wire::{wire_messages, WireInvocation};
use crate::sut::protocol::Request;
use history::runs::{JournalError, RunJournal};
use std::rc::Rc;

/// Hands `journal` (run `run`'s) the callback at `at_ns`: to its own methods, or to the
/// system's journal and then the records it answered.
pub(in crate::runs) async fn hear(
    world: &World,
    journal: &mut RunJournal<&JournalStore>,
    run: usize,
    callback: Callback<'_>,
    at_ns: i64,
) -> Result<(), JournalError> {
    let Some(host) = journal_host(world) else {
        return hear_itself(journal, callback, at_ns).await;
    };
    let request = request(journal, callback, at_ns);
    let op = request.journal_op().unwrap_or(JOURNAL_OPS[0]);
    match host.journal_call(request) {
        Ok(records) => {
            for record in records {
                journal.record(record.entry(at_ns)).await?;
            }
        }
        Err(e) => refused(world, run, op, &e.to_string()),
    }
    Ok(())
}

/// The system's process that hosts the journal: the pair's first store, when the system
/// declares the journal ops and the world never crashes that store's host (a restarted
/// process would have lost its journals' state; such a world hears with histsim's journal,
/// and says so).
fn journal_host(world: &World) -> Option<&Rc<OverProtocolStore>> {
    let first = world.suts.first().filter(|s| s.hosts_journal())?;
    let crashed = world.first_slot != "memory" && !world.scenario.store_crashes.is_empty();
    if crashed {
        world.observe(Observation::LeftOut(
            "the run journal's callbacks to the system (its host is crashed in this seed: histsim's journal heard them)"
                .to_string(),
        ));
        return None;
    }
    Some(first)
}

fn request(journal: &RunJournal<&JournalStore>, callback: Callback<'_>, at_ns: i64) -> Request {
    let (thread_id, run_id) = (
        journal.thread_id().to_string(),
        journal.run_id().to_string(),
    );
    match callback {
        Callback::ChainStart(i, content) => Request::JournalChainStart {
            thread_id,
            run_id,
            invocation: WireInvocation::from(i),
            content,
            created_at_ns: at_ns,
        },
        Callback::ModelStart(call) => Request::JournalModelStart {
            thread_id,
            run_id,
            caller: call.caller.clone(),
            messages: wire_messages(call),
            created_at_ns: at_ns,
        },
        Callback::ChainEnd(i) => Request::JournalChainEnd {
            thread_id,
            run_id,
            invocation: WireInvocation::from(i),
            created_at_ns: at_ns,
        },
        Callback::ChainError(i, error) => Request::JournalChainError {
            thread_id,
            run_id,
            invocation: WireInvocation::from(i),
            error: error.to_string(),
            created_at_ns: at_ns,
        },
    }
}

/// The system answered a callback with an error, where the contract asks for its records:
/// kept for R24, as a store's error answer to a journal's write is.
fn refused(world: &World, run: usize, call: &'static str, message: &str) {
    let run_id = world.scenario.runs[run].id.clone();
    world.record(format_args!("{run_id} {call} refused: {message}"));
    world.observe(Observation::WriteError(WriteError {
        op: world.next_op.get().saturating_sub(1),
        at_us: now_us(),
        call,
        run_id: Some(run_id),
        stores: format!("the {} store", world.first_slot),
        conflict: false,
        message: message.to_string(),
    }));
}
