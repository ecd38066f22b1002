//! Properties of the client view over random conversations.
//!
//! Conversations are generated from raw choices and built deterministically, so that every text
//! carries a unique tag `⟨i⟩` naming the emission it came from (stop answers may also repeat the
//! chunk texts of their own display, to exercise recovery). The properties: nothing of a hidden
//! display reaches the transcript (P2); text parts are never empty; adjacent messages never
//! share (role, display); the output depends only on persisted emissions; non-primary stops change
//! nothing (P6); every unpersisted emission is one accepted loss.

use proptest::prelude::*;

use super::build::{agent, emission, Who, LEAD, SUB, SUB2, USER};
use super::conversation::{
    AudioData, Conversation, Defect, Emission, EmissionKind, HitlAnswer, LegacyByte, UserBlock,
    DEFECTIVE_IDENTITY_FIELDS,
};
use super::transcript::{code, Part, Transcript};
use super::{
    client_transcript, client_transcript_when_stored, message_is_malformed, text_sources,
    visible_displays,
};

const AGENTS: [Who; 5] = [USER, LEAD, SUB, SUB2, ("LeadAgent", "lead2")];
const DISPLAYS: [&str; 4] = ["d0", "d1", "d2", "d3"];
const WORDS: [&str; 6] = ["Hel", "lo", " world", "a", "bc", "é"];

/// The raw choices for one emission.
#[derive(Clone, Debug)]
struct Raw {
    agent: usize,
    display: usize,
    kind: u8,
    persisted: bool,
    defect: u8,
    text: u8,
    blocks: Vec<u8>,
}

fn raw() -> impl Strategy<Value = Raw> {
    (
        0..AGENTS.len(),
        0..DISPLAYS.len(),
        0u8..14,
        prop::bool::weighted(0.8),
        0u8..16,
        0u8..8,
        prop::collection::vec(0u8..12, 0..4),
    )
        .prop_map(
            |(agent, display, kind, persisted, defect, text, blocks)| Raw {
                agent,
                display,
                kind,
                persisted,
                defect,
                text,
                blocks,
            },
        )
}

fn conversation() -> impl Strategy<Value = Conversation> {
    (0u8..4, prop::collection::vec(raw(), 0..28)).prop_map(|(primary, raws)| build(primary, &raws))
}

/// A tagged text for emission `index`, or the empty string for choice 0.
fn tagged(index: usize, choice: u8) -> String {
    if choice == 0 {
        String::new()
    } else {
        format!("⟨{index}⟩{}", WORDS[usize::from(choice) % WORDS.len()])
    }
}

fn block(index: usize, choice: u8) -> UserBlock {
    match choice {
        0 => UserBlock::Text(String::new()),
        1..=3 => UserBlock::Text(tagged(index, choice)),
        4 => UserBlock::Image {
            url: Some(format!("https://img/{index}")),
        },
        5 => UserBlock::Image { url: None },
        6 => UserBlock::Image {
            url: Some(String::new()),
        },
        7 => UserBlock::Audio {
            data: AudioData::Base64(vec![choice, 0, 255]),
            format: "wav".into(),
        },
        8 => UserBlock::Audio {
            data: AudioData::Legacy(vec![LegacyByte::Int(7), LegacyByte::Int(255)]),
            format: "mp3".into(),
        },
        9 => UserBlock::Audio {
            data: AudioData::Legacy(vec![LegacyByte::Int(1), LegacyByte::Bool(true)]),
            format: "mp3".into(),
        },
        10 => UserBlock::Audio {
            data: AudioData::Base64(vec![1]),
            format: "ogg".into(),
        },
        _ => UserBlock::Other {
            block_type: "video".into(),
        },
    }
}

fn build(primary: u8, raws: &[Raw]) -> Conversation {
    let primary = match primary {
        0 => None,
        1 => Some(agent(SUB)),
        _ => Some(agent(LEAD)),
    };
    let mut emissions: Vec<Emission> = Vec::new();
    for (index, raw) in raws.iter().enumerate() {
        let display = DISPLAYS[raw.display];
        let user_side = raw.kind <= 3 || raw.kind == 6;
        let who = if user_side && raw.agent < 3 {
            USER
        } else {
            AGENTS[raw.agent]
        };
        let kind = match raw.kind {
            0..=3 => EmissionKind::UserMessage {
                blocks: if raw.blocks.is_empty() {
                    vec![UserBlock::Text(tagged(index, raw.text))]
                } else {
                    raw.blocks.iter().map(|&c| block(index, c)).collect()
                },
            },
            4 => EmissionKind::HitlQuestion {
                question: tagged(index, raw.text),
            },
            5 => EmissionKind::HitlAnswer {
                answer: HitlAnswer::Text(tagged(index, raw.text)),
            },
            6 => EmissionKind::HitlAnswer {
                answer: HitlAnswer::Bool(raw.text % 2 == 0),
            },
            7..=9 => EmissionKind::Chunk {
                text: tagged(index, raw.text),
            },
            10 | 11 => EmissionKind::Stop {
                answer: stop_answer(&emissions, index, display, raw.text),
            },
            12 => EmissionKind::Decoy {
                class: ["NoAnswerStopEvent", "XChunkEventY", "UserMessageEventLog"]
                    [usize::from(raw.text) % 3]
                    .into(),
            },
            _ => EmissionKind::Unrelated {
                class: "RetrievalAgentInTheLoopResponseEvent".into(),
            },
        };
        let defect = match raw.defect {
            13 => Some(Defect::BadIdentity {
                field: DEFECTIVE_IDENTITY_FIELDS[usize::from(raw.text) % 4].into(),
            }),
            14 => Some(Defect::BadCreatedAt),
            15 => Some(Defect::BadPayload {
                field: kind.payload_field().unwrap_or("event_data").into(),
            }),
            _ => None,
        };
        emissions.push(Emission {
            persisted: raw.persisted,
            defect,
            ..emission(index, who, display, kind)
        });
    }
    Conversation { primary, emissions }
}

/// Mostly what the display streamed since its last user turn plus more (so recovery happens),
/// sometimes something else entirely.
fn stop_answer(earlier: &[Emission], index: usize, display: &str, choice: u8) -> String {
    if choice % 4 == 3 {
        return tagged(index, choice);
    }
    let mut streamed = String::new();
    for emission in earlier.iter().filter(|e| e.display == display) {
        match &emission.kind {
            EmissionKind::UserMessage { .. } | EmissionKind::HitlAnswer { .. } => streamed.clear(),
            EmissionKind::Chunk { text } => streamed.push_str(text),
            _ => {}
        }
    }
    streamed + &tagged(index, choice)
}

/// Messages and warnings: what the projector's output is compared with.
fn observable(transcript: &Transcript) -> (Vec<super::Message>, Vec<super::ExpectedWarning>) {
    (
        transcript.messages.clone(),
        transcript.expected_warnings.clone(),
    )
}

fn all_text(transcript: &Transcript) -> String {
    transcript.messages.iter().map(|m| m.text()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn nothing_of_a_hidden_display_is_shown_p2(conversation in conversation()) {
        let transcript = client_transcript(&conversation);
        let visible = visible_displays(&conversation);
        let text = all_text(&transcript);
        for message in &transcript.messages {
            prop_assert!(visible.contains(&message.display));
        }
        for source in text_sources(&conversation) {
            if !visible.contains(&source.display) {
                let tag = format!("⟨{}⟩", source.emission);
                prop_assert!(!text.contains(&tag), "text of emission {} leaked", source.emission);
            }
        }
    }

    #[test]
    fn parts_are_never_empty_and_adjacent_messages_differ(conversation in conversation()) {
        let transcript = client_transcript(&conversation);
        for message in &transcript.messages {
            prop_assert!(!message.parts.is_empty());
            for part in &message.parts {
                let empty = match part {
                    Part::Text(text) | Part::ImageUrl(text) => text.is_empty(),
                    Part::Audio { format, .. } => format != "wav" && format != "mp3",
                };
                prop_assert!(!empty, "empty or invalid part {part:?}");
            }
        }
        for pair in transcript.messages.windows(2) {
            prop_assert!((pair[0].role, &pair[0].display) != (pair[1].role, &pair[1].display));
        }
    }

    #[test]
    fn output_depends_only_on_persisted_emissions(conversation in conversation(), garbage in "[a-z]{1,4}") {
        let expected = observable(&client_transcript(&conversation));
        // Flip the persistence of every emission outside the families.
        let mut flipped = conversation.clone();
        for emission in &mut flipped.emissions {
            if !emission.kind.is_family() {
                emission.persisted = !emission.persisted;
            }
        }
        prop_assert_eq!(observable(&client_transcript(&flipped)), expected.clone());
        // Rewrite every unpersisted emission into something else entirely.
        let mut rewritten = conversation.clone();
        for emission in rewritten.emissions.iter_mut().filter(|e| !e.persisted) {
            emission.agent = agent(USER);
            emission.kind = EmissionKind::UserMessage { blocks: vec![UserBlock::Text(garbage.clone())] };
            emission.defect = None;
        }
        prop_assert_eq!(observable(&client_transcript(&rewritten)), expected);
    }

    #[test]
    fn unstored_emissions_after_the_last_stored_one_change_no_message(conversation in conversation()) {
        // What the simulation's early reads rely on: the model of the rows stored by a read's
        // time is the model of the conversation cut after its last stored emission (the ones
        // after it add accepted losses only).
        let expected = observable(&client_transcript(&conversation));
        let stored_up_to = (conversation.emissions.iter())
            .rposition(|e| e.persisted)
            .map_or(0, |i| i + 1);
        let mut cut = conversation.clone();
        cut.emissions.truncate(stored_up_to);
        prop_assert_eq!(observable(&client_transcript(&cut)), expected);
    }

    #[test]
    fn the_model_of_a_partly_stored_prefix_is_the_model_with_those_flags(
        conversation in conversation(),
        flips in proptest::collection::vec(any::<bool>(), 0..40),
        cut in any::<proptest::sample::Index>(),
    ) {
        // What an early read's expectation is: the stored marks given apart from the
        // conversation, which stays as it is, equal the conversation copied with those flags.
        let len = cut.index(conversation.emissions.len() + 1);
        let stored: Vec<bool> = (0..len).map(|i| flips.get(i).copied().unwrap_or(i % 2 == 0)).collect();
        let mut flagged = conversation.clone();
        flagged.emissions.truncate(len);
        for (emission, &s) in flagged.emissions.iter_mut().zip(&stored) {
            emission.persisted = s;
        }
        let given_apart = client_transcript_when_stored(&conversation, &stored);
        prop_assert_eq!(observable(&given_apart), observable(&client_transcript(&flagged)));
        prop_assert_eq!(given_apart.accepted_losses, client_transcript(&flagged).accepted_losses);
    }

    #[test]
    fn non_primary_stops_change_nothing_p6(conversation in conversation(), answer in "[a-z]{0,6}") {
        let expected = observable(&client_transcript(&conversation));
        let mut changed = conversation.clone();
        for emission in &mut changed.emissions {
            let is_primary = Some(&emission.agent) == conversation.primary.as_ref();
            if let EmissionKind::Stop { answer: old } = &mut emission.kind {
                if !is_primary {
                    *old = answer.clone();
                }
            }
        }
        prop_assert_eq!(observable(&client_transcript(&changed)), expected);
    }

    #[test]
    fn warnings_name_persisted_rows_on_visible_displays(conversation in conversation()) {
        let transcript = client_transcript(&conversation);
        let visible = visible_displays(&conversation);
        if visible.is_empty() {
            prop_assert_eq!(transcript.expected_warnings.len(), 1);
            prop_assert_eq!(transcript.expected_warnings[0].code, code::NO_VISIBLE_DISPLAY);
            prop_assert!(transcript.messages.is_empty());
        }
        for warning in &transcript.expected_warnings {
            if let Some(index) = warning.emission {
                let emission = &conversation.emissions[index];
                prop_assert!(emission.persisted && emission.kind.is_family());
                prop_assert!(visible.contains(&emission.display));
                // An empty chunk, question or answer is a malformed row.
                let empty_text = match &emission.kind {
                    EmissionKind::Chunk { text } | EmissionKind::HitlQuestion { question: text } => text.is_empty(),
                    EmissionKind::HitlAnswer { answer } => answer.render().is_empty(),
                    _ => false,
                };
                // A bad legacy byte list fails its whole user message.
                let bad_bytes = matches!(&emission.kind, EmissionKind::UserMessage { blocks } if message_is_malformed(blocks));
                let explained = warning.code == code::BAD_MEDIA || emission.defect.is_some() || empty_text || bad_bytes;
                prop_assert!(explained, "unexplained warning {:?}", warning);
            }
        }
    }

    #[test]
    fn every_unpersisted_emission_is_exactly_one_accepted_loss(conversation in conversation()) {
        let transcript = client_transcript(&conversation);
        let visible = visible_displays(&conversation);
        let mut counted = vec![0usize; conversation.emissions.len()];
        for loss in &transcript.accepted_losses {
            counted[loss.emission] += 1;
            let emission = &conversation.emissions[loss.emission];
            let rule = match (emission.persisted, &emission.kind) {
                (true, _) => "P9",
                (false, EmissionKind::Chunk { .. }) => "P5",
                (false, _) => "P14",
            };
            prop_assert_eq!(loss.rule, rule);
        }
        for emission in &conversation.emissions {
            let expected = usize::from(
                !emission.persisted || (visible.is_empty() && emission.kind.is_family()),
            );
            prop_assert_eq!(counted[emission.index], expected, "emission {}", emission.index);
        }
    }

    #[test]
    fn the_model_is_deterministic(conversation in conversation()) {
        prop_assert_eq!(client_transcript(&conversation), client_transcript(&conversation.clone()));
    }
}

/// The generator reaches the interesting cases; otherwise the properties above prove little.
#[test]
fn the_generator_exercises_every_rule() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use std::collections::BTreeSet;

    let mut runner = TestRunner::deterministic();
    let strategy = conversation();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for _ in 0..256 {
        let conversation = strategy
            .new_tree(&mut runner)
            .expect("the strategy always generates")
            .current();
        let transcript = client_transcript(&conversation);
        let visible = visible_displays(&conversation);
        if visible.is_empty() {
            seen.insert("no visible display");
        }
        if conversation
            .emissions
            .iter()
            .any(|e| e.persisted && e.kind.is_family() && !visible.contains(&e.display))
            && !visible.is_empty()
        {
            seen.insert("hidden display output");
        }
        for loss in &transcript.accepted_losses {
            if loss.why.starts_with("recovered") {
                seen.insert("chunk recovered");
            }
            if loss.why.starts_with("lost") && loss.why.contains("later chunk") {
                seen.insert("middle chunk lost");
            }
        }
        for warning in &transcript.expected_warnings {
            seen.insert(warning.code);
        }
        let stop_text = text_sources(&conversation).into_iter().any(|s| {
            s.kind == "stop"
                && Some(&s.agent) == conversation.primary.as_ref()
                && transcript.messages.iter().any(|m| {
                    m.display == s.display && m.text().contains(&format!("⟨{}⟩", s.emission))
                })
        });
        if stop_text {
            seen.insert("primary stop shown");
        }
        if transcript.messages.iter().any(|m| m.parts.len() > 1) {
            seen.insert("multi-part message");
        }
    }
    let wanted = [
        "no visible display",
        "hidden display output",
        "chunk recovered",
        "middle chunk lost",
        "primary stop shown",
        "multi-part message",
        code::BAD_IDENTITY,
        code::BAD_CREATED_AT,
        code::BAD_PAYLOAD,
        code::BAD_MEDIA,
        code::NO_VISIBLE_DISPLAY,
    ];
    for case in wanted {
        assert!(seen.contains(case), "the generator never produced: {case}");
    }
}
