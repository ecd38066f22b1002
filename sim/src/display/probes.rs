//! The display workload's coverage probes: faults the bus injected and features the played
//! conversation exercised.

use super::map;
use super::scenario::{Answer, AudioData, Block, Defect, DisplayScenario, Event, LegacyByte};
use crate::coverage::{join_probes, Coverage};
use crate::hostile_text::hit_classes;
use std::collections::{BTreeMap, BTreeSet};

/// Every probe this workload can fire: its own, then the generator map's cells.
pub const PROBES: &[&str] = &join_probes::<{ OWN.len() + map::CELL_COUNT }>(OWN, &map::PROBES);

/// The probes of faults and features.
const OWN: &[&str] = &[
    "display.fault.duplicate_delivered",
    "display.fault.delay",
    "display.fault.trailing_chunk_dropped",
    "display.fault.replica_cut_off",
    "display.fault.early_request",
    "display.feature.delegation_shared",
    "display.feature.delegation_hidden",
    "display.feature.hidden_display_became_visible",
    "display.feature.hitl",
    "display.feature.hitl_bool_answer",
    "display.feature.custom_event",
    "display.feature.envelope",
    "display.feature.decoy_class",
    "display.feature.decoy_marker",
    "display.feature.defect_identity",
    "display.feature.defect_created_at",
    "display.feature.defect_payload",
    "display.feature.media_legacy_bytes",
    "display.feature.media_rejected",
    "display.feature.empty_text_block",
    "display.feature.tied_timestamp",
    "display.feature.marker_less_thread",
    "display.feature.stop_only_run",
    "display.feature.replicas_3_or_more",
    "display.model.suffix_recovered",
    "display.model.chunk_lost",
    "display.feature.project_answered",
    "display.feature.permuted_past_16",
    "display.thread_id.uuid",
    "display.thread_id.uuid_upper",
    "display.thread_id.uuid_braces",
    "display.thread_id.uuid_urn",
    "display.thread_id.uuid_simple",
    "display.thread_id.uuid_spaces",
    "display.thread_id.uuid_mixed",
    "display.text.line_separator",
    "display.text.paragraph_separator",
    "display.text.nel",
    "display.text.nul",
    "display.text.c0_control",
    "display.text.crlf",
    "display.text.escapes",
    "display.text.astral",
    "display.text.bidi",
    "display.text.zero_width",
    "display.text.combining",
    "display.text.empty",
    "display.text.whitespace_only",
    "display.text.long",
];

/// Past how many rows a client that assumed rows arrive in created_at order broke (LibreChat#3813).
const PERMUTED_PAST: usize = 16;

/// Probes of what the world recorded: the system's `project` answered the history of the rows
/// the store holds; the store holds the client display's rows in another order than created_at
/// past the 16th row (what reads hand the projector: the store answers in insertion order).
pub fn record_probes(s: &DisplayScenario, record: &super::record::WorldRecord, cov: &mut Coverage) {
    if matches!(record.projected, Some(Ok(_))) {
        cov.hit("display.feature.project_answered");
    }
    if stored_out_of_order_past(s, record, PERMUTED_PAST) {
        cov.hit("display.feature.permuted_past_16");
    }
}

/// Whether a client display row at stored position `past` or later was stored after a row
/// created later than it.
fn stored_out_of_order_past(
    s: &DisplayScenario,
    record: &super::record::WorldRecord,
    past: usize,
) -> bool {
    let created: BTreeMap<u32, i64> = record
        .emissions
        .iter()
        .map(|e| (e.step, e.created_at_ns))
        .collect();
    let on_client: BTreeSet<u32> = s
        .steps()
        .filter(|step| step.display == s.client_display)
        .map(|step| step.id)
        .collect();
    let mut stored: Vec<(u64, u32)> = record
        .first_stored
        .iter()
        .filter(|(step, _)| on_client.contains(step))
        .map(|(step, op)| (*op, *step))
        .collect();
    stored.sort_unstable();
    let mut latest = i64::MIN;
    stored
        .iter()
        .filter_map(|(_, step)| created.get(step))
        .enumerate()
        .any(|(i, &at)| {
            let earlier_than_stored = at < latest;
            latest = latest.max(at);
            earlier_than_stored && i >= past
        })
}

/// Probes of the scenario as played: what the bus did (from the trace counters the world keeps)
/// and what the conversation contained.
pub fn scenario_probes(s: &DisplayScenario, cov: &mut Coverage) {
    text_probes(s, cov);
    map::map_probes(s, cov);
    if let Some(spelling) = super::thread_ids::spelling_of(&s.thread_id) {
        cov.hit(&format!("display.thread_id.{spelling}"));
    }
    let user_class = s.agents.get("user").map(|a| a.class.as_str());
    if user_class.is_some_and(|c| c != "UserAgent") {
        cov.hit("display.feature.marker_less_thread");
    }
    if s.replicas >= 3 {
        cov.hit("display.feature.replicas_3_or_more");
    }
    let early = s.turns.iter().filter(|t| t.wait_ms.is_some()).count();
    cov.hit_n("display.fault.early_request", early as u64);
    let mut answered_displays = BTreeSet::new();
    for turn in &s.turns {
        let mut streamed_agents = BTreeSet::new();
        for (i, step) in turn.steps.iter().enumerate() {
            if i > 0 && step.after_ms == 0 {
                cov.hit("display.feature.tied_timestamp");
            }
            let shared = step.display == s.client_display;
            let delegate = step.agent != s.primary && step.agent != "user";
            match &step.event {
                Event::Chunk { .. } => {
                    streamed_agents.insert(step.agent.clone());
                    if delegate && shared {
                        cov.hit("display.feature.delegation_shared");
                    }
                    if !shared {
                        cov.hit("display.feature.delegation_hidden");
                    }
                }
                Event::Stop { .. } => {
                    if step.agent == s.primary && !streamed_agents.contains(&step.agent) {
                        cov.hit("display.feature.stop_only_run");
                    }
                }
                Event::HitlQuestion { .. } => cov.hit("display.feature.hitl"),
                Event::HitlAnswer { answer } => {
                    if matches!(answer, Answer::Bool(_)) {
                        cov.hit("display.feature.hitl_bool_answer");
                    }
                    if step.display != s.client_display
                        && answered_displays.insert(step.display.clone())
                    {
                        cov.hit("display.feature.hidden_display_became_visible");
                    }
                }
                Event::Custom { .. } => cov.hit("display.feature.custom_event"),
                Event::Envelope { .. } => cov.hit("display.feature.envelope"),
                Event::Decoy { class, .. } => {
                    if class.contains("UserMessage") {
                        cov.hit("display.feature.decoy_marker");
                    } else {
                        cov.hit("display.feature.decoy_class");
                    }
                }
                Event::UserMessage { blocks } => block_probes(blocks, cov),
            }
            match &step.defect {
                Some(Defect::BadIdentity { .. }) => cov.hit("display.feature.defect_identity"),
                Some(Defect::BadCreatedAt { .. }) => cov.hit("display.feature.defect_created_at"),
                Some(Defect::BadPayload { .. }) => cov.hit("display.feature.defect_payload"),
                None => {}
            }
        }
    }
}

/// What a user message's media blocks exercise.
fn block_probes(blocks: &[Block], cov: &mut Coverage) {
    for b in blocks {
        match b {
            Block::Audio {
                data: AudioData::Legacy(bytes),
                format,
            } => {
                cov.hit("display.feature.media_legacy_bytes");
                let bad = !matches!(format.as_str(), "wav" | "mp3")
                    || bytes.iter().any(|b| !matches!(b, LegacyByte::Int(0..=255)));
                if bad {
                    cov.hit("display.feature.media_rejected");
                }
            }
            Block::Audio { format, .. } if !matches!(format.as_str(), "wav" | "mp3") => {
                cov.hit("display.feature.media_rejected")
            }
            Block::Image { url: None } | Block::Other { .. } => {
                cov.hit("display.feature.media_rejected")
            }
            Block::Text { text } if text.is_empty() => cov.hit("display.feature.empty_text_block"),
            _ => {}
        }
    }
}

/// Probes of the model's verdicts: suffixes the primary stop recovered, chunks lost for good.
pub fn model_probes(transcript: &model::display::Transcript, cov: &mut Coverage) {
    for loss in &transcript.accepted_losses {
        if loss.rule == "P5" {
            if loss.why.starts_with("recovered") {
                cov.hit("display.model.suffix_recovered");
            } else if loss.why.starts_with("lost") {
                cov.hit("display.model.chunk_lost");
            }
        }
    }
}

/// The hostile-text classes of the steps' texts (every step is written to the store; faults
/// drop deliveries to a subscriber, never the agent's write).
fn text_probes(s: &DisplayScenario, cov: &mut Coverage) {
    for step in s.turns.iter().flat_map(|t| t.steps.iter()) {
        let text = match &step.event {
            Event::UserMessage { blocks } => {
                for b in blocks {
                    if let Block::Text { text } = b {
                        hit_classes(text, "display", PROBES, cov);
                    }
                }
                continue;
            }
            Event::HitlAnswer {
                answer: Answer::Bool(_),
            } => continue,
            Event::HitlAnswer {
                answer: Answer::Text(t),
            } => t,
            Event::HitlQuestion { question } => question,
            Event::Chunk { text }
            | Event::Decoy { text, .. }
            | Event::Custom { text, .. }
            | Event::Envelope { text, .. } => text,
            Event::Stop { answer } => answer,
        };
        hit_classes(text, "display", PROBES, cov);
    }
}
