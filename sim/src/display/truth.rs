//! Ground truth for the model: what the agents emitted, in emission order, and whether each
//! emission reached the store (from the fault plan, not from the store).

use super::faults::FaultPlan;
use super::scenario::{Answer, AudioData, Block, Defect, DisplayScenario, Event, LegacyByte, Step};
use super::world::Emitted;
use model::display as m;
use std::collections::BTreeMap;

/// The model's view of a played conversation.
pub fn conversation(
    scenario: &DisplayScenario,
    plan: &FaultPlan,
    emissions: &[Emitted],
) -> m::Conversation {
    let steps: BTreeMap<u32, &Step> = scenario.steps().map(|s| (s.id, s)).collect();
    let primary = scenario.agents.get(&scenario.primary).map(|a| m::Agent {
        class: a.class.clone(),
        id: a.id.clone(),
    });
    let mut out = Vec::with_capacity(emissions.len());
    for emitted in emissions {
        let Some(step) = steps.get(&emitted.step) else {
            continue;
        };
        let agent = scenario
            .agents
            .get(&step.agent)
            .map(|a| m::Agent {
                class: a.class.clone(),
                id: a.id.clone(),
            })
            .unwrap_or(m::Agent {
                class: String::new(),
                id: String::new(),
            });
        let is_primary = primary.as_ref() == Some(&agent);
        let (kind, defect) = kind_and_defect(step, is_primary);
        out.push(m::Emission {
            index: out.len(),
            event_id: emitted.event_id.clone(),
            agent,
            display: scenario
                .displays
                .get(&step.display)
                .cloned()
                .unwrap_or_default(),
            run: step.run.clone(),
            kind,
            persisted: plan.persisted(step.id),
            defect,
        });
    }
    m::Conversation {
        primary,
        emissions: out,
    }
}

fn kind_and_defect(step: &Step, is_primary: bool) -> (m::EmissionKind, Option<m::Defect>) {
    let defect = step.defect.as_ref().map(|d| match d {
        Defect::BadIdentity { field } => m::Defect::BadIdentity {
            field: field.clone(),
        },
        Defect::BadCreatedAt { .. } => m::Defect::BadCreatedAt,
        Defect::BadPayload { field } => m::Defect::BadPayload {
            field: field.clone(),
        },
    });
    let kind = match &step.event {
        Event::UserMessage { blocks } => m::EmissionKind::UserMessage {
            blocks: blocks.iter().map(user_block).collect(),
        },
        Event::HitlQuestion { question } => m::EmissionKind::HitlQuestion {
            question: question.clone(),
        },
        Event::HitlAnswer { answer } => m::EmissionKind::HitlAnswer {
            answer: match answer {
                Answer::Bool(b) => m::HitlAnswer::Bool(*b),
                Answer::Text(t) => m::HitlAnswer::Text(t.clone()),
            },
        },
        Event::Chunk { text } => m::EmissionKind::Chunk { text: text.clone() },
        Event::Stop { answer } => m::EmissionKind::Stop {
            answer: answer.clone(),
        },
        Event::Decoy { class, .. } => m::EmissionKind::Decoy {
            class: class.clone(),
        },
        Event::Custom { class, .. } => m::EmissionKind::Unrelated {
            class: class.clone(),
        },
        Event::Envelope { class, family, .. } => {
            return envelope_kind(class, family, is_primary, defect)
        }
    };
    (kind, defect)
}

/// What the model makes of an envelope row of `family` whose step has `defect`.
fn envelope_kind(
    class: &str,
    family: &str,
    is_primary: bool,
    defect: Option<m::Defect>,
) -> (m::EmissionKind, Option<m::Defect>) {
    // A bad identity or created_at skips a family's row before its payload is read, and before
    // anyone asks whose stop it is: the projector warns about the row's own defect, not the
    // envelope's (a mutated scenario file found the model expecting bad_payload there).
    let skipped_first = match defect {
        Some(d @ (m::Defect::BadIdentity { .. } | m::Defect::BadCreatedAt)) => Some(d),
        _ => None,
    };
    // The envelope reaches its family through the chain, but carries none of the family's
    // fields: a malformed member of that family. A stop of anyone but the primary is never
    // read, so it is simply not there.
    let field = match family {
        "StopEvent" if !is_primary && skipped_first.is_none() => {
            return (
                m::EmissionKind::Unrelated {
                    class: class.to_string(),
                },
                None,
            )
        }
        "StopEvent" => "output_messages",
        "ChunkEvent" => "content",
        "HumanInTheLoopRequestEvent" => "question",
        "HumanInTheLoopResponseEvent" => "response",
        "UserMessageEvent" => "messages",
        _ => {
            return (
                m::EmissionKind::Unrelated {
                    class: class.to_string(),
                },
                None,
            )
        }
    };
    let kind = match family {
        "StopEvent" => m::EmissionKind::Stop {
            answer: String::new(),
        },
        "ChunkEvent" => m::EmissionKind::Chunk {
            text: String::new(),
        },
        "HumanInTheLoopRequestEvent" => m::EmissionKind::HitlQuestion {
            question: String::new(),
        },
        "HumanInTheLoopResponseEvent" => m::EmissionKind::HitlAnswer {
            answer: m::HitlAnswer::Text(String::new()),
        },
        _ => m::EmissionKind::UserMessage { blocks: Vec::new() },
    };
    let defect = skipped_first.unwrap_or(m::Defect::AbsentPayload {
        field: field.to_string(),
    });
    (kind, Some(defect))
}

fn user_block(block: &Block) -> m::UserBlock {
    match block {
        Block::Text { text } => m::UserBlock::Text(text.clone()),
        Block::Image { url } => m::UserBlock::Image { url: url.clone() },
        Block::Audio { format, data } => m::UserBlock::Audio {
            format: format.clone(),
            data: match data {
                AudioData::Base64(s) => match decode_base64(s) {
                    Some(bytes) => m::AudioData::Base64(bytes),
                    // Not base64 text: its UTF-8 bytes are the audio itself, as a legacy list of
                    // those bytes would be.
                    None => m::AudioData::Legacy(
                        s.bytes()
                            .map(|b| m::LegacyByte::Int(i64::from(b)))
                            .collect(),
                    ),
                },
                AudioData::Legacy(items) => m::AudioData::Legacy(
                    items
                        .iter()
                        .map(|b| match b {
                            LegacyByte::Bool(v) => m::LegacyByte::Bool(*v),
                            LegacyByte::Int(v) => m::LegacyByte::Int(*v),
                            LegacyByte::Float(v) => m::LegacyByte::Float(*v),
                        })
                        .collect(),
                ),
            },
        },
        Block::Other { name } => m::UserBlock::Other {
            block_type: name.clone(),
        },
    }
}

/// Standard padded base64, strictly (canonical padding, no stray bits), as scenario files must
/// spell their media.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::generate::base64_standard;

    #[test]
    fn base64_round_trips_and_rejects_garbage() {
        for len in 0..10u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(decode_base64(&base64_standard(&bytes)), Some(bytes));
        }
        assert_eq!(decode_base64("abc"), None);
        assert_eq!(decode_base64("a=bc"), None);
        assert_eq!(decode_base64("ab!c"), None);
    }
}
