//! The xxh3 hash of a value's JSON text.
//!
//! The traces hash answers (`hash_of` in the runs world, the display's answer digest) as the
//! xxh3 of their JSON text. The text is written into one buffer a thread keeps from answer to
//! answer and hashed in one call: serde_json writes a value a few bytes at a time (a quote, a
//! colon, a key), and feeding each piece to the hasher as it came cost the hasher's checks and
//! a copy into its stripe buffer for every piece: about a third more instructions than writing
//! into this buffer and hashing once (the runs workload, docs/performance.md). A long thread's
//! full read is hundreds of kilobytes; the kept buffer grows to the largest answer once, not by
//! doubling at every answer. The bytes are the same, so no trace hash changes.

use serde::Serialize;
use std::cell::RefCell;
use std::io;
use xxhash_rust::xxh3::xxh3_64;

/// `xxh3_64(&serde_json::to_vec(value).unwrap_or_default())`: a value serde_json cannot write
/// hashes as the empty text, as it did there.
pub fn json_xxh3<T: Serialize + ?Sized>(value: &T) -> u64 {
    xxh3_of_text(|text| serde_json::to_writer(text, value).map_err(io::Error::from))
}

/// The xxh3 of the bytes `write` puts into the (empty) buffer it is given, or of no bytes
/// when it fails.
pub fn xxh3_of_text(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> u64 {
    TEXT.with_borrow_mut(|text| {
        text.clear();
        match write(text) {
            Ok(()) => xxh3_64(text),
            Err(_) => xxh3_64(b""),
        }
    })
}

thread_local! {
    /// The text of the answer being hashed; kept for the next so that it is allocated once.
    static TEXT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

#[cfg(test)]
mod tests {
    use super::json_xxh3;
    use proptest::prelude::*;
    use serde_json::{json, Value};
    use std::collections::BTreeMap;
    use xxhash_rust::xxh3::xxh3_64;

    fn by_text<T: serde::Serialize + ?Sized>(value: &T) -> u64 {
        xxh3_64(&serde_json::to_vec(value).unwrap_or_default())
    }

    #[test]
    fn a_large_answer_hashes_as_its_text() {
        // Past xxh3's internal buffer many times over, and past every serde_json write size.
        let rows: Vec<Value> = (0..2_000)
            .map(|i| json!({"seq": i, "content": "x".repeat(i % 300), "ok": i % 2 == 0}))
            .collect();
        assert_eq!(json_xxh3(&rows), by_text(&rows));
        assert_ne!(json_xxh3(&rows), json_xxh3(&rows[1..]));
    }

    #[test]
    fn the_kept_buffer_holds_only_the_answer_being_hashed() {
        // The thread's buffer outlives each answer: a short answer after a long one, or after
        // one serde_json could not finish writing, hashes as its own text alone.
        let long: Vec<Value> = (0..500).map(|i| json!({"seq": i})).collect();
        let short = json!({"seq": 1});
        let mut keyed_by_tuples = BTreeMap::new();
        keyed_by_tuples.insert((1, 2), "fails halfway");
        assert_eq!(json_xxh3(&long), by_text(&long));
        assert_eq!(json_xxh3(&short), by_text(&short));
        assert_eq!(json_xxh3(&keyed_by_tuples), xxh3_64(b""));
        assert_eq!(json_xxh3(&short), by_text(&short));
        assert_eq!(
            super::xxh3_of_text(|text| {
                text.extend_from_slice(b"written, then ");
                Err(std::io::Error::other("refused"))
            }),
            xxh3_64(b"")
        );
    }

    #[test]
    fn a_value_serde_json_cannot_write_hashes_as_the_empty_text() {
        let mut keyed_by_tuples = BTreeMap::new();
        keyed_by_tuples.insert((1, 2), "a map with non-string keys");
        assert!(serde_json::to_vec(&keyed_by_tuples).is_err());
        assert_eq!(json_xxh3(&keyed_by_tuples), by_text(&keyed_by_tuples));
        assert_eq!(json_xxh3(&keyed_by_tuples), xxh3_64(b""));
    }

    proptest! {
        #[test]
        fn any_text_and_numbers_hash_as_their_text(
            texts in proptest::collection::vec("\\PC{0,40}", 0..30),
            numbers in proptest::collection::vec(any::<i64>(), 0..30),
        ) {
            let value = json!({"texts": texts, "numbers": numbers});
            prop_assert_eq!(json_xxh3(&value), by_text(&value));
        }
    }
}
