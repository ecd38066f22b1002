//! The invariant checkers of the runs workload, R1 to R31.
//!
//! Checkers only check: they read the scenario (what the agents meant), the world's ground truth
//! (what each run emitted and how it stopped, replayed into [`model::runs`]), the world's record of
//! what reached the store, and the answers both backends gave, and name every difference by its
//! catalog ID. Texts are unique per thread, so a rendered message names the emission it came from.
//!
//! Violations come out in a fixed priority order, most specific first, so that a world with one
//! defect reports that defect's ID first even when its effects also break broader invariants: an
//! acknowledged batch lost in a restart of the store (R12) also leaves the store short of what
//! was written (R3), renumbers later writes (R5) and splits the backends (R9); a
//! store changed by a read (R3) also makes the backends disagree (R9); duplicate seqs (R5) also
//! duplicate ids (R10); lost buffers (R4) also shorten the history (R1); a deletion that lowers
//! the numbering (R13) makes later writes reuse seqs (R5); a deletion that leaves rows (R15)
//! leaves the store holding more than the model (R3), and so does a thread deletion that leaves
//! rows (R23), which also keeps old receipts (R14) and events (R17); a summary that splits a tool
//! pair (R11) or folds the current request's message (R29) also departs from the summarization
//! contract (R20); withdrawn feedback read back
//! (R22) also breaks that read's counts and listings (R21) and the feedback store's end state
//! (R6). The rules live by what they read:
//! [`self::stored`] (the stores and both backends), [`self::reads`] (what the views and
//! ratings show), [`self::store_rules`] (deletions, receipts and per-run pages),
//! [`self::event_rules`] (filtered event reads), [`self::user_rules`] (user-scoped reads),
//! [`self::summary_rules`] (summarized
//! checkpoints against the contract), [`self::thread_rules`] (thread deletions and eras),
//! [`self::fence_rules`] (writes a thread deletion fenced), [`self::table_read_rules`] (the
//! reads of the store's table the model answers, asked at the end), [`self::run_label_rules`]
//! (the run each view names a message's).

pub(crate) mod answer_rules;
pub(crate) mod caller_edit_rows;
pub(crate) mod context;
pub(in crate::runs) mod deletion_calls;
pub(crate) mod event_rules;
pub(crate) mod everywhere_rules;
pub(crate) mod feedback_rules;
pub(crate) mod fence_rules;
pub(crate) mod journal_rules;
pub(crate) mod liveness;
pub(in crate::runs) mod map;
pub(in crate::runs) mod picture;
pub(crate) mod probes;
pub(crate) mod reads;
pub(crate) mod run_label_rules;
pub(crate) mod store_rules;
pub(crate) mod stored;
pub(crate) mod summary_rules;
pub(crate) mod table_read_rules;
pub(crate) mod thread_rules;
pub(crate) mod trace_rules;
pub(crate) mod truth;
pub(crate) mod user_rules;

pub(super) mod wording;

use self::answer_rules::errors_only_where_the_contract_allows;
use self::context::Context;
use self::event_rules::{
    filtered_answers_agree, filtered_events_match_the_model, last_answers_match_the_model,
};
use self::reads::{ids_are_stable, ratings_land_on_their_run, reads_match_the_model};
use self::store_rules::{
    deletions_keep_the_numbering, deletions_remove_exactly_the_run, receipts_are_written_once,
    run_pages_match_the_model, wider_answers_agree,
};
use self::stored::{
    acknowledged_writes_survive_restarts, backends_agree, runs_fully_stored,
    seqs_unique_and_increasing, store_unchanged_by_reads, summaries_keep_tool_pairs,
};
use self::summary_rules::summaries_follow_the_contract;
use self::thread_rules::{thread_answers_agree, thread_deletions_empty_the_thread};
use self::user_rules::{user_answers_agree, user_reads_match_the_model};
use super::observations::WorldRecord;
use super::scenario::RunsScenario;
use super::script::Scripts;
use crate::outcome::{Attribution, Findings, Unexplained, Violation};
use crate::workload::StoreKind;
use history::BugId;
use std::collections::BTreeMap;

/// The priority of each finding: most specific first.
pub(crate) static ATTRIBUTION: Attribution = Attribution {
    priority: &[
        BugId::R12,
        // An error answer is the store's own word that it failed: nothing narrower explains
        // it, and the rules below pass over the answers it replaced.
        BugId::R24,
        // The API's thread deletion that never reached the store also looks like a store
        // deletion that removed nothing (R23) and leaves everything R23 leaves.
        BugId::R27,
        // A late write a deletion should have refused (R28) leaves rows of a deleted run
        // in the store, which every rule about what the store holds sees too.
        BugId::R28,
        // A journal that records the wrong human input (R25) stores other events than the run
        // emitted (R4) and shows them in every read (R1).
        BugId::R25,
        // A nested invocation's end taken for the run's (R26) stores events the run did not
        // emit (R4, R3).
        BugId::R26,
        // A long trace cut wrongly (R30) is an event stored otherwise than emitted (R4).
        BugId::R30,
        BugId::R13,
        BugId::R15,
        BugId::R23,
        BugId::R14,
        BugId::R16,
        BugId::R3,
        BugId::R5,
        BugId::R4,
        BugId::R9,
        BugId::R17,
        BugId::R18,
        BugId::R19,
        BugId::R11,
        // A summary that folds the current request's message (R29) keeps a window the
        // contract does not (R20).
        BugId::R29,
        BugId::R20,
        // A view that labels a message with another run (R31) shows a history the model does
        // not (R1) and sends the message's rating to that run (R6).
        BugId::R31,
        BugId::R1,
        BugId::R2,
        BugId::R7,
        BugId::R10,
        BugId::R22,
        BugId::R21,
        BugId::R6,
        BugId::R8,
    ],
    secondary: &[],
    merge_up_to: Some(3),
    // The broadest invariant: a thread's history is every message its runs emitted.
    unexplained: Unexplained::Merged {
        prefix: "history differs from the model: ",
        up_to: 3,
    },
};

/// One checker rule: the played world in, findings out.
pub(crate) type Rule = fn(&Context<'_>, &mut Findings);

/// Every rule, each tagged with the invariant it checks, in the order they run (which is the
/// order of messages within one ID). A rule may name a narrower ID its evidence points at: the
/// reads rule also R2 and R7, the ratings rule also R8.
pub(crate) const RULES: &[(BugId, Rule)] = &[
    (BugId::R24, errors_only_where_the_contract_allows),
    (BugId::R12, acknowledged_writes_survive_restarts),
    (BugId::R13, deletions_keep_the_numbering),
    (BugId::R15, deletions_remove_exactly_the_run),
    (BugId::R14, receipts_are_written_once),
    (BugId::R28, self::fence_rules::deletions_fence_their_writers),
    (BugId::R16, run_pages_match_the_model),
    (BugId::R9, wider_answers_agree),
    (BugId::R9, filtered_answers_agree),
    (BugId::R3, store_unchanged_by_reads),
    // A table read names the ID of its wrong answers (R3 for the counts); errors are R24's.
    (
        BugId::R3,
        self::table_read_rules::table_reads_match_the_model,
    ),
    (BugId::R5, seqs_unique_and_increasing),
    (BugId::R25, self::journal_rules::inputs_are_the_users),
    (BugId::R26, self::journal_rules::lifecycle_is_the_roots),
    (
        BugId::R30,
        self::trace_rules::long_traces_are_cut_at_whole_characters,
    ),
    (BugId::R4, runs_fully_stored),
    (BugId::R9, backends_agree),
    (BugId::R17, filtered_events_match_the_model),
    (BugId::R18, last_answers_match_the_model),
    (BugId::R9, user_answers_agree),
    (BugId::R19, user_reads_match_the_model),
    (BugId::R11, summaries_keep_tool_pairs),
    (
        BugId::R29,
        self::summary_rules::summaries_keep_the_current_request,
    ),
    (BugId::R20, summaries_follow_the_contract),
    (
        BugId::R31,
        self::run_label_rules::views_name_the_producing_run,
    ),
    (BugId::R1, reads_match_the_model),
    (BugId::R10, ids_are_stable),
    (BugId::R6, ratings_land_on_their_run),
    (
        BugId::R21,
        self::feedback_rules::feedback_reads_match_the_model,
    ),
    (BugId::R23, thread_deletions_empty_the_thread),
    (
        BugId::R27,
        self::everywhere_rules::thread_deletions_delete_everywhere,
    ),
    (BugId::R9, thread_answers_agree),
];

/// The runs verdicts of one played world, every one of them: the rules' findings (when the
/// world finished) in priority order, then R4's liveness. `scripts` is every run of `scenario`
/// expanded ([`Scripts::of`]), as play emitted them; `record` is what play observed.
pub fn check(
    scenario: &RunsScenario,
    scripts: &Scripts,
    record: &WorldRecord,
    primary: StoreKind,
) -> Vec<Violation> {
    let mut violations = if record.failure.is_some() {
        Vec::new()
    } else {
        rules(scenario, scripts, record, primary)
    };
    violations.extend(liveness::runs_stop_once_faults_heal(scenario, &record.log));
    violations
}

/// Every rule of [`RULES`] over one finished world.
fn rules(
    scenario: &RunsScenario,
    scripts: &Scripts,
    record: &WorldRecord,
    primary: StoreKind,
) -> Vec<Violation> {
    let mut emitted_ids: BTreeMap<String, BTreeMap<String, Option<String>>> = BTreeMap::new();
    for (i, run) in scenario.runs.iter().enumerate() {
        let on_thread = emitted_ids.entry(run.thread.clone()).or_default();
        for e in scripts.run(i) {
            on_thread.insert(e.text.clone(), e.message.id.clone());
        }
    }
    let cx = Context {
        scenario,
        scripts,
        record,
        primary,
        emitted_ids,
    };
    let mut f = Findings::new(&ATTRIBUTION);
    for (_, rule) in RULES {
        rule(&cx, &mut f);
    }
    f.into_violations()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Pointer;
    use crate::runs::check::context::of_rendered;
    use crate::runs::check::reads::{only_oldest_missing, uuid5};
    use model::runs::{ExpectedMessage, MessageKind, RunOutcome, RunTruth};

    fn truth() -> RunTruth {
        let mut t = RunTruth::new();
        for (run, texts) in [("a", ["a1", "a2", "a3"]), ("b", ["b1", "b2", "b3"])] {
            t.start_run("t", run);
            for x in texts {
                t.emit("t", run, MessageKind::Human, x);
            }
            t.stop_run("t", run, RunOutcome::Ended);
        }
        t
    }

    #[test]
    fn a_latest_n_read_is_recognised_as_missing_the_oldest() {
        let t = truth();
        let all = t.expected_history("t");
        assert!(!only_oldest_missing(&t, "t", &all), "nothing missing");
        assert!(only_oldest_missing(&t, "t", &all[2..]));
        assert!(only_oldest_missing(&t, "t", &all[4..]));
        // A lost tail is not a lost head, nor is a later run lost whole.
        assert!(!only_oldest_missing(&t, "t", &all[..5]));
        assert!(!only_oldest_missing(&t, "t", &all[..3]));
        let mut gap = all.clone();
        gap.remove(4);
        assert!(!only_oldest_missing(&t, "t", &gap));
        let stranger = vec![ExpectedMessage::new("z", MessageKind::Human, "z1")];
        assert!(!only_oldest_missing(&t, "t", &stranger));
    }

    #[test]
    fn rendered_dumps_become_model_messages() {
        let v = serde_json::json!({"type": "ai", "content": "x", "tool_calls": [{"id": "c"}], "run_id": "r"});
        assert_eq!(
            of_rendered(&v),
            ExpectedMessage::new("r", MessageKind::AiToolCall, "x")
        );
        let v = serde_json::json!({"type": "human", "content": "q"});
        assert_eq!(
            of_rendered(&v),
            ExpectedMessage::new("", MessageKind::Human, "q")
        );
        assert_eq!(
            uuid5("6d30913e-dcd4-41c8-8941-f66c716cf359", 1),
            "e1c4656e-8a62-555e-9148-c76d07df49a5"
        );
    }

    #[test]
    fn findings_come_out_in_priority_order() {
        let mut f = Findings::new(&ATTRIBUTION);
        f.add_at(BugId::R8, Pointer::default(), "late");
        f.unexplained_at(BugId::R1, Pointer::default(), "broad");
        f.add_at(BugId::R3, Pointer::default(), "first");
        let v = f.into_violations();
        let ids: Vec<BugId> = v.iter().map(|v| v.id).collect();
        assert_eq!(ids, vec![BugId::R3, BugId::R8, BugId::R1]);
    }
}
