//! The display workload as data: a scripted conversation and the faults the bus injects.
//!
//! A random seed is turned into one of these by [`super::generate`]; a scenario file holds one
//! written by hand or by the shrinker. The world ([`super::world`]) plays it; nothing else about a
//! run is random except turmoil's network jitter, which `network_seed` fixes.

use model::display::{DEFECTIVE_IDENTITY_FIELDS, KNOWN_BLOCK_TYPES};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn main_display() -> String {
    "main".to_string()
}

/// A scripted conversation on one thread, with its fault plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisplayScenario {
    /// The thread every row belongs to.
    pub thread_id: String,
    /// Key (in `agents`) of the agent the client talks to: the request's primary agent.
    pub primary: String,
    /// Key (in `displays`) of the display the client subscribes to live.
    #[serde(default = "main_display")]
    pub client_display: String,
    /// Number of API replicas (1 to 5). Each runs a persister on the fan-out bus.
    pub replicas: u8,
    /// Seed of turmoil's own network randomness (below 2^63).
    #[serde(default)]
    pub network_seed: u64,
    /// Agents by key: their class and id as they appear in rows.
    pub agents: BTreeMap<String, AgentSpec>,
    /// Displays by key: their display_id.
    pub displays: BTreeMap<String, String>,
    /// The follow-up requests of the client, each with the run it dispatches.
    pub turns: Vec<Turn>,
    /// What the bus does wrong.
    #[serde(default)]
    pub faults: Vec<Fault>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    pub class: String,
    pub id: String,
}

/// One follow-up request and the run it dispatches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Index of the replica that serves the request (0-based).
    #[serde(default)]
    pub replica: u8,
    /// How long the client waits after this request before the next one. `None`: until it sees the
    /// primary agent's stop of this run live (then persistence may still lag: an early read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u32>,
    /// What the agents emit for this run, in order.
    pub steps: Vec<Step>,
}

/// One emitted event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Unique within the scenario; faults name steps by it.
    pub id: u32,
    /// Simulated milliseconds after the previous step of the run (0: same instant, a tied timestamp).
    #[serde(default)]
    pub after_ms: u32,
    /// Agent key.
    pub agent: String,
    /// Display key.
    pub display: String,
    /// The run_id the row carries.
    pub run: String,
    pub event: Event,
    /// A deliberate malformation of the row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defect: Option<Defect>,
}

/// What an agent emits. Text fields are made of unique words so checkers can tell where any
/// projected word came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// `UserMessageEvent`; `blocks` are those of the last ChatMessage.
    UserMessage { blocks: Vec<Block> },
    /// `HumanInTheLoopRequestEvent`.
    HitlQuestion { question: String },
    /// `HumanInTheLoopResponseEvent`, a string or a bool.
    HitlAnswer { answer: Answer },
    /// `ChunkEvent`.
    Chunk { text: String },
    /// `StopEvent` whose last output message has `answer` as content.
    Stop { answer: String },
    /// A class that only looks like a family (`NoAnswerStopEvent`, `XChunkEventY`,
    /// `UserMessageEventLog`): its payload carries `text` in the field the look-alike family reads.
    Decoy { class: String, text: String },
    /// A custom class the API never heard of, with a parent chain of non-family names.
    Custom {
        class: String,
        parents: Vec<String>,
        text: String,
    },
    /// A custom class nested in an agent-in-the-loop envelope whose chain reaches `family` but whose
    /// payload is the envelope, not the family's fields (the seed's HTTP 500).
    Envelope {
        class: String,
        family: String,
        text: String,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    Bool(bool),
    Text(String),
}

/// A content block of a user message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "block_type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Block {
    Text {
        text: String,
    },
    Image {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    Audio {
        format: String,
        data: AudioData,
    },
    /// Any other block type (`video`, `file`): dropped by the projector.
    Other {
        name: String,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AudioData {
    /// Standard padded base64.
    Base64(String),
    /// A legacy list of byte values as stored by old writers: ints, and sometimes bools or floats.
    Legacy(Vec<LegacyByte>),
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LegacyByte {
    Bool(bool),
    Int(i64),
    Float(f64),
}

/// A deliberate malformation of a row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Defect {
    /// An identity field (`event_id`, `run_id`, ...) is empty.
    BadIdentity { field: String },
    /// `created_at` written as a string, a bool or a float: `as_type` is `string`, `bool` or `float`.
    BadCreatedAt { as_type: String },
    /// The family's payload field has the wrong shape; the payload still carries the step's text
    /// elsewhere (so a warning that dumps the payload is caught).
    BadPayload { field: String },
}

/// A fault the bus injects. Subscribers are `"client"` or `"replica-N"` (0-based).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Deliver `copies` extra copies of step `step` to `to` (a redelivery, a double subscription).
    Duplicate { step: u32, to: String, copies: u8 },
    /// Hold step `step` for `ms` simulated milliseconds before delivering it to `to`.
    Delay { step: u32, to: String, ms: u32 },
    /// The publisher loses a trailing chunk: no subscriber ever gets step `step`.
    Drop { step: u32 },
    /// Replica `replica`'s subscription is down for steps `from_step..=to_step` (by id): it never
    /// receives them (NATS Core has no replay).
    Disconnect {
        replica: u8,
        from_step: u32,
        to_step: u32,
    },
}

/// A subscriber of the bus, as faults name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Subscriber {
    Client,
    Replica(u8),
}

impl Subscriber {
    pub fn parse(s: &str) -> Option<Subscriber> {
        if s == "client" {
            return Some(Subscriber::Client);
        }
        s.strip_prefix("replica-")
            .and_then(|n| n.parse().ok())
            .map(Subscriber::Replica)
    }

    pub fn name(self) -> String {
        match self {
            Subscriber::Client => "client".to_string(),
            Subscriber::Replica(r) => format!("replica-{r}"),
        }
    }
}

impl Event {
    /// The payload field the event's family reads (what a `BadPayload` defect breaks).
    pub fn payload_field(&self) -> &'static str {
        match self {
            Event::UserMessage { .. } => "messages",
            Event::HitlQuestion { .. } => "question",
            Event::HitlAnswer { .. } => "response",
            Event::Chunk { .. } => "content",
            Event::Stop { .. } => "output_messages",
            Event::Decoy { .. } | Event::Custom { .. } | Event::Envelope { .. } => "event_data",
        }
    }
}

impl DisplayScenario {
    /// Every step, in scenario order.
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.turns.iter().flat_map(|t| t.steps.iter())
    }

    /// Checks the references a file can get wrong, naming the field. The generator's output passes
    /// by construction (a test asserts it).
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=5).contains(&self.replicas) {
            return Err(format!(
                "replicas: expected 1 to 5, found {}",
                self.replicas
            ));
        }
        key_known(&self.agents, &self.primary, "primary", "agent")?;
        key_known(
            &self.displays,
            &self.client_display,
            "client_display",
            "display",
        )?;
        if self.network_seed > i64::MAX as u64 {
            return Err("network_seed: expected a value below 2^63".into());
        }
        let mut ids = std::collections::BTreeSet::new();
        for (t, turn) in self.turns.iter().enumerate() {
            if turn.replica >= self.replicas {
                return Err(format!(
                    "turns[{t}].replica: expected 0 to {}, found {}",
                    self.replicas - 1,
                    turn.replica
                ));
            }
            for (s, step) in turn.steps.iter().enumerate() {
                self.validate_step(&format!("turns[{t}].steps[{s}]"), step, &mut ids)?;
            }
        }
        for (f, fault) in self.faults.iter().enumerate() {
            self.validate_fault(&format!("faults[{f}]"), fault, &ids)?;
        }
        let timeline_ms = self.timeline_ms();
        if timeline_ms > TIMELINE_MS_MAX {
            return Err(format!(
                "faults: twice the longest delay, with the steps' after_ms and the turns' \
                 wait_ms, adds up to {timeline_ms} ms of simulated time; at most \
                 {TIMELINE_MS_MAX} ms fit before the world gives up"
            ));
        }
        Ok(())
    }

    /// The simulated time the scenario asks for at most: every step's pause, every turn's wait
    /// (the live stop wait where it has none), and the longest delay of a delivery twice (the
    /// client polls for convergence as long again as a delivery may be held).
    fn timeline_ms(&self) -> u64 {
        let steps: u64 = self.steps().map(|s| u64::from(s.after_ms)).sum();
        let waits: u64 = (self.turns.iter())
            .map(|t| u64::from(t.wait_ms.unwrap_or(LIVE_STOP_WAIT_MS)))
            .sum();
        let delay = (self.faults.iter())
            .map(|f| match f {
                Fault::Delay { ms, .. } => u64::from(*ms),
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        steps + waits + 2 * delay
    }

    /// One step at `at`; `ids` collects the step ids seen so far.
    fn validate_step(
        &self,
        at: &str,
        step: &Step,
        ids: &mut std::collections::BTreeSet<u32>,
    ) -> Result<(), String> {
        if !ids.insert(step.id) {
            return Err(format!("{at}.id: step id {} is used twice", step.id));
        }
        key_known(&self.agents, &step.agent, &format!("{at}.agent"), "agent")?;
        key_known(
            &self.displays,
            &step.display,
            &format!("{at}.display"),
            "display",
        )?;
        if let Event::UserMessage { blocks } = &step.event {
            for (b, block) in blocks.iter().enumerate() {
                if let Block::Other { name } = block {
                    // The row would carry a block of that type with none of its fields: the
                    // projector reads it as that type, the model as an unknown one.
                    if KNOWN_BLOCK_TYPES.contains(&name.as_str()) {
                        return Err(format!(
                            "{at}.event.blocks[{b}].name: `{name}` is a block type of its own; \
                             write it as {{ block_type = \"{name}\", ... }}, not as `other`"
                        ));
                    }
                }
            }
        }
        if let Some(Defect::BadCreatedAt { as_type }) = &step.defect {
            if !["string", "bool", "float"].contains(&as_type.as_str()) {
                return Err(format!(
                    "{at}.defect.as_type: expected `string`, `bool` or `float`, found `{as_type}`"
                ));
            }
        }
        if let Some(Defect::BadIdentity { field }) = &step.defect {
            // The other four route the row (agent class, thread, display, topic): blank, it
            // would be another emission elsewhere, which the model does not follow.
            if !DEFECTIVE_IDENTITY_FIELDS.contains(&field.as_str()) {
                return Err(format!(
                    "{at}.defect.field: expected one of {DEFECTIVE_IDENTITY_FIELDS:?} (a blank \
                     agent_class, thread_id, display_id or event_type moves the row off this \
                     thread's display), found `{field}`"
                ));
            }
        }
        if let Some(Defect::BadPayload { field }) = &step.defect {
            // The row encoder breaks the field the event's family reads, whatever is named
            // here; a different name would be a defect the model is told about but the row
            // does not carry.
            let expected = step.event.payload_field();
            if field != expected {
                return Err(format!(
                    "{at}.defect.field: this step's event reads its payload from `{expected}`, \
                     found `{field}`"
                ));
            }
        }
        Ok(())
    }

    /// One fault at `at`, against the step ids of the scenario.
    fn validate_fault(
        &self,
        at: &str,
        fault: &Fault,
        ids: &std::collections::BTreeSet<u32>,
    ) -> Result<(), String> {
        let (step, to) = match fault {
            Fault::Duplicate { step, to, .. } | Fault::Delay { step, to, .. } => {
                (Some(*step), Some(to))
            }
            Fault::Drop { step } => (Some(*step), None),
            Fault::Disconnect {
                replica,
                from_step,
                to_step,
            } => {
                if *replica >= self.replicas {
                    return Err(format!("{at}.replica: no replica {replica}"));
                }
                if from_step > to_step {
                    return Err(format!(
                        "{at}: from_step {from_step} is after to_step {to_step}"
                    ));
                }
                (None, None)
            }
        };
        if let Some(step) = step {
            if !ids.contains(&step) {
                return Err(format!("{at}.step: no step with id {step}"));
            }
        }
        if let Some(to) = to {
            match Subscriber::parse(to) {
                Some(Subscriber::Replica(r)) if r >= self.replicas => {
                    return Err(format!("{at}.to: no replica {r}"));
                }
                Some(_) => {}
                None => {
                    return Err(format!(
                        "{at}.to: expected `client` or `replica-N`, found `{to}`"
                    ))
                }
            }
        }
        Ok(())
    }
}

/// `Err` naming `field` unless `key` is a key of `map`, the scenario's `what`s (agents, displays).
fn key_known<V>(
    map: &BTreeMap<String, V>,
    key: &str,
    field: &str,
    what: &str,
) -> Result<(), String> {
    if map.contains_key(key) {
        Ok(())
    } else {
        Err(format!("{field}: no {what} with key `{key}`"))
    }
}

/// The most simulated time a scenario's own pauses, waits and delays may add up to: the world
/// gives up at 600 s, and polling for convergence, the bus and the replicas need time of their
/// own after them.
pub const TIMELINE_MS_MAX: u64 = 300_000;

/// How long the client waits to see a run's stop live before it sends the next request, in a
/// turn without `wait_ms`.
pub(crate) const LIVE_STOP_WAIT_MS: u32 = 500;
