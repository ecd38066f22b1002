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
//!
//! A system under test's answer lines are hashed in their canonical form ([`canonical_xxh3`]):
//! an answer is compared by what it means, not by how its JSON is spelled
//! (docs/sut-protocol.md, "Transport").

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

/// The xxh3 of the canonical form of the JSON `text` ([`write_canonical`]) after `prefix`, or
/// `None` when `text` is not JSON. Two answers that mean the same (their object keys in another
/// order, `1.0` for `1`, other whitespace or string escapes) hash alike.
pub fn canonical_xxh3(prefix: &[u8], text: &[u8]) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_slice(text).ok()?;
    Some(TEXT.with_borrow_mut(|out| {
        out.clear();
        out.extend_from_slice(prefix);
        write_canonical(&value, out);
        xxh3_64(out)
    }))
}

/// The canonical JSON text of `text`, or `None` when it is not JSON: for showing and comparing
/// two answers as their meaning.
pub fn canonical_text(text: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut out = Vec::with_capacity(text.len());
    write_canonical(&value, &mut out);
    String::from_utf8(out).ok()
}

/// Writes `value` in its canonical form: no whitespace, object keys sorted (by their bytes),
/// strings escaped as serde_json escapes them, and each number by its value: an integral number
/// that fits a 64-bit integer as that integer (`1.0`, `1e0` and `1` are all `1`), any other as
/// the shortest text that reads back as the same double.
pub fn write_canonical(value: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => {
            serde_json::to_writer(&mut *out, s).expect("a string serializes into memory")
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            // Sorted here whatever order the map keeps (serde_json's `preserve_order` feature,
            // switched on by any crate of the build, keeps the text's).
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("a string serializes into memory");
                out.push(b':');
                write_canonical(item, out);
            }
            out.push(b'}');
        }
    }
}

/// A number by its value (see [`write_canonical`]).
fn write_number(n: &serde_json::Number, out: &mut Vec<u8>) {
    let mut digits = itoa::Buffer::new();
    if let Some(u) = n.as_u64() {
        out.extend_from_slice(digits.format(u).as_bytes());
    } else if let Some(i) = n.as_i64() {
        out.extend_from_slice(digits.format(i).as_bytes());
    } else if let Some(f) = n.as_f64() {
        // 2^63 and 2^64: the integral doubles below them are exactly an i64 or a u64.
        const I64_END: f64 = 9_223_372_036_854_775_808.0;
        const U64_END: f64 = 18_446_744_073_709_551_616.0;
        if f.fract() == 0.0 && (0.0..U64_END).contains(&f) {
            out.extend_from_slice(digits.format(f as u64).as_bytes());
        } else if f.fract() == 0.0 && (-I64_END..0.0).contains(&f) {
            out.extend_from_slice(digits.format(f as i64).as_bytes());
        } else {
            serde_json::to_writer(&mut *out, &f).expect("a double serializes into memory");
        }
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

    #[test]
    fn answers_that_mean_the_same_hash_alike_and_others_do_not() {
        use super::{canonical_text, canonical_xxh3};
        let a = br#"{"id":3,"ok":{"seqs":[4,5],"rows":[{"a":1,"b":"x\u00e9"}],"f":0.5}}"#;
        let b = r#" { "ok" : { "f" : 5e-1, "rows" : [ { "b" : "xé", "a" : 1.0 } ],
                     "seqs" : [ 4, 5.0 ] }, "id" : 3 } "#
            .as_bytes();
        let c = br#"{"id":3,"ok":{"seqs":[5,4],"rows":[{"a":1,"b":"x\u00e9"}],"f":0.5}}"#;
        let canonical = |t: &[u8]| canonical_xxh3(b"< ", t).expect("JSON");
        assert_eq!(canonical(a), canonical(b));
        assert_ne!(canonical(a), canonical(c), "array order is meaning");
        assert_eq!(canonical_xxh3(b"< ", b"not json"), None);
        assert_eq!(
            canonical_text(r#"{"b":[1.0,-0.0,-2e0,1.5,1e300],"a":null}"#).as_deref(),
            Some(r#"{"a":null,"b":[1,0,-2,1.5,1e+300]}"#)
        );
        assert_eq!(
            canonical_text("18446744073709551615").as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(
            canonical_text("-9223372036854775808").as_deref(),
            Some("-9223372036854775808")
        );
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
