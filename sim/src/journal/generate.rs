//! Seed -> scenario: coding-agent sessions as the seed describes them.
//!
//! Turns append a question, sometimes a tool call with a long result, and an answer; restores
//! replace the history (while another recorder hands over rows); rewinds, clears, compressions by
//! the summarization middleware, density changes and inserts reshape it; the pager reads
//! statistics incrementally, estimates count tokens concurrently, requests truncate tool results
//! at the last resort; forks and clones copy the recording and the session switches to them.
//! Sessions shared with subagents mutate a history of several origins fanned out to mirrors that
//! attach late, fail and are resumed.
//!
//! The workload stream decides what sessions do; the fault stream decides which writes fail and
//! where hosts crash.

use super::options::JournalSimOptions;
use super::scenario::{
    Action, JournalScenario, Op, RowSpec, SessionScript, SharedAction, SpeakerSpec,
};
use crate::hostile_text::{HostileMix, HostileText};
use crate::rng::{SeedRng, Stream};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

const SUBAGENTS: [&str; 3] = ["explorer", "critic", "planner"];
const PIECES: [&str; 10] = [
    "fn ",
    "main",
    "() {",
    " let x",
    " = 42;",
    "}",
    "The quick ",
    "brown fox",
    " 12345",
    "\n",
];

/// The first workload sub-stream of the rows' hostile material (one a session after it).
const TEXT_SUBSTREAM: u64 = 0x7e57_0000;

/// How often a row's text carries hostile material: a seed writes a few hundred rows.
const TEXT_MIX: HostileMix = HostileMix {
    hostile_probability: 0.15,
    long_probability: 0.01,
};

/// Builds the scenario of `seed` under `options`.
pub fn generate(seed: SeedRng, options: &JournalSimOptions) -> JournalScenario {
    let mut sessions: Vec<SessionScript> = (0..options.sessions)
        .map(|s| {
            let mut g = Gen {
                rng: seed.substream(Stream::Workload, u64::from(s)),
                o: options,
                s: u32::from(s),
                rows: 0,
                shared_rows: 0,
                forks: Vec::new(),
                words: 0,
                texts: HostileText::new(
                    seed.substream(Stream::Workload, TEXT_SUBSTREAM + u64::from(s)),
                    TEXT_MIX,
                ),
            };
            g.session()
        })
        .collect();
    let crashes = super::fault_plan::faults(seed, options, &mut sessions);
    let network_seed = seed.stream(Stream::Network).random::<u64>() & (i64::MAX as u64);
    JournalScenario {
        network_seed,
        load_step_records: u32::from(options.load_step_records),
        mirror_settle_ms: options.mirror_settle_ms,
        sessions,
        crashes,
        recorded_storage_ops: super::recorded_storage::draw_ops(seed),
    }
}

struct Gen<'a> {
    rng: ChaCha8Rng,
    o: &'a JournalSimOptions,
    s: u32,
    /// About how many rows the recording holds (the world clamps what is off).
    rows: u64,
    shared_rows: u64,
    forks: Vec<String>,
    words: u32,
    /// Hostile material after the rows' words (a stream of its own: the structure stays the
    /// seed's).
    texts: HostileText,
}

fn spec(speaker: SpeakerSpec, text: String) -> RowSpec {
    RowSpec::plain(speaker, text)
}

impl Gen<'_> {
    fn chance(&mut self, p: f64) -> bool {
        crate::rng::chance(&mut self.rng, p)
    }

    /// A row's text: a word no other row of the scenario uses, hostile material after it now
    /// and then.
    fn text(&mut self, tag: &str) -> String {
        let word = self.word(tag);
        self.texts.around(&word, &word)
    }

    /// A word no other row of the scenario uses.
    fn word(&mut self, tag: &str) -> String {
        self.words += 1;
        format!("{tag}{}w{}", self.s, self.words)
    }

    /// One turn: a question, maybe a tool call and its long result, an answer.
    fn turn(&mut self) -> Vec<RowSpec> {
        let mut rows = vec![spec(SpeakerSpec::Human, self.text("q"))];
        if self.chance(self.o.tool_probability) {
            let call = self.word("call");
            rows.push(RowSpec {
                call: Some(call.clone()),
                ..spec(SpeakerSpec::Ai, self.text("a"))
            });
            rows.push(RowSpec {
                call: Some(call),
                pad_bytes: self.rng.random_range(200..=3000),
                ..spec(SpeakerSpec::Tool, self.text("result"))
            });
        }
        rows.push(spec(SpeakerSpec::Ai, self.text("a")));
        rows
    }

    fn session(&mut self) -> SessionScript {
        let shared = self.chance(self.o.shared_probability);
        let subagents: Vec<String> = if shared {
            let n = self.rng.random_range(1..=SUBAGENTS.len());
            SUBAGENTS[..n].iter().map(|s| s.to_string()).collect()
        } else {
            Vec::new()
        };
        let mut origins = vec!["main".to_string()];
        origins.extend(subagents.iter().cloned());
        let mut mirrors: Vec<String> = origins
            .iter()
            .filter(|_| self.rng.random_bool(0.7))
            .cloned()
            .collect();
        if shared && mirrors.is_empty() {
            mirrors.push(origins[0].clone());
        }
        let mut attached = mirrors.clone();
        let mut ops = Vec::with_capacity(self.o.ops_per_session as usize + 1);
        for k in 0..self.o.ops_per_session as usize {
            let action = if shared && self.chance(self.o.shared_op_probability) {
                self.shared_action(&origins, &mut attached)
            } else {
                self.solo_action(k)
            };
            ops.push(Op {
                after_ms: self.rng.random_range(1..=8),
                fail: false,
                action,
            });
        }
        if self.chance(self.o.dispose_probability) {
            ops.push(Op {
                after_ms: 1,
                fail: false,
                action: Action::Dispose { fault: None },
            });
        }
        SessionScript {
            subagents,
            mirrors,
            ops,
        }
    }

    fn solo_action(&mut self, k: usize) -> Action {
        match self.solo_kind() {
            1 => self.replace_action(),
            2 => {
                let rows = self.rng.random_range(1..=3);
                self.rows = self.rows.saturating_sub(rows);
                Action::Rewind { rows }
            }
            3 => {
                self.rows = 0;
                Action::Clear
            }
            4 => {
                let keep = self.rng.random_range(0..=3);
                self.rows = keep.min(self.rows) + 1;
                Action::Compress { keep }
            }
            5 => self.density_action(),
            6 => {
                self.rows += 1;
                let after = self
                    .rng
                    .random_bool(0.8)
                    .then(|| self.rng.random_range(0..self.rows.max(1) as u32));
                Action::Insert {
                    after,
                    row: spec(SpeakerSpec::Ai, self.text("inserted")),
                }
            }
            7 => Action::Read,
            8 => self.estimate_action(),
            9 => Action::Send {
                budget_percent: self.rng.random_range(30..=90),
                keep_bytes: self.rng.random_range(64..=256),
            },
            10 => self.fork_action(k),
            11 => self.switch_action(),
            12 => Action::ResumeAgain,
            _ => {
                let rows = self.turn();
                self.rows += rows.len() as u64;
                Action::Append { rows }
            }
        }
    }

    /// Draws which kind of solo action comes next (0 is a turn). Kinds that need rows or forks
    /// the recording lacks weigh nothing, so they are never drawn.
    fn solo_kind(&mut self) -> u8 {
        let o = self.o;
        let n = self.rows;
        let weights: [(u8, f64); 13] = [
            (0, 1.0),
            (1, o.replace_probability),
            (2, if n >= 1 { o.rewind_probability } else { 0.0 }),
            (3, if n >= 1 { o.clear_probability } else { 0.0 }),
            (4, if n >= 3 { o.compress_probability } else { 0.0 }),
            (5, if n >= 1 { o.density_probability } else { 0.0 }),
            (6, o.insert_probability),
            (7, o.read_probability),
            (8, o.estimate_probability),
            (9, o.send_probability),
            (10, o.fork_probability),
            (
                11,
                if self.forks.is_empty() {
                    0.0
                } else {
                    o.switch_probability
                },
            ),
            (12, o.resume_again_probability),
        ];
        let total: f64 = weights.iter().map(|(_, w)| w).sum();
        let mut pick = self.rng.random_range(0.0..total);
        let mut kind = 0;
        for (k, w) in weights {
            if pick < w {
                kind = k;
                break;
            }
            pick -= w;
        }
        kind
    }

    /// A restore: groups of restored rows, maybe with rows another recorder hands over.
    fn replace_action(&mut self) -> Action {
        let o = self.o;
        let groups: Vec<Vec<RowSpec>> = (0..self.rng.random_range(1..=3))
            .map(|_| {
                (0..self.rng.random_range(0..=3))
                    .map(|_| spec(SpeakerSpec::Ai, self.text("restored")))
                    .collect()
            })
            .collect();
        let arrivals: Vec<RowSpec> = if self.chance(o.replace_arrivals_probability) {
            (0..self.rng.random_range(1..=2))
                .map(|_| RowSpec {
                    origin: Some("helper".into()),
                    ..spec(SpeakerSpec::Ai, self.text("helper"))
                })
                .collect()
        } else {
            Vec::new()
        };
        self.rows = (groups.iter().map(Vec::len).sum::<usize>() + arrivals.len()) as u64;
        Action::Replace {
            groups,
            gap_ms: self.rng.random_range(1..=4),
            arrivals,
        }
    }

    /// A density change: rows removed and rows rewritten, small or (sometimes) large.
    fn density_action(&mut self) -> Action {
        let large = self.chance(self.o.density_large_probability);
        let span = self.rows.max(1) as u32;
        let remove: Vec<u32> = (0..self.rng.random_range(0..=2))
            .map(|_| self.rng.random_range(0..span))
            .collect();
        let rewrite: Vec<u32> = (0..self.rng.random_range(1..=3))
            .map(|_| self.rng.random_range(0..span))
            .collect();
        self.rows = self.rows.saturating_sub(remove.len() as u64);
        Action::Density {
            remove,
            rewrite,
            rewrite_bytes: if large {
                self.rng.random_range(25_000..=40_000)
            } else {
                self.rng.random_range(10..=200)
            },
        }
    }

    /// Concurrent token estimates: a few texts and the order their counts are asked for.
    fn estimate_action(&mut self) -> Action {
        let texts: Vec<Vec<String>> = (0..self.rng.random_range(2..=3))
            .map(|_| {
                (0..self.rng.random_range(2..=4))
                    .map(|_| {
                        PIECES
                            .choose(&mut self.rng)
                            .copied()
                            .unwrap_or("x")
                            .to_string()
                    })
                    .collect()
            })
            .collect();
        let schedule: Vec<u8> = (0..self.rng.random_range(6..=16))
            .map(|_| self.rng.random_range(0..texts.len() as u8))
            .collect();
        Action::Estimate { texts, schedule }
    }

    /// A fork (cut some rows back) or a clone, named after the operation that makes it.
    fn fork_action(&mut self, k: usize) -> Action {
        let name = format!("copy-{k}");
        self.forks.push(name.clone());
        if self.rng.random_bool(0.6) {
            Action::Fork {
                name,
                back: self.rng.random_range(0..=3),
            }
        } else {
            Action::Clone { name }
        }
    }

    /// A switch to a known fork; the human may type while it happens.
    fn switch_action(&mut self) -> Action {
        let to = self
            .forks
            .choose(&mut self.rng)
            .cloned()
            .unwrap_or_default();
        // With failing switches enabled the typed rows are always drawn, so the draw that
        // decides them is skipped (short-circuit) exactly as before.
        let typed = self.o.switch_fail_probability > 0.0 || self.rng.random_bool(0.5);
        let arrivals: Vec<RowSpec> = if typed {
            (0..self.rng.random_range(1..=2))
                .map(|_| spec(SpeakerSpec::Human, self.text("typed")))
                .collect()
        } else {
            Vec::new()
        };
        Action::Switch { to, arrivals }
    }

    fn shared_action(&mut self, origins: &[String], attached: &mut Vec<String>) -> Action {
        let o = self.o;
        if self.chance(o.late_attach_probability) {
            let free: Vec<&String> = origins.iter().filter(|x| !attached.contains(x)).collect();
            if let Some(origin) = free.choose(&mut self.rng).map(|s| s.to_string()) {
                attached.push(origin.clone());
                return Action::AttachMirror { origin };
            }
        }
        if self.chance(o.shared_resume_probability) {
            return Action::SharedResume;
        }
        let origin = origins.choose(&mut self.rng).cloned().unwrap_or_default();
        let op = self.shared_op(origins);
        Action::Shared {
            origin,
            op,
            fail_mirror: None,
        }
    }

    /// What one origin does to the shared history. Kinds that need rows the history lacks fall
    /// through to a one-row append.
    fn shared_op(&mut self, origins: &[String]) -> SharedAction {
        let n = self.shared_rows;
        match self.rng.random_range(0..100) {
            0..=44 => {
                let rows: Vec<RowSpec> = (0..self.rng.random_range(1..=2))
                    .map(|_| spec(SpeakerSpec::Ai, self.text("said")))
                    .collect();
                self.shared_rows += rows.len() as u64;
                SharedAction::Append { rows }
            }
            45..=59 if n > 0 => {
                let rows = self.rng.random_range(1..=3);
                self.shared_rows = n.saturating_sub(rows);
                SharedAction::Rewind { rows }
            }
            60..=67 => {
                self.shared_rows += 1;
                SharedAction::Insert {
                    after: self
                        .rng
                        .random_bool(0.8)
                        .then(|| self.rng.random_range(0..n.max(1) as u32)),
                    row: spec(SpeakerSpec::Ai, self.text("inserted")),
                }
            }
            68..=77 if n > 0 => SharedAction::Transform {
                at: self.rng.random_range(0..n as u32),
            },
            78..=81 => {
                self.shared_rows = 0;
                SharedAction::Clear
            }
            82..=91 => {
                let rows: Vec<RowSpec> = (0..self.rng.random_range(0..=4))
                    .map(|_| RowSpec {
                        origin: origins.choose(&mut self.rng).cloned(),
                        ..spec(SpeakerSpec::Ai, self.text("restored"))
                    })
                    .collect();
                self.shared_rows = rows.len() as u64;
                SharedAction::Restore { rows }
            }
            92..=99 if n >= 2 => {
                let keep = self.rng.random_range(0..=2);
                self.shared_rows = keep.min(n) + 1;
                SharedAction::Compress { keep }
            }
            _ => {
                self.shared_rows += 1;
                SharedAction::Append {
                    rows: vec![spec(SpeakerSpec::Ai, self.text("said"))],
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_reach_crashes_mid_replacement_and_shared_histories() {
        let scenarios: Vec<JournalScenario> = (0..100)
            .map(|s| {
                let seed = SeedRng::new(s);
                generate(seed, &JournalSimOptions::from_seed(seed))
            })
            .collect();
        assert!(scenarios
            .iter()
            .any(|sc| sc.crashes.iter().any(|c| c.during.is_some())));
        assert!(scenarios
            .iter()
            .any(|sc| sc.sessions.iter().any(|s| s.subagents.len() >= 2)));
    }
}
