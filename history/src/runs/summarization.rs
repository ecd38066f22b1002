//! The summarization middleware: when the checkpoint's messages pass a token budget, replace them
//! with one human message carrying a summary plus the last `keep_messages` messages.
//!
//! The whole contract (trigger, kept window, the summary's place and role) is
//! docs/runs-summarization.md, which `model::runs::summarization` states independently (R20).
//!
//! The cut never falls between an AI message that calls tools and the tool results answering it
//! (R11): a kept tool result without its call is an invalid conversation for every provider. The
//! cut moves back (keeping more) until it is safe.
//!
//! With `keep_current_request` the cut never folds the latest user message of the state either:
//! when summarization fires while a request is being answered, counting back from the end can
//! pass that request's own message, and the model then answers an older request still in
//! context (R29). The cut moves back to that message.

use std::collections::BTreeMap;

use super::checkpoint::Checkpoint;
use super::message::{ChatMessage, MessageKind};
use super::summarizer::{StubSummarizer, Summarizer};
use super::tokens::TokenCounter;
use crate::planted::{BugId, Planted};

/// The text that opens the summary message.
pub const SUMMARY_PREFIX: &str = "Here is a summary of the conversation to date:\n\n";

/// Options of a [`SummarizationMiddleware`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummarizationOptions {
    /// Summarize when the messages' o200k token estimate is above this.
    pub budget_tokens: usize,
    /// Messages kept verbatim after the summary (at least; more when a tool pair straddles).
    pub keep_messages: usize,
    /// Keep the latest human message (the request being answered) in the kept window: the cut
    /// never passes it.
    pub keep_current_request: bool,
    /// Legacy switches: R11 (keep exactly the last `keep_messages`, splitting tool pairs), R20
    /// (the summary counted as one of the `keep_messages`) and R29 (the kept window counted back
    /// from the end with no rescue of the current request's message).
    pub planted: Planted,
}

impl SummarizationOptions {
    /// The seed's defaults: keep 20 messages.
    pub fn with_budget(budget_tokens: usize) -> SummarizationOptions {
        SummarizationOptions {
            budget_tokens,
            keep_messages: 20,
            keep_current_request: true,
            planted: Planted::none(),
        }
    }
}

/// The middleware.
#[derive(Clone, Debug)]
pub struct SummarizationMiddleware<Z = StubSummarizer> {
    pub options: SummarizationOptions,
    summarizer: Z,
    counter: TokenCounter,
}

impl SummarizationMiddleware<StubSummarizer> {
    /// The middleware with the deterministic stub summarizer.
    pub fn new(options: SummarizationOptions) -> Self {
        SummarizationMiddleware::with_summarizer(options, StubSummarizer::default())
    }
}

impl<Z: Summarizer> SummarizationMiddleware<Z> {
    pub fn with_summarizer(options: SummarizationOptions, summarizer: Z) -> Self {
        SummarizationMiddleware {
            options,
            summarizer,
            counter: TokenCounter::o200k(),
        }
    }

    /// The token estimate the budget is compared with.
    pub fn estimate_tokens(&self, messages: &[ChatMessage]) -> usize {
        self.counter.messages_tokens(messages)
    }

    /// The summarized checkpoint, or `None` when the messages fit the budget or nothing can be
    /// folded away. Title and other fields are kept.
    pub fn apply(&self, checkpoint: &Checkpoint) -> Option<Checkpoint> {
        let messages = &checkpoint.messages;
        if self.estimate_tokens(messages) <= self.options.budget_tokens {
            return None;
        }
        let keep = if self.options.planted.is(BugId::R20) {
            // planted R20: the legacy middleware counted the summary message as one of the kept
            // messages, so one original message fewer than `keep_messages` survived.
            self.options.keep_messages.saturating_sub(1)
        } else {
            self.options.keep_messages
        };
        let target = self.rescue_current_request(messages, messages.len().saturating_sub(keep));
        let cut = if self.options.planted.is(BugId::R11) {
            target // planted R11: the legacy cut kept the last K by count, wherever it fell.
        } else {
            safe_cut(messages, target)
        };
        if cut == 0 {
            return None;
        }
        let summary = self.summarizer.summarize(&messages[..cut]);
        let mut kept = Vec::with_capacity(messages.len() - cut + 1);
        kept.push(ChatMessage::human(format!("{SUMMARY_PREFIX}{summary}")));
        kept.extend_from_slice(&messages[cut..]);
        Some(Checkpoint {
            messages: kept,
            title: checkpoint.title.clone(),
            extra: checkpoint.extra.clone(),
        })
    }

    /// `target`, or the index of the latest human message when the cut would fold it and the
    /// options keep the current request.
    fn rescue_current_request(&self, messages: &[ChatMessage], target: usize) -> usize {
        // planted R29: the legacy cut counted back from the end and nothing else.
        if !self.options.keep_current_request || self.options.planted.is(BugId::R29) {
            return target;
        }
        match messages.iter().rposition(|m| m.kind == MessageKind::Human) {
            Some(current) if current < target => current,
            _ => target,
        }
    }
}

/// Index pairs (AI message with the call, tool message answering it), for every tool message
/// whose call appears earlier.
fn tool_pairs(messages: &[ChatMessage]) -> Vec<(usize, usize)> {
    let mut call_at: BTreeMap<&str, usize> = BTreeMap::new();
    let mut pairs = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        match m.kind {
            MessageKind::Ai => {
                for call in &m.tool_calls {
                    call_at.insert(&call.id, i);
                }
            }
            MessageKind::Tool => {
                if let Some(&ai) = m.tool_call_id.as_deref().and_then(|id| call_at.get(id)) {
                    pairs.push((ai, i));
                }
            }
            MessageKind::Human => {}
        }
    }
    pairs
}

/// The largest cut `<= target` that separates no call from its results: messages[..cut] are
/// summarized, messages[cut..] kept.
pub fn safe_cut(messages: &[ChatMessage], target: usize) -> usize {
    assert!(target <= messages.len(), "cut target past the end");
    let pairs = tool_pairs(messages);
    let mut cut = target;
    // Each step moves the cut strictly back to the call of a straddling pair, so this ends.
    while let Some(&(ai, _)) = pairs.iter().find(|&&(ai, tool)| ai < cut && cut <= tool) {
        cut = ai;
    }
    cut
}

/// Indexes of tool messages whose call is not in an earlier AI message of the same list: what a
/// split tool pair leaves behind (R11).
pub fn orphaned_tool_results(messages: &[ChatMessage]) -> Vec<usize> {
    let answered: Vec<usize> = tool_pairs(messages).into_iter().map(|(_, t)| t).collect();
    messages
        .iter()
        .enumerate()
        .filter(|(i, m)| m.kind == MessageKind::Tool && !answered.contains(i))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::ToolCall;
    use serde_json::json;

    /// Options whose budget every checkpoint of these tests is over, so each one summarizes.
    fn over_budget(
        keep_messages: usize,
        keep_current_request: bool,
        planted: Planted,
    ) -> SummarizationOptions {
        SummarizationOptions {
            budget_tokens: 1,
            keep_messages,
            keep_current_request,
            planted,
        }
    }

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "search".into(),
            args: json!({}),
        }
    }

    /// human, ai(call a, b), tool a, tool b, ai text, human
    fn thread() -> Vec<ChatMessage> {
        vec![
            ChatMessage::human("question one"),
            ChatMessage::ai_tool_calls(Some("lc_run--1".into()), vec![call("a"), call("b")]),
            ChatMessage::tool("result a", "a"),
            ChatMessage::tool("result b", "b"),
            ChatMessage::ai("answer", Some("lc_run--2".into())),
            ChatMessage::human("question two"),
        ]
    }

    #[test]
    fn the_cut_moves_back_to_the_call() {
        let m = thread();
        assert_eq!(safe_cut(&m, 6), 6);
        assert_eq!(safe_cut(&m, 4), 4);
        assert_eq!(safe_cut(&m, 3), 1);
        assert_eq!(safe_cut(&m, 2), 1);
        assert_eq!(safe_cut(&m, 1), 1);
        assert_eq!(safe_cut(&m, 0), 0);
    }

    #[test]
    fn apply_keeps_pairs_and_prefixes_the_summary() {
        let cp = Checkpoint {
            messages: thread(),
            title: Some("t".into()),
            ..Checkpoint::default()
        };
        let mw = SummarizationMiddleware::new(over_budget(3, false, Planted::none()));
        let out = mw.apply(&cp).unwrap();
        assert_eq!(out.title.as_deref(), Some("t"));
        assert_eq!(out.messages.len(), 6); // summary + the 5 messages from the call on
        assert!(out.messages[0].text().starts_with(SUMMARY_PREFIX));
        assert_eq!(out.messages[1..], cp.messages[1..]);
        assert!(orphaned_tool_results(&out.messages).is_empty());
    }

    #[test]
    fn under_budget_nothing_happens() {
        let cp = Checkpoint {
            messages: thread(),
            ..Checkpoint::default()
        };
        let mw = SummarizationMiddleware::new(SummarizationOptions::with_budget(10_000));
        assert_eq!(mw.apply(&cp), None);
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_r20_keeps_one_message_fewer() {
        let cp = Checkpoint {
            messages: thread(),
            ..Checkpoint::default()
        };
        let options = over_budget(2, false, Planted::none());
        let right = SummarizationMiddleware::new(options).apply(&cp).unwrap();
        let legacy = SummarizationMiddleware::new(SummarizationOptions {
            planted: Planted::only(BugId::R20),
            ..options
        })
        .apply(&cp)
        .unwrap();
        assert_eq!(right.messages[1..], cp.messages[4..]);
        assert_eq!(legacy.messages[1..], cp.messages[5..]);
    }

    #[test]
    fn the_current_request_stays_in_the_kept_window() {
        // question one, ai(calls), tool, tool, answer, question two, then three steps of it.
        let mut messages = thread();
        messages.push(ChatMessage::ai_tool_calls(
            Some("lc_run--3".into()),
            vec![call("c")],
        ));
        messages.push(ChatMessage::tool("result c", "c"));
        messages.push(ChatMessage::ai("answer two", Some("lc_run--4".into())));
        let cp = Checkpoint {
            messages,
            ..Checkpoint::default()
        };
        let options = over_budget(2, true, Planted::none());
        let out = SummarizationMiddleware::new(options).apply(&cp).unwrap();
        assert_eq!(out.messages[1..], cp.messages[5..]); // from "question two" on
        let plain = SummarizationOptions {
            keep_current_request: false,
            ..options
        };
        let out = SummarizationMiddleware::new(plain).apply(&cp).unwrap();
        assert_eq!(out.messages[1..], cp.messages[6..]);
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_r29_folds_the_current_request() {
        let mut messages = thread();
        messages.push(ChatMessage::ai("answer two", Some("lc_run--3".into())));
        messages.push(ChatMessage::ai("more", Some("lc_run--4".into())));
        let cp = Checkpoint {
            messages,
            ..Checkpoint::default()
        };
        let legacy = SummarizationMiddleware::new(over_budget(2, true, Planted::only(BugId::R29)))
            .apply(&cp)
            .unwrap();
        assert_eq!(legacy.messages[1..], cp.messages[6..]);
    }

    #[test]
    fn orphans_are_found() {
        let m = thread();
        assert_eq!(orphaned_tool_results(&m[2..]), vec![0, 1]);
        assert!(orphaned_tool_results(&m).is_empty());
    }
}
