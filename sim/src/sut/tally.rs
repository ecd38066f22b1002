//! What a system under test answered, op by op: Jepsen's ok/fail/info accounting. A request is
//! `sent`; its answer is `ok`, an `err` of a kind, or no answer at all (a breach: the process
//! broke the protocol, hung or died). A campaign sums the seeds' tallies, and the report shows
//! them beside what was left out, so a system that answers errors, or is never asked an op, is
//! seen in the figures whatever the checks concluded.

use super::process::SutError;
use super::protocol::ErrorBody;
use crate::coverage::Coverage;

/// The tally's keys: `"{op} sent"`, `"{op} ok"`, `"{op} err {kind}"`, `"{op} no answer"`.
pub fn count<T>(tally: &mut Coverage, op: &str, answer: &Result<Result<T, ErrorBody>, SutError>) {
    tally.hit(&format!("{op} sent"));
    match answer {
        Ok(Ok(_)) => tally.hit(&format!("{op} ok")),
        Ok(Err(body)) => tally.hit(&format!("{op} err {}", body.kind.as_str())),
        Err(_) => tally.hit(&format!("{op} no answer")),
    }
}

/// One op's figures, read back from a tally.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpFigures {
    pub sent: u64,
    pub ok: u64,
    /// By kind, in the kinds' order.
    pub err: Vec<(String, u64)>,
    pub no_answer: u64,
}

/// The tally read back op by op, in op order.
pub fn by_op(tally: &std::collections::BTreeMap<String, u64>) -> Vec<(String, OpFigures)> {
    let mut ops: std::collections::BTreeMap<String, OpFigures> = Default::default();
    for (key, &n) in tally {
        let (op, what) = key.split_once(' ').unwrap_or((key, ""));
        let figures = ops.entry(op.to_string()).or_default();
        match what {
            "sent" => figures.sent += n,
            "ok" => figures.ok += n,
            "no answer" => figures.no_answer += n,
            other => match other.strip_prefix("err ") {
                Some(kind) => figures.err.push((kind.to_string(), n)),
                None => debug_assert!(false, "a tally key of no known shape: {key}"),
            },
        }
    }
    ops.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sut::protocol::ErrorKind;

    #[test]
    fn answers_are_counted_by_op_and_kind_and_read_back() {
        let mut tally = Coverage::default();
        let ok: Result<Result<u8, ErrorBody>, SutError> = Ok(Ok(1));
        let refused: Result<Result<u8, ErrorBody>, SutError> = Ok(Err(ErrorBody {
            kind: ErrorKind::Internal,
            message: "down".into(),
        }));
        count(&mut tally, "dump", &ok);
        count(&mut tally, "dump", &refused);
        count(&mut tally, "dump", &refused);
        count(&mut tally, "max_seq", &ok);
        let figures = by_op(&tally.counts);
        assert_eq!(
            figures,
            vec![
                (
                    "dump".to_string(),
                    OpFigures {
                        sent: 3,
                        ok: 1,
                        err: vec![("internal".to_string(), 2)],
                        no_answer: 0
                    }
                ),
                (
                    "max_seq".to_string(),
                    OpFigures {
                        sent: 1,
                        ok: 1,
                        err: vec![],
                        no_answer: 0
                    }
                ),
            ]
        );
    }
}
