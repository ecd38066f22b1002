//! Candidate simplifications of a merge scenario, for the shrinker: fewer steps, fewer
//! threads, plainer steps.

use super::scenario::{MergeScenario, Step};
use crate::workload::{Integer, Move};
use crate::workload_items::shrink_helpers;

shrink_helpers!(MergeScenario);

/// The size the shrinker minimises: steps (a merge session has no faults).
pub fn size(s: &MergeScenario) -> (usize, usize) {
    (s.steps.len(), 0)
}

/// Every one-move simplification of `s`, largest cut first: halves of the steps, then each
/// step alone, then one step made plainer.
pub fn moves(s: &MergeScenario) -> Vec<Move<MergeScenario>> {
    let mut out: Vec<Move<MergeScenario>> = Vec::new();
    let n = s.steps.len();
    if n > 1 {
        out.push(edit(move |x| x.steps.truncate(n / 2)));
        out.push(edit(move |x| {
            x.steps.drain(..n / 2);
        }));
    }
    out.extend(removals(n, |x| &mut x.steps).rev());
    if s.threads > 1 {
        out.push(edit(|x| x.threads -= 1));
    }
    for (k, step) in s.steps.iter().enumerate() {
        if let Some(plainer) = plainer(step) {
            out.push(edit(move |x| x.steps[k] = plainer.clone()));
        }
    }
    out
}

/// `step` with its text plain and its frames single, if that changes it.
fn plainer(step: &Step) -> Option<Step> {
    let plain = |t: &str| (t != "text").then(|| "text".to_string());
    match step {
        Step::Emit {
            role,
            text,
            frames,
            page_mid_stream,
        } if *frames > 2 || (*frames == 2 && page_mid_stream.is_none()) || text != "text" => {
            Some(Step::Emit {
                role: *role,
                text: "text".into(),
                // A page mid-stream needs a frame after it.
                frames: if page_mid_stream.is_some() {
                    (*frames).min(2)
                } else {
                    1
                },
                page_mid_stream: *page_mid_stream,
            })
        }
        Step::Send {
            text,
            optimistic,
            echo,
        } => plain(text).map(|text| Step::Send {
            text,
            optimistic: *optimistic,
            echo: *echo,
        }),
        Step::Stray { thread, text } => plain(text).map(|text| Step::Stray {
            thread: *thread,
            text,
        }),
        _ => None,
    }
}

/// The integers the shrinker bisects: each page's limit and each reset's kept window.
pub fn integers(s: &MergeScenario) -> Vec<Integer<MergeScenario>> {
    let mut out = Vec::new();
    for (k, step) in s.steps.iter().enumerate() {
        let found = match step {
            Step::Load { limit, .. } => int(
                format!("steps[{k}].limit"),
                (*limit).into(),
                1,
                move |x, v| {
                    if let Step::Load { limit, .. } = &mut x.steps[k] {
                        *limit = v as u8;
                    }
                },
            ),
            Step::Reopen { keep, limit } => {
                let (keep, limit) = (*keep, *limit);
                out.extend(int(
                    format!("steps[{k}].keep"),
                    keep.into(),
                    0,
                    move |x, v| {
                        if let Step::Reopen { keep, .. } = &mut x.steps[k] {
                            *keep = v as u8;
                        }
                    },
                ));
                int(format!("steps[{k}].limit"), limit.into(), 1, move |x, v| {
                    if let Step::Reopen { limit, .. } = &mut x.steps[k] {
                        *limit = v as u8;
                    }
                })
            }
            Step::Reset { keep } => int(
                format!("steps[{k}].keep"),
                (*keep).into(),
                0,
                move |x, v| {
                    if let Step::Reset { keep } = &mut x.steps[k] {
                        *keep = v as u8;
                    }
                },
            ),
            _ => None,
        };
        out.extend(found);
    }
    out
}
