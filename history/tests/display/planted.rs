//! One test per planted bug: switching it on makes the matching rule or property fail, while the
//! same check passes on the fixed code. Built only with `--features planted`.

use history::display::{
    reconstruct, DisplayEventStore, MemoryDisplayStore, ReconstructError, ReplicaNode,
    SqliteDisplayStore, WarningCode,
};
use history::{BugId, Planted};
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use serde_json::json;
use std::rc::Rc;

use crate::gen::{self, Spec};
use crate::properties;
use crate::support::*;

const NONE: Planted = Planted::none();

/// Runs a property on the fixed code (must pass) and with `bug` on (must fail).
fn property_breaks<S: Strategy>(
    bug: BugId,
    strategy: S,
    property: impl Fn(&S::Value, Planted) -> Result<(), TestCaseError>,
) {
    let runner = || {
        let config = Config {
            cases: 256,
            failure_persistence: None,
            ..Config::default()
        };
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
    };
    let fixed = runner().run(&strategy, |v| property(&v, NONE));
    assert!(fixed.is_ok(), "the fixed code fails: {fixed:?}");
    let planted = runner().run(&strategy, |v| property(&v, Planted::only(bug)));
    assert!(planted.is_err(), "{bug} is on but the property still holds");
}

/// The texts rebuilt from `rows` are `fixed` by the fixed code and `planted` with `bug` on.
fn assert_texts_fixed_and_with(rows: &[Ev], bug: BugId, fixed: &[Text], planted: &[Text]) {
    let rebuilt = rebuild(rows, NONE).expect("fixed");
    assert_eq!(texts(&rebuilt), fixed, "fixed");
    let rebuilt = rebuild(rows, Planted::only(bug)).expect("planted");
    assert_eq!(texts(&rebuilt), planted, "{bug} on");
}

fn stored(rows: &[Ev], planted: Planted) -> MemoryDisplayStore {
    let store = MemoryDisplayStore::new(planted);
    for r in rows {
        store.append(&r.bytes()).expect("append");
    }
    store
}

fn rebuild(
    rows: &[Ev],
    planted: Planted,
) -> Result<history::display::Projection, ReconstructError> {
    reconstruct(
        &stored(rows, planted),
        THREAD,
        Some(&lead()),
        &opts(planted),
    )
}

#[test]
fn planted_p1_unknown_event_fails_reconstruction() {
    let rows = [
        Ev::user("d", "e0", 0, "find it"),
        Ev::aitl_response(1, json!(3)),
    ];
    assert_eq!(
        texts(&rebuild(&rows, NONE).expect("fixed: never a 500")),
        [u("find it")]
    );
    match rebuild(&rows, Planted::only(BugId::P1)) {
        Err(ReconstructError::EventValidation {
            event_id,
            class,
            field,
        }) => {
            assert_eq!(
                (event_id.as_str(), class.as_str(), field.as_str()),
                (
                    "e1",
                    "RetrievalAgentInTheLoopResponseEvent",
                    "output_messages"
                )
            );
        }
        other => panic!("P1 should fail validation, got {other:?}"),
    }
}

#[test]
fn planted_p2_hidden_displays_leak() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&sub(), "hidden", "r", "e1", 1, "internal notes"),
    ];
    assert_eq!(texts(&rebuild(&rows, NONE).expect("fixed")), [u("hi")]);
    let leaked = rebuild(&rows, Planted::only(BugId::P2)).expect("planted");
    assert_eq!(texts(&leaked), [u("hi"), a("internal notes")]);
    property_breaks(BugId::P2, gen::deliveries(30), |(s, o), p| {
        properties::nothing_from_hidden_displays(s, o, p)
    });
}

#[test]
fn planted_p3_hitl_duplicated_into_both_roles() {
    assert_texts_fixed_and_with(
        &go_sure_true(),
        BugId::P3,
        &[u("go"), a("Sure?"), u("true")],
        &[u("go"), a("Sure?"), u("Sure?true"), a("true")],
    );
}

#[test]
fn planted_p4_duplicates_turns() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&lead(), "d", "r", "e1", 1, "yo"),
    ];
    let twice = [rows.clone(), rows.clone()].concat();
    assert_texts_fixed_and_with(
        &twice,
        BugId::P4,
        &[u("hi"), a("yo")],
        &[u("hihi"), a("yoyo")],
    );
    property_breaks(BugId::P4, gen::deliveries(30), |(s, o), p| {
        properties::duplication_invariant(s, o, p)
    });
}

#[test]
fn planted_p5_lost_suffix_not_recovered() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&lead(), "d", "r", "e1", 1, "Hel"),
        Ev::stop(&lead(), "d", "r", "e2", 2, "Hello"),
    ];
    assert_texts_fixed_and_with(
        &rows,
        BugId::P5,
        &[u("hi"), a("Hello")],
        &[u("hi"), a("Hel")],
    );
}

#[test]
fn planted_p6_nested_stop_supplies_the_answer() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&lead(), "d", "r", "e1", 1, "Hel"),
        Ev::stop(&sub(), "d", "r2", "e2", 2, "Hello from the sub-agent"),
    ];
    assert_texts_fixed_and_with(
        &rows,
        BugId::P6,
        &[u("hi"), a("Hel")],
        &[u("hi"), a("Hello from the sub-agent")],
    );
}

#[test]
fn planted_p7_substring_membership() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::custom_at(&lead(), 1, &["XChunkEventY"], json!({"content": "decoy"})),
        Ev::custom(
            &user_agent(),
            "x",
            "e2",
            2,
            &["UserMessageEventLog"],
            json!({"messages": [{"content": "log"}]}),
        ),
    ];
    for planted in [NONE, Planted::only(BugId::P7)] {
        for (name, store) in both_stores(planted) {
            for r in &rows {
                store.append(&r.bytes()).expect("append");
            }
            let visible = store.visible_displays(THREAD).expect("stage 1");
            let p =
                reconstruct(&*store, THREAD, Some(&lead()), &opts(planted)).expect("reconstructs");
            if planted.is(BugId::P7) {
                assert_eq!(visible, ["d", "x"], "{name}");
                assert_eq!(texts(&p), [u("hi"), a("decoy"), u("log")], "{name}");
            } else {
                assert_eq!(visible, ["d"], "{name}");
                assert_eq!(texts(&p), [u("hi")], "{name}");
            }
        }
    }
}

#[test]
fn stores_agree_with_each_other_under_substring_membership() {
    // Even the legacy membership must not make the two backends disagree.
    let config = Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = runner.run(&gen::deliveries(30), |(specs, order)| {
        crate::stores::compare_stores(&gen::delivered(&specs, &order), Planted::only(BugId::P7))
    });
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn planted_p8_malformed_created_at_corrupts_the_order() {
    let rows = [
        Ev::user("d", "e0", 5, "hi"),
        Ev::chunk(&lead(), "d", "r", "e1", 6, "A"),
        Ev::chunk(&lead(), "d", "r", "e2", 2, "B").data("created_at", json!("not a time")),
        Ev::chunk(&lead(), "d", "r", "e3", 3, "C").data("created_at", json!(true)),
    ];
    let fixed = rebuild(&rows, NONE).expect("fixed");
    assert_eq!(texts(&fixed), [u("hi"), a("A")]);
    assert_eq!(
        fixed
            .warnings
            .iter()
            .filter(|w| w.code == WarningCode::BadCreatedAt)
            .count(),
        2
    );
    // Coerced to 0 and 1, the malformed rows jump ahead of the user turn.
    let p = rebuild(&rows, Planted::only(BugId::P8)).expect("planted");
    assert_eq!(texts(&p), [a("BC"), u("hi"), a("A")]);
}

#[test]
fn planted_p9_markerless_thread_falls_back_to_displays_where_a_user_spoke() {
    // A thread older than UserAgent markers: its user message comes from a legacy proxy class.
    let rows = [
        Ev::user("d", "e0", 0, "old question").set("agent_class", json!("LegacyUserProxy")),
        Ev::chunk(&lead(), "d", "r", "e1", 1, "orphan"),
        Ev::chunk(&sub(), "h", "r2", "e2", 2, "hidden"),
    ];
    let fixed = rebuild(&rows, NONE).expect("fixed");
    assert!(fixed.messages.is_empty());
    assert_eq!(
        fixed.warnings.iter().map(|w| w.code).collect::<Vec<_>>(),
        [WarningCode::NoVisibleDisplay]
    );
    // The legacy reader took any display where a user spoke, silently; hidden output stays out.
    let p = rebuild(&rows, Planted::only(BugId::P9)).expect("planted");
    assert_eq!(texts(&p), [u("old question"), a("orphan")]);
    assert!(p.warnings.is_empty());
}

#[test]
fn planted_p10_warnings_carry_payload() {
    let rows = [Ev::user("d", "e0", 0, "my password is hunter2").data("created_at", json!("x"))];
    assert!(!run(&rows, None).warnings[0].text.contains("hunter2"));
    let p = history::display::project(&bytes(&rows), None, &opts(Planted::only(BugId::P10)));
    assert!(p.warnings[0].text.contains("hunter2"));
    property_breaks(BugId::P10, gen::thread(30), |s: &Vec<Spec>, p| {
        properties::warnings_carry_no_payload(s, p)
    });
}

#[test]
fn planted_p11_delegated_output_dropped() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&sub(), "d", "r2", "e1", 1, "Found it. "),
        Ev::chunk(&lead(), "d", "r", "e2", 2, "Done."),
    ];
    assert_texts_fixed_and_with(
        &rows,
        BugId::P11,
        &[u("hi"), a("Found it. Done.")],
        &[u("hi"), a("Done.")],
    );
}

type Text = (history::display::Role, String);
type Texts = Vec<Text>;

/// Two replicas on one shared store; replica B missed the second delivery on the bus.
fn two_replicas(planted: Planted) -> (Texts, Texts) {
    let shared = Rc::new(SqliteDisplayStore::open_in_memory(planted).expect("open"));
    let mut a_node = ReplicaNode::new(Rc::clone(&shared), opts(planted));
    let mut b_node = ReplicaNode::new(Rc::clone(&shared), opts(planted));
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&lead(), "d", "r", "e1", 1, "yo"),
    ];
    a_node.deliver(&rows[0].bytes()).expect("deliver");
    b_node.deliver(&rows[0].bytes()).expect("deliver");
    a_node.deliver(&rows[1].bytes()).expect("deliver");
    assert_eq!(a_node.persister_stats().delivered, 2);
    assert_eq!(b_node.persister_stats().stored, 1);
    let ra = a_node.reconstruct(THREAD, Some(&lead())).expect("a");
    let rb = b_node.reconstruct(THREAD, Some(&lead())).expect("b");
    (texts(&ra), texts(&rb))
}

#[test]
fn planted_p12_replicas_answer_differently() {
    let (ra, rb) = two_replicas(NONE);
    assert_eq!(ra, rb);
    assert_eq!(ra, [u("hi"), a("yo")]);
    let (ra, rb) = two_replicas(Planted::only(BugId::P12));
    assert_ne!(ra, rb);
    assert_eq!(rb, [u("hi")]);
}

#[test]
fn planted_p13_legacy_media_leniency() {
    let blocks = json!([
        {"block_type": "audio", "format": "wav", "audio": [true, 300]},
        {"block_type": "audio", "format": "ogg", "audio": "AA=="},
        {"block_type": "image", "image": [1]},
    ]);
    let rows = [Ev::user_blocks("d", "e0", 0, blocks)];
    let fixed = run(&rows, None);
    // Fixed: the bad byte list fails the whole message.
    assert!(fixed.messages.is_empty());
    assert_eq!(fixed.warnings.len(), 1);
    assert_eq!(
        fixed.warnings[0].field.as_deref(),
        Some("messages"),
        "{:?}",
        fixed.warnings
    );
    let p = history::display::project(&bytes(&rows), None, &opts(Planted::only(BugId::P13)));
    use history::display::ContentPart::{ImageUrl, InputAudio};
    assert_eq!(
        p.messages[0].content,
        [
            InputAudio {
                data: "ASw=".into(),
                format: "wav".into()
            },
            InputAudio {
                data: "AA==".into(),
                format: "ogg".into()
            },
            ImageUrl { url: String::new() },
        ]
    );
}

#[test]
fn planted_p14_in_flight_overlay_is_not_a_subset_of_settled_history() {
    let go = |planted: Planted| {
        let mut node = ReplicaNode::new(MemoryDisplayStore::new(planted), opts(planted));
        node.deliver(&Ev::user("d", "e0", 0, "hi").bytes())
            .expect("deliver");
        node.deliver(&Ev::chunk(&lead(), "d", "r", "e1", 1, "Hel").bytes())
            .expect("deliver");
        let early = texts(&node.reconstruct(THREAD, Some(&lead())).expect("early read"));
        node.deliver(&Ev::stop(&lead(), "d", "r", "e2", 2, "Hello").bytes())
            .expect("deliver");
        let settled = texts(
            &node
                .reconstruct(THREAD, Some(&lead()))
                .expect("settled read"),
        );
        (early, settled)
    };
    let (early, settled) = go(NONE);
    assert_eq!(settled, [u("hi"), a("Hello")]);
    assert_eq!(
        early,
        [u("hi"), a("Hel")],
        "an early read is a prefix of the settled history, modulo the suffix"
    );
    let (early, settled) = go(Planted::only(BugId::P14));
    assert_eq!(settled, [u("hi"), a("Hello")]);
    assert_eq!(early, [u("hi"), a("Hel"), a("Hel")]);
    assert!(
        early.len() > settled.len(),
        "the early read is not a subset of the settled one"
    );
}
