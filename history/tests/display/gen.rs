//! Random threads for the property tests: families, custom classes, decoys, malformed rows and
//! garbage, on a few displays of two threads, with ties in `created_at`.
//!
//! Every text a family row carries starts with its display's token `<dK>` and contains
//! [`SECRET`], so tests can tell where output came from and that warnings hold no payload.

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::{lead, sub, user_agent, Ev};

pub const SECRET: &str = "SECRET";
pub const DISPLAYS: usize = 4;

#[derive(Clone, Debug)]
pub enum Kind {
    User,
    Answer(Value),
    Question,
    Chunk,
    Stop,
    Custom(&'static [&'static str]),
}

#[derive(Clone, Debug)]
pub enum Mutation {
    None,
    CreatedAtString,
    CreatedAtBool,
    CreatedAtFloat,
    EmptyAgentId,
    MissingRunId,
    PayloadWrongType,
    ControlEvent,
    Unindexable,
    ParentsNotStrings,
    Garbage(Vec<u8>),
}

/// One generated row before it gets its event id.
#[derive(Clone, Debug)]
pub struct Spec {
    pub kind: Kind,
    /// 0 = UserAgent, 1 = LeadAgent (the primary), 2 = SubAgent.
    pub agent: usize,
    /// 0 = the thread under test, 1 = another thread.
    pub thread: usize,
    pub display: usize,
    pub run: usize,
    pub t: i64,
    pub words: Vec<&'static str>,
    pub mutation: Mutation,
}

const CUSTOM_CHAINS: [&[&str]; 8] = [
    &["NoAnswerStopEvent"],
    &["XChunkEventY"],
    &["UserMessageEventLog"],
    &["RetrievalAgentInTheLoopResponseEvent", "RetrieverEvent"],
    &["FancyChunkEvent", "ChunkEvent", "BaseEvent"],
    &["ChunkEvent", "UserMessageEvent"],
    &["CustomStopEvent", "StopEvent"],
    &[],
];

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::User),
        1 => prop_oneof![Just(json!("yes")), Just(json!(true)), Just(json!(false)), Just(json!(""))].prop_map(Kind::Answer),
        1 => Just(Kind::Question),
        4 => Just(Kind::Chunk),
        2 => Just(Kind::Stop),
        2 => proptest::sample::select(&CUSTOM_CHAINS[..]).prop_map(Kind::Custom),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        30 => Just(Mutation::None),
        1 => Just(Mutation::CreatedAtString),
        1 => Just(Mutation::CreatedAtBool),
        1 => Just(Mutation::CreatedAtFloat),
        1 => Just(Mutation::EmptyAgentId),
        1 => Just(Mutation::MissingRunId),
        1 => Just(Mutation::PayloadWrongType),
        1 => Just(Mutation::ControlEvent),
        1 => Just(Mutation::Unindexable),
        1 => Just(Mutation::ParentsNotStrings),
        1 => proptest::collection::vec(any::<u8>(), 0..24).prop_map(Mutation::Garbage),
    ]
}

pub fn spec() -> impl Strategy<Value = Spec> {
    let words = proptest::collection::vec(proptest::sample::select(&["a", "b", "ab"][..]), 1..4);
    (
        kind(),
        0..3usize,
        prop_oneof![4 => Just(0usize), 1 => Just(1usize)],
        0..DISPLAYS,
        0..2usize,
        0..8i64,
        words,
        mutation(),
    )
        .prop_map(|(kind, agent, thread, display, run, t, words, mutation)| {
            // User turns and answers come from the UserAgent unless the dice say otherwise.
            let agent = match kind {
                Kind::User | Kind::Answer(_) if agent != 2 => 0,
                Kind::User | Kind::Answer(_) => 1,
                _ => agent,
            };
            Spec {
                kind,
                agent,
                thread,
                display,
                run,
                t,
                words,
                mutation,
            }
        })
}

/// A thread of `0..max` rows.
pub fn thread(max: usize) -> impl Strategy<Value = Vec<Spec>> {
    proptest::collection::vec(spec(), 0..max)
}

/// Rows plus a delivery order: every row at least once, some more than once, shuffled.
pub fn deliveries(max: usize) -> impl Strategy<Value = (Vec<Spec>, Vec<usize>)> {
    thread(max).prop_flat_map(|specs| {
        let n = specs.len();
        let extra = proptest::collection::vec(0..n.max(1), 0..(n / 2 + 1));
        (Just(specs), extra).prop_flat_map(move |(specs, extra)| {
            let mut order: Vec<usize> = (0..n).collect();
            order.extend(extra.into_iter().filter(|&i| i < n));
            (Just(specs), Just(order).prop_shuffle())
        })
    })
}

impl Spec {
    fn agent(&self) -> history::display::AgentIdentity {
        [user_agent(), lead(), sub()][self.agent].clone()
    }

    pub fn display_id(&self) -> String {
        format!("d{}", self.display)
    }

    pub fn text(&self) -> String {
        self.words
            .iter()
            .map(|w| format!("<{}>{SECRET}{w}", self.display_id()))
            .collect()
    }

    /// Whether this row marks its display visible (contract, stage 1).
    pub fn is_marker(&self) -> bool {
        let indexable = !matches!(
            self.mutation,
            Mutation::Unindexable
                | Mutation::ParentsNotStrings
                | Mutation::Garbage(_)
                | Mutation::ControlEvent
        );
        let marker_kind = match self.kind {
            Kind::User | Kind::Answer(_) => true,
            Kind::Custom(chain) => {
                chain.contains(&"UserMessageEvent")
                    || chain.contains(&"HumanInTheLoopResponseEvent")
            }
            _ => false,
        };
        indexable && marker_kind && self.agent == 0 && self.thread == 0
    }

    pub fn row(&self, index: usize) -> Vec<u8> {
        let event_id = format!("e{index:03}");
        let (display, run, t, text) = (
            self.display_id(),
            format!("r{}", self.run),
            self.t,
            self.text(),
        );
        let agent = self.agent();
        let mut ev = match &self.kind {
            Kind::User => Ev::user(&display, &event_id, t, &text),
            Kind::Answer(v) => Ev::answer(&display, &event_id, t, v.clone()),
            Kind::Question => Ev::question(&agent, &display, &event_id, t, &text),
            Kind::Chunk => Ev::chunk(&agent, &display, &run, &event_id, t, &text),
            Kind::Stop => Ev::stop(&agent, &display, &run, &event_id, t, &text),
            Kind::Custom(chain) => Ev::custom(
                &agent,
                &display,
                &event_id,
                t,
                chain,
                json!({
                "content": text, "output_messages": [{"content": text}], "blob": [1, {"x": SECRET}]}),
            ),
        };
        ev = ev
            .set("agent_class", json!(agent.agent_class))
            .set("agent_id", json!(agent.agent_id))
            .set("run_id", json!(run));
        if self.thread == 1 {
            ev = ev.set("thread_id", json!("T-other"));
        }
        let payload_field = match &self.kind {
            Kind::User => "messages",
            Kind::Answer(_) => "response",
            Kind::Question => "question",
            Kind::Chunk | Kind::Custom(_) => "content",
            Kind::Stop => "output_messages",
        };
        ev = match &self.mutation {
            Mutation::None => ev,
            Mutation::CreatedAtString => ev.data("created_at", json!(t.to_string())),
            Mutation::CreatedAtBool => ev.data("created_at", json!(true)),
            Mutation::CreatedAtFloat => ev.data("created_at", json!(t as f64 + 0.5)),
            Mutation::EmptyAgentId => ev.set("agent_id", json!("")),
            Mutation::MissingRunId => ev.without("run_id"),
            Mutation::PayloadWrongType => ev.data(payload_field, json!({ "v": SECRET })),
            Mutation::ControlEvent => ev.set("event_type", json!("control_event")),
            Mutation::Unindexable => ev.set("display_id", json!(7)),
            Mutation::ParentsNotStrings => ev.set("event_parents", json!(["ChunkEvent", 1])),
            Mutation::Garbage(bytes) => return bytes.clone(),
        };
        ev.bytes()
    }
}

/// The rows of `specs`, one per spec, with event ids by position.
pub fn rows(specs: &[Spec]) -> Vec<Vec<u8>> {
    specs.iter().enumerate().map(|(i, s)| s.row(i)).collect()
}

/// The rows in delivery order.
pub fn delivered(specs: &[Spec], order: &[usize]) -> Vec<Vec<u8>> {
    let rows = rows(specs);
    order.iter().map(|&i| rows[i].clone()).collect()
}
