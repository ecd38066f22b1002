//! The store the journals write to: both backends, with a record of every accepted write.
//! Over the protocol the two stores are asked each write at once ([`ProtocolPair`]).

use super::state::*;
use super::system::ProtocolPair;
use crate::runs::observations::Observation;
use crate::runs::record::*;
use crate::workload::StoreKind;
use history::define_run_store_methods;
use history::runs::{FaultyRunStore, RunEvent, RunEventStore, RunStoreError};
use std::rc::Rc;

history::run_store_ops!(define_run_store_methods {$});

/// The store the journals write to: both backends, with a record of every accepted write.
pub(in crate::runs) struct Tap {
    pub(in crate::runs) world: Rc<World>,
}

impl Tap {
    pub(in crate::runs) fn accepted(&self, rows: Vec<RunEvent>, how: &str) {
        let op = self.world.next_op();
        if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
            self.world.record(format_args!(
                "{how} {} {} n={} seqs={}..{}",
                first.thread_id,
                first.run_id,
                rows.len(),
                first.seq,
                last.seq
            ));
        }
        let at_us = super::state::now_us();
        self.world.observe_all(
            (rows.into_iter().map(|event| Written { op, at_us, event })).map(Observation::Written),
        );
    }

    /// Rows the `sqlite` store acknowledged, with its own seqs: what must survive a crash of
    /// its host (kept only when the world crashes it).
    fn durable_acked(&self, rows: impl Iterator<Item = RunEvent>) {
        if self.world.scenario.store_crashes.is_empty() {
            return;
        }
        let (op, at_us) = (self.world.next_op(), super::state::now_us());
        self.world.observe_all(
            (rows.map(|event| Written { op, at_us, event })).map(Observation::DurableAcked),
        );
    }

    /// The last operation the world began: a journal's call belongs to no request of the
    /// client's, so its findings name the operation it came after.
    fn last_op_begun(&self) -> u64 {
        self.world.next_op.get().saturating_sub(1)
    }

    /// Keeps the errors the stores answered a journal-side call with, for R24 (the journals
    /// retry or give up on their own, so an error would otherwise leave no mark on the record):
    /// each with its time, the operation it came after and the run it wrote, one error both
    /// stores answered alike kept once.
    fn keep_errors<T>(
        &self,
        call: &'static str,
        run_id: Option<&str>,
        answers: &[(&'static str, &Result<T, RunStoreError>)],
    ) {
        let failed: Vec<(&str, &RunStoreError)> = answers
            .iter()
            .filter_map(|(slot, a)| a.as_ref().err().map(|e| (*slot, e)))
            .collect();
        let stores = match failed.as_slice() {
            [] => return,
            [(a, e), (b, f)] if e == f => vec![(format!("the {a} and {b} stores"), *e)],
            _ => (failed.iter())
                .map(|(slot, e)| (format!("the {slot} store"), *e))
                .collect(),
        };
        let (op, at_us) = (self.last_op_begun(), now_us());
        for (stores, e) in stores {
            let conflict = match e {
                RunStoreError::SeqConflict { .. } => true,
                RunStoreError::Answered { kind, .. } => kind == "conflict",
                _ => false,
            };
            self.world.observe(Observation::WriteError(WriteError {
                op,
                at_us,
                call,
                run_id: run_id.map(str::to_string),
                stores,
                conflict,
                message: e.to_string(),
            }));
        }
    }

    /// Both stores' answers to one call: sent to both at once over their [`ProtocolPair`]
    /// (`paired`) when they are systems under test, else asked of the `memory` store, then of
    /// the `sqlite` one (`each`).
    fn both_answer<T>(
        &self,
        paired: impl FnOnce(&ProtocolPair<'_>) -> (T, T),
        each: impl Fn(&dyn RunEventStore) -> T,
    ) -> (T, T) {
        let w = &self.world;
        match ProtocolPair::of(&w.suts) {
            Some(pair) => paired(&pair),
            None => (each(&*w.memory), each(&*w.sqlite)),
        }
    }

    /// Both stores' answers to a journal-side call (`label`: the call as the trace names it),
    /// their errors kept for R24 and, where they differ, the disagreement, each answer spoken
    /// by `words`.
    fn keep_both<T: PartialEq + std::fmt::Debug>(
        &self,
        (call, label): (&'static str, String),
        run_id: Option<&str>,
        (m, s): (&Result<T, RunStoreError>, &Result<T, RunStoreError>),
        words: impl Fn(&T) -> String,
    ) {
        let slot = self.world.first_slot;
        self.keep_errors(call, run_id, &[(slot, m), ("sqlite", s)]);
        if m != s {
            self.disagree(
                format!("{label}: {slot} {m:?}, sqlite {s:?}"),
                label,
                spoken(m, &words),
                spoken(s, &words),
            );
        }
    }

    /// Both stores' answers to a journal-side write `call` of run `run_id`, kept as
    /// [`Tap::keep_both`] keeps them; the rows the `sqlite` store acknowledged (`stored` by its
    /// answer) kept as durable, and those of the primary store's answer recorded as accepted,
    /// the trace naming them `how`. Answers the primary store's answer.
    fn both_wrote<T: PartialEq + std::fmt::Debug>(
        &self,
        (call, how, run_id): (&'static str, &str, Option<&str>),
        (m, s): (Result<T, RunStoreError>, Result<T, RunStoreError>),
        words: impl Fn(&T) -> String,
        stored: impl Fn(&T) -> Vec<RunEvent>,
    ) -> Result<T, RunStoreError> {
        self.keep_both((call, call.to_string()), run_id, (&m, &s), words);
        if let Ok(answer) = &s {
            self.durable_acked(stored(answer).into_iter());
        }
        let result = self.primary_of((m, s));
        if let Ok(answer) = &result {
            self.accepted(stored(answer), how);
        }
        result
    }

    /// Of both stores' answers (the first slot's, then sqlite's), the primary store's.
    fn primary_of<T>(&self, (m, s): (T, T)) -> T {
        match self.world.primary {
            StoreKind::Memory | StoreKind::Jsonl => m,
            StoreKind::Sqlite => s,
        }
    }

    /// The primary store's answer to a journal-side read, its error kept for R24.
    fn primary_read<T>(
        &self,
        call: &'static str,
        read: impl FnOnce(&dyn RunEventStore) -> Result<T, RunStoreError>,
    ) -> Result<T, RunStoreError> {
        let w = &self.world;
        let answer = read(w.store(w.primary));
        let slot = match w.primary {
            StoreKind::Memory | StoreKind::Jsonl => w.first_slot,
            StoreKind::Sqlite => "sqlite",
        };
        self.keep_errors(call, None, &[(slot, &answer)]);
        answer
    }

    /// Records that the two stores answered `call` differently: the trace line as it always
    /// read (`what`), and the answers in words for the finding.
    pub(in crate::runs) fn disagree(
        &self,
        what: String,
        call: String,
        first: String,
        sqlite: String,
    ) {
        let w = &self.world;
        w.record(format_args!("backends disagree: {what}"));
        w.observe(Observation::WriteDisagreement(WriteDisagreement {
            op: self.last_op_begun(),
            at_us: now_us(),
            call,
            first_slot: w.first_slot,
            first,
            sqlite,
        }));
    }
}

impl RunEventStore for Tap {
    run_store_methods! {
        fn put_batch(&self, events) {
            let answers = self.both_answer(
                |pair| pair.put_batch(events.clone()),
                |store| store.put_batch(events.clone()),
            );
            let stored = |seqs: &Vec<u64>| {
                (events.iter().zip(seqs))
                    .map(|(e, seq)| e.clone().with_seq(*seq))
                    .collect()
            };
            let run_id = events.first().map(|e| e.run_id.as_str());
            let words = |seqs: &Vec<u64>| seqs_words(seqs);
            self.both_wrote(("put_batch", "write", run_id), answers, words, stored)
        }

        fn insert_numbered(&self, events) {
            let answers = self.both_answer(
                |pair| pair.insert_numbered(events.clone()),
                |store| store.insert_numbered(events.clone()),
            );
            let run_id = events.first().map(|e| e.run_id.as_str());
            let call = ("insert_numbered", "write-numbered", run_id);
            self.both_wrote(call, answers, |()| "stored".to_string(), |()| events.clone())
        }

        fn max_seq(&self, thread_id) {
            let (m, s) = self.both_answer(
                |pair| pair.max_seq(thread_id),
                |store| store.max_seq(thread_id),
            );
            let call = ("max_seq", format!("max_seq({thread_id})"));
            self.keep_both(call, None, (&m, &s), u64::to_string);
            // The primary's answer, already asked (asking again is one more store call, one more
            // round trip over the protocol).
            self.primary_of((m, s))
        }

        fn list_messages(&self, thread_id, limit, cursor) {
            self.primary_read("list_messages", |s| {
                s.list_messages(thread_id, limit, cursor)
            })
        }

        fn count_messages(&self, thread_id) {
            self.primary_read("count_messages", |s| s.count_messages(thread_id))
        }

        fn list_events(&self, thread_id, run_id) {
            self.primary_read("list_events", |s| s.list_events(thread_id, run_id))
        }

        fn dump(&self) {
            self.primary_read("dump", |s| s.dump())
        }
    }
}

pub(in crate::runs) type JournalStore = FaultyRunStore<Tap>;

/// A store's answer in words: its value by `words`, or `error: ` and the error's own text.
fn spoken<T>(answer: &Result<T, RunStoreError>, words: impl Fn(&T) -> String) -> String {
    match answer {
        Ok(v) => words(v),
        Err(e) => format!("error: {e}"),
    }
}

/// The seqs a batch was given (`seqs 4, 5`).
fn seqs_words(seqs: &[u64]) -> String {
    let listed: Vec<String> = seqs.iter().map(u64::to_string).collect();
    format!("seqs {}", listed.join(", "))
}
