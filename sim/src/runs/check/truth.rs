//! Ground truth -> model: the world's log of what runs did (starts, messages, stops, in one order
//! with the store operations) replayed into [`model::runs::RunTruth`] as of any instant.
//!
//! The model never sees a stored row: only what the workers emitted and how their runs stopped.

use crate::runs::record::TruthEvent;
use crate::runs::scenario::RunsScenario;
use model::runs::RunTruth;

/// The truth as of successive instants (ops must not go back).
pub struct Snapshots<'a> {
    scenario: &'a RunsScenario,
    events: &'a [(u64, usize, TruthEvent)],
    next: usize,
    truth: RunTruth,
}

impl<'a> Snapshots<'a> {
    pub fn new(scenario: &'a RunsScenario, events: &'a [(u64, usize, TruthEvent)]) -> Self {
        Snapshots {
            scenario,
            events,
            next: 0,
            truth: RunTruth::new(),
        }
    }

    /// The truth of everything that happened before operation `op`.
    pub fn before(&mut self, op: u64) -> &RunTruth {
        while let Some((at, run, event)) = self.events.get(self.next) {
            if *at >= op {
                break;
            }
            let spec = &self.scenario.runs[*run];
            let thread = self
                .scenario
                .threads
                .get(&spec.thread)
                .map(String::as_str)
                .unwrap_or("");
            match event {
                TruthEvent::Start => self.truth.start_run(thread, &spec.id),
                TruthEvent::Message { kind, text } => {
                    self.truth.emit(thread, &spec.id, *kind, text)
                }
                TruthEvent::Stop(outcome) => self.truth.stop_run(thread, &spec.id, *outcome),
                TruthEvent::Deleted => self.truth.delete_run(thread, &spec.id),
                TruthEvent::ThreadDeleted => self.truth.delete_thread(thread),
            }
            self.next += 1;
        }
        &self.truth
    }

    /// The truth at the end of the world.
    pub fn at_end(&mut self) -> &RunTruth {
        self.before(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::scenario::tests::on_one_thread;
    use crate::runs::scenario::RunSpec;
    use model::runs::{MessageKind, RunOutcome};

    #[test]
    fn snapshots_replay_only_what_happened_before() {
        let scenario = RunsScenario {
            flush_threshold_events: 1,
            ..on_one_thread(
                "tid",
                vec![RunSpec::plain("r", "t", Vec::new())],
                Vec::new(),
            )
        };
        let events = vec![
            (0, 0, TruthEvent::Start),
            (
                2,
                0,
                TruthEvent::Message {
                    kind: MessageKind::Human,
                    text: "q".into(),
                },
            ),
            (5, 0, TruthEvent::Stop(RunOutcome::Ended)),
        ];
        let mut s = Snapshots::new(&scenario, &events);
        assert_eq!(s.before(1).expected_history("tid").len(), 0);
        assert_eq!(s.before(3).outcome("tid", "r"), Some(RunOutcome::Running));
        assert_eq!(s.at_end().outcome("tid", "r"), Some(RunOutcome::Ended));
        assert_eq!(s.at_end().expected_history("tid").len(), 1);
    }
}
