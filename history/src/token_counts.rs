//! Token counts in o200k_base, kept by text for the whole process, shared by every counter (the
//! journal's and the run summarizer's).
//!
//! The counts come from `bpe-openai`, whose o200k_base tokenizer gives tiktoken's counts (tested
//! below against `tiktoken-rs`, which the model uses) at about half the cost on the simulation's
//! texts, and loads its tables in about 40 % of the time.
//!
//! A journal fold counts the same rows again and again (every fold re-reads its journal), and
//! encoding is most of the cost of a count: tiktoken's pre-tokenizing regex alone was 40 % of the
//! spool workload's instructions. A count is a function of the text alone, so keeping it changes
//! no answer. The map is only looked up, never iterated (its order never shows); it is bounded by
//! the bytes of its keys and emptied when full.

use crate::fixed_hash::{FixedState, ShortKeyState};
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{LazyLock, Mutex, MutexGuard};

/// Loads the o200k_base tables now rather than at the first count (they load once per process).
pub(crate) fn load_o200k() {
    let _ = bpe_openai::o200k_base();
}

/// Tokens of `text` in o200k_base, special tokens counted as text (tiktoken's
/// `encode_ordinary`), counted once per process.
pub(crate) fn o200k_tokens(text: &str) -> u64 {
    if let Some(tokens) = counted().get(text) {
        return tokens;
    }
    let tokens = count_pieces(text);
    counted().keep(text, tokens);
    tokens
}

/// The count of a text the cache does not hold: the sum of the counts of its pre-tokenized
/// pieces (what `bpe_openai::Tokenizer::count` adds up; o200k_base does not normalize), each
/// piece counted once per thread. The simulation's texts are made of few distinct pieces (a
/// row's words repeated to its size), so most pieces are found; every byte-pair count starts a
/// fresh encoder, which was a fifth of the cost of counting.
fn count_pieces(text: &str) -> u64 {
    let tokenizer = bpe_openai::o200k_base();
    PIECES.with_borrow_mut(|pieces| {
        tokenizer
            .split(text)
            .map(|piece| {
                pieces.get(piece).unwrap_or_else(|| {
                    let tokens = tokenizer.bpe.count(piece.as_bytes()) as u64;
                    pieces.keep(piece, tokens);
                    tokens
                })
            })
            .sum()
    })
}

thread_local! {
    // One a thread, so that the campaign's jobs do not wait on each other for every piece.
    static PIECES: std::cell::RefCell<KeptCounts<ShortKeyState>> =
        std::cell::RefCell::new(KeptCounts::new(PIECE_BYTES_MAX));
}

/// The bytes of pieces a thread keeps at most.
const PIECE_BYTES_MAX: usize = 4 * 1024 * 1024;

fn counted() -> MutexGuard<'static, KeptCounts<FixedState>> {
    COUNTED.lock().unwrap_or_else(|e| e.into_inner())
}

static COUNTED: LazyLock<Mutex<KeptCounts<FixedState>>> =
    LazyLock::new(|| Mutex::new(KeptCounts::new(COUNTED_BYTES_MAX)));

/// The bytes of text the process-wide cache keeps at most.
const COUNTED_BYTES_MAX: usize = 16 * 1024 * 1024;

/// Token counts kept by text, only looked up, never iterated; bounded by the bytes of its keys
/// and emptied when full. The hasher `S` has fixed keys.
struct KeptCounts<S> {
    counts: HashMap<Box<str>, u64, S>,
    bytes: usize,
    bytes_max: usize,
}

impl<S: BuildHasher + Default> KeptCounts<S> {
    fn new(bytes_max: usize) -> KeptCounts<S> {
        KeptCounts {
            counts: HashMap::default(),
            bytes: 0,
            bytes_max,
        }
    }

    fn get(&self, text: &str) -> Option<u64> {
        self.counts.get(text).copied()
    }

    fn keep(&mut self, text: &str, tokens: u64) {
        if self.bytes + text.len() > self.bytes_max {
            self.counts.clear();
            self.bytes = 0;
        }
        // Two threads may count the same text; only the first keeps it.
        if text.len() <= self.bytes_max && self.counts.insert(text.into(), tokens).is_none() {
            self.bytes += text.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    fn tiktoken_count(text: &str) -> u64 {
        tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(text)
            .len() as u64
    }

    #[test]
    fn a_count_kept_is_the_count_of_the_text_and_the_kept_counts_stay_bounded() {
        let text = "the cache keeps what was counted: a second count is the first";
        let first = o200k_tokens(text);
        assert_eq!(first, tiktoken_count(text));
        assert_eq!(o200k_tokens(text), first);
        let mut cache = KeptCounts::<FixedState>::new(COUNTED_BYTES_MAX);
        let long = "x".repeat(COUNTED_BYTES_MAX / 2 + 1);
        cache.keep(&long, 1);
        cache.keep("short", 2);
        assert_eq!(cache.bytes, long.len() + 5);
        // A third text that would pass the bound empties the cache first.
        cache.keep(&long[1..], 3);
        assert_eq!(cache.counts.len(), 1);
        assert_eq!(cache.bytes, long.len() - 1);
        assert_eq!(cache.counts.get(&long[1..]), Some(&3));
    }

    /// Texts where tokenizers' pre-splitting differs easily: contractions, digit runs, runs of
    /// spaces before a word or at the end, line breaks, letters with marks, scripts without
    /// spaces, emoji sequences, special-token text.
    const PIECES: &[&str] = &[
        "a",
        "Z",
        "hello",
        "World",
        "THE",
        " ",
        "  ",
        "   ",
        "\n",
        "\r\n",
        "\t",
        "1",
        "23",
        "4567",
        "'s",
        "'T",
        "'re",
        "'LL",
        "'d",
        "don't",
        "I'M",
        "é",
        "e\u{301}",
        "ß",
        "İ",
        "Σ",
        "ǅ",
        "ʰ",
        "日本語",
        "।",
        "كتاب",
        "🙂",
        "👩\u{200d}👩\u{200d}👧",
        "\u{a0}",
        "\u{2003}",
        "\u{200b}",
        "-",
        "--",
        "/",
        "//",
        ".",
        ",",
        "!?",
        "\"",
        "{",
        "}",
        "[",
        "]",
        ":",
        "_",
        "$",
        "%",
        "<|endoftext|>",
        "event_data",
        "q0w12",
        "\u{0}",
        "\u{7f}",
        "\u{10ffff}",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn counts_are_tiktokens_counts(picks in proptest::collection::vec(0..PIECES.len(), 0..48)) {
            let text: String = picks.iter().map(|&i| PIECES[i]).collect();
            prop_assert_eq!(bpe_openai::o200k_base().count(text.as_str()) as u64, tiktoken_count(&text));
            prop_assert_eq!(count_pieces(&text), tiktoken_count(&text));
        }

        #[test]
        fn counts_of_any_text_are_tiktokens_counts(text in "\\PC{0,64}") {
            prop_assert_eq!(bpe_openai::o200k_base().count(text.as_str()) as u64, tiktoken_count(&text));
        }
    }

    #[test]
    fn counting_by_pieces_is_counting_the_whole_text() {
        for text in [
            "",
            "a",
            "q0w1 q0w1 q0w1",
            "don't  stop\n\n 123456 日本語 🙂!!",
            "   ",
        ] {
            assert_eq!(
                count_pieces(text),
                bpe_openai::o200k_base().count(text) as u64
            );
            assert_eq!(count_pieces(text), tiktoken_count(text));
        }
    }

    #[test]
    fn padded_texts_of_the_simulation_count_as_tiktoken_counts_them() {
        for (i, word) in ["q0w1", "a3w17", "t1w250", "answer"].iter().enumerate() {
            let mut text = word.to_string();
            while text.len() < 300 * (i + 1) {
                text.push(' ');
                text.push_str(word);
            }
            assert_eq!(
                bpe_openai::o200k_base().count(text.as_str()) as u64,
                tiktoken_count(&text)
            );
        }
    }
}
