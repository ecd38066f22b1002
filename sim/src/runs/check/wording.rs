//! How the runs rules word what they saw: a read's place and simulated time, absent values,
//! lists and answers, the way a user of the store reads them (never Rust's debug form).

use super::context::Context;
use crate::divergence::{Divergence, TraceMark};
use crate::outcome::{Findings, Pointer};
use crate::runs::record::{
    Answer, Both, DeletionRecord, LateWriteRecord, Read, ReadKind, ReceiptRecord,
    ThreadDeletionRecord, WriteRecord,
};
use crate::workload::StoreKind;
use history::runs::MessageCursor;
use history::BugId;
use std::fmt::{self, Display};

/// When a read was made, as a message names it: its place in the world's order of operations
/// and its simulated time, spelt as the trace stamps its lines (`3000us`) so that the read's
/// line is found in `replay --trace`.
pub(crate) fn when(read: &Read) -> String {
    format!("op {} at {}us", read.op, read.at_us)
}

/// A read as the rules name it: in words (`op 12 at 3000us`, [`when`]), and as the request a
/// finding points at (its op as the trace names it, its place in the world's order, its time,
/// the store the client reads) with the mark of its trace line.
pub(crate) struct Asked {
    words: String,
    request: Divergence,
    mark: TraceMark,
}

impl Asked {
    pub(crate) fn of(cx: &Context<'_>, read: &Read) -> Self {
        let run = |r: usize| cx.scenario.runs.get(r).map_or("", |r| r.id.as_str());
        let t = &read.thread;
        // The words that open the read's line in the trace (`sim/src/runs/play/client.rs` and the
        // `*_calls.rs` beside it), up to where its answer begins.
        let (op, line) = match &read.kind {
            ReadKind::Views { .. } => ("views", format!("views {t} count=")),
            ReadKind::Page { .. } => ("page", format!("page {t} limit=")),
            ReadKind::Paginate { .. } => ("paginate", format!("paginate {t} limit=")),
            ReadKind::Events { run: r, .. } => ("events", format!("events {} rows=", run(*r))),
            ReadKind::RunMessages { run: r, .. } => {
                ("run messages", format!("run messages {} limit=", run(*r)))
            }
            ReadKind::FilteredEvents { run: r, .. } => (
                "filtered events",
                format!("filtered events {} types=", run(*r)),
            ),
            ReadKind::UserMessages { .. } => ("user messages", format!("user messages {t} as ")),
            ReadKind::LastAnswers { .. } => ("last answers", format!("last answers {t}: ")),
            ReadKind::DefaultScopeMessages { run: r, .. } => (
                "default-scope messages",
                format!("default-scope messages {t} for {} ", run(*r)),
            ),
        };
        let by = client_store(cx);
        Asked {
            words: when(read),
            request: Divergence::of(op, read.op, read.at_us, by),
            mark: TraceMark::at(read.at_us, line),
        }
    }

    /// This read, its finding about one call of it (`/history` of `views`).
    pub(crate) fn on(&self, call: &str) -> Self {
        let mut request = self.request.clone();
        request.op = format!("{} {call}", request.op);
        Asked {
            words: self.words.clone(),
            request,
            mark: self.mark.clone(),
        }
    }

    /// This read named in other words (its op and time among them, [`when`]).
    pub(crate) fn saying(self, words: String) -> Self {
        Asked { words, ..self }
    }

    /// The finding's pointer: this request, answered `answered` where the model expects
    /// `expected`.
    pub(crate) fn answers(
        &self,
        answered: impl Into<String>,
        expected: impl Into<String>,
    ) -> Pointer {
        Pointer::request(
            self.request.clone().answers(answered, expected),
            self.mark.clone(),
        )
    }

    /// Whether the read returned a number of rows (`returned`, in `unit`s) other than the
    /// count `count_messages` gave (`count`); if so, a finding of `id` in the words `why` makes
    /// of both numbers.
    pub(crate) fn count_differs(
        &self,
        id: BugId,
        unit: &str,
        (returned, count): (usize, u64),
        why: impl FnOnce(usize, u64) -> String,
        f: &mut Findings,
    ) -> bool {
        if returned as u64 == count {
            return false;
        }
        f.add_at(
            id,
            self.answers(
                format!("{returned} {unit}"),
                format!("{count} {unit} (count_messages)"),
            ),
            why(returned, count),
        );
        true
    }
}

impl Display for Asked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words)
    }
}

/// The store the client reads, in words: `the memory store`.
pub(crate) fn client_store(cx: &Context<'_>) -> String {
    match cx.primary {
        StoreKind::Sqlite => "the sqlite store".to_string(),
        StoreKind::Memory | StoreKind::Jsonl => format!("the {} store", cx.record.first_slot),
    }
}

/// A write (`op`, at `at_us`) as the request a finding points at: the rows of a run that `by`
/// accepted, its trace lines marked (`write {thread_id} {run_id} n=...`, or a receipt's
/// `receipt {run_id} attempt ...`).
pub(crate) fn at_write(
    w: &crate::runs::record::Written,
    by: String,
    answered: impl Into<String>,
    expected: impl Into<String>,
) -> Pointer {
    let e = &w.event;
    let d = Divergence::of("write", w.op, w.at_us, by).answers(answered, expected);
    let written = TraceMark::at(w.at_us, format!(" {} {} n=", e.thread_id, e.run_id));
    let receipt = TraceMark::at(w.at_us, format!("receipt {} attempt", e.run_id));
    Pointer::request(d, written).and(receipt)
}

/// A rating as the request a finding points at: the run it went to beside the run that produced
/// the rated message, its trace line (`rate {thread} ...`) marked.
pub(crate) fn at_rating(r: &crate::runs::record::RatingRecord, expected: &str) -> Pointer {
    let d = Divergence::of("rate", r.op, r.at_us, "the client's run mapping").answers(
        format!("run {}", or_none(r.client.as_ref())),
        format!("run {expected}"),
    );
    Pointer::request(d, TraceMark::at(r.at_us, format!("rate {} ", r.thread)))
}

/// A call of the client's that is not a read (a deletion, a receipt) as the request a finding
/// points at: its place in the world's order, its time and what marks its trace line
/// (`delete run-1: `, `receipt run-1 attempt`).
pub(crate) struct Call {
    pub(crate) op: u64,
    pub(crate) at_us: u64,
    pub(crate) mark: String,
}

impl Call {
    /// The finding's pointer: `call` (the store op whose answer departed: the call itself, or a
    /// read the client made right after it) answered by `by`, both answers beside each other.
    pub(crate) fn answered(
        &self,
        call: &str,
        by: &str,
        answered: impl Into<String>,
        expected: impl Into<String>,
    ) -> Pointer {
        let d = Divergence::of(call, self.op, self.at_us, by).answers(answered, expected);
        Pointer::request(d, TraceMark::at(self.at_us, self.mark.clone()))
    }
}

impl Call {
    /// A `delete_by_run`, its trace line `delete {run}: ...`.
    pub(crate) fn deletion(d: &DeletionRecord) -> Self {
        Call {
            op: d.op,
            at_us: d.at_us,
            mark: format!("delete {}: ", d.run_id),
        }
    }

    /// A `put_if_absent` of a run's receipt, its trace line `receipt {run} attempt ...`.
    pub(crate) fn receipt(r: &ReceiptRecord) -> Self {
        Call::write(r, format!("receipt {} attempt", r.event.run_id))
    }

    /// A late write of a run, its trace line `late write {run}: ...`.
    pub(crate) fn late_write(w: &LateWriteRecord) -> Self {
        Call::write(w, format!("late write {}: ", w.event.run_id))
    }

    /// A write of a run's event, its trace line opening with `mark`.
    fn write<T>(w: &WriteRecord<T>, mark: String) -> Self {
        Call {
            op: w.op,
            at_us: w.at_us,
            mark,
        }
    }

    /// A `delete_by_thread`, its trace line `delete thread {thread}: ...`.
    pub(crate) fn thread_deletion(d: &ThreadDeletionRecord) -> Self {
        Call {
            op: d.op,
            at_us: d.at_us,
            mark: format!("delete thread {}: ", d.thread),
        }
    }
}

/// A call's two answers when they differ (R9), as a user reads them: the first store's, then
/// sqlite's; `None` when both stores answered alike.
pub(crate) fn differ<T>(
    both: &Both<Answer<T>>,
    say: impl Fn(&T) -> String,
) -> Option<(String, String)> {
    let word = |a: &Answer<T>| match a {
        Ok(v) => say(v),
        Err(e) => format!("error {e}"),
    };
    (!both.agree()).then(|| (word(&both.memory), word(&both.sqlite)))
}

/// Rows as R9 compares them: `3 rows, seqs 4, 5, 6`.
pub(crate) fn row_seqs(rows: &[history::runs::RunEvent]) -> String {
    format!(
        "{} rows, seqs {}",
        rows.len(),
        listed(rows.iter().map(|r| r.seq))
    )
}

/// With a system under test, the instances a first wrong answer names (`the memory store`,
/// `the memory and sqlite stores`: the system's processes opened as `memory` and `sqlite`)
/// named with the command they run (``the memory store (`python3 store.py`)``). Histsim's own
/// parts (its feedback store, the client's run mapping, the summarization middleware) are
/// left as they are.
pub(crate) fn name_the_system(violations: &mut [crate::outcome::Violation], command: &str) {
    crate::outcome::name_the_system(violations, command, of_the_system);
}

/// Whether a first wrong answer's `by` names the system's stores.
fn of_the_system(by: &str) -> bool {
    let stores = by.strip_prefix("the ").and_then(|b| {
        b.strip_suffix(" stores")
            .or_else(|| b.strip_suffix(" store"))
    });
    stores.is_some_and(|s| {
        s.split(" and ")
            .all(|slot| ["memory", "jsonl", "sqlite"].contains(&slot))
    })
}

/// Two stores' answers apart (R9), as the rules word them (`count_messages(t0): jsonl 0 vs
/// sqlite 12`): the sqlite store's answer, then the other store's, which it must equal.
pub(crate) fn apart(message: &str) -> (String, String) {
    let split = message
        .split_once(": ")
        .and_then(|(what, pair)| Some((what, pair.split_once(" vs ")?)));
    match split {
        Some((what, (first, sqlite))) => (
            format!("{what}: {sqlite}"),
            format!("{what}: {first}, as the other store answered"),
        ),
        None => (
            message.to_string(),
            "the same answer from both stores".to_string(),
        ),
    }
}

/// A value as a user reads it, `none` when absent.
pub(crate) fn or_none<T: Display>(value: Option<T>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// Items as a comma list, `none` when there is none.
pub(crate) fn listed<T: Display>(items: impl IntoIterator<Item = T>) -> String {
    let words: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    if words.is_empty() {
        "none".to_string()
    } else {
        words.join(", ")
    }
}

/// An answer as a user reads it: its value, or the error it failed with.
pub(crate) fn answered<T: Display>(answer: &Answer<T>) -> String {
    match answer {
        Ok(value) => value.to_string(),
        Err(e) => format!("error {e}"),
    }
}

/// The pair's answers, each with the stores that gave it: one answer named `the memory and
/// sqlite stores` when both gave it, else each with its own store (`the sqlite store`). A
/// finding about an answer both stores gave is then said once, on one line.
pub(crate) fn alike<'a, T>(both: &'a Both<T>, first_slot: &str) -> Vec<(String, &'a T)> {
    if both.agree() {
        vec![(format!("the {first_slot} and sqlite stores"), &both.memory)]
    } else {
        vec![
            (format!("the {first_slot} store"), &both.memory),
            ("the sqlite store".to_string(), &both.sqlite),
        ]
    }
}

/// A message cursor as the store's parameters spell it.
pub(crate) fn cursor(cursor: &MessageCursor) -> String {
    match cursor {
        MessageCursor::None => "the latest".to_string(),
        MessageCursor::Before(b) => format!("before {b}"),
        MessageCursor::After(a) => format!("after {a}"),
        MessageCursor::Both { before, after } => format!("after {after} before {before}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_is_its_stores() {
        assert!(of_the_system("the memory and sqlite stores"));
        assert!(of_the_system("the sqlite store"));
        assert!(of_the_system("the jsonl store"));
        assert!(!of_the_system("the feedback store"));
        assert!(!of_the_system("the client's run mapping"));
    }

    #[test]
    fn values_read_as_words_not_rust() {
        assert_eq!(or_none(None::<u64>), "none");
        assert_eq!(or_none(Some("user-1")), "user-1");
        assert_eq!(listed(["a", "b"]), "a, b");
        assert_eq!(listed(Vec::<u64>::new()), "none");
        assert_eq!(answered::<u64>(&Err("boom".into())), "error boom");
        let both = history::runs::MessageCursor::Both {
            before: 100,
            after: 1,
        };
        assert_eq!(cursor(&both), "after 1 before 100");
        let same = Both::new(3_u64, 3);
        let stores: Vec<String> = alike(&same, "jsonl").into_iter().map(|s| s.0).collect();
        assert_eq!(stores, ["the jsonl and sqlite stores"]);
        let apart = Both::new(3_u64, 4);
        let stores: Vec<String> = alike(&apart, "memory").into_iter().map(|s| s.0).collect();
        assert_eq!(stores, ["the memory store", "the sqlite store"]);
    }
}
