//! A tiny builder for writing conversations compactly in tests.
//!
//! `Build::new().primary(LEAD).emit(USER, "d", user_text("hi")).emit(LEAD, "d", chunk("a")).lost()`:
//! each `emit` appends a persisted, well-formed emission with the next index and a fresh event id;
//! `lost` and `defect` modify the last one.

use super::conversation::{
    Agent, AudioData, Conversation, Defect, Emission, EmissionKind, HitlAnswer, UserBlock,
    USER_AGENT_CLASS,
};

/// (class, id) of an agent.
pub type Who = (&'static str, &'static str);

pub const USER: Who = (USER_AGENT_CLASS, "u1");
pub const LEAD: Who = ("LeadAgent", "lead1");
pub const SUB: Who = ("RetrievalAgent", "sub1");
pub const SUB2: Who = ("RetrievalAgent", "sub2");

pub fn agent(who: Who) -> Agent {
    Agent::new(who.0, who.1)
}

/// Emission `index` of `who` on `display`, persisted and well formed, with the event id and
/// run id its index and agent give it.
pub fn emission(index: usize, who: Who, display: &str, kind: EmissionKind) -> Emission {
    Emission {
        index,
        event_id: format!("{index:024x}"),
        agent: agent(who),
        display: display.to_string(),
        run: format!("run-{}", who.1),
        kind,
        persisted: true,
        defect: None,
    }
}

pub struct Build {
    conversation: Conversation,
}

impl Build {
    pub fn new() -> Build {
        Build {
            conversation: Conversation {
                primary: None,
                emissions: Vec::new(),
            },
        }
    }

    pub fn primary(mut self, who: Who) -> Build {
        self.conversation.primary = Some(agent(who));
        self
    }

    pub fn emit(mut self, who: Who, display: &str, kind: EmissionKind) -> Build {
        let index = self.conversation.emissions.len();
        (self.conversation.emissions).push(emission(index, who, display, kind));
        self
    }

    /// The last emission never reached the store.
    pub fn lost(mut self) -> Build {
        self.last().persisted = false;
        self
    }

    /// The last emission's row is malformed.
    pub fn defect(mut self, defect: Defect) -> Build {
        self.last().defect = Some(defect);
        self
    }

    pub fn done(self) -> Conversation {
        self.conversation
    }

    fn last(&mut self) -> &mut Emission {
        self.conversation
            .emissions
            .last_mut()
            .expect("emit before modifying")
    }
}

pub fn user_text(text: &str) -> EmissionKind {
    user_blocks(vec![UserBlock::Text(text.to_string())])
}

pub fn user_blocks(blocks: Vec<UserBlock>) -> EmissionKind {
    EmissionKind::UserMessage { blocks }
}

pub fn chunk(text: &str) -> EmissionKind {
    EmissionKind::Chunk {
        text: text.to_string(),
    }
}

pub fn stop(answer: &str) -> EmissionKind {
    EmissionKind::Stop {
        answer: answer.to_string(),
    }
}

pub fn question(text: &str) -> EmissionKind {
    EmissionKind::HitlQuestion {
        question: text.to_string(),
    }
}

pub fn answer_text(text: &str) -> EmissionKind {
    EmissionKind::HitlAnswer {
        answer: HitlAnswer::Text(text.to_string()),
    }
}

pub fn answer_bool(value: bool) -> EmissionKind {
    EmissionKind::HitlAnswer {
        answer: HitlAnswer::Bool(value),
    }
}

pub fn decoy(class: &str) -> EmissionKind {
    EmissionKind::Decoy {
        class: class.to_string(),
    }
}

pub fn unrelated(class: &str) -> EmissionKind {
    EmissionKind::Unrelated {
        class: class.to_string(),
    }
}

pub fn image(url: Option<&str>) -> UserBlock {
    UserBlock::Image {
        url: url.map(str::to_string),
    }
}

pub fn audio(data: AudioData, format: &str) -> UserBlock {
    UserBlock::Audio {
        data,
        format: format.to_string(),
    }
}

pub fn bad_payload(field: &str) -> Defect {
    Defect::BadPayload {
        field: field.to_string(),
    }
}

pub fn bad_identity(field: &str) -> Defect {
    Defect::BadIdentity {
        field: field.to_string(),
    }
}
