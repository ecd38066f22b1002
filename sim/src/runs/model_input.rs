//! What a run's model calls carry besides the user's turn (R25): hidden reminders injected
//! before or after the user's message, a middleware's own model call with its own prompt (a title's)
//! before the agent's, and an input-sanitization middleware that hands the model a wrapped copy
//! of the user's text with the original kept aside. The world hands the journal these calls
//! when a user's turn arrives ([`model_calls`]); the journal must record the turn as the user
//! sent it, which the checker reads from the script, never from the calls.
//!
//! Drawn by [`add_model_inputs`] from a workload sub-stream of its own, after every other draw,
//! so a seed keeps everything it had before.

use super::scenario::{ModelInput, RunSpec};
use history::runs::{CallMessage, ChatMessage, MessageKind, ModelCall};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The workload sub-stream the model calls' extras are drawn from.
pub const SUBSTREAM: u64 = 0x25;

/// The most hidden reminders one call carries.
pub const REMINDERS_MAX: u8 = 3;

/// The caller tag of the title middleware's own model call.
pub const TITLE_CALLER: &str = "middleware:title";

/// The model calls made when the user's turn `turn` of `run` arrives, in order: the
/// middleware's own call (if any), then the agent's over `state` (the thread's working state,
/// the turn's message last).
pub fn model_calls(run: &RunSpec, turn: usize, state: &[ChatMessage]) -> Vec<ModelCall> {
    let input = run.model_input;
    let mut calls = Vec::new();
    if input.middleware_prompt {
        let prompt = format!(
            "Write a short title for the conversation ({} turn {turn})",
            run.id
        );
        calls.push(ModelCall {
            caller: Some(TITLE_CALLER.to_string()),
            messages: vec![CallMessage::plain(ChatMessage::human(prompt))],
        });
    }
    let mut messages: Vec<CallMessage> = state.iter().cloned().map(CallMessage::plain).collect();
    if let Some(last) = messages.pop() {
        debug_assert_eq!(last.message.kind, MessageKind::Human);
        let reminder = |i: u8| CallMessage {
            message: ChatMessage::human(format!(
                "<system-reminder>{} turn {turn} note {i}</system-reminder>",
                run.id
            )),
            hide_from_ui: true,
            original: None,
        };
        let before = input.reminders - input.reminders_after.min(input.reminders);
        messages.extend((0..before).map(reminder));
        messages.push(if input.wrapped {
            wrap(last.message)
        } else {
            last
        });
        messages.extend((before..input.reminders).map(reminder));
    }
    calls.push(ModelCall {
        caller: None,
        messages,
    });
    calls
}

/// The sanitization middleware's copy of the user's message.
fn wrap(original: ChatMessage) -> CallMessage {
    let text = history::runs::content_text(&original.content);
    CallMessage {
        message: ChatMessage::human(format!("<user_input>\n{text}\n</user_input>")),
        hide_from_ui: false,
        original: Some(original),
    }
}

/// Gives some runs model calls with extras.
pub fn add_model_inputs(runs: &mut [RunSpec], rng: &mut ChaCha8Rng) {
    for run in runs.iter_mut() {
        if !rng.random_bool(0.3) {
            continue;
        }
        run.model_input = ModelInput {
            reminders: if rng.random_bool(0.5) {
                rng.random_range(1..=REMINDERS_MAX)
            } else {
                0
            },
            middleware_prompt: rng.random_bool(0.4),
            wrapped: rng.random_bool(0.4),
            reminders_after: 0,
        };
    }
    // Where the reminders go, drawn after every draw above so that each run keeps what it had.
    for run in runs.iter_mut().filter(|r| r.model_input.reminders > 0) {
        run.model_input.reminders_after = rng.random_range(0..=run.model_input.reminders);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_call_hides_reminders_before_a_wrapped_turn() {
        let mut run: RunSpec = toml::from_str("id = 'r'\nthread = 't'\nmessages = []").unwrap();
        run.model_input = ModelInput {
            reminders: 2,
            middleware_prompt: true,
            wrapped: true,
            reminders_after: 0,
        };
        let state = [ChatMessage::human("old"), ChatMessage::human("new")];
        let calls = model_calls(&run, 1, &state);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].caller.as_deref(), Some(TITLE_CALLER));
        let agent = &calls[1].messages;
        assert_eq!(agent.len(), 4);
        assert!(agent[1].hide_from_ui && agent[2].hide_from_ui && !agent[3].hide_from_ui);
        assert_eq!(agent[3].original, Some(ChatMessage::human("new")));
        assert_ne!(agent[3].message, ChatMessage::human("new"));
    }

    #[test]
    fn reminders_after_the_turn_follow_the_users_message() {
        let mut run: RunSpec = toml::from_str("id = 'r'\nthread = 't'\nmessages = []").unwrap();
        run.model_input = ModelInput {
            reminders: 3,
            reminders_after: 2,
            ..ModelInput::default()
        };
        let calls = model_calls(&run, 0, &[ChatMessage::human("question")]);
        let agent = &calls[0].messages;
        let hidden: Vec<bool> = agent.iter().map(|m| m.hide_from_ui).collect();
        assert_eq!(hidden, [true, false, true, true]);
        assert_eq!(agent[1].message, ChatMessage::human("question"));
        let notes: Vec<String> = agent
            .iter()
            .filter(|m| m.hide_from_ui)
            .map(|m| history::runs::content_text(&m.message.content))
            .collect();
        assert!(
            notes[0].contains("note 0") && notes[2].contains("note 2"),
            "{notes:?}"
        );
    }

    #[test]
    fn every_position_of_the_reminders_is_drawn() {
        let plain: RunSpec = toml::from_str("id = 'r'\nthread = 't'\nmessages = []").unwrap();
        let mut runs = vec![plain; 400];
        add_model_inputs(&mut runs, &mut rand::SeedableRng::seed_from_u64(7));
        for after in 0..=REMINDERS_MAX {
            assert!(
                runs.iter().any(|r| r.model_input.reminders == REMINDERS_MAX
                    && r.model_input.reminders_after == after),
                "no run with {after} of {REMINDERS_MAX} reminders after the turn"
            );
        }
        assert!(runs
            .iter()
            .all(|r| r.model_input.reminders_after <= r.model_input.reminders));
    }
}
