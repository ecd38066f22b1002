//! The merge workload's coverage probes: each feature of the generator a session exercised,
//! and the special text classes its messages carried.

use super::expect::Expectation;
use super::scenario::{thread_name, MergeScenario, Step};
use crate::coverage::Coverage;
use crate::hostile_text::hit_classes;

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
    let mut open = thread_name(0);
    let mut resets_since_open = 0;
    for step in &scenario.steps {
        match step {
            Step::Open { thread } => {
                cov.hit("merge.feature.thread_switch");
                open = thread_name(*thread);
                resets_since_open = 0;
            }
            Step::Send {
                text,
                optimistic,
                echo,
            } => {
                hit_classes(text, "merge", PROBES, cov);
                if *optimistic {
                    cov.hit("merge.feature.optimistic");
                    if !echo {
                        cov.hit("merge.feature.optimistic_before_echo");
                    }
                }
            }
            Step::Emit { text, frames, .. } => {
                hit_classes(text, "merge", PROBES, cov);
                cov.hit("merge.feature.live_frame");
                if *frames > 1 {
                    cov.hit("merge.feature.streamed_frames");
                }
            }
            Step::Reset { .. } => {
                resets_since_open += 1;
                cov.hit("merge.feature.reset");
                if resets_since_open > 1 {
                    cov.hit("merge.feature.repeated_reset");
                }
            }
            Step::Stray { thread, text } => {
                hit_classes(text, "merge", PROBES, cov);
                if thread_name(*thread) != open {
                    cov.hit("merge.feature.stray_frame");
                }
            }
            _ => replay_and_page_probes(step, &open, expected, cov),
        }
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
