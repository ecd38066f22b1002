//! Seed -> scenario: random conversations as the platform's agents produce them.
//!
//! Agents stream chunks and stop with their answer, ask the user questions, delegate to other
//! agents (sharing the display or not, recursively, up to depth 4), emit custom classes the API
//! never heard of, look-alike classes, agent-in-the-loop envelopes, legacy media and malformed
//! rows. Every piece of text is made of words unique to its step (`c17a`, `s17a`, ...) so that a
//! checker can name the step any projected word came from.
//!
//! The workload stream decides what agents do; the fault stream decides what the bus does to it.

use super::options::DisplayOptions;
use super::scenario::{
    AgentSpec, Answer, AudioData, Block, Defect, DisplayScenario, Event, Fault, LegacyByte, Step,
    Turn,
};
use crate::hostile_text::{HostileMix, HostileText};
use crate::rng::{SeedRng, Stream};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

mod crossed;

/// Agent keys of generated scenarios.
pub(crate) const USER: &str = "user";
pub const PRIMARY: &str = "lead";
const DELEGATES: [&str; 3] = ["researcher", "retriever", "critic"];
/// The display the client talks on.
pub(crate) const MAIN_DISPLAY: &str = "main";

const DECOY_CLASSES: [&str; 4] = [
    "NoAnswerStopEvent",
    "XChunkEventY",
    "ChunkEventLog",
    "HumanInTheLoopRequestEventDraft",
];
const CUSTOM_CLASSES: [(&str, &[&str]); 3] = [
    (
        "RetrievalAgentInTheLoopResponseEvent",
        &["AgentInTheLoopResponseEvent", "RetrieverEvent", "BaseEvent"],
    ),
    ("ToolProgressEvent", &["ProgressEvent", "BaseEvent"]),
    ("PlanUpdatedEvent", &["BaseEvent"]),
];

/// The workload sub-stream the texts' hostile material is drawn from.
const TEXT_SUBSTREAM: u64 = 0x7e57;

/// How often a display text carries hostile material: a seed has dozens of texts.
const TEXT_MIX: HostileMix = HostileMix {
    hostile_probability: 0.2,
    long_probability: 0.005,
};

/// Builds the scenario of `seed` under `options`.
pub fn generate(seed: SeedRng, options: &DisplayOptions) -> DisplayScenario {
    let mut ids = seed.substream(Stream::Workload, 1);
    let mut agents = BTreeMap::new();
    let user_class = if options.marker_less {
        "LegacyUserProxy"
    } else {
        "UserAgent"
    };
    agents.insert(USER.to_string(), agent(user_class, &mut ids));
    agents.insert(PRIMARY.to_string(), agent("LeadAgent", &mut ids));
    for (key, class) in DELEGATES
        .iter()
        .zip(["ResearchAgent", "RetrievalAgent", "CriticAgent"])
    {
        agents.insert(key.to_string(), agent(class, &mut ids));
    }
    let mut displays = BTreeMap::new();
    displays.insert(MAIN_DISPLAY.to_string(), object_id(&mut ids));
    let mut gen = Generator {
        rng: seed.stream(Stream::Workload),
        ids,
        texts: HostileText::new(seed.substream(Stream::Workload, TEXT_SUBSTREAM), TEXT_MIX),
        options,
        next_step: 1,
        displays,
        steps: Vec::new(),
        trailing_chunks: Vec::new(),
        crossed: crossed::Crossed::new(seed),
    };
    let mut turns = Vec::with_capacity(options.turns as usize);
    for _ in 0..options.turns {
        let run = object_id(&mut gen.ids);
        let user_message = gen.user_message();
        gen.push(USER, MAIN_DISPLAY, &run, user_message, true);
        gen.crossed_rows(&run);
        gen.run(PRIMARY, MAIN_DISPLAY.to_string(), run, 0);
        let replica = gen.rng.random_range(0..options.replicas);
        let wait_ms = gen
            .rng
            .random_bool(options.early_request_probability)
            .then(|| gen.rng.random_range(1..=20));
        turns.push(Turn {
            replica,
            wait_ms,
            steps: std::mem::take(&mut gen.steps),
        });
    }
    let thread_id = super::thread_ids::spelled(object_id(&mut gen.ids), seed);
    if let Some(proxy) = gen.crossed.proxy.take() {
        agents.insert(crossed::PROXY.to_string(), proxy);
    }
    let faults = faults(seed, options, &turns, &gen.trailing_chunks);
    let network_seed = {
        let mut r = seed.stream(Stream::Network);
        r.random::<u64>() & (i64::MAX as u64)
    };
    DisplayScenario {
        thread_id,
        primary: PRIMARY.to_string(),
        client_display: MAIN_DISPLAY.to_string(),
        replicas: options.replicas,
        network_seed,
        agents,
        displays: gen.displays,
        turns,
        faults,
    }
}

fn agent(class: &str, ids: &mut ChaCha8Rng) -> AgentSpec {
    AgentSpec {
        class: class.to_string(),
        id: object_id(ids),
    }
}

/// A 24-hex id, as the platform's ObjectIds look.
fn object_id(rng: &mut ChaCha8Rng) -> String {
    format!("{:08x}{:016x}", rng.random::<u32>(), rng.random::<u64>())
}

/// Words unique to step `id`: `c17a c17b `.
fn words(tag: char, id: u32, count: usize) -> String {
    (0..count)
        .map(|i| format!("{tag}{id}{} ", (b'a' + i as u8) as char))
        .collect()
}

struct Generator<'a> {
    rng: ChaCha8Rng,
    ids: ChaCha8Rng,
    /// Hostile material around the words (a stream of its own: the structure stays the seed's).
    texts: HostileText,
    options: &'a DisplayOptions,
    next_step: u32,
    displays: BTreeMap<String, String>,
    steps: Vec<Step>,
    /// Per run: the ids of the chunks that end it (nothing else on the display after them before
    /// the stop). Drop faults pick from these.
    trailing_chunks: Vec<Vec<u32>>,
    /// The streams and state of the rows that cross the usual roles (`crossed.rs`).
    crossed: crossed::Crossed,
}

impl Generator<'_> {
    fn chance(&mut self, p: f64) -> bool {
        crate::rng::chance(&mut self.rng, p)
    }

    fn peek_id(&self) -> u32 {
        self.next_step
    }

    /// The words of the next step, with hostile material after them now and then; its words
    /// carry the step's marker (`~17`), so they too name their step.
    fn text(&mut self, tag: char, count: usize) -> String {
        let id = self.peek_id();
        self.texts.around(&words(tag, id, count), &format!("~{id}"))
    }

    /// A text that may also be empty or whitespace-only (HITL questions and answers, whose
    /// contract says what an empty one shows).
    fn whole_text(&mut self, tag: char, count: usize) -> String {
        let id = self.peek_id();
        self.texts
            .whole(&words(tag, id, count), &format!("~{id}"), true)
    }

    /// Appends a step; relevant steps may get a defect.
    fn push(&mut self, agent: &str, display: &str, run: &str, event: Event, relevant: bool) -> u32 {
        let id = self.next_step;
        self.next_step += 1;
        let after_ms = if self.chance(self.options.tie_probability) {
            0
        } else {
            self.rng.random_range(1..=3)
        };
        let defect = if relevant && self.chance(self.options.defect_probability) {
            Some(self.defect(&event))
        } else {
            None
        };
        self.steps.push(Step {
            id,
            after_ms,
            agent: agent.to_string(),
            display: display.to_string(),
            run: run.to_string(),
            event,
            defect,
        });
        id
    }

    fn defect(&mut self, event: &Event) -> Defect {
        match self.rng.random_range(0..3) {
            0 => Defect::BadIdentity {
                field: ["agent_id", "run_id", "event_name", "event_id"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("event_id")
                    .to_string(),
            },
            1 => Defect::BadCreatedAt {
                as_type: ["string", "bool", "float"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("string")
                    .to_string(),
            },
            _ => Defect::BadPayload {
                field: event.payload_field().to_string(),
            },
        }
    }

    fn user_message(&mut self) -> Event {
        let id = self.peek_id();
        let count = self.rng.random_range(1..=2);
        let mut blocks = vec![Block::Text {
            text: self.text('u', count),
        }];
        if self.chance(self.options.media_probability) {
            for _ in 0..self.rng.random_range(1..=2) {
                let block = self.media_block(id);
                blocks.push(block);
            }
        }
        Event::UserMessage { blocks }
    }

    fn media_block(&mut self, id: u32) -> Block {
        match self.rng.random_range(0..10) {
            0..=3 => Block::Image {
                url: self
                    .rng
                    .random_bool(0.75)
                    .then(|| format!("https://img.example/u{id}-{}.png", self.rng.random::<u16>())),
            },
            4..=8 => {
                let format = ["wav", "mp3", "wav", "mp3", "ogg"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("wav")
                    .to_string();
                let len = self.rng.random_range(1..=6);
                let bytes: Vec<u8> = (0..len).map(|_| self.rng.random()).collect();
                let data = if self.rng.random_bool(0.5) {
                    AudioData::Base64(base64_standard(&bytes))
                } else {
                    let mut legacy: Vec<LegacyByte> = bytes
                        .iter()
                        .map(|b| LegacyByte::Int(i64::from(*b)))
                        .collect();
                    if self.rng.random_bool(0.3) {
                        let bad = [
                            LegacyByte::Bool(true),
                            LegacyByte::Float(1.5),
                            LegacyByte::Int(300),
                            LegacyByte::Int(-1),
                        ]
                        .choose(&mut self.rng)
                        .copied()
                        .unwrap_or(LegacyByte::Bool(true));
                        let at = self.rng.random_range(0..=legacy.len());
                        legacy.insert(at, bad);
                    }
                    AudioData::Legacy(legacy)
                };
                Block::Audio { format, data }
            }
            // An empty text block: nothing in the history, never an empty text part.
            _ if self.rng.random_bool(0.5) => Block::Text {
                text: String::new(),
            },
            _ => Block::Other {
                name: "video".to_string(),
            },
        }
    }

    fn new_hidden_display(&mut self) -> String {
        let key = format!("hidden-{}", self.displays.len());
        let id = object_id(&mut self.ids);
        self.displays.insert(key.clone(), id);
        key
    }

    /// One run of `agent` on `display`, delegating at most to depth 4.
    fn run(&mut self, agent: &str, display: String, run: String, depth: u8) {
        let o = self.options;
        let stop_only = self.chance(o.stop_only_probability);
        // The agent's own text since the last user turn on its display: its answer.
        let mut own_text = String::new();
        // Own chunks with nothing else streamed on the display after them.
        let mut trailing: Vec<u32> = Vec::new();
        let segments = self.rng.random_range(1..=3);
        for _ in 0..segments {
            if depth < o.delegation_depth_max && self.chance(o.delegation_probability) {
                let hidden = self.delegate(agent, &display, depth);
                // A visible sub-run streams after our chunks, so they no longer trail.
                if !hidden {
                    trailing.clear();
                }
            }
            if !stop_only {
                for _ in 0..self.rng.random_range(1..=3) {
                    let count = self.rng.random_range(1..=2);
                    let text = self.text('c', count);
                    own_text.push_str(&text);
                    let id = self.push(agent, &display, &run, Event::Chunk { text }, true);
                    trailing.push(id);
                }
            }
            if self.chance(o.custom_event_probability) {
                self.custom_event(agent, &display, &run);
            }
            if self.chance(o.envelope_probability) {
                self.envelope(&display, &run);
            }
            if self.chance(o.decoy_probability) {
                self.decoy(agent, &display, &run);
            }
            if self.chance(o.hitl_probability) {
                self.hitl(agent, &display, &run);
                // The user's answer ends the agent's answer so far and what trailed it.
                own_text.clear();
                trailing.clear();
            }
        }
        let mut answer = own_text;
        if answer.is_empty() || self.chance(o.answer_tail_probability) {
            let count = self.rng.random_range(1..=2);
            answer.push_str(&self.text('s', count));
        }
        self.push(agent, &display, &run, Event::Stop { answer }, true);
        if !trailing.is_empty() {
            self.trailing_chunks.push(trailing);
        }
    }

    /// A delegated run of `agent` itself or of a delegate, on this display or a hidden one of its
    /// own; true when hidden.
    fn delegate(&mut self, agent: &str, display: &str, depth: u8) -> bool {
        let o = self.options;
        let hidden = self.chance(o.delegation_hidden_probability);
        let callee = if self.chance(o.delegation_recursive_probability) {
            agent.to_string()
        } else {
            DELEGATES
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("researcher")
                .to_string()
        };
        let sub_display = if hidden {
            self.new_hidden_display()
        } else {
            display.to_string()
        };
        let sub_run = object_id(&mut self.ids);
        self.run(&callee, sub_display, sub_run, depth + 1);
        hidden
    }

    /// A custom event of one of the known classes, off the stream.
    fn custom_event(&mut self, agent: &str, display: &str, run: &str) {
        let (class, parents) = *CUSTOM_CLASSES
            .choose(&mut self.rng)
            .unwrap_or(&CUSTOM_CLASSES[0]);
        let text = self.text('x', 1);
        let event = Event::Custom {
            class: class.to_string(),
            parents: parents.iter().map(|p| p.to_string()).collect(),
            text,
        };
        self.push(agent, display, run, event, false);
    }

    /// A delegated retrieval agent's in-the-loop response, on this display.
    fn envelope(&mut self, display: &str, run: &str) {
        let text = self.text('e', 1);
        let event = Event::Envelope {
            class: "RetrievalAgentInTheLoopResponseEvent".to_string(),
            family: "StopEvent".to_string(),
            text,
        };
        self.push("retriever", display, run, event, false);
    }

    /// A human-in-the-loop question of `agent` and the user's answer, yes/no or text.
    fn hitl(&mut self, agent: &str, display: &str, run: &str) {
        let count = self.rng.random_range(1..=2);
        let question = self.whole_text('q', count);
        self.push(agent, display, run, Event::HitlQuestion { question }, true);
        let answer = if self.chance(self.options.hitl_bool_probability) {
            Answer::Bool(self.rng.random_bool(0.5))
        } else {
            Answer::Text(self.whole_text('h', 1))
        };
        self.push(USER, display, run, Event::HitlAnswer { answer }, true);
    }

    fn decoy(&mut self, agent: &str, display: &str, run: &str) {
        let text = self.text('d', 1);
        if self.rng.random_bool(0.3) {
            // A UserAgent look-alike marker on a display of its own: it must not make that display
            // visible, so the content that follows must stay hidden.
            let hidden = self.new_hidden_display();
            let event = Event::Decoy {
                class: "UserMessageEventLog".to_string(),
                text,
            };
            self.push(USER, &hidden, run, event, false);
            let chunk = self.text('c', 1);
            self.push(agent, &hidden, run, Event::Chunk { text: chunk }, false);
        } else {
            let class = DECOY_CLASSES
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("NoAnswerStopEvent");
            let event = Event::Decoy {
                class: class.to_string(),
                text,
            };
            self.push(agent, display, run, event, false);
        }
    }
}

/// The fault plan: from the fault stream only, over the structure the workload produced.
fn faults(
    seed: SeedRng,
    options: &DisplayOptions,
    turns: &[Turn],
    trailing_chunks: &[Vec<u32>],
) -> Vec<Fault> {
    let mut rng = seed.stream(Stream::Faults);
    let mut faults = Vec::new();
    let subscribers: Vec<String> = std::iter::once("client".to_string())
        .chain((0..options.replicas).map(|r| format!("replica-{r}")))
        .collect();
    for step in turns.iter().flat_map(|t| t.steps.iter()) {
        for to in &subscribers {
            if options.delivery_duplicate_probability > 0.0
                && rng.random_bool(options.delivery_duplicate_probability)
            {
                faults.push(Fault::Duplicate {
                    step: step.id,
                    to: to.clone(),
                    copies: rng.random_range(1..=2),
                });
            }
            if options.delivery_delay_probability > 0.0
                && rng.random_bool(options.delivery_delay_probability)
            {
                faults.push(Fault::Delay {
                    step: step.id,
                    to: to.clone(),
                    ms: rng.random_range(1..=options.delivery_delay_ms_max.max(1)),
                });
            }
        }
    }
    for chunks in trailing_chunks {
        if options.trailing_chunk_drop_probability > 0.0
            && rng.random_bool(options.trailing_chunk_drop_probability)
        {
            let count = rng.random_range(1..=chunks.len().min(2));
            for id in &chunks[chunks.len() - count..] {
                faults.push(Fault::Drop { step: *id });
            }
        }
    }
    for turn in turns {
        if options.replica_disconnect_probability > 0.0
            && rng.random_bool(options.replica_disconnect_probability)
            && !turn.steps.is_empty()
        {
            let a = rng.random_range(0..turn.steps.len());
            let b = rng.random_range(a..turn.steps.len().min(a + 6));
            faults.push(Fault::Disconnect {
                replica: rng.random_range(0..options.replicas),
                from_step: turn.steps[a].id,
                to_step: turn.steps[b].id,
            });
        }
    }
    faults.extend(bus_restart(seed, options, turns));
    faults
}

/// Of the seeds, the share whose bus server restarts once.
const BUS_RESTART_PROBABILITY: f64 = 0.1;
/// The most consecutive steps a restart costs (`histsim live` lost up to 15 in one).
const BUS_RESTART_STEPS_MAX: usize = 16;

/// A restart of the bus's server, as live runs showed it (docs/live.md): every replica misses
/// the same run of consecutive steps, of any kind and across turns (NATS Core keeps nothing for
/// a subscriber that is not connected). Drawn from a fault sub-stream of its own, so every
/// draw before it is as it was.
fn bus_restart(seed: SeedRng, options: &DisplayOptions, turns: &[Turn]) -> Vec<Fault> {
    let mut rng = seed.substream(Stream::Faults, 1);
    let ids: Vec<u32> = turns
        .iter()
        .flat_map(|t| t.steps.iter().map(|s| s.id))
        .collect();
    debug_assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "step ids rise in order"
    );
    if ids.is_empty() || !rng.random_bool(BUS_RESTART_PROBABILITY) {
        return Vec::new();
    }
    let from = rng.random_range(0..ids.len());
    let to = (from + rng.random_range(0..BUS_RESTART_STEPS_MAX)).min(ids.len() - 1);
    (0..options.replicas)
        .map(|replica| Fault::Disconnect {
            replica,
            from_step: ids[from],
            to_step: ids[to],
        })
        .collect()
}

/// Standard padded base64.
pub(crate) fn base64_standard(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_ends_with_a_stop_of_its_agent() {
        let seed = SeedRng::new(5);
        let scenario = generate(seed, &DisplayOptions::from_seed(seed, None));
        for turn in &scenario.turns {
            let last = turn.steps.last().expect("a turn has steps");
            assert_eq!(last.agent, PRIMARY);
            assert!(matches!(last.event, Event::Stop { .. }));
        }
    }

    #[test]
    fn delegation_reaches_hidden_displays_at_depth() {
        let found = (0..300).any(|s| {
            let seed = SeedRng::new(s);
            let o = DisplayOptions::from_seed(seed, None);
            o.delegation_depth_max >= 3 && generate(seed, &o).displays.len() > 2
        });
        assert!(found);
    }

    #[test]
    fn base64_matches_known_vectors() {
        assert_eq!(base64_standard(b""), "");
        assert_eq!(base64_standard(b"f"), "Zg==");
        assert_eq!(base64_standard(b"fo"), "Zm8=");
        assert_eq!(base64_standard(b"foo"), "Zm9v");
        assert_eq!(base64_standard(b"foobar"), "Zm9vYmFy");
    }
}
