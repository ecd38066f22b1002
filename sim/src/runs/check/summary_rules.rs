//! R20: every summarized checkpoint is what the summarization contract makes of the state the
//! middleware was handed (`model::runs::summarization`): summarized only above the budget, the
//! summary first as a human message counting what it folds, the last `keep_messages` messages
//! kept verbatim and moved back only to keep a tool pair whole; and the run's next model call
//! goes on from that list.
//!
//! The state before each summary is the run's own working list (what it loaded from the
//! checkpointer plus what it emitted since), recorded by the world when the middleware ran;
//! the model recomputes the trigger, the cut and the coverage from it and the run's settings.
//! A cut that splits a tool pair is R11's finding (reported first); this rule then names the
//! departure from the whole contract too.
//!
//! R29: the contract histsim's middleware follows also keeps the request being answered; a
//! summary that folds its message is R29's finding first, narrower than R20's.

use super::context::{short, Context};
use crate::divergence::{Divergence, TraceMark};
use crate::outcome::{Findings, Pointer};
use crate::runs::record::SummaryRecord;
use history::runs::{ChatMessage, MessageKind as Shape};
use history::BugId;
use model::runs::summarization::{
    check_continuation, Role, StateCall, StateMessage, SummarizationContract,
};

/// R20: each summarized checkpoint against the model, and each run's next summary against the
/// state the previous one left.
pub fn summaries_follow_the_contract(cx: &Context<'_>, f: &mut Findings) {
    let mut last_left: Vec<Option<Vec<StateMessage>>> = vec![None; cx.scenario.runs.len()];
    for s in cx.record.log.summaries() {
        let run = &cx.scenario.runs[s.run];
        let Some(settings) = run.summarize else {
            f.add_at(
                BugId::R20,
                at_summary(
                    cx,
                    s,
                    "a summarized checkpoint",
                    "no summary: summarization not set",
                ),
                format!(
                    "{} summarized its checkpoint without summarization set",
                    run.id
                ),
            );
            continue;
        };
        let contract = SummarizationContract {
            budget_tokens: settings.budget_tokens,
            keep_messages: settings.keep_messages,
            keep_current_request: true,
        };
        let before = state_of(&s.before);
        let after = state_of(&s.messages);
        if let Some(left) = &last_left[s.run] {
            if let Err(m) = check_continuation(left, &before) {
                let pointer = at_summary(
                    cx,
                    s,
                    format!("a state of {} messages", before.len()),
                    m.to_string(),
                );
                f.add_at(BugId::R20, pointer, describe(cx, s, &m.to_string()));
            }
        }
        if let Err(m) = contract.check(&before, &after) {
            let pointer = at_summary(
                cx,
                s,
                format!("{} messages kept of {}", after.len(), before.len()),
                m.to_string(),
            );
            f.add_at(BugId::R20, pointer, describe(cx, s, &m.to_string()));
        }
        last_left[s.run] = Some(after);
    }
}

/// R29: after each summary the kept window still holds the latest human message of the state
/// the middleware was handed (the request the run is answering), unchanged.
pub fn summaries_keep_the_current_request(cx: &Context<'_>, f: &mut Findings) {
    for s in cx.record.log.summaries() {
        let Some(current) = s.before.iter().rev().find(|m| m.kind == Shape::Human) else {
            continue;
        };
        if s.messages.iter().skip(1).any(|m| m == current) {
            continue;
        }
        let text = short(&current.text());
        let pointer = at_summary(
            cx,
            s,
            format!("a kept window without `{text}`"),
            format!("`{text}` kept"),
        );
        let what = format!("the current request's message `{text}` was folded into the summary");
        f.add_at(BugId::R29, pointer, describe(cx, s, &what));
    }
}

/// A summary the middleware made as the request a finding points at: its op, time and run, its
/// trace line (`{run} summarized, {n} kept`) marked.
pub(in crate::runs) fn at_summary(
    cx: &Context<'_>,
    s: &SummaryRecord,
    answered: impl Into<String>,
    expected: impl Into<String>,
) -> Pointer {
    let run = &cx.scenario.runs[s.run].id;
    let by = format!("the summarization middleware of {run}");
    let d = Divergence::of("summarize", s.op, s.at_us, by).answers(answered, expected);
    Pointer::request(d, TraceMark::at(s.at_us, format!("{run} summarized, ")))
}

fn describe(cx: &Context<'_>, s: &SummaryRecord, what: &str) -> String {
    let first_kept = s.messages.get(1).map_or(String::new(), |m| {
        format!(", first kept `{}`", short(&m.text()))
    });
    format!(
        "{} summarized {} messages into {}: {what}{first_kept}",
        cx.scenario.runs[s.run].id,
        s.before.len(),
        s.messages.len()
    )
}

/// The model's view of a state: roles, texts, calls and the calls answered.
fn state_of(messages: &[ChatMessage]) -> Vec<StateMessage> {
    messages
        .iter()
        .map(|m| StateMessage {
            role: match m.kind {
                Shape::Human => Role::Human,
                Shape::Ai => Role::Ai,
                Shape::Tool => Role::Tool,
            },
            id: m.id.clone(),
            text: m.text(),
            tool_calls: m
                .tool_calls
                .iter()
                .map(|c| StateCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    args_json: c.args.to_string(),
                })
                .collect(),
            tool_call_id: m.tool_call_id.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::runs::{safe_cut, SummarizationMiddleware, SummarizationOptions, ToolCall};
    use proptest::prelude::*;

    /// A message list from codes: 0 human, 1 AI text, 2 AI calling the next free id, 3 a result
    /// of call `n % issued` (often a call already answered or made long before: interleaved
    /// pairs, results after other messages), 4 an orphaned result.
    fn messages(codes: &[(u8, u8)]) -> Vec<ChatMessage> {
        let mut issued = 0u32;
        codes
            .iter()
            .enumerate()
            .map(|(i, &(code, n))| match code {
                0 => ChatMessage::human(format!("question {i}")),
                1 => ChatMessage::ai(format!("answer {i}"), Some(format!("lc_run--{i}"))),
                2 => {
                    issued += 1;
                    let call = ToolCall {
                        id: format!("c{issued}"),
                        name: "search".into(),
                        args: serde_json::json!({ "q": i }),
                    };
                    ChatMessage::ai_tool_calls(Some(format!("lc_run--{i}")), vec![call])
                }
                3 if issued > 0 => ChatMessage::tool(
                    format!("result {i}"),
                    format!("c{}", 1 + u32::from(n) % issued),
                ),
                _ => ChatMessage::tool(format!("stray {i}"), "never-called"),
            })
            .collect()
    }

    proptest! {
        /// The middleware's walk back from pair to pair and the model's largest safe cut agree
        /// on every list, including orphans, interleaved pairs and results after other messages.
        #[test]
        fn the_middleware_cuts_where_the_model_does(
            codes in proptest::collection::vec((0u8..5, any::<u8>()), 0..24),
            keep in 0usize..26,
        ) {
            let list = messages(&codes);
            let state = state_of(&list);
            let target = list.len().saturating_sub(keep);
            prop_assert_eq!(
                safe_cut(&list, target),
                model::runs::summarization::expected_cut(&state, keep)
            );
        }

        /// The middleware summarizes a random list exactly when the contract says, and its
        /// result passes the contract.
        #[test]
        fn the_middleware_summarizes_as_the_contract_says(
            codes in proptest::collection::vec((0u8..5, any::<u8>()), 1..24),
            keep in 1usize..8,
            budget_tokens in 1usize..120,
        ) {
            let list = messages(&codes);
            let checkpoint = history::runs::Checkpoint { messages: list.clone(), ..Default::default() };
            let options = SummarizationOptions { budget_tokens, keep_messages: keep, keep_current_request: true, planted: history::Planted::none() };
            let contract = SummarizationContract { budget_tokens, keep_messages: keep, keep_current_request: true };
            let before = state_of(&list);
            match SummarizationMiddleware::new(options).apply(&checkpoint) {
                Some(out) => prop_assert!(contract.check(&before, &state_of(&out.messages)).is_ok()),
                None => prop_assert_eq!(contract.expect(&before), None),
            }
        }
    }
}
