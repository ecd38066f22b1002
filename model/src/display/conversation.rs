//! The ground truth of one conversation, as the simulator generates it.
//!
//! These are the model's inputs: typed emissions in emission order plus the simulation's own
//! fault decisions (`persisted`, `defect`). The model never sees JSON rows; the simulator renders
//! rows from these values and hands the rows to the system under test, and the model computes what
//! the client must see from the values alone.

use serde::{Deserialize, Serialize};
use strum::IntoStaticStr;

/// The agent class whose user and HITL-answer emissions mark a display as client-visible.
pub const USER_AGENT_CLASS: &str = "UserAgent";

/// The identity fields of a row (contract, "Identity and dedup"). Only the non-routing ones may be
/// named by [`Defect::BadIdentity`]; see [`Defect`].
pub const IDENTITY_FIELDS: [&str; 8] = [
    "agent_class",
    "agent_id",
    "thread_id",
    "display_id",
    "run_id",
    "event_type",
    "event_name",
    "event_id",
];

/// Identity fields a [`Defect::BadIdentity`] may name. The other four (agent_class, thread_id,
/// display_id, event_type) route the row: a missing one quarantines it at the store, an empty one
/// moves it to another thread, display, topic or agent class, so the row would no longer be this
/// emission on this display and the model could not say where it went.
pub const DEFECTIVE_IDENTITY_FIELDS: [&str; 4] = ["agent_id", "run_id", "event_name", "event_id"];

/// An agent: its class name and its id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Agent {
    pub class: String,
    pub id: String,
}

impl Agent {
    pub fn new(class: &str, id: &str) -> Agent {
        Agent {
            class: class.to_string(),
            id: id.to_string(),
        }
    }

    /// Whether this is the client's own agent, whose user/HITL-answer emissions are markers.
    pub fn is_user_agent(&self) -> bool {
        self.class == USER_AGENT_CLASS
    }
}

/// One conversation (one thread) as generated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The request's primary agent. `None`: no stop is ever used (the unmounted endpoint).
    pub primary: Option<Agent>,
    /// Every emission of the thread, in the contract's total order. The simulator guarantees that
    /// emission order equals (created_at, event_id) order, so ties are already resolved here.
    pub emissions: Vec<Emission>,
}

/// One emitted event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Emission {
    /// Position in [`Conversation::emissions`] (the simulator's emission number).
    pub index: usize,
    /// Unique per emitted event.
    pub event_id: String,
    pub agent: Agent,
    pub display: String,
    pub run: String,
    pub kind: EmissionKind,
    /// The simulation's fault decision: did at least one copy reach the store?
    pub persisted: bool,
    /// The generator deliberately malformed this row.
    pub defect: Option<Defect>,
}

impl Emission {
    /// A marker makes its display visible: persisted, by the UserAgent class, of the user-message
    /// or HITL-answer family, whatever its defect (contract, "Visible displays").
    pub fn is_marker(&self) -> bool {
        self.persisted && self.marks_its_display()
    }

    /// Whether this emission, once persisted, is a marker: by the UserAgent class, of the
    /// user-message or HITL-answer family.
    pub fn marks_its_display(&self) -> bool {
        self.agent.is_user_agent()
            && matches!(
                self.kind,
                EmissionKind::UserMessage { .. } | EmissionKind::HitlAnswer { .. }
            )
    }
}

/// What was emitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum EmissionKind {
    /// `UserMessageEvent` family: the blocks of the LAST ChatMessage as sent.
    UserMessage { blocks: Vec<UserBlock> },
    /// `HumanInTheLoopRequestEvent` family.
    HitlQuestion { question: String },
    /// `HumanInTheLoopResponseEvent` family.
    HitlAnswer { answer: HitlAnswer },
    /// `ChunkEvent` family.
    Chunk { text: String },
    /// `StopEvent` family: `answer` is the last output message's content.
    Stop { answer: String },
    /// A class that only looks like a family (`NoAnswerStopEvent`, `XChunkEventY`,
    /// `UserMessageEventLog`): belongs to nothing, never shown, never a marker.
    Decoy { class: String },
    /// A custom class outside the families: never shown.
    Unrelated { class: String },
}

impl EmissionKind {
    /// A short stable name, used in provenance records and assertion messages.
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// The payload field the contract validates for this family; `None` outside the families.
    pub fn payload_field(&self) -> Option<&'static str> {
        match self {
            EmissionKind::UserMessage { .. } => Some("messages"),
            EmissionKind::HitlQuestion { .. } => Some("question"),
            EmissionKind::HitlAnswer { .. } => Some("response"),
            EmissionKind::Chunk { .. } => Some("content"),
            EmissionKind::Stop { .. } => Some("output_messages"),
            EmissionKind::Decoy { .. } | EmissionKind::Unrelated { .. } => None,
        }
    }

    /// Whether the row belongs to one of the five projectable families.
    pub fn is_family(&self) -> bool {
        self.payload_field().is_some()
    }
}

/// A HITL answer as sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HitlAnswer {
    Text(String),
    Bool(bool),
}

impl HitlAnswer {
    /// The text the client sees: a string as is, a bool as `"true"`/`"false"` (P3).
    pub fn render(&self) -> String {
        match self {
            HitlAnswer::Text(text) => text.clone(),
            HitlAnswer::Bool(value) => value.to_string(),
        }
    }
}

/// One block of a user message's last ChatMessage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum UserBlock {
    Text(String),
    Image {
        url: Option<String>,
    },
    Audio {
        data: AudioData,
        format: String,
    },
    /// Any block the contract does not keep (`block_type` not text/image/audio, or not an object).
    Other {
        block_type: String,
    },
}

/// Audio bytes as the row carries them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AudioData {
    /// A standard base64 string in the row; these are the decoded bytes.
    Base64(Vec<u8>),
    /// A legacy JSON list; each element must be an integer in 0..=255 (P13).
    Legacy(Vec<LegacyByte>),
}

/// One element of a legacy byte list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LegacyByte {
    Int(i64),
    Bool(bool),
    Float(f64),
}

/// A deliberate malformation of the row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Defect {
    /// An identity field missing or empty: the row is skipped (warning `bad_identity`). The field
    /// must be one of [`DEFECTIVE_IDENTITY_FIELDS`].
    BadIdentity { field: String },
    /// `created_at` not an integer: the row is skipped (warning `bad_created_at`).
    BadCreatedAt,
    /// The family's payload field has the wrong shape: the row is skipped (warning `bad_payload`).
    /// The field must be the family's [`EmissionKind::payload_field`].
    BadPayload { field: String },
    /// The family's payload field is absent (an agent-in-the-loop envelope whose chain reaches
    /// the family): histsim skips the row as for [`Defect::BadPayload`]; a system declaring D3
    /// reads a primary stop without `output_messages` as an empty answer, without a warning.
    AbsentPayload { field: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_need_persistence_user_agent_and_a_marker_family() {
        let marker = Emission {
            index: 0,
            event_id: "e0".into(),
            agent: Agent::new(USER_AGENT_CLASS, "u"),
            display: "d".into(),
            run: "r".into(),
            kind: EmissionKind::HitlAnswer {
                answer: HitlAnswer::Bool(true),
            },
            persisted: true,
            defect: Some(Defect::BadCreatedAt),
        };
        assert!(marker.is_marker(), "a defect does not unmark");
        let lost = Emission {
            persisted: false,
            ..marker.clone()
        };
        assert!(!lost.is_marker());
        let other_agent = Emission {
            agent: Agent::new("LeadAgent", "u"),
            ..marker.clone()
        };
        assert!(!other_agent.is_marker());
        let decoy = Emission {
            kind: EmissionKind::Decoy {
                class: "UserMessageEventLog".into(),
            },
            ..marker.clone()
        };
        assert!(
            !decoy.is_marker(),
            "a look-alike class is never a marker [P7]"
        );
        let question = Emission {
            kind: EmissionKind::HitlQuestion {
                question: "q".into(),
            },
            ..marker
        };
        assert!(!question.is_marker());
    }

    #[test]
    fn hitl_answers_render_bools_as_words() {
        assert_eq!(HitlAnswer::Bool(true).render(), "true");
        assert_eq!(HitlAnswer::Bool(false).render(), "false");
        assert_eq!(HitlAnswer::Text("yes".into()).render(), "yes");
    }

    #[test]
    fn payload_fields_match_the_contract() {
        let fields: Vec<Option<&str>> = [
            EmissionKind::UserMessage { blocks: vec![] },
            EmissionKind::HitlQuestion {
                question: String::new(),
            },
            EmissionKind::HitlAnswer {
                answer: HitlAnswer::Bool(false),
            },
            EmissionKind::Chunk {
                text: String::new(),
            },
            EmissionKind::Stop {
                answer: String::new(),
            },
            EmissionKind::Decoy {
                class: "XChunkEventY".into(),
            },
        ]
        .iter()
        .map(EmissionKind::payload_field)
        .collect();
        assert_eq!(
            fields,
            vec![
                Some("messages"),
                Some("question"),
                Some("response"),
                Some("content"),
                Some("output_messages"),
                None
            ]
        );
    }
}
