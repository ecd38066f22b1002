//! Token estimates with the o200k_base tokenizer, one counter state per counter.
//!
//! A counter is fed a row's text in pieces (block by block, as the request spool streams it) and
//! counts the row when it ends. The pieces wait in the counter's own buffer. The seed's legacy
//! counters shared one stateful matcher between concurrent counts, so counts depended on how
//! they interleaved (J17); here the vocabulary is shared (it is immutable) but the buffer is not.

use std::fmt;
use std::sync::{Arc, Mutex};

use super::row::{Block, Row};
use crate::{BugId, Planted};

/// A handle on the o200k_base vocabulary; clone it freely. Counters made from one tokenizer
/// share nothing mutable, except under the planted J17 bug.
#[derive(Clone)]
pub struct Tokenizer {
    /// planted J17: the one buffer that every counter of this tokenizer wrote into.
    legacy_shared: Arc<Mutex<String>>,
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Tokenizer(o200k_base)")
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer::o200k()
    }
}

impl Tokenizer {
    /// The o200k_base vocabulary (loaded once per process; it is read-only).
    pub fn o200k() -> Tokenizer {
        crate::token_counts::load_o200k();
        Tokenizer {
            legacy_shared: Arc::new(Mutex::new(String::new())),
        }
    }

    /// A counter with its own state.
    pub fn counter(&self, planted: Planted) -> TokenCounter {
        TokenCounter {
            tokenizer: self.clone(),
            pending: String::new(),
            total_tokens: 0,
            planted,
        }
    }

    /// Tokens in `text`, counted in one go.
    pub fn count(&self, text: &str) -> u64 {
        crate::token_counts::o200k_tokens(text)
    }
}

/// Counts rows fed to it piece by piece.
#[derive(Debug)]
pub struct TokenCounter {
    tokenizer: Tokenizer,
    /// Text of the row being fed, counted when the row ends.
    pending: String,
    total_tokens: u64,
    planted: Planted,
}

impl TokenCounter {
    /// Feeds one piece of the current row's text.
    pub fn push(&mut self, piece: &str) {
        if self.planted.is(BugId::J17) {
            // planted J17: every counter appended to the tokenizer's one shared buffer.
            lock(&self.tokenizer.legacy_shared).push_str(piece);
            return;
        }
        self.pending.push_str(piece);
    }

    /// Ends the current row: counts its text, adds it to the total and returns it.
    pub fn end_row(&mut self) -> u64 {
        let text = if self.planted.is(BugId::J17) {
            // planted J17: whichever counter ends a row first takes everyone's pieces.
            std::mem::take(&mut *lock(&self.tokenizer.legacy_shared))
        } else {
            std::mem::take(&mut self.pending)
        };
        let tokens = self.tokenizer.count(&text);
        // A byte-level BPE token covers at least one byte, so a text has no more tokens than
        // bytes; and a counter of its own starts the next row empty.
        debug_assert!(tokens <= text.len() as u64);
        debug_assert!(self.pending.is_empty());
        let total = self.total_tokens;
        self.total_tokens += tokens;
        debug_assert!(self.total_tokens >= total);
        tokens
    }

    /// Feeds a whole row and ends it.
    pub fn count_row(&mut self, row: &Row) -> u64 {
        for (i, piece) in row_pieces(row).enumerate() {
            if i > 0 {
                self.push("\n");
            }
            self.push(piece);
        }
        let tokens = self.end_row();
        // The pieces fed are the row's strings, whose sizes are what statistics call its bytes.
        debug_assert_eq!(
            row_pieces(row).map(str::len).sum::<usize>(),
            row.content_bytes()
        );
        // Post-condition: the row's pieces and the newlines between them (fewer than three a
        // block) bound its count, but with J17, whose counter takes other counters' pieces.
        debug_assert!(
            self.planted.is(BugId::J17)
                || tokens as usize <= row.content_bytes() + 3 * row.blocks.len()
        );
        tokens
    }

    /// Tokens of every row ended so far.
    pub fn total_tokens(&self) -> u64 {
        self.total_tokens
    }
}

fn lock(m: &Mutex<String>) -> std::sync::MutexGuard<'_, String> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The strings of a row in the order a request carries them: the pieces a counter is fed.
pub fn row_pieces(row: &Row) -> impl Iterator<Item = &str> {
    row.blocks.iter().flat_map(|b| {
        let parts: [&str; 3] = match b {
            Block::Text { text } => [text, "", ""],
            Block::ToolCall {
                id,
                name,
                arguments,
            } => [id, name, arguments],
            Block::ToolResult {
                call_id,
                name,
                content,
            } => [call_id, name, content],
        };
        parts.into_iter().filter(|p| !p.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::row::{Origin, Speaker};

    #[test]
    fn counts_match_the_vocabulary() {
        let t = Tokenizer::o200k();
        assert_eq!(t.count(""), 0);
        assert!(t.count("hello world") >= 2);
        let row = Row::text(Speaker::Human, Origin::Main, "hello world");
        let mut c = t.counter(Planted::none());
        assert_eq!(c.count_row(&row), t.count("hello world"));
        assert_eq!(c.total_tokens(), t.count("hello world"));
    }

    #[test]
    fn interleaved_counters_do_not_disturb_each_other() {
        let t = Tokenizer::o200k();
        let mut a = t.counter(Planted::none());
        let mut b = t.counter(Planted::none());
        a.push("The quick brown ");
        b.push("fn main() {");
        a.push("fox jumps");
        b.push(" println!(); }");
        assert_eq!(a.end_row(), t.count("The quick brown fox jumps"));
        assert_eq!(b.end_row(), t.count("fn main() { println!(); }"));
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_j17_miscounts_interleaved_counters() {
        let t = Tokenizer::o200k();
        let p = Planted::only(BugId::J17);
        let mut a = t.counter(p);
        let mut b = t.counter(p);
        a.push("The quick brown ");
        b.push("fn main() {");
        assert_ne!(a.end_row(), t.count("The quick brown "));
        assert_eq!(b.end_row(), 0);
    }
}
