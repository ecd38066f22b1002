//! Where a display finding points: the first read whose answer departs from the model (its
//! request id, replica and simulated time, both answers' words from the first that differs) and
//! the trace lines it concerns (the read's answer, the deliveries of the steps it names).

use super::context::{Context, Read};
use super::view::{view_of_projection, words};
use crate::divergence::{Divergence, TraceMark};
use crate::outcome::Pointer;

/// What the client's request is called in a finding.
const OP: &str = "history read";

/// The mark of `read`'s answer line in the trace (`replica-2 answer turn=...`).
pub fn answer_mark(read: &Read) -> TraceMark {
    TraceMark::at(read.at_us, format!("replica-{} answer turn=", read.replica))
}

/// The marks of every trace line of step `step`: its emission, deliveries, persists and the
/// client's live copies.
pub fn step_mark(step: u32) -> TraceMark {
    TraceMark::any_time(format!("step={step} "))
}

/// `read` as the request a finding points at, answered `answered` where the model expects
/// `expected`.
pub fn at_read(read: &Read, answered: impl Into<String>, expected: impl Into<String>) -> Pointer {
    let d = Divergence::of(OP, read.op, read.at_us, format!("replica-{}", read.replica));
    Pointer::request(d.answers(answered, expected), answer_mark(read))
}

/// `read` as the request a finding points at, both answers' words (`` `w` (role) ``) trimmed
/// to the first that differs.
pub fn at_read_words(
    read: &Read,
    answered: &[(&'static str, String)],
    expected: &[(&'static str, String)],
) -> Pointer {
    let shown = |ws: &[(&'static str, String)]| -> Vec<String> {
        ws.iter().map(|(r, w)| format!("{w} ({r})")).collect()
    };
    let (a, e) = crate::divergence::trimmed_items(&shown(answered), &shown(expected));
    at_read(read, a, e)
}

/// The first read (in the world's order) whose answer departs from what the model expects of
/// it: a settled read from the settled history, an early read from the rows stored by then.
/// `None` when every read the model has an expectation for matches it.
pub fn first_departure(cx: &Context<'_>) -> Option<Pointer> {
    let mut reads: Vec<(usize, &Read)> = cx.reads.iter().enumerate().collect();
    reads.sort_by_key(|(_, r)| r.op);
    reads.into_iter().find_map(|(i, read)| {
        let expected = if read.settled {
            cx.expected.as_slice()
        } else {
            cx.early_expected.get(i)?.as_ref()?.shared.as_slice()
        };
        match &read.result {
            Err(e) => Some(at_read(read, format!("error {e}"), "the thread's history")),
            Ok(p) => {
                let answered = view_of_projection(&p.messages);
                (answered != expected).then(|| {
                    let (aw, ew) = (words(&answered), words(expected));
                    if aw == ew {
                        at_read(
                            read,
                            format!("{} messages", answered.len()),
                            format!("{} messages of the same words", expected.len()),
                        )
                    } else {
                        at_read_words(read, &aw, &ew)
                    }
                })
            }
        }
    })
}

/// The pointer of a finding about the settled history: the first departing read (the settled
/// answer when none departs earlier), and the trace lines of `steps`.
pub fn settled_pointer(cx: &Context<'_>, steps: &[u32]) -> Pointer {
    let mut pointer = cx
        .departure
        .get_or_init(|| first_departure(cx).unwrap_or_default())
        .clone();
    if pointer.divergence.is_none() {
        if let Some(read) = cx.settled.first() {
            pointer.marks.push(answer_mark(read));
        }
    }
    for step in steps {
        pointer = pointer.and(step_mark(*step));
    }
    pointer
}

/// With a system under test, the replicas a first wrong answer names (`replica-2`: a replica
/// the world runs on the system's process) named with the command the system runs as well
/// (``replica-2 (`python3 display.py`)``), as the runs workload names its stores.
pub fn name_the_system(violations: &mut [crate::outcome::Violation], command: &str) {
    crate::outcome::name_the_system(violations, command, is_replica);
}

/// Whether a first wrong answer's `by` names a replica (`replica-2`).
fn is_replica(by: &str) -> bool {
    by.strip_prefix("replica-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_is_named_replica_and_its_number() {
        assert!(is_replica("replica-2"));
        assert!(!is_replica("replica-"));
        assert!(!is_replica("the client merge"));
    }
}
