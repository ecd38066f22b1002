//! What a command concluded, and the one exit code each conclusion has.
//!
//! Every `histsim` command (run, replay, scenarios, bugs, crash, shrink, report merge) ends in a
//! [`Verdict`]; CI scripts branch on the exit code, so each code means one thing everywhere.

use crate::outcome::ViolationKind;
use crate::run::SeedReport;
use std::process::ExitCode;

/// A command's conclusion, most severe first (see [`Verdict::worst`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Bad usage or input: a flag, a file, a scenario that cannot be used. Exit 2.
    Usage,
    /// A safety invariant was violated, or a planted bug went undetected. Exit 1.
    Violation,
    /// Only liveness failed: the answers did not converge after every fault healed. Exit 4.
    Liveness,
    /// The simulated world broke down (a hang, a host error): neither safe nor unsafe. Exit 3.
    WorldFailure,
    /// The same seed gave two different traces. Exit 3.
    Nondeterministic,
    /// No seed ran (a budget of zero, a shard or range with no seed in it): nothing was
    /// checked, so nothing passed. Exit 6.
    NothingChecked,
    /// Clean, but some probe never fired, or some work was left out, under `--require-coverage`.
    /// Exit 5.
    Uncovered,
    /// Nothing wrong. Exit 0.
    Clean,
}

impl Verdict {
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Clean => 0,
            Verdict::Violation => 1,
            Verdict::Usage => 2,
            Verdict::WorldFailure | Verdict::Nondeterministic => 3,
            Verdict::Liveness => 4,
            Verdict::Uncovered => 5,
            Verdict::NothingChecked => 6,
        }
    }

    /// The verdict of one seed: a safety violation outranks liveness, which outranks a world
    /// that broke down after what it had already shown.
    pub fn of_seed(report: &SeedReport) -> Verdict {
        let kinds = report.violations.iter().map(|v| v.kind);
        let safety = kinds.clone().any(|k| k == ViolationKind::Safety);
        if safety {
            Verdict::Violation
        } else if !report.violations.is_empty() {
            Verdict::Liveness
        } else if report.failure.is_some() {
            Verdict::WorldFailure
        } else {
            Verdict::Clean
        }
    }

    /// A usage error: prints `error: why` on stderr.
    pub fn usage(why: &str) -> Verdict {
        eprintln!("error: {why}");
        Verdict::Usage
    }

    /// The more severe of two verdicts.
    pub fn worst(self, other: Verdict) -> Verdict {
        self.min(other)
    }

    /// Clean, or `otherwise`.
    pub fn clean_or(ok: bool, otherwise: Verdict) -> Verdict {
        if ok {
            Verdict::Clean
        } else {
            otherwise
        }
    }

    pub fn is_clean(self) -> bool {
        self == Verdict::Clean
    }
}

impl From<Verdict> for ExitCode {
    fn from(v: Verdict) -> ExitCode {
        ExitCode::from(v.exit_code())
    }
}

impl FromIterator<Verdict> for Verdict {
    /// The worst of several verdicts; clean when there are none.
    fn from_iter<I: IntoIterator<Item = Verdict>>(iter: I) -> Verdict {
        iter.into_iter().fold(Verdict::Clean, Verdict::worst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Violation;
    use history::BugId;

    fn report(violations: Vec<Violation>, failure: Option<&str>) -> SeedReport {
        let mut r = crate::run::run_seed(1, &crate::run::RunConfig::only("spool"));
        r.violations = violations;
        r.failure = failure.map(str::to_string);
        r
    }

    #[test]
    fn every_verdict_has_its_documented_code() {
        let codes: Vec<(Verdict, u8)> = [
            Verdict::Clean,
            Verdict::Violation,
            Verdict::Usage,
            Verdict::WorldFailure,
            Verdict::Nondeterministic,
            Verdict::Liveness,
            Verdict::Uncovered,
            Verdict::NothingChecked,
        ]
        .iter()
        .map(|v| (*v, v.exit_code()))
        .collect();
        assert_eq!(
            codes,
            [
                (Verdict::Clean, 0),
                (Verdict::Violation, 1),
                (Verdict::Usage, 2),
                (Verdict::WorldFailure, 3),
                (Verdict::Nondeterministic, 3),
                (Verdict::Liveness, 4),
                (Verdict::Uncovered, 5),
                (Verdict::NothingChecked, 6),
            ]
        );
    }

    #[test]
    fn a_seed_is_judged_by_its_most_severe_finding() {
        let safety = Violation::safety(BugId::P4, "x");
        let liveness = Violation::liveness(BugId::P14, "y");
        assert_eq!(Verdict::of_seed(&report(vec![], None)), Verdict::Clean);
        assert_eq!(
            Verdict::of_seed(&report(vec![], Some("hang"))),
            Verdict::WorldFailure
        );
        assert_eq!(
            Verdict::of_seed(&report(vec![liveness.clone()], Some("hang"))),
            Verdict::Liveness
        );
        assert_eq!(
            Verdict::of_seed(&report(vec![liveness, safety], None)),
            Verdict::Violation
        );
    }

    #[test]
    fn the_worst_of_several_verdicts_wins() {
        let all: Verdict = [Verdict::Uncovered, Verdict::Liveness, Verdict::Clean]
            .into_iter()
            .collect();
        assert_eq!(all, Verdict::Liveness);
        assert_eq!(
            std::iter::empty::<Verdict>().collect::<Verdict>(),
            Verdict::Clean
        );
        assert_eq!(Verdict::Violation.worst(Verdict::Usage), Verdict::Usage);
    }
}
