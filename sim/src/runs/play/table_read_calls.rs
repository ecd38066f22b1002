//! The scenario's table reads ([`crate::runs::table_read_steps`]), asked of both stores once
//! the world ended, each recorded as one observation for the one rule that judges them. A read
//! the system does not serve, or one on a thread a declared difference keeps from it, is left
//! out and counted, never passed.

use super::declared_calls::declared_for_thread;
use super::state::World;
use crate::runs::observations::Observation;
use crate::runs::record::TableReadRecord;
use crate::runs::store_differences::left_out_entry;
use crate::runs::table_reads::{table_read, Asked};
use serde_json::Value;

/// Asks every table read of the scenario, in order, traced at `at_us` (the world's end).
pub(in crate::runs) fn ask_table_reads(world: &World, at_us: u64) {
    for (step, read) in world.scenario.table_reads.iter().enumerate() {
        let Some(row) = table_read(&read.op) else {
            debug_assert!(false, "validated: {} is a table read", read.op);
            continue;
        };
        if !world.serves(row.op) {
            let what = format!(
                "the table read {} (the system does not serve {})",
                row.op, row.op
            );
            world.observe(Observation::LeftOut(what));
            continue;
        }
        if let Some(d) = declared_for_thread(world, &read.thread) {
            let what = "the table reads on a thread whose id the system refuses";
            world.observe(Observation::LeftOut(left_out_entry(what, d)));
            continue;
        }
        let thread_id = world.thread_id(&read.thread);
        let run_id = read.run.clone().unwrap_or_default();
        let asked = Asked {
            thread_id: &thread_id,
            run_id: &run_id,
        };
        let answers = world.both(|s| (row.ask)(s, &asked));
        world.record_at(
            at_us,
            format_args!(
                "table read {} thread {} run {}: {}",
                row.op,
                read.thread,
                read.run.as_deref().unwrap_or("-"),
                shown(answers.memory.as_ref()),
            ),
        );
        world.observe(Observation::TableRead(TableReadRecord {
            step,
            op: row.op,
            thread_id,
            run_id,
            answers,
        }));
    }
}

/// An answer as the trace shows it.
fn shown(answer: Result<&Value, &String>) -> String {
    match answer {
        Ok(v) => v.to_string(),
        Err(e) => format!("error {e}"),
    }
}
