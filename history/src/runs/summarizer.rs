//! The summarizer behind the summarization middleware. The real one is an LLM call, out of scope
//! here; [`StubSummarizer`] is a deterministic stand-in with the same contract (messages in, text
//! out) so the middleware around it is the production code.

use super::message::{ChatMessage, MessageKind};

/// Turns the messages being folded away into a summary text.
pub trait Summarizer {
    fn summarize(&self, messages: &[ChatMessage]) -> String;
}

/// Counts per kind, then the first words of each message (at most `lines_max` lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StubSummarizer {
    /// Words kept from the start of each message.
    pub words_per_message: usize,
    /// Messages listed at most (the rest are only counted), so a summary stays bounded.
    pub lines_max: usize,
}

impl Default for StubSummarizer {
    fn default() -> StubSummarizer {
        StubSummarizer {
            words_per_message: 6,
            lines_max: 32,
        }
    }
}

impl Summarizer for StubSummarizer {
    fn summarize(&self, messages: &[ChatMessage]) -> String {
        let count = |k: MessageKind| messages.iter().filter(|m| m.kind == k).count();
        let mut out = format!(
            "{} messages ({} human, {} ai, {} tool).",
            messages.len(),
            count(MessageKind::Human),
            count(MessageKind::Ai),
            count(MessageKind::Tool)
        );
        for m in messages.iter().take(self.lines_max) {
            let text = m.text();
            let words: Vec<&str> = text
                .split_whitespace()
                .take(self.words_per_message)
                .collect();
            let kind = match m.kind {
                MessageKind::Human => "human",
                MessageKind::Ai if !m.tool_calls.is_empty() => "ai (tool call)",
                MessageKind::Ai => "ai",
                MessageKind::Tool => "tool",
            };
            out.push_str(&format!("\n- {kind}: {}", words.join(" ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stub_is_deterministic_and_bounded() {
        let msgs: Vec<ChatMessage> = (0..100)
            .map(|i| ChatMessage::human(format!("message number {i} with many words in it")))
            .collect();
        let s = StubSummarizer::default();
        let a = s.summarize(&msgs);
        assert_eq!(a, s.summarize(&msgs));
        assert!(a.starts_with("100 messages (100 human, 0 ai, 0 tool)."));
        assert_eq!(a.lines().count(), 33);
        assert!(a.contains("- human: message number 0 with many words"));
    }
}
