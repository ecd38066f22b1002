//! The step of a session a journal finding is about (an operation, a restart after a crash, a
//! process start), named as a request so that a violation shows its first wrong answer: the
//! step's kind, its index in the session's script, its simulated time and whose answer it was,
//! with the mark of its trace line.

use crate::divergence::{Divergence, TraceMark};
use crate::outcome::Pointer;
use std::fmt;

/// One step of a session, as its findings name it.
#[derive(Clone, Debug)]
pub struct Step {
    /// The opening of every message about it: `session 0 op 3 (append)`.
    words: String,
    request: Divergence,
    mark: TraceMark,
}

impl Step {
    /// Operation `k` (of kind `kind`, as the trace spells it) of session `s`, answered at
    /// `at_us`: its trace line is `s{s} p{n} op {k} {kind} ...`.
    pub fn op(s: usize, k: usize, kind: &str, at_us: u64) -> Step {
        let by = match kind {
            "shared" | "attach_mirror" | "shared_resume" => "shared history",
            _ => "journal",
        };
        Step {
            words: format!("session {s} op {k} ({kind})"),
            request: Divergence::of(kind, k as u64, at_us, format!("session {s}'s {by}")),
            mark: TraceMark::at(at_us, format!("op {k} {kind}")),
        }
    }

    /// The restart of session `s` after the crash at op `crashed`: the reopen and resume of
    /// `journal` (its trace line `s{s} resume {journal} ...`), or of the shared history.
    pub fn restart(s: usize, crashed: usize, journal: &str, at_us: u64) -> Step {
        Step {
            words: format!("session {s} after a crash"),
            request: Divergence::of(
                format!("resume {journal} after the crash at op {crashed}"),
                crashed as u64,
                at_us,
                format!("session {s}'s restarted process"),
            ),
            mark: TraceMark::at(at_us, format!("s{s} resume ")),
        }
    }

    /// The shared history of session `s` resumed: after the crash at op `crashed`, or on
    /// purpose by op `crashed` itself (`shared_resume`).
    pub fn shared_restart(s: usize, crashed: Option<usize>, k: usize, at_us: u64) -> Step {
        let (words, op) = match crashed {
            Some(c) => (
                format!("session {s} after a crash"),
                format!("shared resume after the crash at op {c}"),
            ),
            None => (
                format!("session {s} shared resume"),
                "shared_resume".to_string(),
            ),
        };
        Step {
            words,
            request: Divergence::of(op, k as u64, at_us, format!("session {s}'s shared history")),
            mark: TraceMark::at(at_us, format!("s{s} shared resume")),
        }
    }

    /// Process `incarnation` of session `s` starting at `at_us` (its trace line
    /// `s{s} p{incarnation} start ...`).
    pub fn start(s: usize, incarnation: u32, at_us: u64) -> Step {
        Step {
            words: format!("session {s}: process p{incarnation}"),
            request: Divergence::of(
                "process start",
                u64::from(incarnation),
                at_us,
                format!("session {s}'s process p{incarnation}"),
            ),
            mark: TraceMark::at(at_us, format!("s{s} p{incarnation} start")),
        }
    }

    /// This step with other opening words (its trace line and request kept).
    pub fn saying(self, words: impl Into<String>) -> Step {
        Step {
            words: words.into(),
            ..self
        }
    }

    /// The finding's pointer: this step answered `answered` where the model expects `expected`.
    pub fn answers(&self, answered: impl Into<String>, expected: impl Into<String>) -> Pointer {
        Pointer::request(
            self.request.clone().answers(answered, expected),
            self.mark.clone(),
        )
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_named_as_its_trace_line() {
        let step = Step::op(0, 3, "read", 6000);
        assert_eq!(step.to_string(), "session 0 op 3 (read)");
        let p = step.answers("536 bytes read", "224 bytes read");
        let d = p.divergence.expect("a request");
        assert_eq!((d.op.as_str(), d.request, d.at_us), ("read", 3, 6000));
        assert!(p.marks[0].marks("       6000us s0 p0 op 3 read rows=Some(4) read=536"));
    }
}
