//! Plays a merge scenario: the server persists what the session writes, and the client merge
//! (`history::client_merge`) is fed each page, frame and optimistic message as it reaches the
//! client; after each, the list it shows is recorded (a render).

use super::scenario::{
    message_id, optimistic_id, summary_id, thread_name, AgentRole, MergeScenario, Step,
};
use super::server::{live, Server};
use crate::trace::Trace;
use crate::workload::WorldConfig;
use history::client_merge::{
    ClientMerge, LiveFrame, LiveMessage, PageScope, PersistedMessage, Role, Shown, INJECTED_SUFFIX,
};
use std::fmt::Write as _;

/// What the client showed after one delivery.
#[derive(Clone, Debug)]
pub struct Render {
    /// The step that made the delivery.
    pub step: usize,
    pub shown: Vec<Shown>,
}

/// What a played session leaves.
pub struct WorldRecord {
    pub renders: Vec<Render>,
    pub trace: Trace,
}

struct World {
    server: Server,
    client: ClientMerge,
    open: String,
    step: usize,
    renders: Vec<Render>,
    trace: Trace,
}

/// Plays `scenario` with the planted bug `config` names.
pub fn play(scenario: &MergeScenario, config: &WorldConfig) -> WorldRecord {
    let open = thread_name(0);
    let mut w = World {
        server: Server::default(),
        client: ClientMerge::new(&open, config.planted),
        open,
        step: 0,
        renders: Vec::new(),
        trace: Trace::new(config.keep_trace),
    };
    for (i, step) in scenario.steps.iter().enumerate() {
        w.step = i;
        w.play_step(step);
    }
    WorldRecord {
        renders: w.renders,
        trace: w.trace,
    }
}

impl World {
    fn play_step(&mut self, step: &Step) {
        let i = self.step;
        match step {
            Step::Open { thread } => {
                self.open = thread_name(*thread);
                self.client.open(&self.open);
                self.render();
            }
            Step::Send {
                text,
                optimistic,
                echo,
            } => self.send(text, *optimistic, *echo),
            Step::Echo => {
                if let Some(human) = self.human() {
                    self.frame(LiveFrame::Message(live(&human)));
                }
            }
            Step::Emit {
                role,
                text,
                frames,
                page_mid_stream,
            } => self.emit(*role, text, *frames, *page_mid_stream),
            Step::Inject => {
                if let Some(human) = self.human() {
                    let mut copy = live(&human);
                    copy.id = format!("{}{INJECTED_SUFFIX}", human.id);
                    self.frame(LiveFrame::Message(copy));
                }
            }
            Step::Reset { keep } => self.reset(*keep as usize, summary_id(i)),
            Step::Reconnect {
                from_step,
                human_last,
            } => self.reconnect(u32::from(*from_step), *human_last),
            Step::Load { run, limit, older } => self.load(run.map(u32::from), *limit, *older),
            Step::Reopen { keep, limit } => self.reopen(*keep as usize, *limit),
            Step::Stray { thread, text } => {
                let thread = thread_name(*thread);
                let row = self.server.persist(&thread, &message_id(i), Role::Ai, text);
                self.client.frame(&thread, LiveFrame::Message(live(&row)));
                self.render();
            }
        }
    }

    fn send(&mut self, text: &str, optimistic: bool, echo: bool) {
        let run = self.server.start_run(&self.open);
        let human = self
            .server
            .persist(&self.open, &message_id(self.step), Role::Human, text);
        if optimistic {
            self.client.optimistic(&optimistic_id(self.step), text, run);
            self.render();
        }
        if echo {
            self.frame(LiveFrame::Message(live(&human)));
        }
    }

    /// The human message of the open thread's newest run, if it has one.
    fn human(&self) -> Option<PersistedMessage> {
        let run = self.server.newest_run(&self.open)?;
        let rows = self.server.rows(&self.open, Some(run));
        rows.into_iter()
            .find(|r| r.role == Role::Human && r.position.step == 0)
            .cloned()
    }

    fn emit(&mut self, role: AgentRole, text: &str, frames: u8, page_mid_stream: Option<u8>) {
        if self.server.newest_run(&self.open).is_none() {
            return;
        }
        let role = match role {
            AgentRole::Ai => Role::Ai,
            AgentRole::Tool => Role::Tool,
        };
        let row = self
            .server
            .persist(&self.open, &message_id(self.step), role, text);
        for k in 1..=frames {
            let mut m = live(&row);
            m.text = frame_text(text, k, frames);
            self.frame(LiveFrame::Message(m));
            if let (1, Some(limit)) = (k, page_mid_stream) {
                self.load(None, limit, false);
            }
        }
    }

    /// A reload: the client holds nothing, the stream restores the thread's last `keep`
    /// messages, then the latest page of `limit` loads.
    fn reopen(&mut self, keep: usize, limit: u8) {
        let state = self.open_thread_last(keep);
        self.client.reopen(&self.open, state);
        self.render();
        self.load(None, limit, false);
    }

    /// The open thread's last `keep` stored messages as the stream restores them (a reload, a
    /// summarization reset).
    fn open_thread_last(&self, keep: usize) -> Vec<LiveMessage> {
        let rows = self.server.rows(&self.open, None);
        rows[rows.len().saturating_sub(keep)..]
            .iter()
            .map(|r| live(r))
            .collect()
    }

    fn reset(&mut self, keep: usize, summary: String) {
        let kept = self.open_thread_last(keep);
        let run = self.server.newest_run(&self.open).unwrap_or(0);
        let summary = LiveMessage {
            id: summary,
            role: Role::Human,
            text: "Here is a summary of the conversation so far.".into(),
            position: history::client_merge::Position {
                run,
                step: u32::MAX,
            },
            hidden: true,
        };
        self.frame(LiveFrame::Reset { kept, summary });
    }

    fn reconnect(&mut self, from_step: u32, human_last: bool) {
        let Some(run) = self.server.newest_run(&self.open) else {
            return;
        };
        self.frame(LiveFrame::Reconnect);
        let mut replay: Vec<PersistedMessage> = self
            .server
            .rows(&self.open, Some(run))
            .into_iter()
            .filter(|r| r.position.step >= from_step)
            .cloned()
            .collect();
        if human_last && !replay.is_empty() && replay[0].position.step == 0 {
            let human = replay.remove(0);
            replay.push(human);
        }
        for row in replay {
            self.frame(LiveFrame::Message(live(&row)));
        }
    }

    fn load(&mut self, run: Option<u32>, limit: u8, older: bool) {
        let runs = self.server.newest_run(&self.open).map_or(0, |r| r + 1);
        if run.is_some_and(|r| r >= runs) {
            return;
        }
        let scope = run.map_or(PageScope::Thread, PageScope::Run);
        let before = if older {
            self.client.cursor(scope)
        } else {
            None
        };
        let page = self.server.page(&self.open, run, before, limit.into());
        self.client.page(&self.open, scope, &page);
        self.render();
    }

    fn frame(&mut self, frame: LiveFrame) {
        self.client.frame(&self.open, frame);
        self.render();
    }

    fn render(&mut self) {
        let shown = self.client.view();
        let at = self.renders.len() as u64;
        let step = self.step;
        self.trace.record_with(at, |line| {
            let _ = write!(line, "step {step} render {at}:");
            for s in &shown {
                line.push(' ');
                line.push_str(&s.id);
            }
        });
        self.renders.push(Render { step, shown });
    }
}

/// The text the `k`-th of `frames` frames of a streamed message shows: a growing prefix, the
/// whole text at the last.
pub fn frame_text(text: &str, k: u8, frames: u8) -> String {
    let chars = text.chars().count();
    let shown = (chars * usize::from(k)).div_ceil(usize::from(frames));
    text.chars().take(shown).collect()
}
