//! The options a seed derives for the journal workload (swarm testing).
//!
//! Each seed switches a random subset of operations and faults on, so that some seeds run quiet
//! sessions and others crash mid-replacement while mirrors fail and resumes race the user's
//! typing. Every probability defaults to zero ([`JournalSimOptions::quiet`]);
//! [`JournalSimOptions::from_seed`] turns some on. The run prints what it derived.

use crate::rng::{swarm_probability, SeedRng, Stream};
use rand::Rng;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JournalSimOptions {
    /// Sessions, each on its own host with its own disk (1 to 3).
    pub sessions: u8,
    /// Operations in each session's script.
    pub ops_per_session: u8,
    /// Records a resume loads between two calls of its arrivals callback.
    pub load_step_records: u8,
    /// Chance, per operation, of a general replacement (a restore), written group by group.
    pub replace_probability: f64,
    /// Chance that another recorder hands rows to the journal while a replacement runs.
    pub replace_arrivals_probability: f64,
    pub rewind_probability: f64,
    pub clear_probability: f64,
    /// Chance, per operation, of a compression by the summarization middleware.
    pub compress_probability: f64,
    pub density_probability: f64,
    /// Chance that a density change rewrites rows of tens of KiB (past 64 KiB in all).
    pub density_large_probability: f64,
    pub insert_probability: f64,
    /// Chance, per operation, of an incremental statistics read.
    pub read_probability: f64,
    /// Chance, per operation, of concurrent token estimates.
    pub estimate_probability: f64,
    /// Chance, per operation, of a request with last-resort truncation.
    pub send_probability: f64,
    /// Chance that a turn calls a tool (a call and a long result).
    pub tool_probability: f64,
    /// Chance, per operation, of a checkpoint fork or a clone of the recording.
    pub fork_probability: f64,
    /// Chance, per operation once a fork exists, of switching the recording to it.
    pub switch_probability: f64,
    /// Chance that a switch's writes fail after it published (a failed resume).
    pub switch_fail_probability: f64,
    pub resume_again_probability: f64,
    /// Chance that a session shares its history with subagents (several origins, mirrors).
    pub shared_probability: f64,
    /// Chance, per operation of a shared session, that it mutates the shared history.
    pub shared_op_probability: f64,
    /// Chance that a shared mutation's mirror fails its appends (a rollback).
    pub mirror_fail_probability: f64,
    /// Chance, per operation, of a mirror attached late.
    pub late_attach_probability: f64,
    pub shared_resume_probability: f64,
    /// Slow mirrors: ms before mirror work still owed is written (0: at once).
    pub mirror_settle_ms: u32,
    /// Chance, per operation, that the host crashes right after it.
    pub crash_probability: f64,
    /// Chance, per replacement, that the host crashes in the middle of it.
    pub crash_mid_replace_probability: f64,
    /// Chance that a crash keeps every unsynced write (the page cache reached the disk).
    pub pending_keep_probability: f64,
    /// Chance that a crash tears the unsynced writes at some byte.
    pub pending_cut_probability: f64,
    /// Chance that a crash leaves a seeded sample of what the `reorder` persistence model allows
    /// (any subset of each file's unsynced sectors, torn sectors, lost new entries).
    pub pending_reorder_probability: f64,
    /// Chance that the user types while a restarted session loads.
    pub restart_arrivals_probability: f64,
    /// Chance, per mutation, that its appends fail with EIO.
    pub append_eio_probability: f64,
    /// Chance, per crash, that a silent corruption of the recording meets the restarted host
    /// (a bit flip, a flip inside a row's text, a stale sector).
    pub corrupt_probability: f64,
    /// Chance that a session ends by disposing of its journal store.
    pub dispose_probability: f64,
    /// Chance that the disposal meets a failure.
    pub dispose_fault_probability: f64,
    /// Chance, per crash, that it is a process kill that keeps the page cache (unsynced writes
    /// survive, still unsynced), followed later in the script by a power cut.
    pub kill_probability: f64,
    /// Chance, per crash, that the restarted process crashes again inside its recovery.
    pub recovery_crash_probability: f64,
}

impl JournalSimOptions {
    /// One quiet session of `ops` appends: no faults, no other operations.
    pub fn quiet(ops: u8) -> Self {
        JournalSimOptions {
            sessions: 1,
            ops_per_session: ops,
            load_step_records: 2,
            replace_probability: 0.0,
            replace_arrivals_probability: 0.0,
            rewind_probability: 0.0,
            clear_probability: 0.0,
            compress_probability: 0.0,
            density_probability: 0.0,
            density_large_probability: 0.0,
            insert_probability: 0.0,
            read_probability: 0.0,
            estimate_probability: 0.0,
            send_probability: 0.0,
            tool_probability: 0.0,
            fork_probability: 0.0,
            switch_probability: 0.0,
            switch_fail_probability: 0.0,
            resume_again_probability: 0.0,
            shared_probability: 0.0,
            shared_op_probability: 0.0,
            mirror_fail_probability: 0.0,
            late_attach_probability: 0.0,
            shared_resume_probability: 0.0,
            mirror_settle_ms: 0,
            crash_probability: 0.0,
            crash_mid_replace_probability: 0.0,
            pending_keep_probability: 0.0,
            pending_cut_probability: 0.0,
            pending_reorder_probability: 0.0,
            restart_arrivals_probability: 0.0,
            append_eio_probability: 0.0,
            corrupt_probability: 0.0,
            dispose_probability: 0.0,
            dispose_fault_probability: 0.0,
            kill_probability: 0.0,
            recovery_crash_probability: 0.0,
        }
    }

    /// The options of `seed`: each operation and fault is on with its own chance, with a
    /// probability drawn when on.
    pub fn from_seed(seed: SeedRng) -> Self {
        let mut rng = seed.stream(Stream::Options);
        let mut maybe = |chance_on, lo, hi| swarm_probability(&mut rng, chance_on, lo, hi);
        // Fields are drawn in the order written: keep the order, or old seeds get other options.
        JournalSimOptions {
            replace_probability: maybe(0.7, 0.1, 0.3),
            replace_arrivals_probability: maybe(0.6, 0.3, 0.9),
            rewind_probability: maybe(0.6, 0.05, 0.2),
            clear_probability: maybe(0.4, 0.02, 0.08),
            compress_probability: maybe(0.6, 0.05, 0.2),
            density_probability: maybe(0.5, 0.05, 0.15),
            density_large_probability: maybe(0.5, 0.3, 0.8),
            insert_probability: maybe(0.4, 0.05, 0.15),
            read_probability: maybe(0.6, 0.1, 0.3),
            estimate_probability: maybe(0.5, 0.05, 0.2),
            send_probability: maybe(0.5, 0.05, 0.2),
            tool_probability: maybe(0.6, 0.2, 0.6),
            fork_probability: maybe(0.5, 0.05, 0.15),
            switch_probability: maybe(0.6, 0.2, 0.5),
            switch_fail_probability: maybe(0.5, 0.3, 0.8),
            resume_again_probability: maybe(0.4, 0.03, 0.1),
            shared_probability: maybe(0.6, 0.5, 1.0),
            shared_op_probability: maybe(0.9, 0.3, 0.7),
            mirror_fail_probability: maybe(0.5, 0.1, 0.4),
            late_attach_probability: maybe(0.4, 0.03, 0.1),
            shared_resume_probability: maybe(0.4, 0.03, 0.1),
            crash_probability: maybe(0.6, 0.03, 0.12),
            crash_mid_replace_probability: maybe(0.6, 0.3, 0.8),
            pending_keep_probability: maybe(0.6, 0.2, 0.6),
            pending_cut_probability: maybe(0.6, 0.2, 0.6),
            restart_arrivals_probability: maybe(0.6, 0.3, 0.8),
            append_eio_probability: maybe(0.4, 0.02, 0.1),
            dispose_probability: maybe(0.7, 0.5, 1.0),
            dispose_fault_probability: maybe(0.4, 0.2, 0.6),
            pending_reorder_probability: maybe(0.7, 0.3, 0.7),
            corrupt_probability: Self::corrupt_from_seed(seed),
            kill_probability: Self::recovery_from_seed(seed).0,
            recovery_crash_probability: Self::recovery_from_seed(seed).1,
            ..Self::sized_from_seed(seed)
        }
    }

    /// The chances of a process kill and of a crash inside recovery, from a sub-stream of their
    /// own so that seeds keep every option they had before they existed.
    fn recovery_from_seed(seed: SeedRng) -> (f64, f64) {
        let mut rng = seed.substream(Stream::Options, 3);
        let kill = swarm_probability(&mut rng, 0.4, 0.2, 0.6);
        let recovery = swarm_probability(&mut rng, 0.5, 0.3, 0.8);
        (kill, recovery)
    }

    /// The chance of silent corruption, from a sub-stream of its own so that seeds keep every
    /// option they had before it existed.
    fn corrupt_from_seed(seed: SeedRng) -> f64 {
        let mut rng = seed.substream(Stream::Options, 2);
        swarm_probability(&mut rng, 0.5, 0.3, 0.8)
    }

    /// The sizes of `seed`'s world, with every operation and fault off.
    fn sized_from_seed(seed: SeedRng) -> Self {
        // Sizes come from their own sub-stream, so adding a probability above does not change the
        // size of old seeds' worlds.
        let mut rng = seed.substream(Stream::Options, 1);
        let slow = rng.random_bool(0.4);
        let sessions = rng.random_range(1..=3);
        let ops_per_session = rng.random_range(6..=24);
        let load_step_records = rng.random_range(1..=4);
        let mirror_settle_ms = if slow { rng.random_range(1..=30) } else { 0 };
        JournalSimOptions {
            sessions,
            load_step_records,
            mirror_settle_ms,
            ..Self::quiet(ops_per_session)
        }
    }
}

crate::workload_items::options_display!(JournalSimOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload_items::switch_subsets;

    #[test]
    fn swarming_switches_different_subsets_on() {
        let options = (0..64).map(|s| JournalSimOptions::from_seed(SeedRng::new(s)));
        let subsets = switch_subsets(options, |o| {
            vec![
                o.replace_probability > 0.0,
                o.crash_probability > 0.0,
                o.shared_probability > 0.0,
                o.mirror_fail_probability > 0.0,
            ]
        });
        assert!(subsets > 8, "only {subsets} subsets");
    }

    #[test]
    fn printed_options_name_every_field() {
        let text = JournalSimOptions::quiet(3).to_string();
        assert!(text.contains("sessions = 1"));
        assert!(text.contains("crash_probability = off"));
    }
}
