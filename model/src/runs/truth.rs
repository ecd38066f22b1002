//! The append-only truth of a thread's runs.
//!
//! Runs are recorded as they start, emit and stop; a logical clock orders starts and stops. The
//! history a client reads must hold, for every run, exactly the messages it emitted, in order
//! (only a prefix for a run that was killed or is still running: its buffer may not have been
//! written yet, R4), and a run that stopped before another started comes first.

use std::collections::BTreeMap;

/// The four message event types of seed 003.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MessageKind {
    /// `human_message`
    Human,
    /// `ai_tool_call`: an AI turn calling tools.
    AiToolCall,
    /// `ai_message`: the final AI text of a step.
    Ai,
    /// `tool_result`
    Tool,
}

impl MessageKind {
    /// The event type spelling.
    pub fn event_type(self) -> &'static str {
        match self {
            MessageKind::Human => "human_message",
            MessageKind::AiToolCall => "ai_tool_call",
            MessageKind::Ai => "ai_message",
            MessageKind::Tool => "tool_result",
        }
    }

    /// Parses an event type; `None` for non-message types.
    pub fn from_event_type(s: &str) -> Option<MessageKind> {
        [
            MessageKind::Human,
            MessageKind::AiToolCall,
            MessageKind::Ai,
            MessageKind::Tool,
        ]
        .into_iter()
        .find(|k| k.event_type() == s)
    }
}

/// One message as emitted (and as a client must see it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExpectedMessage {
    pub run_id: String,
    pub kind: MessageKind,
    /// The message text; generators make it unique per thread so a message can be identified.
    pub text: String,
}

impl ExpectedMessage {
    /// The message of `kind` saying `text` that run `run_id` emitted.
    pub fn new(run_id: &str, kind: MessageKind, text: &str) -> ExpectedMessage {
        ExpectedMessage {
            run_id: run_id.to_string(),
            kind,
            text: text.to_string(),
        }
    }
}

/// How a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RunOutcome {
    Running,
    Ended,
    Errored,
    Cancelled,
    /// Hard kill: the journal's buffer is lost, the stored messages are a prefix.
    Killed,
}

impl RunOutcome {
    /// Whether every emitted message must be stored.
    pub fn is_complete(self) -> bool {
        matches!(
            self,
            RunOutcome::Ended | RunOutcome::Errored | RunOutcome::Cancelled
        )
    }
}

#[derive(Clone, Debug)]
struct Run {
    run_id: String,
    started_at: u64,
    stopped_at: Option<u64>,
    outcome: RunOutcome,
    messages: Vec<(MessageKind, String)>,
}

/// The first way an observed history differs from the truth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HistoryMismatch {
    /// Observed message `index` names a run the thread never started.
    UnknownRun { index: usize, run_id: String },
    /// The run's messages, in observed order, are not what it emitted (or a prefix of it, for a
    /// killed or running run). `position` is the first differing position within the run.
    RunDiffers {
        run_id: String,
        position: usize,
        expected: Option<(MessageKind, String)>,
        observed: Option<(MessageKind, String)>,
    },
    /// A message of `later` (started after `earlier` stopped) comes before one of `earlier`.
    OutOfOrder { earlier: String, later: String },
}

/// The truth of every thread.
#[derive(Clone, Debug, Default)]
pub struct RunTruth {
    threads: BTreeMap<String, Vec<Run>>,
    /// Per thread, the runs deleted from the store (`delete_by_run`): gone from every read.
    deleted: BTreeMap<String, Vec<String>>,
    clock: u64,
}

impl RunTruth {
    pub fn new() -> RunTruth {
        RunTruth::default()
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn run_mut(&mut self, thread_id: &str, run_id: &str) -> &mut Run {
        self.threads
            .get_mut(thread_id)
            .and_then(|runs| runs.iter_mut().find(|r| r.run_id == run_id))
            .unwrap_or_else(|| panic!("run `{run_id}` of thread `{thread_id}` was never started"))
    }

    /// A run starts. Run ids are unique per thread.
    pub fn start_run(&mut self, thread_id: &str, run_id: &str) {
        let at = self.tick();
        let runs = self.threads.entry(thread_id.to_string()).or_default();
        assert!(
            runs.iter().all(|r| r.run_id != run_id),
            "run `{run_id}` started twice"
        );
        runs.push(Run {
            run_id: run_id.to_string(),
            started_at: at,
            stopped_at: None,
            outcome: RunOutcome::Running,
            messages: Vec::new(),
        });
    }

    /// A running run emits a message.
    pub fn emit(&mut self, thread_id: &str, run_id: &str, kind: MessageKind, text: &str) {
        let run = self.run_mut(thread_id, run_id);
        assert_eq!(
            run.outcome,
            RunOutcome::Running,
            "emit after the run stopped"
        );
        run.messages.push((kind, text.to_string()));
    }

    /// A running run stops.
    pub fn stop_run(&mut self, thread_id: &str, run_id: &str, outcome: RunOutcome) {
        assert_ne!(
            outcome,
            RunOutcome::Running,
            "stop_run needs a final outcome"
        );
        let at = self.tick();
        let run = self.run_mut(thread_id, run_id);
        assert_eq!(run.outcome, RunOutcome::Running, "run stopped twice");
        run.outcome = outcome;
        run.stopped_at = Some(at);
    }

    /// A stopped run is deleted from the store: from now on no read may show any of its
    /// messages, and the thread's history is the other runs' (it is no longer a run of the
    /// thread: a message of it is a message of an unknown run).
    pub fn delete_run(&mut self, thread_id: &str, run_id: &str) {
        let runs = self.threads.entry(thread_id.to_string()).or_default();
        if let Some(at) = runs.iter().position(|r| r.run_id == run_id) {
            assert_ne!(
                runs[at].outcome,
                RunOutcome::Running,
                "run `{run_id}` deleted while it runs"
            );
            runs.remove(at);
            self.deleted
                .entry(thread_id.to_string())
                .or_default()
                .push(run_id.to_string());
        }
    }

    /// Every run of the thread is deleted from the store at once (`delete_by_thread`), which
    /// leaves it empty: a new era begins, in which the thread has no run and no message until
    /// later runs start on it (their rows numbered from 1 again, which the model, never seeing
    /// a seq, need not know). Every run of the thread must have stopped.
    pub fn delete_thread(&mut self, thread_id: &str) {
        let runs: Vec<String> = self.runs(thread_id);
        for run_id in runs {
            self.delete_run(thread_id, &run_id);
        }
    }

    /// Whether a run of the thread was deleted.
    pub fn is_deleted(&self, thread_id: &str, run_id: &str) -> bool {
        self.deleted
            .get(thread_id)
            .is_some_and(|runs| runs.iter().any(|r| r == run_id))
    }

    /// Checks one run's messages as a per-run read returned them (in its order): exactly what
    /// the run emitted (a prefix of it while it runs or after a kill); nothing for a deleted or
    /// unknown run.
    pub fn check_run_messages(
        &self,
        thread_id: &str,
        run_id: &str,
        observed: &[(MessageKind, String)],
    ) -> Result<(), HistoryMismatch> {
        let run = self
            .threads
            .get(thread_id)
            .and_then(|runs| runs.iter().find(|r| r.run_id == run_id));
        match run {
            Some(run) => check_run(run, observed),
            None if observed.is_empty() => Ok(()),
            None => Err(HistoryMismatch::UnknownRun {
                index: 0,
                run_id: run_id.to_string(),
            }),
        }
    }

    /// How a run stopped (`None` for an unknown run).
    pub fn outcome(&self, thread_id: &str, run_id: &str) -> Option<RunOutcome> {
        self.threads
            .get(thread_id)?
            .iter()
            .find(|r| r.run_id == run_id)
            .map(|r| r.outcome)
    }

    /// Run ids of a thread in start order.
    pub fn runs(&self, thread_id: &str) -> Vec<String> {
        self.threads.get(thread_id).map_or_else(Vec::new, |runs| {
            runs.iter().map(|r| r.run_id.clone()).collect()
        })
    }

    /// Every message every run emitted, runs in start order, each run's messages in emission
    /// order. This is THE history when runs did not overlap and none was killed or is running;
    /// otherwise use [`RunTruth::check_history`].
    pub fn expected_history(&self, thread_id: &str) -> Vec<ExpectedMessage> {
        let Some(runs) = self.threads.get(thread_id) else {
            return Vec::new();
        };
        runs.iter()
            .flat_map(|r| {
                (r.messages.iter()).map(|(kind, text)| ExpectedMessage::new(&r.run_id, *kind, text))
            })
            .collect()
    }

    /// The run a rating of the message at `rendered_index` of the expected history must target.
    pub fn rating_target(&self, thread_id: &str, rendered_index: usize) -> Option<String> {
        self.expected_history(thread_id)
            .get(rendered_index)
            .map(|m| m.run_id.clone())
    }

    /// The run that emitted the message with this text (texts are unique per thread).
    pub fn run_emitting(&self, thread_id: &str, text: &str) -> Option<String> {
        self.threads
            .get(thread_id)?
            .iter()
            .find(|r| r.messages.iter().any(|(_, t)| t == text))
            .map(|r| r.run_id.clone())
    }

    /// Every message text of the thread, with the run that emitted it: [`Self::run_emitting`]
    /// for each text at once, for a check that names the runs of a whole read.
    pub fn emitters(&self, thread_id: &str) -> BTreeMap<&str, &str> {
        let mut by_text = BTreeMap::new();
        for r in self.threads.get(thread_id).map_or(&[][..], Vec::as_slice) {
            for (_, text) in &r.messages {
                // The first run wins, as in `run_emitting`'s search.
                by_text.entry(text.as_str()).or_insert(r.run_id.as_str());
            }
        }
        by_text
    }

    /// The truth of one thread as a read scoped to some runs sees it (R19: a user-scoped read
    /// sees the runs acting for that user, and no other): only the thread's runs that `keep`
    /// admits, with their messages, outcomes and order. Other threads are left out.
    pub fn restricted_to(&self, thread_id: &str, keep: impl Fn(&str) -> bool) -> RunTruth {
        let runs: Vec<Run> = self
            .threads
            .get(thread_id)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(|r| keep(&r.run_id))
            .cloned()
            .collect();
        RunTruth {
            threads: BTreeMap::from([(thread_id.to_string(), runs)]),
            deleted: BTreeMap::new(),
            clock: self.clock,
        }
    }

    /// Checks an observed history (what a view returned, in its order) against the truth.
    pub fn check_history(
        &self,
        thread_id: &str,
        observed: &[ExpectedMessage],
    ) -> Result<(), HistoryMismatch> {
        let empty = Vec::new();
        let runs = self.threads.get(thread_id).unwrap_or(&empty);
        let mut per_run: BTreeMap<&str, Vec<(MessageKind, String)>> = BTreeMap::new();
        for (index, m) in observed.iter().enumerate() {
            if !runs.iter().any(|r| r.run_id == m.run_id) {
                return Err(HistoryMismatch::UnknownRun {
                    index,
                    run_id: m.run_id.clone(),
                });
            }
            per_run
                .entry(&m.run_id)
                .or_default()
                .push((m.kind, m.text.clone()));
        }
        for run in runs {
            let seen = per_run
                .get(run.run_id.as_str())
                .map_or(&[][..], Vec::as_slice);
            check_run(run, seen)?;
        }
        check_order(runs, observed)
    }
}

fn check_run(run: &Run, seen: &[(MessageKind, String)]) -> Result<(), HistoryMismatch> {
    let prefix_ok = !run.outcome.is_complete();
    let differs = |position: usize| HistoryMismatch::RunDiffers {
        run_id: run.run_id.clone(),
        position,
        expected: run.messages.get(position).cloned(),
        observed: seen.get(position).cloned(),
    };
    if let Some(p) = (0..seen.len().min(run.messages.len())).find(|&i| seen[i] != run.messages[i]) {
        return Err(differs(p));
    }
    if seen.len() > run.messages.len() || (seen.len() < run.messages.len() && !prefix_ok) {
        return Err(differs(seen.len().min(run.messages.len())));
    }
    Ok(())
}

fn check_order(runs: &[Run], observed: &[ExpectedMessage]) -> Result<(), HistoryMismatch> {
    // (first, last) observed position of each run.
    let mut span: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (i, m) in observed.iter().enumerate() {
        span.entry(&m.run_id).or_insert((i, i)).1 = i;
    }
    for a in runs {
        let (Some(stopped), Some(&(_, a_last))) = (a.stopped_at, span.get(a.run_id.as_str()))
        else {
            continue;
        };
        for b in runs.iter().filter(|b| b.started_at > stopped) {
            if let Some(&(b_first, _)) = span.get(b.run_id.as_str()) {
                if b_first < a_last {
                    return Err(HistoryMismatch::OutOfOrder {
                        earlier: a.run_id.clone(),
                        later: b.run_id.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_runs() -> RunTruth {
        let mut t = RunTruth::new();
        t.start_run("t", "r1");
        t.emit("t", "r1", MessageKind::Human, "q1");
        t.emit("t", "r1", MessageKind::AiToolCall, "call");
        t.emit("t", "r1", MessageKind::Tool, "res");
        t.emit("t", "r1", MessageKind::Ai, "a1");
        t.stop_run("t", "r1", RunOutcome::Ended);
        t.start_run("t", "r2");
        t.emit("t", "r2", MessageKind::Human, "q2");
        t.emit("t", "r2", MessageKind::Ai, "a2");
        t
    }

    #[test]
    fn a_scoped_read_sees_the_admitted_runs_only() {
        let t = two_runs().restricted_to("t", |run| run == "r2");
        let r2 = [
            ExpectedMessage::new("r2", MessageKind::Human, "q2"),
            ExpectedMessage::new("r2", MessageKind::Ai, "a2"),
        ];
        assert_eq!(t.check_history("t", &r2), Ok(()));
        assert_eq!(t.check_history("t", &[]), Ok(()), "r2 still runs: a prefix");
        let with_r1 = [
            ExpectedMessage::new("r1", MessageKind::Human, "q1"),
            r2[0].clone(),
        ];
        assert_eq!(
            t.check_history("t", &with_r1),
            Err(HistoryMismatch::UnknownRun {
                index: 0,
                run_id: "r1".into()
            })
        );
        let none = two_runs().restricted_to("t", |_| false);
        assert_eq!(none.check_history("t", &[]), Ok(()));
        assert!(none.check_history("t", &r2[..1]).is_err());
    }

    #[test]
    fn the_expected_history_is_every_message_in_order() {
        let mut t = two_runs();
        t.stop_run("t", "r2", RunOutcome::Errored);
        let h = t.expected_history("t");
        assert_eq!(h.len(), 6);
        assert_eq!(h[4], ExpectedMessage::new("r2", MessageKind::Human, "q2"));
        assert_eq!(t.check_history("t", &h), Ok(()));
        assert_eq!(t.rating_target("t", 3).as_deref(), Some("r1"));
        assert_eq!(t.rating_target("t", 5).as_deref(), Some("r2"));
        assert_eq!(t.run_emitting("t", "a2").as_deref(), Some("r2"));
        let emitters = t.emitters("t");
        assert_eq!(emitters.len(), 6, "{emitters:?}");
        for (text, run) in &emitters {
            assert_eq!(t.run_emitting("t", text).as_deref(), Some(*run));
        }
        assert!(t.emitters("elsewhere").is_empty());
    }

    #[test]
    fn a_complete_run_must_be_whole_a_killed_one_a_prefix() {
        let mut t = two_runs();
        let h = t.expected_history("t");
        // r2 still running: a prefix is fine.
        assert_eq!(t.check_history("t", &h[..5]), Ok(()));
        t.stop_run("t", "r2", RunOutcome::Killed);
        assert_eq!(t.check_history("t", &h[..4]), Ok(()));
        // r1 ended: dropping its first message is not.
        assert!(matches!(
            t.check_history("t", &h[1..]),
            Err(HistoryMismatch::RunDiffers { position: 0, .. })
        ));
    }

    #[test]
    fn runs_that_did_not_overlap_keep_their_order() {
        let mut t = two_runs();
        t.stop_run("t", "r2", RunOutcome::Ended);
        let mut h = t.expected_history("t");
        h.swap(3, 4);
        assert!(matches!(
            t.check_history("t", &h),
            Err(HistoryMismatch::OutOfOrder { .. })
        ));
        let stranger = vec![ExpectedMessage::new("r9", MessageKind::Ai, "x")];
        assert!(matches!(
            t.check_history("t", &stranger),
            Err(HistoryMismatch::UnknownRun { index: 0, .. })
        ));
    }

    #[test]
    fn a_deleted_run_leaves_every_read() {
        let mut t = two_runs();
        t.stop_run("t", "r2", RunOutcome::Ended);
        let before = t.expected_history("t");
        t.delete_run("t", "r1");
        assert!(t.is_deleted("t", "r1"));
        assert_eq!(t.expected_history("t"), before[4..].to_vec());
        assert!(matches!(
            t.check_history("t", &before),
            Err(HistoryMismatch::UnknownRun { index: 0, .. })
        ));
        assert_eq!(t.check_run_messages("t", "r1", &[]), Ok(()));
        let r2 = [(MessageKind::Human, "q2".to_string())];
        assert!(
            t.check_run_messages("t", "r2", &r2).is_err(),
            "r2 ended: whole"
        );
        let whole = [r2[0].clone(), (MessageKind::Ai, "a2".to_string())];
        assert_eq!(t.check_run_messages("t", "r2", &whole), Ok(()));
    }

    #[test]
    fn a_deleted_thread_starts_a_new_era() {
        let mut t = two_runs();
        t.stop_run("t", "r2", RunOutcome::Cancelled);
        t.start_run("u", "other");
        t.delete_thread("t");
        assert!(t.is_deleted("t", "r1") && t.is_deleted("t", "r2"));
        assert!(t.expected_history("t").is_empty());
        assert_eq!(t.check_history("t", &[]), Ok(()));
        assert_eq!(
            t.runs("u"),
            vec!["other".to_string()],
            "other threads keep theirs"
        );
        t.start_run("t", "r3");
        t.emit("t", "r3", MessageKind::Human, "q3");
        t.stop_run("t", "r3", RunOutcome::Ended);
        let h = t.expected_history("t");
        assert_eq!(
            h,
            vec![ExpectedMessage::new("r3", MessageKind::Human, "q3")]
        );
        assert_eq!(t.check_history("t", &h), Ok(()));
        let old = [
            ExpectedMessage::new("r1", MessageKind::Human, "q1"),
            h[0].clone(),
        ];
        assert!(matches!(
            t.check_history("t", &old),
            Err(HistoryMismatch::UnknownRun { index: 0, .. })
        ));
    }

    #[test]
    #[should_panic(expected = "deleted while it runs")]
    fn a_thread_with_a_running_run_is_not_deleted() {
        two_runs().delete_thread("t");
    }

    #[test]
    fn overlapping_runs_may_interleave() {
        let mut t = RunTruth::new();
        t.start_run("t", "a");
        t.start_run("t", "b");
        t.emit("t", "a", MessageKind::Human, "a1");
        t.emit("t", "b", MessageKind::Human, "b1");
        t.emit("t", "a", MessageKind::Ai, "a2");
        t.stop_run("t", "a", RunOutcome::Ended);
        t.stop_run("t", "b", RunOutcome::Ended);
        let observed = vec![
            ExpectedMessage::new("b", MessageKind::Human, "b1"),
            ExpectedMessage::new("a", MessageKind::Human, "a1"),
            ExpectedMessage::new("a", MessageKind::Ai, "a2"),
        ];
        assert_eq!(t.check_history("t", &observed), Ok(()));
    }
}
