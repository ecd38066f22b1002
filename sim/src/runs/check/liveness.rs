//! R4's liveness: once every fault healed (crashed workers back, each failing write failed
//! once), every run stops within the world's bound, so its journal flushes. Play observes which
//! runs were still running when the bound ran out; this rule judges it.

use super::wording::listed;
use crate::outcome::Violation;
use crate::runs::observations::ObservationLog;
use crate::runs::scenario::RunsScenario;
use history::BugId;

/// R4: no run still running once every fault healed.
pub fn runs_stop_once_faults_heal(
    scenario: &RunsScenario,
    log: &ObservationLog,
) -> Option<Violation> {
    if log.stuck_runs().is_empty() {
        return None;
    }
    debug_assert!(
        log.stopped_after_ms().is_none(),
        "stuck runs never all stopped"
    );
    let ids: Vec<&str> = (log.stuck_runs().iter())
        .filter_map(|i| scenario.runs.get(*i).map(|r| r.id.as_str()))
        .collect();
    let ids = listed(&ids);
    let violation = Violation::liveness(
        BugId::R4,
        format!(
            "after every fault healed, runs {ids} never stopped, so their journals never flushed"
        ),
    );
    // A whole-state rule: the runs' state once every fault healed, not one request.
    Some(violation.of_whole_state("the runs still running once every fault healed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::observations::Observation;

    #[test]
    fn a_run_still_running_once_faults_healed_is_an_r4_liveness_finding() {
        let scenario = crate::runs::generate::of_seed(0);
        let mut log = ObservationLog::new(scenario.runs.len());
        log.push(Observation::AllStopped { after_ms: 3 });
        assert_eq!(runs_stop_once_faults_heal(&scenario, &log), None);

        let mut log = ObservationLog::new(scenario.runs.len());
        log.extend([Observation::Stuck(0), Observation::Stuck(1)]);
        let v = runs_stop_once_faults_heal(&scenario, &log).expect("a finding");
        assert_eq!(v.id, BugId::R4);
        assert_eq!(v.kind, crate::outcome::ViolationKind::Liveness);
        let first = &scenario.runs[0].id;
        assert!(v.message.contains(first.as_str()), "{}", v.message);
        assert!(v.message.contains("never stopped"), "{}", v.message);
    }
}
