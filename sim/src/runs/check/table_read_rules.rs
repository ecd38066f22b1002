//! The one rule of the table reads ([`crate::runs::table_reads`]): each answer a store gave once
//! the world ended is what the model computes from the rows it must hold (every row written and
//! not deleted, [`model::runs::StoredRows`]), on every backend the whole-store comparison
//! judges. A wrong answer breaks the ID the read's row names; an error answer is R24's (every
//! table read is `errors Never` in the store's table).

use super::context::Context;
use super::stored::{judged_answers, rows_to_hold};
use crate::outcome::Findings;
use crate::runs::record::{Answer, TableReadRecord};
use crate::runs::table_reads::{table_read, Asked, TableRead};
use history::BugId;
use serde_json::Value;

/// Every table read's answers against the model's.
pub fn table_reads_match_the_model(cx: &Context<'_>, f: &mut Findings) {
    let reads = cx.record.log.table_reads();
    if reads.is_empty() {
        return;
    }
    let rows = rows_to_hold(cx.record);
    for read in reads {
        let Some(row) = table_read(read.op) else {
            continue;
        };
        let asked = Asked {
            thread_id: &read.thread_id,
            run_id: &read.run_id,
        };
        let expected = (row.expect)(&rows, &asked);
        for (store, answer) in judged_answers(cx, &read.answers) {
            judge(row, read, store, answer, &expected, f);
        }
    }
}

/// One store's answer to one table read against the model's `expected`.
pub fn judge(
    row: &TableRead,
    read: &TableReadRecord,
    store: &str,
    answer: &Answer<Value>,
    expected: &Value,
    f: &mut Findings,
) {
    let call = call_words(read);
    let state = format!("the table read {call} once the world ended");
    match answer {
        Err(e) => f.add_whole_state(
            BugId::R24,
            state,
            format!("{store} answered {call} with an error where the contract asks for an answer: {e}"),
        ),
        Ok(answered) if answered != expected => f.add_whole_state(
            row.wrong,
            state,
            format!("{store} answered {call} with {answered} but the model says {expected} (from the rows written and not deleted)"),
        ),
        Ok(_) => {}
    }
}

/// `op(thread, run)` as a finding names the call.
fn call_words(read: &TableReadRecord) -> String {
    if read.run_id.is_empty() {
        format!("{}(thread {})", read.op, read.thread_id)
    } else {
        format!(
            "{}(thread {}, run {})",
            read.op, read.thread_id, read.run_id
        )
    }
}
