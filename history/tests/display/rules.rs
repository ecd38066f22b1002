//! One test per rule of the contract's projection, written by hand from the contract.

use history::display::{ContentPart, Role, WarningCode};
use serde_json::json;

use crate::support::*;

const BI: WarningCode = WarningCode::BadIdentity;
const BC: WarningCode = WarningCode::BadCreatedAt;
const BP: WarningCode = WarningCode::BadPayload;
const BM: WarningCode = WarningCode::BadMedia;

#[test]
fn duplicates_are_dropped_and_the_first_copy_wins() {
    let hi = Ev::user("d", "e1", 1, "hi");
    let c = Ev::chunk(&lead(), "d", "r1", "e2", 2, "yo");
    check(
        &[hi.clone(), c.clone(), c.clone(), hi.clone(), c],
        None,
        &[u("hi"), a("yo")],
        &[],
    );
    // Same identity, different payload: the first in input order wins, the later is dropped silently.
    let first = Ev::chunk(&lead(), "d", "r1", "e2", 2, "first");
    let second = Ev::chunk(&lead(), "d", "r1", "e2", 2, "second");
    check(
        &[hi.clone(), first.clone(), second.clone()],
        None,
        &[u("hi"), a("first")],
        &[],
    );
    check(&[hi, second, first], None, &[u("hi"), a("second")], &[]);
}

#[test]
fn identity_is_all_eight_fields() {
    let hi = Ev::user("d", "e1", 1, "hi");
    // Same event_id, another run: a different identity, both kept.
    let c1 = Ev::chunk(&lead(), "d", "r1", "e2", 2, "a");
    let c2 = Ev::chunk(&lead(), "d", "r2", "e2", 2, "b");
    check(&[hi, c1, c2], None, &[u("hi"), a("ab")], &[]);
}

#[test]
fn bad_identity_skips_the_row_and_names_the_field() {
    let hi = Ev::user("d", "e1", 1, "hi");
    let base = Ev::chunk(&lead(), "d", "r1", "e2", 2, "x");
    for field in history::display::IDENTITY_FIELDS {
        for bad in [None, Some(json!("")), Some(json!(7))] {
            let row = match &bad {
                None => base.clone().without(field),
                Some(v) => base.clone().set(field, v.clone()),
            };
            if field == "display_id" {
                // Without its display the row lies on no visible display: never read.
                check(&[hi.clone(), row.clone()], None, &[u("hi")], &[]);
                continue;
            }
            check(&[hi.clone(), row.clone()], None, &[u("hi")], &[(BI, field)]);
            let p = run(&[hi.clone(), row], None);
            let w = &p.warnings[0];
            let known = |f: &str| {
                if f == field {
                    None
                } else {
                    Some(if f == "event_id" { "e2" } else { "d" }.to_string())
                }
            };
            assert_eq!(w.event_id, known("event_id"), "{field} {bad:?}");
            assert_eq!(w.display_id, known("display_id"), "{field} {bad:?}");
        }
    }
}

#[test]
fn order_is_created_at_then_event_id_then_identity() {
    let hi = Ev::user("d", "e0", 0, "hi");
    // Input order reversed on purpose.
    let rows = [
        Ev::chunk(&lead(), "d", "r1", "e3", 5, "C"),
        Ev::chunk(&lead(), "d", "r1", "e2", 5, "B"),
        Ev::chunk(&lead(), "d", "r1", "e9", 1, "A"),
        hi,
    ];
    check(&rows, None, &[u("hi"), a("ABC")], &[]);
    // Equal created_at and event_id: agent_class decides, then agent_id.
    let hi = Ev::user("d", "e0", 0, "hi");
    let x = Ev::chunk(&sub(), "d", "r1", "e5", 5, "S");
    let y = Ev::chunk(&lead(), "d", "r1", "e5", 5, "L");
    check(
        &[x.clone(), y.clone(), hi.clone()],
        None,
        &[u("hi"), a("LS")],
        &[],
    );
    check(&[y, x, hi], None, &[u("hi"), a("LS")], &[]);
    // Negative and u64-sized timestamps are integers too.
    let rows = [
        Ev::user("d", "e0", -5, "hi"),
        Ev::chunk(&lead(), "d", "r1", "e1", 0, "x").data("created_at", json!(u64::MAX)),
        Ev::chunk(&lead(), "d", "r1", "e2", 0, "y"),
    ];
    check(&rows, None, &[u("hi"), a("yx")], &[]);
}

#[test]
fn created_at_must_be_a_json_integer() {
    let hi = Ev::user("d", "e0", 0, "hi");
    for bad in [
        json!(true),
        json!(false),
        json!(1.5),
        json!(2.0),
        json!("3"),
        json!(null),
        json!([1]),
        json!(1e3),
    ] {
        let row = Ev::chunk(&lead(), "d", "r1", "e1", 0, "x").data("created_at", bad.clone());
        check(&[hi.clone(), row], None, &[u("hi")], &[(BC, "created_at")]);
    }
    let missing =
        Ev::chunk(&lead(), "d", "r1", "e1", 0, "x").set("event_data", json!({"content": "x"}));
    check(
        &[hi.clone(), missing],
        None,
        &[u("hi")],
        &[(BC, "created_at")],
    );
    let not_object = Ev::chunk(&lead(), "d", "r1", "e1", 0, "x").set("event_data", json!("x"));
    check(&[hi, not_object], None, &[u("hi")], &[(BC, "created_at")]);
}

#[test]
fn a_malformed_first_copy_does_not_hide_a_valid_later_one() {
    // Validation comes before de-duplication: the copy with a string created_at is skipped with
    // its warning, and the valid copy of the same identity is the first that counts.
    let hi = Ev::user("d", "e0", 0, "hi");
    let bad = Ev::chunk(&lead(), "d", "r1", "e1", 0, "x").data("created_at", json!("1"));
    let good = Ev::chunk(&lead(), "d", "r1", "e1", 1, "x");
    check(
        &[hi.clone(), bad.clone(), good.clone()],
        None,
        &[u("hi"), a("x")],
        &[(BC, "created_at")],
    );
    // Two valid copies after it: still one.
    check(
        &[hi, bad, good.clone(), good],
        None,
        &[u("hi"), a("x")],
        &[(BC, "created_at")],
    );
}

#[test]
fn hitl_questions_are_assistant_text_and_answers_user_text_once() {
    let rows = [
        Ev::user("d", "e0", 0, "book a flight"),
        Ev::question(&lead(), "d", "e1", 1, "Which day?"),
        Ev::answer("d", "e2", 2, json!("Monday")),
        Ev::question(&lead(), "d", "e3", 3, "Window seat?"),
        Ev::answer("d", "e4", 4, json!(true)),
        Ev::question(&lead(), "d", "e5", 5, "Sure?"),
        Ev::answer("d", "e6", 6, json!(false)),
    ];
    let want = [
        u("book a flight"),
        a("Which day?"),
        u("Monday"),
        a("Window seat?"),
        u("true"),
        a("Sure?"),
        u("false"),
    ];
    check(&rows, None, &want, &[]);
}

#[test]
fn hitl_edge_payloads() {
    let hi = Ev::user("d", "e0", 0, "hi");
    // An empty question or answer is malformed, as the published projector has it.
    check(
        &[hi.clone(), Ev::question(&lead(), "d", "e1", 1, "")],
        None,
        &[u("hi")],
        &[(BP, "question")],
    );
    check(
        &[
            hi.clone(),
            Ev::question(&lead(), "d", "e1", 1, "").data("question", json!(3)),
        ],
        None,
        &[u("hi")],
        &[(BP, "question")],
    );
    check(
        &[hi.clone(), Ev::answer("d", "e1", 1, json!(""))],
        None,
        &[u("hi")],
        &[(BP, "response")],
    );
    for bad in [json!(1), json!(null), json!(["yes"]), json!({"a": 1})] {
        check(
            &[hi.clone(), Ev::answer("d", "e1", 1, bad)],
            None,
            &[u("hi")],
            &[(BP, "response")],
        );
    }
    check(
        &[
            hi,
            Ev::answer("d", "e1", 1, json!(""))
                .without("event_data")
                .set("event_data", json!({"created_at": 1})),
        ],
        None,
        &[u("hi")],
        &[(BP, "response")],
    );
}

#[test]
fn a_hidden_display_becomes_visible_with_a_later_answer() {
    let store_rows = [
        Ev::user("d0", "e0", 0, "plan"),
        Ev::question(&sub(), "d1", "e1", 1, "Which city?"),
        Ev::answer("d1", "e2", 2, json!("Bern")),
    ];
    for (name, store) in both_stores(history::Planted::none()) {
        for r in &store_rows {
            store.append(&r.bytes()).expect("append");
        }
        let p = history::display::reconstruct(
            &*store,
            THREAD,
            Some(&lead()),
            &opts(history::Planted::none()),
        )
        .expect("reconstructs");
        assert_eq!(
            texts(&p),
            vec![u("plan"), a("Which city?"), u("Bern")],
            "{name}"
        );
    }
}

#[test]
fn stop_recovers_the_missing_suffix_of_streamed_text() {
    let hi = Ev::user("d", "e0", 0, "hi");
    let l = lead();
    // Prefix streamed: the remainder is appended.
    let rows = [
        hi.clone(),
        Ev::chunk(&l, "d", "r1", "e1", 1, "Hel"),
        Ev::stop(&l, "d", "r1", "e2", 2, "Hello"),
    ];
    check(&rows, Some(&l), &[u("hi"), a("Hello")], &[]);
    // Nothing streamed: the whole answer.
    check(
        &[hi.clone(), Ev::stop(&l, "d", "r1", "e2", 2, "Hello")],
        Some(&l),
        &[u("hi"), a("Hello")],
        &[],
    );
    // Divergent text: what was streamed stays, nothing added.
    let rows = [
        hi.clone(),
        Ev::chunk(&l, "d", "r1", "e1", 1, "Hi!"),
        Ev::stop(&l, "d", "r1", "e2", 2, "Hello"),
    ];
    check(&rows, Some(&l), &[u("hi"), a("Hi!")], &[]);
    // Everything streamed: nothing added.
    let rows = [
        hi.clone(),
        Ev::chunk(&l, "d", "r1", "e1", 1, "Hello"),
        Ev::stop(&l, "d", "r1", "e2", 2, "Hello"),
    ];
    check(&rows, Some(&l), &[u("hi"), a("Hello")], &[]);
    // A dropped middle chunk leaves a gap nothing fills.
    let rows = [
        hi.clone(),
        Ev::chunk(&l, "d", "r1", "e1", 1, "He"),
        Ev::chunk(&l, "d", "r1", "e3", 3, "o"),
        Ev::stop(&l, "d", "r1", "e4", 4, "Hello"),
    ];
    check(&rows, Some(&l), &[u("hi"), a("Heo")], &[]);
    // A stop delivered before its chunks is ordered by created_at like everything else.
    let rows = [
        Ev::stop(&l, "d", "r1", "e9", 9, "Hello"),
        Ev::chunk(&l, "d", "r1", "e1", 1, "Hel"),
        hi.clone(),
    ];
    check(&rows, Some(&l), &[u("hi"), a("Hello")], &[]);
    // The recovered text counts as streamed: a second stop adds nothing more.
    let rows = [
        hi,
        Ev::chunk(&l, "d", "r1", "e1", 1, "Hel"),
        Ev::stop(&l, "d", "r1", "e2", 2, "Hello"),
        Ev::stop(&l, "d", "r2", "e3", 3, "Hello"),
    ];
    check(&rows, Some(&l), &[u("hi"), a("Hello")], &[]);
}

#[test]
fn streamed_text_resets_at_each_user_turn_on_that_display() {
    let l = lead();
    let rows = [
        Ev::user("d", "e0", 0, "one"),
        Ev::chunk(&l, "d", "r1", "e1", 1, "Ans"),
        Ev::user("d", "e2", 2, "two"),
        Ev::stop(&l, "d", "r2", "e3", 3, "Answer two"),
    ];
    check(
        &rows,
        Some(&l),
        &[u("one"), a("Ans"), u("two"), a("Answer two")],
        &[],
    );
    // A HITL answer resets too; a question counts as streamed text.
    let rows = [
        Ev::user("d", "e0", 0, "one"),
        Ev::chunk(&l, "d", "r1", "e1", 1, "Q"),
        Ev::answer("d", "e2", 2, json!("yes")),
        Ev::question(&l, "d", "e3", 3, "Really?"),
        Ev::stop(&l, "d", "r1", "e4", 4, "Really? Done"),
    ];
    check(
        &rows,
        Some(&l),
        &[u("one"), a("Q"), u("yes"), a("Really? Done")],
        &[],
    );
    // A primary stop repeating the question adds nothing; one diverging from it adds nothing.
    for answer in ["Proceed?", "Something else"] {
        let rows = [
            Ev::user("d", "e0", 0, "one"),
            Ev::question(&l, "d", "e1", 1, "Proceed?"),
            Ev::stop(&l, "d", "r1", "e2", 2, answer),
        ];
        check(&rows, Some(&l), &[u("one"), a("Proceed?")], &[]);
    }
    // Streamed text is per display: a chunk on another display does not break the prefix.
    let rows = [
        Ev::user("d", "e0", 0, "one"),
        Ev::user("x", "e1", 1, "other"),
        Ev::chunk(&l, "d", "r1", "e2", 2, "Hel"),
        Ev::chunk(&sub(), "x", "r9", "e3", 3, "zzz"),
        Ev::stop(&l, "d", "r1", "e4", 4, "Hello"),
    ];
    check(
        &rows,
        Some(&l),
        &[u("one"), u("other"), a("Hel"), a("zzz"), a("lo")],
        &[],
    );
    // A malformed user turn shows nothing but still resets: the stop's whole answer follows.
    let malformed = Ev::user("d", "e2", 2, "x").data("messages", json!([]));
    assert_resets_the_streamed_text(malformed, &[(BP, "messages")]);
    // So does a malformed HITL answer.
    assert_resets_the_streamed_text(Ev::answer("d", "e2", 2, json!(7)), &[(BP, "response")]);
}

#[test]
fn only_the_primary_agents_stop_counts() {
    let hi = Ev::user("d", "e0", 0, "hi");
    let l = lead();
    let nested = [
        hi.clone(),
        Ev::chunk(&l, "d", "r1", "e1", 1, "Hel"),
        Ev::stop(&sub(), "d", "r2", "e2", 2, "Hello world"),
    ];
    check(&nested, Some(&l), &[u("hi"), a("Hel")], &[]);
    // Same class, other id: not the primary.
    let other = AgentIdentity::new("LeadAgent", "a9");
    check(
        &[hi.clone(), Ev::stop(&other, "d", "r2", "e2", 2, "Hello")],
        Some(&l),
        &[u("hi")],
        &[],
    );
    // No primary: every stop is ignored.
    check(
        &[hi.clone(), Ev::stop(&l, "d", "r2", "e2", 2, "Hello")],
        None,
        &[u("hi")],
        &[],
    );
    // A non-primary stop is never read: its malformed payload raises no warning.
    let bad = Ev::stop(&sub(), "d", "r2", "e2", 2, "x").data("output_messages", json!("nope"));
    check(&[hi.clone(), bad], Some(&l), &[u("hi")], &[]);
    // The primary's malformed stop does.
    for bad in [
        json!("nope"),
        json!([]),
        json!([{"content": 1}]),
        json!([{"content": "ok"}, "x"]),
        json!(null),
    ] {
        let row = Ev::stop(&l, "d", "r2", "e2", 2, "x").data("output_messages", bad);
        check(
            &[hi.clone(), row],
            Some(&l),
            &[u("hi")],
            &[(BP, "output_messages")],
        );
    }
}

use history::display::AgentIdentity;

#[test]
fn delegated_output_on_a_shared_display_is_kept() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&lead(), "d", "r1", "e1", 1, "Let me ask. "),
        Ev::chunk(&sub(), "d", "r2", "e2", 2, "Found it. "),
        Ev::chunk(&lead(), "d", "r1", "e3", 3, "Done."),
    ];
    check(
        &rows,
        Some(&lead()),
        &[u("hi"), a("Let me ask. Found it. Done.")],
        &[],
    );
}

#[test]
fn consecutive_contributions_merge_per_role_and_display() {
    let rows = [
        Ev::user("x", "e00", -1, "z"),
        Ev::user("d", "e0", 0, "a"),
        Ev::user("d", "e1", 1, "b"),
        Ev::chunk(&lead(), "d", "r1", "e2", 2, "c"),
        Ev::chunk(&lead(), "x", "r1", "e3", 3, "d"),
        Ev::chunk(&lead(), "x", "r1", "e4", 4, "e"),
        Ev::chunk(&lead(), "d", "r1", "e5", 5, "f"),
    ];
    check(
        &rows,
        None,
        &[u("z"), u("ab"), a("c"), a("de"), a("f")],
        &[],
    );
    let p = run(&rows, None);
    assert_eq!(
        p.messages[1].content,
        vec![
            ContentPart::Text { text: "a".into() },
            ContentPart::Text { text: "b".into() }
        ],
        "two user contributions are two parts"
    );
    assert_eq!(
        p.messages[3].content.len(),
        1,
        "merged assistant text is one part"
    );
}

#[test]
fn a_hitl_answer_and_the_next_user_message_stay_separate_parts() {
    let mut rows = go_sure_true();
    rows.push(Ev::user("d", "e3", 3, "question 1"));
    let p = run(&rows, None);
    assert_eq!(p.messages.len(), 3);
    assert_eq!(
        p.messages[2].content,
        vec![
            ContentPart::Text {
                text: "true".into()
            },
            ContentPart::Text {
                text: "question 1".into()
            }
        ]
    );
    // Two text blocks of one message are two parts as well.
    let two = Ev::user_blocks(
        "d",
        "e0",
        0,
        json!([{"block_type": "text", "text": "one"}, {"block_type": "text", "text": "two"}]),
    );
    let p = run(&[two], None);
    assert_eq!(p.messages[0].content.len(), 2);
}

#[test]
fn user_turns_come_only_from_the_user_agent() {
    let l = lead();
    let hi = Ev::user("d", "e0", 0, "hi");
    let proxy = AgentIdentity::new("LegacyUserProxy", "p1");
    let rows = [
        hi.clone(),
        Ev::chunk(&l, "d", "r1", "e1", 1, "Hel"),
        // Another agent's user message and HITL answer: not user turns, not even read.
        Ev::user("d", "e2", 2, "not the client")
            .set("agent_class", json!(proxy.agent_class))
            .set("agent_id", json!(proxy.agent_id)),
        Ev::answer("d", "e3", 3, json!({"bad": true}))
            .set("agent_class", json!(proxy.agent_class))
            .set("agent_id", json!(proxy.agent_id)),
        Ev::stop(&l, "d", "r1", "e4", 4, "Hello"),
    ];
    check(&rows, Some(&l), &[u("hi"), a("Hello")], &[]);
}

#[test]
fn user_messages_use_the_last_chat_message() {
    let hi = |content: serde_json::Value| {
        Ev::user("d", "e0", 0, "x").data(
            "messages",
            json!([{"content": "old"}, {"content": content}]),
        )
    };
    check(&[hi(json!("new"))], None, &[u("new")], &[]);
    check(&[hi(json!(""))], None, &[], &[]);
    check(&[hi(json!([]))], None, &[], &[]);
    check(
        &[hi(
            json!([{"block_type": "text", "text": "a"}, {"block_type": "text", "text": "b"}]),
        )],
        None,
        &[u("ab")],
        &[],
    );
    for bad in [json!(5), json!(null), json!({"block_type": "text"})] {
        check(&[hi(bad)], None, &[], &[(BP, "messages")]);
    }
    for messages in [
        json!([]),
        json!("hi"),
        json!([{"content": "ok"}, 3]),
        json!([{"role": "user"}]),
    ] {
        check(
            &[Ev::user("d", "e0", 0, "x").data("messages", messages)],
            None,
            &[],
            &[(BP, "messages")],
        );
    }
}

#[test]
fn media_blocks_convert_or_drop_one_by_one() {
    let blocks = json!([
        {"block_type": "text", "text": "look: "},
        {"block_type": "image", "url": "https://img/1.png", "image": [1, 2]},
        {"block_type": "image", "image": [1, 2]},
        {"block_type": "audio", "format": "wav", "audio": [0, 1, 2, 255]},
        {"block_type": "audio", "format": "mp3", "audio": "AAECAw=="},
        {"block_type": "audio", "format": "ogg", "audio": "AAECAw=="},
        {"block_type": "video", "url": "v"},
        "text",
        {"block_type": "text", "text": ""},
        {"block_type": "text", "text": 4},
        {"block_type": "text", "text": "end"},
    ]);
    let p = run(&[Ev::user_blocks("d", "e0", 0, blocks)], None);
    assert_eq!(p.messages.len(), 1);
    assert_eq!(p.messages[0].role, Role::User);
    assert_eq!(
        p.messages[0].content,
        vec![
            ContentPart::Text {
                text: "look: ".into()
            },
            ContentPart::ImageUrl {
                url: "https://img/1.png".into()
            },
            ContentPart::InputAudio {
                data: "AAEC/w==".into(),
                format: "wav".into()
            },
            ContentPart::InputAudio {
                data: "AAECAw==".into(),
                format: "mp3".into()
            },
            ContentPart::Text { text: "end".into() },
        ]
    );
    let fields: Vec<&str> = p
        .warnings
        .iter()
        .map(|w| w.field.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(
        fields,
        ["url", "format", "block_type", "block_type", "text"]
    );
    assert!(p
        .warnings
        .iter()
        .all(|w| w.code == BM && w.event_id.as_deref() == Some("e0")));
    // A message whose blocks all drop emits nothing but still resets the streamed text.
    let blocks = json!([{"block_type": "image"}]);
    assert_resets_the_streamed_text(Ev::user_blocks("d", "e2", 2, blocks), &[(BM, "url")]);
}

/// A user turn `turn` (event e2 at time 2 on display d) lands between the lead's streamed "Hel"
/// and its stop "Hello": shown or not, it resets the streamed text, so the stop adds its whole
/// answer, which merges onto the assistant message before it. `warnings`: the turn's own.
#[track_caller]
fn assert_resets_the_streamed_text(turn: Ev, warnings: &[(WarningCode, &str)]) {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&lead(), "d", "r1", "e1", 1, "Hel"),
        turn,
        Ev::stop(&lead(), "d", "r1", "e3", 3, "Hello"),
    ];
    check(&rows, Some(&lead()), &[u("hi"), a("HelHello")], warnings);
}

#[test]
fn a_malformed_media_byte_list_fails_the_whole_message() {
    for bad in [
        json!([1, true]),
        json!([256]),
        json!([-1]),
        json!([1.0]),
        json!(5),
        json!({}),
    ] {
        for block in [
            json!({"block_type": "audio", "format": "ogg", "audio": bad}),
            json!({"block_type": "image", "url": "https://img/1.png", "image": bad}),
        ] {
            let blocks = json!([{"block_type": "text", "text": "never shown"}, block]);
            // The malformed turn still resets.
            let turn = Ev::user_blocks("d", "e2", 2, blocks);
            assert_resets_the_streamed_text(turn, &[(BP, "messages")]);
        }
    }
}

#[test]
fn audio_bytes_that_spell_base64_are_decoded_once() {
    let spelled: Vec<u8> = b"ZW5jb2RlZC1hdWRpbw==".to_vec();
    let blocks = json!([
        {"block_type": "audio", "format": "wav", "audio": spelled},
        {"block_type": "audio", "format": "mp3", "audio": "not base64"},
    ]);
    let p = run(&[Ev::user_blocks("d", "e0", 0, blocks)], None);
    assert_eq!(
        p.messages[0].content,
        vec![
            ContentPart::InputAudio {
                data: "ZW5jb2RlZC1hdWRpbw==".into(),
                format: "wav".into()
            },
            ContentPart::InputAudio {
                data: "bm90IGJhc2U2NA==".into(),
                format: "mp3".into()
            },
        ]
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn chunk_payloads() {
    let hi = Ev::user("d", "e0", 0, "hi");
    for bad in [json!(""), json!(1), json!(null), json!(["x"])] {
        let row = Ev::chunk(&lead(), "d", "r1", "e1", 1, "x").data("content", bad);
        check(&[hi.clone(), row], None, &[u("hi")], &[(BP, "content")]);
    }
}

#[test]
fn warnings_never_carry_payload_text() {
    let secret = "SECRET-PAYLOAD";
    let rows = [
        Ev::user("d", "e0", 0, secret).data("created_at", json!(secret)),
        Ev::user("d", "e1", 1, secret).data("messages", json!({"content": secret})),
        Ev::user_blocks(
            "d",
            "e2",
            2,
            json!([{"block_type": secret, "url": secret}, {"block_type": "image", "url": 5, "text": secret}, {"block_type": "audio", "format": secret}]),
        ),
        Ev::chunk(&lead(), "d", "r1", "e3", 3, secret).data("content", json!([secret])),
        Ev::answer("d", "e4", 4, json!({ "v": secret })),
        Ev::question(&lead(), "d", "e5", 5, secret).data("question", json!([secret])),
        Ev::stop(&lead(), "d", "r1", "e6", 6, secret)
            .data("output_messages", json!([{"content": [secret]}])),
        Ev::chunk(&lead(), "d", "r1", "e7", 7, secret).set("agent_id", json!("")),
    ];
    let p = run(&rows, Some(&lead()));
    assert_eq!(p.warnings.len(), 10, "{:#?}", p.warnings);
    for w in &p.warnings {
        assert!(!w.text.contains(secret), "{w:?}");
        assert!(!format!("{w:?}").contains(secret), "{w:?}");
    }
}

#[test]
fn rows_outside_the_families_are_never_read() {
    let hi = Ev::user("d", "e0", 0, "hi");
    let decoys = [
        Ev::custom_at(
            &lead(),
            1,
            &["NoAnswerStopEvent"],
            json!({"output_messages": [{"content": "leak"}]}),
        ),
        Ev::custom_at(&lead(), 2, &["XChunkEventY"], json!({"content": "leak"})),
        Ev::custom_at(
            &user_agent(),
            3,
            &["UserMessageEventLog"],
            json!({"messages": [{"content": "leak"}]}),
        ),
        Ev::custom_at(
            &sub(),
            4,
            &["RetrievalAgentInTheLoopResponseEvent", "RetrieverEvent"],
            json!({"stop": 5}),
        ),
        // Garbage payloads of unknown classes raise no warnings: they are never parsed.
        Ev::custom_at(&sub(), 5, &["Custom"], json!({}))
            .set("event_data", json!("garbage"))
            .set("agent_id", json!(5)),
    ];
    let mut rows = vec![hi];
    rows.extend(decoys);
    check(&rows, Some(&lead()), &[u("hi")], &[]);
}

#[test]
fn a_custom_subclass_of_a_family_follows_the_family() {
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::custom_at(
            &lead(),
            1,
            &["FancyChunkEvent", "ChunkEvent", "BaseEvent"],
            json!({"content": "styled"}),
        ),
        // Two families named: the first in chain order wins.
        Ev::custom_at(
            &lead(),
            2,
            &["ChunkEvent", "StopEvent"],
            json!({"content": "!"}),
        ),
    ];
    check(&rows, None, &[u("hi"), a("styled!")], &[]);
}

#[test]
fn output_serializes_in_the_openai_shape() {
    let rows = [Ev::user_blocks(
        "d",
        "e0",
        0,
        json!([{"block_type": "text", "text": "hi"}, {"block_type": "audio", "format": "wav", "audio": [1]}]),
    )];
    let p = run(&rows, None);
    assert_eq!(
        serde_json::to_value(&p.messages).expect("serializes"),
        json!([{"role": "user", "content": [
            {"type": "text", "text": "hi"},
            {"type": "input_audio", "input_audio": {"data": "AQ==", "format": "wav"}}]}])
    );
}

#[test]
fn the_projector_itself_drops_rows_of_displays_without_a_marker() {
    // Defence in depth: a caller passing unfiltered rows gets no hidden-display output.
    let l = lead();
    let rows = [
        Ev::user("d", "e0", 0, "hi"),
        Ev::chunk(&sub(), "hidden", "r9", "e1", 1, "secret"),
        Ev::chunk(&sub(), "hidden", "r9", "e2", 2, "x").data("content", json!(5)),
        Ev::chunk(&l, "d", "r1", "e3", 3, "shown"),
        // A marker from another agent class does not make a display visible.
        Ev::user("proxy", "e4", 4, "proxy").set("agent_class", json!("LegacyUserProxy")),
        Ev::chunk(&l, "proxy", "r1", "e5", 5, "not shown"),
    ];
    let p = run(&rows, Some(&l));
    let texts: Vec<String> = p.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["hi", "shown"]);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}
