//! The merge workload's coverage probes: each feature of the generator a session exercised,
//! and the special text classes its messages carried.

use super::expect::Expectation;
use super::scenario::{thread_name, MergeScenario, Step};
use crate::coverage::Coverage;
use crate::hostile_text::hit_classes;
use std::collections::BTreeMap;

/// What the probes remember of the session so far.
#[derive(Default)]
struct Seen {
    open: String,
    resets_since_open: u32,
    /// Whether the open thread was reopened since it was opened.
    reopened: bool,
    /// Messages written in each thread (an emit writes only after a send).
    written: BTreeMap<String, u32>,
}

pub const PROBES: &[&str] = &[
    "merge.feature.live_frame",
    "merge.feature.streamed_frames",
    "merge.feature.thread_page",
    "merge.feature.run_page",
    "merge.feature.older_page",
    "merge.feature.run_longer_than_page",
    "merge.feature.reset",
    "merge.feature.repeated_reset",
    "merge.feature.reconnect",
    "merge.feature.replay_mid_run",
    "merge.feature.replay_human_last",
    "merge.feature.optimistic",
    "merge.feature.optimistic_before_echo",
    "merge.feature.injected_copy",
    "merge.feature.thread_switch",
    "merge.feature.stray_frame",
    "merge.feature.page_mid_stream",
    "merge.feature.reopen",
    "merge.feature.reopen_restores_held",
    "merge.feature.page_after_reopen",
    "merge.text.empty",
    "merge.text.whitespace_only",
    "merge.text.line_separator",
    "merge.text.paragraph_separator",
    "merge.text.nel",
    "merge.text.nul",
    "merge.text.c0_control",
    "merge.text.crlf",
    "merge.text.escapes",
    "merge.text.astral",
    "merge.text.bidi",
    "merge.text.zero_width",
    "merge.text.combining",
    "merge.text.long",
];

/// Fires the probes of every step `scenario` played.
pub fn probes(scenario: &MergeScenario, expected: &Expectation, cov: &mut Coverage) {
    let mut seen = Seen {
        open: thread_name(0),
        ..Seen::default()
    };
    for step in &scenario.steps {
        match step {
            Step::Open { thread } => {
                cov.hit("merge.feature.thread_switch");
                seen.open = thread_name(*thread);
                seen.resets_since_open = 0;
                seen.reopened = false;
            }
            Step::Send {
                text,
                optimistic,
                echo,
            } => {
                hit_classes(text, "merge", PROBES, cov);
                *seen.written.entry(seen.open.clone()).or_default() += 1;
                if *optimistic {
                    cov.hit("merge.feature.optimistic");
                    if !echo {
                        cov.hit("merge.feature.optimistic_before_echo");
                    }
                }
            }
            Step::Emit { .. } | Step::Reopen { .. } => stream_probes(step, &mut seen, cov),
            Step::Reset { .. } => {
                seen.resets_since_open += 1;
                cov.hit("merge.feature.reset");
                if seen.resets_since_open > 1 {
                    cov.hit("merge.feature.repeated_reset");
                }
            }
            Step::Stray { thread, text } => {
                hit_classes(text, "merge", PROBES, cov);
                let thread = thread_name(*thread);
                *seen.written.entry(thread.clone()).or_default() += 1;
                if thread != seen.open {
                    cov.hit("merge.feature.stray_frame");
                }
            }
            _ => {
                if seen.reopened && matches!(step, Step::Load { .. }) {
                    cov.hit("merge.feature.page_after_reopen");
                }
                replay_and_page_probes(step, &seen.open, expected, cov)
            }
        }
    }
}

/// An agent's streamed message (a page between its frames) and a reload.
fn stream_probes(step: &Step, seen: &mut Seen, cov: &mut Coverage) {
    let written = seen.written.get(&seen.open).copied().unwrap_or(0);
    match step {
        Step::Emit {
            text,
            frames,
            page_mid_stream,
            ..
        } => {
            hit_classes(text, "merge", PROBES, cov);
            cov.hit("merge.feature.live_frame");
            if *frames > 1 {
                cov.hit("merge.feature.streamed_frames");
            }
            if written > 0 {
                *seen.written.entry(seen.open.clone()).or_default() += 1;
                if page_mid_stream.is_some() && *frames > 1 {
                    cov.hit("merge.feature.page_mid_stream");
                }
            }
        }
        Step::Reopen { keep, .. } => {
            cov.hit("merge.feature.reopen");
            if *keep > 0 && written > 0 {
                cov.hit("merge.feature.reopen_restores_held");
            }
            seen.reopened = true;
        }
        _ => {}
    }
}

fn replay_and_page_probes(step: &Step, open: &str, expected: &Expectation, cov: &mut Coverage) {
    match step {
        Step::Inject => cov.hit("merge.feature.injected_copy"),
        Step::Reconnect {
            from_step,
            human_last,
        } => {
            cov.hit("merge.feature.reconnect");
            if *from_step > 0 {
                cov.hit("merge.feature.replay_mid_run");
            } else if *human_last {
                cov.hit("merge.feature.replay_human_last");
            }
        }
        Step::Load { run, limit, older } => {
            if *older {
                cov.hit("merge.feature.older_page");
            }
            let Some(run) = run else {
                cov.hit("merge.feature.thread_page");
                return;
            };
            cov.hit("merge.feature.run_page");
            let rows = expected
                .truth
                .page(open, Some((*run).into()), None, usize::MAX);
            if rows.len() > usize::from(*limit) {
                cov.hit("merge.feature.run_longer_than_page");
            }
        }
        _ => {}
    }
}
