//! Callers that edit what they handled (R3): a reader that edits nested content of the rows a
//! `list_messages` page handed it (deer-flow#5405), and a run's writer that edits the content
//! of a message it wrote, after the write (adk-python#7213). Each edit is made on the caller's
//! own copy through [`history::runs::edit_callers_row`], on both backends; the stores must hold
//! what was written all the same, which the whole-store comparison of R3 judges at the end.
//!
//! A system under test keeps its rows in its own process: the edit is the caller's, made on
//! the answer the protocol carried, so it reaches nothing there (the adapter's caller edits
//! none of the objects the published store returned or was given).

use super::client::Client;
use super::state::World;
use history::runs::{edit_callers_row, MessageCursor, RunEvent, RunEventStore, RunStoreError};

/// What a reader writes into the rows it edits.
const READER_NOTE: &str = "edited by a reader";
/// What a writer writes into the row it edits.
const WRITER_NOTE: &str = "edited by its writer";

impl Client {
    /// The thread's newest `limit` messages from both backends, then a nested object of each
    /// row's content edited by the reader.
    pub(in crate::runs) fn edit_read(&self, world: &World, thread: &str, limit: usize) {
        let tid = world.thread_id(thread);
        world.next_op();
        let edited = world.both(|store| {
            let mut rows = store.list_messages(&tid, limit, MessageCursor::None)?;
            edit_rows(store, world, &mut rows, READER_NOTE)
        });
        world.record(format_args!(
            "edit-read {thread} limit={limit} {}",
            world.rows_words(&edited)
        ));
    }

    /// The run's writer edits a nested object of the last message it wrote that has one (the
    /// row as the store accepted it, with its seq), on both backends.
    pub(in crate::runs) fn edit_written(&self, world: &World, run: &str) {
        let Some(r) = world.scenario.run_index(run) else {
            return;
        };
        let spec = &world.scenario.runs[r];
        let tid = world.thread_id(&spec.thread);
        let own: Vec<RunEvent> = (world.log.borrow().written().iter())
            .filter(|w| w.event.run_id == spec.id && w.event.thread_id == tid)
            .filter(|w| w.event.category == history::runs::Category::Message)
            .filter(|w| history::runs::edit_nested(&mut (*w.event.content).clone(), ""))
            .map(|w| w.event.clone())
            .collect();
        let Some(last) = own.last() else {
            world.record(format_args!(
                "edit-written {run}: no message with nested content"
            ));
            return;
        };
        world.next_op();
        let edited = world.both(|store| edit_rows(store, world, &mut [last.clone()], WRITER_NOTE));
        world.record(format_args!(
            "edit-written {run} seq={} {}",
            last.seq,
            world.rows_words(&edited)
        ));
    }
}

/// Edits each of `rows` for its caller; the number of rows with nested content edited.
fn edit_rows(
    store: &dyn RunEventStore,
    world: &World,
    rows: &mut [RunEvent],
    note: &str,
) -> Result<usize, RunStoreError> {
    let mut edited = 0;
    for row in rows {
        if edit_callers_row(store, world.planted, row, note)? {
            edited += 1;
        }
    }
    Ok(edited)
}
