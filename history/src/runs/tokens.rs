//! Token estimates with a real tokenizer (o200k_base), for the summarization budget.
//!
//! The encoder tables load once per process (a lazily built static of `bpe-openai`) and are then
//! shared by every counter; counting is a pure function of the text, so counts are kept by text
//! for the process (`crate::token_counts`).

use super::message::ChatMessage;

/// Tokens added per message for its role and framing, as chat formats do.
pub const MESSAGE_OVERHEAD_TOKENS: usize = 4;

/// Counts tokens with o200k_base.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    /// Counters are made only by `o200k`, which loads the tables.
    _loaded: (),
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCounter(o200k_base)")
    }
}

impl TokenCounter {
    /// The o200k_base counter (the first call loads the tables).
    pub fn o200k() -> TokenCounter {
        crate::token_counts::load_o200k();
        TokenCounter { _loaded: () }
    }

    /// Tokens of a plain text (special tokens are treated as text).
    pub fn text_tokens(&self, text: &str) -> usize {
        crate::token_counts::o200k_tokens(text) as usize
    }

    /// Tokens of one message: its text, its tool calls' names and arguments, plus the overhead.
    pub fn message_tokens(&self, message: &ChatMessage) -> usize {
        let calls: usize = message
            .tool_calls
            .iter()
            .map(|c| self.text_tokens(&c.name) + self.text_tokens(&c.args.to_string()))
            .sum();
        MESSAGE_OVERHEAD_TOKENS + self.text_tokens(&message.text()) + calls
    }

    /// Tokens of a message list.
    pub fn messages_tokens(&self, messages: &[ChatMessage]) -> usize {
        messages.iter().map(|m| self.message_tokens(m)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_real_bpe_counts() {
        let c = TokenCounter::o200k();
        assert_eq!(c.text_tokens(""), 0);
        assert_eq!(c.text_tokens("hello world"), 2);
        let long = "hello world ".repeat(100);
        assert!(c.text_tokens(&long) >= 100);
        assert_eq!(
            c.message_tokens(&ChatMessage::human("hello world")),
            2 + MESSAGE_OVERHEAD_TOKENS
        );
    }
}
