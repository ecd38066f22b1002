//! The state every host of the display world shares: the scenario and its fault plan, the
//! system under test, the trace, and what the world records for the checkers.

use super::faults::FaultPlan;
use super::record::{AppendError, Emitted, Read};
use super::scenario::DisplayScenario;
use super::system::{Delivered, DisplaySystem};
use super::view::SettledHistory;
use crate::sut::SutError;
use crate::trace::Trace;
use history::display::AgentIdentity;
use model::display as m;
use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::rc::Rc;

pub(super) struct Shared {
    pub(super) scenario: Rc<DisplayScenario>,
    /// The history the replicas must converge on, handed in from outside once every run
    /// emitted ([`super::world::World::settle_on`]); the world only polls until it is shown.
    pub(super) settled: OnceCell<SettledHistory>,
    pub(super) plan: Rc<FaultPlan>,
    pub(super) primary: AgentIdentity,
    pub(super) trace: RefCell<Trace>,
    pub(super) emissions: RefCell<Vec<Emitted>>,
    pub(super) reads: RefCell<Vec<Read>>,
    pub(super) next_event: Cell<u64>,
    pub(super) next_op: Cell<u64>,
    pub(super) first_stored: RefCell<BTreeMap<u32, u64>>,
    pub(super) first_received: RefCell<BTreeMap<(u8, u32), u64>>,
    pub(super) append_errors: RefCell<Vec<super::record::AppendError>>,
    pub(super) turns_done: Cell<u32>,
    pub(super) replicas_ready: Cell<u32>,
    /// Notified when `turns_done` or `replicas_ready` grows: the client waits on it.
    pub(super) progress: tokio::sync::Notify,
    pub(super) coverage: RefCell<crate::coverage::Coverage>,
    pub(super) converged_after_ms: Cell<Option<u64>>,
    /// The system under test: the replicas' persisters and request handlers.
    pub(super) system: RefCell<Box<dyn DisplaySystem>>,
    /// The known differences the system declares (docs/display-projection.md).
    pub(super) declared: m::Declared,
    /// The known differences an answer's trace event disregards (`histsim diff`: those either
    /// side declares), so two systems apart only by them show alike.
    pub(super) alike_up_to: m::Declared,
    /// The first protocol breach of a system in a child process: the world ends broken.
    pub(super) breach: RefCell<Option<SutError>>,
    /// Each display's bus subject ([`Shared::subject`]), by the scenario's display key: written
    /// once a world instead of once an emission.
    pub(super) subjects: BTreeMap<String, String>,
}

impl Shared {
    /// Keeps what replica `k`'s store made of a delivery (copy `copy` of `step`): the op that
    /// first received and first stored each step, and every error (P15). The outcome's word
    /// for the trace.
    pub(super) fn admitted(
        &self,
        k: u8,
        step: u32,
        copy: u8,
        admitted: Result<Delivered, String>,
    ) -> Cow<'static, str> {
        let op = self.next_op();
        self.first_received
            .borrow_mut()
            .entry((k, step))
            .or_insert(op);
        match admitted {
            Ok(Delivered::Stored) => {
                self.first_stored.borrow_mut().entry(step).or_insert(op);
                "stored".into()
            }
            Ok(Delivered::Quarantined) => "quarantined".into(),
            Err(message) => {
                let outcome = format!("error {message}");
                let error = AppendError {
                    op,
                    at_us: now_us(),
                    replica: k,
                    step,
                    copy,
                    message,
                };
                self.append_errors.borrow_mut().push(error);
                outcome.into()
            }
        }
    }

    /// Counts a replica listening or a turn played, and wakes the client to look.
    pub(super) fn progressed(&self, counter: &Cell<u32>) {
        counter.set(counter.get() + 1);
        self.progress.notify_one();
    }

    /// Waits until `done` holds; it is looked at again at each progress.
    pub(super) async fn until(&self, done: impl Fn(&Shared) -> bool) {
        while !done(self) {
            self.progress.notified().await;
        }
    }

    pub(super) fn next_op(&self) -> u64 {
        let op = self.next_op.get();
        self.next_op.set(op + 1);
        op
    }

    pub(super) fn record(&self, event: std::fmt::Arguments<'_>) {
        self.trace.borrow_mut().record(now_us(), event);
    }

    /// Records an event now that `write` appends to the line ([`Trace::record_with`]).
    pub(super) fn record_with(&self, write: impl FnOnce(&mut String)) {
        self.record_with_at(now_us(), write);
    }

    /// Records an event at `at_us` that `write` appends to the line ([`Trace::record_with`]).
    /// `at_us` is the simulated time a caller already read: several events of one step without
    /// an await between them share it (reading it costs a lookup of the current host in
    /// turmoil, 1.5 % of the display workload when every event read it).
    pub(super) fn record_with_at(&self, at_us: u64, write: impl FnOnce(&mut String)) {
        self.trace.borrow_mut().record_with(at_us, write);
    }

    /// Calls the system under test, records the exchanged lines in the trace, and turns a breach
    /// into `None` (kept as the world's failure; the caller stops).
    pub(super) fn call<T>(
        &self,
        f: impl FnOnce(&mut dyn DisplaySystem) -> Result<T, SutError>,
    ) -> Option<T> {
        let mut system = self.system.borrow_mut();
        let answer = f(system.as_mut());
        let lines = system.take_transcript();
        // Only a system over the protocol exchanges lines; the time is read only for them (a
        // read of turmoil's current host at every in-process call was 0.2 % of display).
        if !lines.is_empty() {
            let at_us = now_us();
            let mut trace = self.trace.borrow_mut();
            for line in lines {
                trace.record_text(at_us, "sut ", &line);
            }
        }
        match answer {
            Ok(a) => Some(a),
            Err(breach) => {
                self.breach.borrow_mut().get_or_insert(breach);
                None
            }
        }
    }

    pub(super) fn broken(&self) -> bool {
        self.breach.borrow().is_some()
    }

    /// The bus subject of the display the scenario names `display_key`:
    /// `display.{thread_id}.{display_id}`, an unknown key's display id empty.
    pub(super) fn subject(&self, display_key: &str) -> String {
        match self.subjects.get(display_key) {
            Some(subject) => subject.clone(),
            None => subject_of(&self.scenario.thread_id, ""),
        }
    }
}

fn subject_of(thread_id: &str, display_id: &str) -> String {
    format!("display.{thread_id}.{display_id}")
}

/// Every display's bus subject, by the scenario's display key.
pub(super) fn subjects(scenario: &DisplayScenario) -> BTreeMap<String, String> {
    (scenario.displays.iter())
        .map(|(key, id)| (key.clone(), subject_of(&scenario.thread_id, id)))
        .collect()
}

pub(super) fn now_us() -> u64 {
    turmoil::sim_elapsed()
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

pub(super) fn any_addr(port: u16) -> (IpAddr, u16) {
    (IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
}
