//! The model's side of a merge session: the scenario's steps replayed into `model::merge`
//! (what the server persisted, what reached the client), giving the list each render must
//! show. Independent of the client merge and of the world's server: it reads the scenario
//! alone, and names every copy (optimistic, injected) by the message it copies.

use super::scenario::{message_id, optimistic_id, thread_name, MergeScenario, Step};
use history::client_merge::INJECTED_SUFFIX;
use model::merge::{Expected, Key, Persisted, Truth};
use std::collections::BTreeMap;

/// What one render must show.
#[derive(Clone, Debug)]
pub struct ExpectedRender {
    /// The thread open.
    pub thread: String,
    pub keys: Vec<Key>,
    /// The messages a page delivered since the thread opened, with the seq it told.
    pub paged: BTreeMap<Key, u64>,
}

/// Every render's expectation, and what names a copy stands for.
pub struct Expectation {
    pub renders: Vec<ExpectedRender>,
    /// Optimistic and injected copies' ids, and the message each copies.
    pub aliases: BTreeMap<String, Key>,
    pub truth: Truth,
}

struct Replay {
    truth: Truth,
    client: Expected,
    /// Each thread's runs (their next step).
    runs: BTreeMap<String, Vec<u32>>,
    /// The human message of each run, by thread and run.
    humans: BTreeMap<(String, u32), Key>,
    /// The oldest seq loaded in each scope (`None`: the thread's) since the thread opened.
    oldest: BTreeMap<Option<u32>, u64>,
    out: Expectation,
    step: usize,
}

/// The expectation of every render of `scenario`.
pub fn expect(scenario: &MergeScenario) -> Expectation {
    let mut r = Replay {
        truth: Truth::default(),
        client: Expected::new(&thread_name(0)),
        runs: BTreeMap::new(),
        humans: BTreeMap::new(),
        oldest: BTreeMap::new(),
        out: Expectation {
            renders: Vec::new(),
            aliases: BTreeMap::new(),
            truth: Truth::default(),
        },
        step: 0,
    };
    for (i, step) in scenario.steps.iter().enumerate() {
        r.step = i;
        r.replay(step);
    }
    r.out.truth = r.truth;
    r.out
}

impl Replay {
    fn replay(&mut self, step: &Step) {
        let open = self.client.thread().to_string();
        match step {
            Step::Open { thread } => {
                self.client.open(&thread_name(*thread));
                self.oldest.clear();
                self.render();
            }
            Step::Send {
                optimistic, echo, ..
            } => self.send(&open, *optimistic, *echo),
            Step::Echo | Step::Inject => {
                if let Some((key, run)) = self.human(&open) {
                    if matches!(step, Step::Inject) {
                        let copy = format!("{key}{INJECTED_SUFFIX}");
                        self.out.aliases.insert(copy, key.clone());
                    }
                    self.client.received(&key, run, 0);
                    self.render();
                }
            }
            Step::Emit {
                frames,
                page_mid_stream,
                ..
            } => self.emit(&open, *frames, *page_mid_stream),
            Step::Reopen { keep, limit } => {
                self.client.open(&open);
                self.oldest.clear();
                let state = self.truth.page(&open, None, None, (*keep).into());
                state
                    .iter()
                    .for_each(|r| self.client.received(&r.key, r.run, r.step));
                self.render();
                self.load(&open, None, *limit, false);
            }
            Step::Reset { keep } => {
                let rows = self.truth.page(&open, None, None, (*keep).into());
                rows.iter()
                    .for_each(|r| self.client.received(&r.key, r.run, r.step));
                self.render();
            }
            Step::Reconnect {
                from_step,
                human_last,
            } => self.reconnect(&open, (*from_step).into(), *human_last),
            Step::Load { run, limit, older } => {
                self.load(&open, run.map(u32::from), *limit, *older)
            }
            Step::Stray { thread, .. } => {
                let thread = thread_name(*thread);
                let row = self.persist_in_run(&thread);
                if thread == open {
                    self.client.received(&row.key, row.run, row.step);
                }
                self.render();
            }
        }
    }

    /// The agent's message: `frames` renders, a page after the first when `page_mid_stream`.
    fn emit(&mut self, open: &str, frames: u8, page_mid_stream: Option<u8>) {
        // The world writes nothing while the open thread has no run.
        if self.runs.get(open).is_none_or(|r| r.is_empty()) {
            return;
        }
        let row = self.persist_in_run(open);
        self.client.received(&row.key, row.run, row.step);
        for k in 1..=frames {
            self.render();
            if let (1, Some(limit)) = (k, page_mid_stream) {
                self.load(open, None, limit, false);
            }
        }
    }

    fn send(&mut self, open: &str, optimistic: bool, echo: bool) {
        let runs = self.runs.entry(open.to_string()).or_default();
        runs.push(0);
        let run = runs.len() as u32 - 1;
        let row = self.persist_in_run(open);
        self.humans.insert((open.to_string(), run), row.key.clone());
        if optimistic {
            let id = optimistic_id(self.step);
            self.out.aliases.insert(id, row.key.clone());
        }
        for _ in 0..(u8::from(optimistic) + u8::from(echo)) {
            self.client.received(&row.key, run, 0);
            self.render();
        }
    }

    /// Persists the step's message in `thread`'s newest run (run 0 started if none).
    fn persist_in_run(&mut self, thread: &str) -> Persisted {
        let runs = self.runs.entry(thread.to_string()).or_default();
        if runs.is_empty() {
            runs.push(0);
        }
        let run = runs.len() as u32 - 1;
        let step = runs[run as usize];
        runs[run as usize] += 1;
        let key = message_id(self.step);
        let seq = self.truth.persist(thread, &key, run, step);
        Persisted {
            key,
            seq,
            run,
            step,
        }
    }

    /// The human message of `thread`'s newest run, and the run.
    fn human(&self, thread: &str) -> Option<(Key, u32)> {
        let run = self.runs.get(thread)?.len().checked_sub(1)? as u32;
        let key = self.humans.get(&(thread.to_string(), run))?;
        Some((key.clone(), run))
    }

    /// The replay delivers the run from `from_step` in step order, its human message (step
    /// 0) last when `human_last`.
    fn reconnect(&mut self, open: &str, from_step: u32, human_last: bool) {
        let Some(runs) = self.runs.get(open).filter(|r| !r.is_empty()) else {
            return;
        };
        let run = runs.len() as u32 - 1;
        self.render();
        let mut replay: Vec<Persisted> = self
            .truth
            .page(open, Some(run), None, usize::MAX)
            .into_iter()
            .filter(|row| row.step >= from_step)
            .collect();
        if human_last {
            replay.sort_by_key(|row| row.step == 0);
        }
        for row in replay {
            self.client.received(&row.key, row.run, row.step);
            self.render();
        }
    }

    fn load(&mut self, open: &str, run: Option<u32>, limit: u8, older: bool) {
        let runs = self.runs.get(open).map_or(0, Vec::len) as u32;
        if run.is_some_and(|r| r >= runs) {
            return;
        }
        let before = if older {
            self.oldest.get(&run).copied()
        } else {
            None
        };
        let page = self.truth.page(open, run, before, limit.into());
        if let Some(first) = page.first() {
            let oldest = self.oldest.entry(run).or_insert(first.seq);
            *oldest = (*oldest).min(first.seq);
        }
        page.iter().for_each(|row| self.client.loaded(row));
        self.render();
    }

    fn render(&mut self) {
        self.out.renders.push(ExpectedRender {
            thread: self.client.thread().to_string(),
            keys: self.client.view(),
            paged: self.client.paged(),
        });
    }
}
