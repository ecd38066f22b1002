//! Token counts kept by text for the whole process, shared by every o200k_base counter (the
//! journal's and the run summarizer's).
//!
//! A journal fold counts the same rows again and again (every fold re-reads its journal), and
//! encoding is most of the cost of a count: tiktoken's pre-tokenizing regex alone was 40 % of the
//! spool workload's instructions. A count is a function of the text alone, so keeping it changes
//! no answer. The map is only looked up, never iterated (its order never shows); it is bounded by
//! the bytes of its keys and emptied when full.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher};
use std::sync::{LazyLock, Mutex, MutexGuard};

use tiktoken_rs::CoreBPE;

/// Tokens of `text` in o200k_base (`bpe` is that vocabulary), counted once per process.
pub(crate) fn o200k_tokens(bpe: &CoreBPE, text: &str) -> u64 {
    if let Some(&tokens) = counted().counts.get(text) {
        return tokens;
    }
    let tokens = bpe.encode_ordinary(text).len() as u64;
    counted().keep(text, tokens);
    tokens
}

fn counted() -> MutexGuard<'static, CountCache> {
    COUNTED.lock().unwrap_or_else(|e| e.into_inner())
}

static COUNTED: LazyLock<Mutex<CountCache>> = LazyLock::new(|| Mutex::new(CountCache::default()));

/// The bytes of text the cache keeps at most.
const COUNTED_BYTES_MAX: usize = 16 * 1024 * 1024;

#[derive(Default)]
struct CountCache {
    counts: HashMap<Box<str>, u64, BuildHasherDefault<DefaultHasher>>,
    bytes: usize,
}

impl CountCache {
    fn keep(&mut self, text: &str, tokens: u64) {
        if self.bytes + text.len() > COUNTED_BYTES_MAX {
            self.counts.clear();
            self.bytes = 0;
        }
        if text.len() <= COUNTED_BYTES_MAX && self.counts.insert(text.into(), tokens).is_none() {
            self.bytes += text.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_from_the_cache_is_the_count_of_the_text_and_the_cache_stays_bounded() {
        let bpe = tiktoken_rs::o200k_base_singleton();
        let text = "the cache keeps what was counted: a second count is the first";
        let first = o200k_tokens(bpe, text);
        assert_eq!(first, bpe.encode_ordinary(text).len() as u64);
        assert_eq!(o200k_tokens(bpe, text), first);
        let mut cache = CountCache::default();
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
}
