//! Lazy access to raw JSON: objects read field by field, values parsed only when asked for.
//!
//! Rows are stored as raw bytes and most of them (custom agent events) are never projected, so the
//! projector must not build a `serde_json::Value` for them. These helpers pick the wanted fields of
//! an object out as borrowed [`RawValue`]s and skip everything else cheaply. Duplicate keys resolve
//! as `serde_json::Value` resolves them (the last occurrence wins), so a row means the same thing
//! to every reader.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// Why a byte string could not be read as a JSON object. Carries positions only, never content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ObjectError {
    /// The bytes are not one well-formed JSON document.
    Syntax { line: usize, column: usize },
    /// The document is well formed but its top level is not an object.
    NotAnObject,
}

impl fmt::Display for ObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectError::Syntax { line, column } => {
                write!(
                    f,
                    "bytes are not valid JSON (error at line {line}, column {column})"
                )
            }
            ObjectError::NotAnObject => f.write_str("the top-level JSON value is not an object"),
        }
    }
}

/// The values of the fields `names` of a JSON object, `None` where absent. Later duplicates win.
pub(crate) type Fields<'a, const N: usize> = [Option<&'a RawValue>; N];

/// Reads `bytes` as one JSON object and returns the raw values of the fields named in `names`.
pub(crate) fn object_fields<'a, const N: usize>(
    bytes: &'a [u8],
    names: &[&str; N],
) -> Result<Fields<'a, N>, ObjectError> {
    // Text checked as UTF-8 once, in one pass, is read without checking each string and raw
    // value again (serde_json's `StrRead`); bytes that are not UTF-8 go through `SliceRead`,
    // which reports where, as before. Both readers accept and refuse the same UTF-8 documents.
    match std::str::from_utf8(bytes) {
        Ok(text) => fields_of(serde_json::Deserializer::from_str(text), names),
        Err(_) => fields_of(serde_json::Deserializer::from_slice(bytes), names),
    }
}

fn fields_of<'a, R: serde_json::de::Read<'a>, const N: usize>(
    mut de: serde_json::Deserializer<R>,
    names: &[&str; N],
) -> Result<Fields<'a, N>, ObjectError> {
    let fields = de
        .deserialize_any(FieldsVisitor { names })
        .map_err(|e| classify(&e))?;
    de.end().map_err(|e| classify(&e))?;
    Ok(fields)
}

/// Like [`object_fields`] for a value already known to be well formed; `None` if not an object.
pub(crate) fn raw_object_fields<'a, const N: usize>(
    raw: &'a RawValue,
    names: &[&str; N],
) -> Option<Fields<'a, N>> {
    fields_of(serde_json::Deserializer::from_str(raw.get()), names).ok()
}

fn classify(e: &serde_json::Error) -> ObjectError {
    if e.is_data() {
        ObjectError::NotAnObject
    } else {
        ObjectError::Syntax {
            line: e.line(),
            column: e.column(),
        }
    }
}

struct FieldsVisitor<'n, const N: usize> {
    names: &'n [&'n str; N],
}

impl<'de, const N: usize> Visitor<'de> for FieldsVisitor<'_, N> {
    type Value = Fields<'de, N>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Fields<'de, N> = [None; N];
        while let Some(key) = map.next_key_seed(KeySeed { names: self.names })? {
            match key {
                Some(i) => out[i] = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// Maps an object key to the index of the wanted name, without allocating for plain keys.
struct KeySeed<'n, const N: usize> {
    names: &'n [&'n str; N],
}

impl<'de, const N: usize> DeserializeSeed<'de> for KeySeed<'_, N> {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, const N: usize> Visitor<'de> for KeySeed<'_, N> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.names.iter().position(|n| *n == v))
    }
}

/// A JSON string, borrowed when it has no escapes.
struct CowStr<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for CowStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CowStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(CowStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CowStr(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The value as a string, if it is a JSON string.
pub(crate) fn as_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    // A raw value is well-formed JSON, so a string token without a backslash holds its text
    // verbatim between the quotes: borrowed without a second parse (the projector reads every
    // identity field of every row this way).
    if text.len() >= 2 && text.ends_with('"') && !text.contains('\\') {
        return Some(Cow::Borrowed(&text[1..text.len() - 1]));
    }
    serde_json::from_str::<CowStr<'_>>(text).ok().map(|s| s.0)
}

/// The value as a list of strings, if it is an array whose every element is a string.
pub(crate) fn as_str_array(raw: &RawValue) -> Option<Vec<Cow<'_, str>>> {
    if !raw.get().starts_with('[') {
        return None;
    }
    let items = serde_json::from_str::<Vec<CowStr<'_>>>(raw.get()).ok()?;
    Some(items.into_iter().map(|s| s.0).collect())
}

/// The elements of an array, unparsed; `None` if the value is not an array.
pub(crate) fn as_array(raw: &RawValue) -> Option<Vec<&RawValue>> {
    if !raw.get().starts_with('[') {
        return None;
    }
    // Counting elements first would need a second pass; arrays here are small or skipped.
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_seq(RawSeq).ok()
}

struct RawSeq;

impl<'de> Visitor<'de> for RawSeq {
    type Value = Vec<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            out.push(item);
        }
        Ok(out)
    }
}

/// The value as an integer, exactly when `serde_json::Value` would hold it as an integer
/// (`i64` or `u64`): not a bool, not a float (`1.0`, `1e3`, `-0`), not a string.
pub(crate) fn as_integer(raw: &RawValue) -> Option<i128> {
    let text = raw.get();
    // Up to 19 digits and nothing else is a non-negative integer below 10^19, which fits a u64
    // (the projector reads every row's `created_at`, nanoseconds since the epoch, this way).
    if (1..=19).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<u64>().ok().map(i128::from);
    }
    let n = serde_json::from_str::<serde_json::Number>(raw.get()).ok()?;
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// The value as a bool, if it is `true` or `false`.
pub(crate) fn as_bool(raw: &RawValue) -> Option<bool> {
    match raw.get() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A raw JSON value of `s` (the other modules' tests build theirs with it too).
    pub(crate) fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).expect("test JSON is valid")
    }

    #[test]
    fn picks_named_fields_and_last_duplicate_wins() {
        let f = object_fields(
            br#"{"a":1,"b":{"x":[1,2]},"a":"two","c":null}"#,
            &["a", "b", "z"],
        )
        .expect("object");
        assert_eq!(f[0].map(|r| r.get()), Some(r#""two""#));
        assert_eq!(f[1].map(|r| r.get()), Some(r#"{"x":[1,2]}"#));
        assert!(f[2].is_none());
    }

    #[test]
    fn escaped_keys_are_matched_by_their_decoded_text() {
        let f = object_fields(br#"{"\u0061":1}"#, &["a"]).expect("object");
        assert_eq!(f[0].map(|r| r.get()), Some("1"));
    }

    /// Reading checked text gives what reading the bytes gives: fields, refusals and the
    /// positions they name (the byte reader, `SliceRead`, is the oracle).
    #[test]
    fn text_reads_as_its_bytes_do() {
        let docs: [&[u8]; 8] = [
            br#"{"a":"\u00e9t\u00e9","b":[1,{"c":"\ud83d\ude00"}],"a":"last"}"#,
            "{\"a\":\"caf\u{e9} \u{1f600}\",\"b\":null}".as_bytes(),
            "{\"a\":\"\u{e9}\u{e9}\u{e9}\",\n \"b\": tru}".as_bytes(),
            "{\"a\":\"\u{e9}\"\n,\n}".as_bytes(),
            br#"{"a":"\ud800","b":1}"#,
            br#"[{"a":1}]"#,
            b"{\"a\":\"\xff\xfe\",\"b\":2}",
            b"{\"a\":1} trailing",
        ];
        for doc in docs {
            let by_bytes = fields_of(serde_json::Deserializer::from_slice(doc), &["a", "b"])
                .map(|f| f.map(|v| v.map(RawValue::get)));
            let read = object_fields(doc, &["a", "b"]).map(|f| f.map(|v| v.map(RawValue::get)));
            assert_eq!(read, by_bytes, "{}", String::from_utf8_lossy(doc));
        }
    }

    #[test]
    fn errors_name_the_position_and_the_kind() {
        assert_eq!(
            object_fields(b"[1]", &["a"]).err(),
            Some(ObjectError::NotAnObject)
        );
        assert_eq!(
            object_fields(b"\"x\"", &["a"]).err(),
            Some(ObjectError::NotAnObject)
        );
        assert!(matches!(
            object_fields(b"{\"a\":", &["a"]),
            Err(ObjectError::Syntax { .. })
        ));
        assert!(matches!(
            object_fields(b"{} x", &["a"]),
            Err(ObjectError::Syntax { .. })
        ));
        assert!(matches!(
            object_fields(b"\xff\xfe", &["a"]),
            Err(ObjectError::Syntax { .. })
        ));
        let text = ObjectError::Syntax { line: 1, column: 7 }.to_string();
        assert!(text.contains("line 1") && text.contains("column 7"));
    }

    #[test]
    fn integers_are_exactly_the_integers_of_serde_json_value() {
        assert_eq!(as_integer(&raw("12")), Some(12));
        assert_eq!(as_integer(&raw("-12")), Some(-12));
        assert_eq!(
            as_integer(&raw("18446744073709551615")),
            Some(u64::MAX as i128)
        );
        assert_eq!(as_integer(&raw("18446744073709551616")), None);
        assert_eq!(as_integer(&raw("0")), Some(0));
        assert_eq!(
            as_integer(&raw("9999999999999999999")),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(
            as_integer(&raw("1700000000123456789")),
            Some(1_700_000_000_123_456_789)
        );
        assert_eq!(as_integer(&raw("1.0")), None);
        assert_eq!(as_integer(&raw("1e3")), None);
        assert_eq!(as_integer(&raw("-0")), None);
        assert_eq!(as_integer(&raw("true")), None);
        assert_eq!(as_integer(&raw("\"12\"")), None);
    }

    #[test]
    fn strings_decode_escapes_and_reject_other_types() {
        assert_eq!(as_str(&raw(r#""a\nb""#)).as_deref(), Some("a\nb"));
        assert_eq!(as_str(&raw(r#""plain""#)), Some(Cow::Borrowed("plain")));
        assert_eq!(as_str(&raw(r#""""#)), Some(Cow::Borrowed("")));
        assert_eq!(as_str(&raw(r#""é \u00e9""#)).as_deref(), Some("é é"));
        assert_eq!(as_str(&raw(r#""a\"b""#)).as_deref(), Some("a\"b"));
        assert_eq!(as_str(&raw("1")), None);
        assert_eq!(
            as_str_array(&raw(r#"["A","B"]"#)),
            Some(vec![Cow::Borrowed("A"), Cow::Borrowed("B")])
        );
        assert_eq!(as_str_array(&raw(r#"["A",1]"#)), None);
        assert_eq!(as_str_array(&raw(r#""A""#)), None);
        assert_eq!(as_array(&raw("[1, {\"a\":2}]")).map(|v| v.len()), Some(2));
        assert_eq!(as_bool(&raw("true")), Some(true));
        assert_eq!(as_bool(&raw("1")), None);
    }
}
