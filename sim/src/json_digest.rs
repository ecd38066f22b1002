//! The xxh3 hash of a value's JSON text, written into the hasher as serde_json produces it.
//!
//! The traces hash answers (`hash_of` in the runs world, the display's answer digest) as the
//! xxh3 of their JSON text. Building the text first cost a buffer grown by doubling to the size
//! of the answer; a long thread's full read is hundreds of kilobytes, copied at every doubling.
//! Streaming gives the same 64 bits (xxh3 of the same bytes, fed in pieces), so no trace hash
//! changes.

use serde::Serialize;
use std::io;
use xxhash_rust::xxh3::{xxh3_64, Xxh3Default};

/// `xxh3_64(&serde_json::to_vec(value).unwrap_or_default())`, without the bytes in between: a
/// value serde_json cannot write hashes as the empty text, as it did there.
pub fn json_xxh3<T: Serialize + ?Sized>(value: &T) -> u64 {
    let mut hasher = HashWriter::default();
    match serde_json::to_writer(&mut hasher, value) {
        Ok(()) => hasher.digest(),
        Err(_) => xxh3_64(b""),
    }
}

/// An `io::Write` that feeds every byte into an xxh3 hasher (it cannot fail): its digest is
/// `xxh3_64` of everything written, however it was cut into writes.
#[derive(Default)]
pub struct HashWriter(Xxh3Default);

impl HashWriter {
    pub fn digest(&self) -> u64 {
        self.0.digest()
    }
}

impl io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
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
