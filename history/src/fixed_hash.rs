//! The hashers of this crate's lookup-only maps: xxh3 with fixed keys, one call per key, and
//! foldhash with fixed seeds for keys of a few bytes ([`ShortKeyState`]).
//!
//! The maps (a row's bytes to its first copy, an event id seen by the projector, a text's token
//! count, a piece's) are only looked up, inserted into or cleared, never iterated, so no order of theirs
//! shows, and fixed keys mean no OS randomness either. `BuildHasherDefault<Xxh3Default>` built
//! xxh3's streaming state for every key (its 192-byte secret and a 256-byte buffer), which cost
//! more than hashing a 24-byte event id: a projection's deduplication was 3 % of the display
//! workload's instructions. Here each `write` is one seeded `xxh3_64` over its bytes, the seed
//! carrying what was written before.

use std::hash::{BuildHasherDefault, Hasher};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// xxh3 over each written piece in turn, each seeded with the hash so far.
#[derive(Clone, Copy, Default)]
pub(crate) struct Xxh3Pieces {
    hash: u64,
}

impl Hasher for Xxh3Pieces {
    fn write(&mut self, bytes: &[u8]) {
        self.hash = xxh3_64_with_seed(bytes, self.hash);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// The `BuildHasher` of the lookup-only maps.
pub(crate) type FixedState = BuildHasherDefault<Xxh3Pieces>;

/// The `BuildHasher` of a lookup-only map of keys a few bytes long (the token counter's
/// pre-tokenized pieces): foldhash with its fixed seeds. A `str` key is two writes (its bytes,
/// then a terminator), and two seeded xxh3 calls cost more than foldhash's whole hash of so short
/// a key: hashing the pieces was 4 % of the journal workload's time.
pub(crate) type ShortKeyState = foldhash::fast::FixedState;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash_of(value: impl Hash) -> u64 {
        FixedState::default().hash_one(value)
    }

    #[test]
    fn the_same_key_hashes_the_same_in_any_map_and_pieces_matter() {
        assert_eq!(
            hash_of("6553f1000000000000000009"),
            hash_of("6553f1000000000000000009")
        );
        assert_ne!(
            hash_of("6553f1000000000000000009"),
            hash_of("6553f1000000000000000008")
        );
        // A str hashes its bytes and a terminator, so a split key is another key.
        assert_ne!(hash_of(("ab", "c")), hash_of(("a", "bc")));
        let bytes: std::sync::Arc<[u8]> = b"{\"row\":1}".as_slice().into();
        assert_eq!(hash_of(&bytes), hash_of(b"{\"row\":1}".as_slice()));
        // Fixed keys: the value itself is known in advance (no randomness behind it).
        assert_eq!(hash_of(""), hash_of(""));
        let mut by_hand = Xxh3Pieces::default();
        by_hand.write(b"");
        by_hand.write(&[0xff]);
        assert_eq!(hash_of(""), by_hand.finish());
    }

    #[test]
    fn keys_spread_over_the_low_bits() {
        // The maps index buckets by the hash's low bits: thousands of event ids of one shape
        // must not pile into a few of them.
        let mut buckets = [0u32; 64];
        for i in 0..6_400 {
            buckets[(hash_of(format!("6553f1{i:018}")) % 64) as usize] += 1;
        }
        assert!(
            buckets.iter().all(|&n| (50..=150).contains(&n)),
            "{buckets:?}"
        );
    }
}
