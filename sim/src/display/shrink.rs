//! Candidate simplifications of a display scenario, for the shrinker.
//!
//! Each candidate is the scenario with one thing removed or made plainer: a block of steps, one
//! step, a turn, a fault, a replica, a delay, a defect, extra words. Candidates are listed from
//! the largest cut to the smallest, so the greedy shrinker takes big steps first.

use super::scenario::{Block, DisplayScenario, Event, Fault, Subscriber};
use crate::workload::{halving_blocks, Integer, Move};
use crate::workload_items::shrink_helpers;

shrink_helpers!(DisplayScenario, cut then prune);

/// The size the shrinker minimises: steps first, then faults.
pub fn size(s: &DisplayScenario) -> (usize, usize) {
    (s.steps().count(), s.faults.len())
}

/// Every one-move simplification of `s`, largest first, not yet made or validated: each move
/// makes its scenario from `s` when applied, and the workload's `shrink_candidates` keeps the
/// valid ones that differ from `s`.
pub fn moves(s: &DisplayScenario) -> Vec<Move<DisplayScenario>> {
    let mut out: Vec<Move<DisplayScenario>> = Vec::new();
    without_turns(s, &mut out);
    without_step_blocks(s, &mut out);
    // Faults, one at a time.
    out.extend(removals(s.faults.len(), |c| &mut c.faults));
    // Fewer replicas.
    if s.replicas > 1 {
        out.push(cut(|c| c.replicas -= 1));
    }
    plainer_turns(s, &mut out);
    shorter_delays(s, &mut out);
    out
}

/// The integers the shrinker bisects: redelivered copies, then the client's waits, the pauses
/// between steps and the bus's delays.
pub fn integers(s: &DisplayScenario) -> Vec<Integer<DisplayScenario>> {
    let mut out = Vec::new();
    for (f, fault) in s.faults.iter().enumerate() {
        match fault {
            Fault::Duplicate { copies, .. } => {
                let path = format!("faults[{f}].copies");
                out.extend(int(path, (*copies).into(), 1, move |c, v| {
                    if let Fault::Duplicate { copies, .. } = &mut c.faults[f] {
                        *copies = v as u8;
                    }
                }));
            }
            Fault::Delay { ms, .. } => {
                let path = format!("faults[{f}].ms");
                out.extend(int(path, (*ms).into(), 1, move |c, v| {
                    if let Fault::Delay { ms, .. } = &mut c.faults[f] {
                        *ms = v as u32;
                    }
                }));
            }
            Fault::Drop { .. } | Fault::Disconnect { .. } => {}
        }
    }
    for (t, turn) in s.turns.iter().enumerate() {
        if let Some(wait) = turn.wait_ms {
            let path = format!("turns[{t}].wait_ms");
            out.extend(int(path, wait.into(), 1, move |c, v| {
                c.turns[t].wait_ms = Some(v as u32)
            }));
        }
        for (i, step) in turn.steps.iter().enumerate() {
            // Toward 1, not 0: a pause of 0 ties the step's timestamp to the previous one's.
            let path = format!("turns[{t}].steps[{i}].after_ms");
            out.extend(int(path, step.after_ms.into(), 1, move |c, v| {
                c.turns[t].steps[i].after_ms = v as u32
            }));
        }
    }
    out
}

/// Whole turns removed, one at a time (never the last one).
fn without_turns(s: &DisplayScenario, out: &mut Vec<Move<DisplayScenario>>) {
    if s.turns.len() > 1 {
        for t in 0..s.turns.len() {
            out.push(cut(move |c| {
                c.turns.remove(t);
            }));
        }
    }
}

/// Blocks of steps removed within a turn, halving down to single steps (never all of them).
fn without_step_blocks(s: &DisplayScenario, out: &mut Vec<Move<DisplayScenario>>) {
    for (t, turn) in s.turns.iter().enumerate() {
        for range in halving_blocks(turn.steps.len()) {
            out.push(cut(move |c| {
                c.turns[t].steps.drain(range.clone());
            }));
        }
    }
}

/// Plainer turns: no wait, the first replica, and plainer steps.
fn plainer_turns(s: &DisplayScenario, out: &mut Vec<Move<DisplayScenario>>) {
    for (t, turn) in s.turns.iter().enumerate() {
        if turn.wait_ms.is_some() {
            out.push(edit(move |c| c.turns[t].wait_ms = None));
        }
        if turn.replica != 0 {
            out.push(edit(move |c| c.turns[t].replica = 0));
        }
        for (i, step) in turn.steps.iter().enumerate() {
            if step.defect.is_some() {
                out.push(edit(move |c| c.turns[t].steps[i].defect = None));
            }
            if step.after_ms > 1 {
                out.push(edit(move |c| c.turns[t].steps[i].after_ms = 1));
            }
            if let Event::UserMessage { blocks } = &step.event {
                plainer_message(t, i, blocks, out);
            }
        }
    }
}

/// A user message of step `i` of turn `t` with one block fewer, or with its first text cut to
/// its first word.
fn plainer_message(t: usize, i: usize, blocks: &[Block], out: &mut Vec<Move<DisplayScenario>>) {
    for b in 0..blocks.len() {
        if blocks.len() > 1 {
            out.push(edit(move |c| {
                if let Event::UserMessage { blocks } = &mut c.turns[t].steps[i].event {
                    blocks.remove(b);
                }
            }));
        }
    }
    if let Some(Block::Text { text }) = blocks.first() {
        if let Some(shorter) = first_word(text) {
            out.push(edit(move |c| {
                if let Event::UserMessage { blocks } = &mut c.turns[t].steps[i].event {
                    blocks[0] = Block::Text {
                        text: shorter.clone(),
                    };
                }
            }));
        }
    }
}

/// Delays halved.
fn shorter_delays(s: &DisplayScenario, out: &mut Vec<Move<DisplayScenario>>) {
    for (f, fault) in s.faults.iter().enumerate() {
        if let Fault::Delay { ms, .. } = fault {
            if *ms > 1 {
                out.push(edit(move |c| {
                    if let Fault::Delay { ms, .. } = &mut c.faults[f] {
                        *ms /= 2;
                    }
                }));
            }
        }
    }
}

fn first_word(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    let first = words.next()?;
    words.next().map(|_| format!("{first} "))
}

/// Drops what a removal left dangling: faults naming missing steps or replicas, empty turns,
/// turns served by a replica that no longer exists.
fn prune(mut s: DisplayScenario) -> DisplayScenario {
    s.turns.retain(|t| !t.steps.is_empty());
    let ids: std::collections::BTreeSet<u32> = s.steps().map(|st| st.id).collect();
    let replicas = s.replicas;
    s.faults.retain(|f| match f {
        Fault::Duplicate { step, to, .. } | Fault::Delay { step, to, .. } => {
            ids.contains(step)
                && match Subscriber::parse(to) {
                    Some(Subscriber::Replica(r)) => r < replicas,
                    Some(Subscriber::Client) => true,
                    None => false,
                }
        }
        Fault::Drop { step } => ids.contains(step),
        Fault::Disconnect {
            replica,
            from_step,
            to_step,
        } => *replica < replicas && ids.range(*from_step..=*to_step).next().is_some(),
    });
    for t in &mut s.turns {
        if t.replica >= replicas {
            t.replica = 0;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::DisplayWorkload;
    use crate::display::{generate::generate, DisplayOptions};
    use crate::rng::SeedRng;
    use crate::workload::Workload;
    use crate::workload_items::assert_shrink_candidates_no_larger;

    #[test]
    fn candidates_are_valid_and_smaller_or_plainer() {
        assert_shrink_candidates_no_larger::<DisplayWorkload>();
    }

    #[test]
    fn a_single_step_scenario_has_no_step_removals() {
        let rng = SeedRng::new(3);
        let mut s = generate(rng, &DisplayOptions::quiet(1));
        s.turns[0].steps.truncate(1);
        s.faults.clear();
        assert!(DisplayWorkload::shrink_candidates(&s)
            .iter()
            .all(|c| size(c).0 == 1));
    }
}
