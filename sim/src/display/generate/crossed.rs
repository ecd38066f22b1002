//! Crossed rows: the cells of the generator map (`display/map.rs`) an ordinary conversation
//! never writes. The user agent streaming, asking or stopping on a display it never marks; a
//! proxy, the primary or a delegate writing a user message or HITL answer on a display the user
//! made visible, and rows after it; a row on a display that a user's HITL answer makes visible
//! only afterwards.
//!
//! Before each primary run, again and again with the seed's `crossed_row_probability`, the
//! generator writes the next cell of the map, starting from a cell the seed picks: consecutive
//! seeds sweep the map rather than drawing the same cells. Every draw comes from two streams of
//! their own, so a seed without crossed rows is the conversation it always was.

use super::super::map::{self, DisplayState, Family, Role};
use super::super::scenario::{AgentSpec, Answer, Event};
use super::{
    agent, Generator, CUSTOM_CLASSES, DECOY_CLASSES, DELEGATES, MAIN_DISPLAY, PRIMARY, USER,
};
use crate::rng::{SeedRng, Stream};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The agent key of the user proxy, added to a scenario's agents when a crossed row needs it.
pub const PROXY: &str = "proxy";

/// The workload sub-streams crossed rows draw from (decisions, then ids).
const CROSSED_SUBSTREAM: u64 = 0xc055;
const CROSSED_IDS_SUBSTREAM: u64 = 0xc1d5;

/// The crossed rows' own streams and what they added.
pub(super) struct Crossed {
    rng: ChaCha8Rng,
    ids: ChaCha8Rng,
    /// The next cell of the map to write (an index into the possible cells).
    next_cell: usize,
    /// The proxy agent, once a crossed row used it.
    pub(super) proxy: Option<AgentSpec>,
}

impl Crossed {
    pub(super) fn new(seed: SeedRng) -> Crossed {
        let mut rng = seed.substream(Stream::Workload, CROSSED_SUBSTREAM);
        let next_cell = rng.random_range(0..map::CELL_COUNT);
        Crossed {
            rng,
            ids: seed.substream(Stream::Workload, CROSSED_IDS_SUBSTREAM),
            next_cell,
            proxy: None,
        }
    }
}

/// Every possible cell, in the map's order.
fn cells() -> Vec<(Role, Family, DisplayState)> {
    let mut cells = Vec::with_capacity(map::CELL_COUNT);
    for role in map::ROLES {
        for family in map::FAMILIES {
            for state in map::STATES {
                if map::possible(role, family, state) {
                    cells.push((role, family, state));
                }
            }
        }
    }
    debug_assert_eq!(cells.len(), map::CELL_COUNT);
    cells
}

impl Generator<'_> {
    /// The crossed rows before a primary run of `run`: none, or a few cells of the map.
    pub(super) fn crossed_rows(&mut self, run: &str) {
        let p = self.options.crossed_row_probability;
        if p <= 0.0 {
            return;
        }
        // The generator's own helpers draw from `rng` and `ids`: lend them the crossed streams.
        std::mem::swap(&mut self.rng, &mut self.crossed.rng);
        std::mem::swap(&mut self.ids, &mut self.crossed.ids);
        let cells = cells();
        let mut picked = Vec::new();
        while self.chance(p) {
            picked.push(cells[self.crossed.next_cell % cells.len()]);
            self.crossed.next_cell += 1;
        }
        // Another agent's user turn on the client's display lasts until the user's next turn:
        // the turn's other cells come first, or they would all be after a foreign turn.
        picked.sort_by_key(|&(_, _, state)| state == DisplayState::AfterForeignTurn);
        for cell in picked {
            self.crossed_cell(run, cell);
        }
        std::mem::swap(&mut self.rng, &mut self.crossed.rng);
        std::mem::swap(&mut self.ids, &mut self.crossed.ids);
    }

    /// Writes one row of `role` and `family` on a display in `state`, with what the state needs
    /// around it (another agent's user turn before it, the user's marker after it).
    fn crossed_cell(&mut self, run: &str, (role, family, state): (Role, Family, DisplayState)) {
        let display = match state {
            DisplayState::Visible => MAIN_DISPLAY.to_string(),
            DisplayState::VisibleLater | DisplayState::NeverVisible => self.new_hidden_display(),
            DisplayState::AfterForeignTurn => {
                let foreign = *[Role::Primary, Role::SubAgent, Role::Proxy]
                    .choose(&mut self.rng)
                    .unwrap_or(&Role::Proxy);
                let turn = *[Family::UserMessage, Family::HitlAnswer]
                    .choose(&mut self.rng)
                    .unwrap_or(&Family::UserMessage);
                self.crossed_row(run, foreign, turn, MAIN_DISPLAY);
                MAIN_DISPLAY.to_string()
            }
        };
        self.crossed_row(run, role, family, &display);
        let marks_itself =
            role == Role::User && matches!(family, Family::UserMessage | Family::HitlAnswer);
        if state == DisplayState::VisibleLater && !marks_itself {
            self.crossed_row(run, Role::User, Family::HitlAnswer, &display);
        }
    }

    /// One row of `role` and `family` on `display`.
    fn crossed_row(&mut self, run: &str, role: Role, family: Family, display: &str) {
        let agent = self.crossed_agent(role);
        // The user and the primary write in the turn's run; anyone else in a run of its own.
        let run = match role {
            Role::User | Role::Primary => run.to_string(),
            Role::SubAgent | Role::Proxy => super::object_id(&mut self.ids),
        };
        let event = match family {
            Family::UserMessage => self.user_message(),
            Family::HitlAnswer => Event::HitlAnswer {
                answer: if self.rng.random_bool(0.3) {
                    Answer::Bool(self.rng.random_bool(0.5))
                } else {
                    Answer::Text(self.whole_text('h', 1))
                },
            },
            Family::HitlQuestion => Event::HitlQuestion {
                question: self.whole_text('q', 1),
            },
            Family::Chunk => Event::Chunk {
                text: self.text('c', 1),
            },
            Family::Stop => Event::Stop {
                answer: self.text('s', 1),
            },
            Family::Control => self.control_event(),
        };
        self.push(&agent, display, &run, event, false);
    }

    /// A row of no family: a custom class, a look-alike (never the marker look-alike, whose
    /// hidden display `decoy` already covers) or an agent-in-the-loop envelope (the primary's
    /// is a primary stop without an answer: known difference D3).
    fn control_event(&mut self) -> Event {
        let text = self.text('x', 1);
        match self.rng.random_range(0..3) {
            0 => {
                let (class, parents) = *CUSTOM_CLASSES
                    .choose(&mut self.rng)
                    .unwrap_or(&CUSTOM_CLASSES[0]);
                Event::Custom {
                    class: class.to_string(),
                    parents: parents.iter().map(|p| p.to_string()).collect(),
                    text,
                }
            }
            1 => Event::Decoy {
                class: DECOY_CLASSES
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("NoAnswerStopEvent")
                    .to_string(),
                text,
            },
            _ => Event::Envelope {
                class: "RetrievalAgentInTheLoopResponseEvent".to_string(),
                family: "StopEvent".to_string(),
                text,
            },
        }
    }

    /// The agent key that plays `role`.
    fn crossed_agent(&mut self, role: Role) -> String {
        match role {
            Role::User => USER.to_string(),
            Role::Primary => PRIMARY.to_string(),
            Role::SubAgent => DELEGATES
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("researcher")
                .to_string(),
            Role::Proxy => {
                if self.crossed.proxy.is_none() {
                    self.crossed.proxy = Some(agent("UserProxyAgent", &mut self.ids));
                }
                PROXY.to_string()
            }
        }
    }
}
