//! A deletion's store calls as the client made them, in order: the reads right before it, the
//! deletion itself, the reads right after it, each with both stores' answers. One table per
//! kind of deletion (a run's, a thread's); R9 compares the answers call by call, R24 judges
//! their errors.

use super::wording::{answered, differ, row_seqs, Call};
use crate::outcome::Findings;
use crate::runs::record::{Answer, Both, DeletionAnswers, DeletionRecord, ThreadDeletionRecord};
use history::runs::RunEvent;
use history::BugId;

/// Both stores' answers to one call, by what the call answers.
pub(crate) enum Answers<'a> {
    /// How many rows the deletion removed.
    Deleted(&'a Both<Answer<u64>>),
    MaxSeq(&'a Both<Answer<u64>>),
    Count(&'a Both<Answer<u64>>),
    Rows(&'a Both<Answer<Vec<RunEvent>>>),
}

impl Answers<'_> {
    /// The two answers in words when they differ (the first store's, then sqlite's).
    fn apart(&self) -> Option<(String, String)> {
        match self {
            Answers::Deleted(both) => differ(both, |n| format!("{n} rows deleted")),
            Answers::MaxSeq(both) => differ(both, |n| format!("max_seq {n}")),
            Answers::Count(both) => differ(both, |n| format!("{n} rows")),
            Answers::Rows(both) => differ(both, |rows| row_seqs(rows)),
        }
    }
}

/// One deletion and the calls around it.
pub(crate) struct DeletionCalls<'a> {
    /// The deletion's store op (`delete_by_run`), what it deletes (`run`) and which (its id).
    pub(crate) call: &'static str,
    pub(crate) noun: &'static str,
    pub(crate) target: &'a str,
    pub(crate) op: u64,
    pub(crate) at: Call,
    /// Each call in order: its store op, `before` or `after` the deletion (empty: the
    /// deletion itself) and its answers.
    pub(crate) calls: Vec<(&'static str, &'static str, Answers<'a>)>,
    /// The deletion's own answer and the reads after it, for R9's wording.
    answers: &'a DeletionAnswers,
}

impl<'a> DeletionCalls<'a> {
    /// `delete_by_run`: `max_seq` before it, then `max_seq`, the run's events and its message
    /// rows after it.
    pub(crate) fn of_run(d: &'a DeletionRecord) -> Self {
        let a = &d.answers;
        DeletionCalls {
            call: "delete_by_run",
            noun: "run",
            target: &d.run_id,
            op: d.op,
            at: Call::deletion(d),
            calls: vec![
                ("max_seq", "before", Answers::MaxSeq(&d.max_seq_before)),
                ("delete_by_run", "", Answers::Deleted(&a.deleted)),
                ("max_seq", "after", Answers::MaxSeq(&a.max_seq_after)),
                ("list_events", "after", Answers::Rows(&a.events_after)),
                (
                    "list_messages_by_run",
                    "after",
                    Answers::Rows(&a.messages_after),
                ),
            ],
            answers: a,
        }
    }

    /// `delete_by_thread`, then the thread's `max_seq`, count, messages and its runs' events.
    pub(crate) fn of_thread(d: &'a ThreadDeletionRecord) -> Self {
        let a = &d.answers;
        DeletionCalls {
            call: "delete_by_thread",
            noun: "thread",
            target: &d.thread,
            op: d.op,
            at: Call::thread_deletion(d),
            calls: vec![
                ("delete_by_thread", "", Answers::Deleted(&a.deleted)),
                ("max_seq", "after", Answers::MaxSeq(&a.max_seq_after)),
                ("count_messages", "after", Answers::Count(&d.count_after)),
                ("list_messages", "after", Answers::Rows(&a.messages_after)),
                ("list_events", "after", Answers::Rows(&a.events_after)),
            ],
            answers: a,
        }
    }

    /// The deletion in words: `op 7: deleting run run-1`.
    pub(crate) fn what(&self) -> String {
        format!("op {}: deleting {} {}", self.op, self.noun, self.target)
    }

    /// R9: a finding at the first call the two stores answered apart, sqlite's answer beside
    /// the first store's, worded by what each store deleted and the numbering it kept (`slot`
    /// names the first store).
    pub(crate) fn answered_apart(&self, slot: &str, f: &mut Findings) {
        let apart = (self.calls.iter()).find_map(|(op, when, answers)| {
            let label = match *when {
                "" => op.to_string(),
                when => format!("{op} {when} {}", self.call),
            };
            Some((label, answers.apart()?))
        });
        let Some((label, (first, sqlite))) = apart else {
            return;
        };
        let pointer = self.at.answered(
            &label,
            &format!("the {slot} and sqlite stores"),
            format!("sqlite: {sqlite}"),
            format!("{first}, as the {slot} store answered"),
        );
        let (deleted, max_seq) = (&self.answers.deleted, &self.answers.max_seq_after);
        f.add_at(
            BugId::R9,
            pointer,
            format!(
                "op {}: {}({}): {slot} deleted {} (max_seq {}), sqlite deleted {} (max_seq {}), or their reads after differ",
                self.op,
                self.call,
                self.target,
                answered(&deleted.memory),
                answered(&max_seq.memory),
                answered(&deleted.sqlite),
                answered(&max_seq.sqlite)
            ),
        );
    }
}
