//! What a run journal keeps of a trace event's content under a byte bound: the model's own
//! statement of trace-content truncation, written apart from the journal's.
//!
//! The bound counts the bytes of the content's text in UTF-8: a JSON string's own characters,
//! any other value's compact JSON. Within the bound the event is kept exactly as emitted. Over
//! it, the kept content is a string: the longest run of whole leading characters of that text
//! whose bytes fit the bound; the metadata is the emitted object plus `content_truncated: true`
//! and `original_byte_length` (the text's bytes), or only those two when the emitted metadata
//! is no object. Events of any other category are never cut.

use serde_json::{json, Value};

/// The content and metadata a journal with bound `max_bytes` (none: no bound) stores for a
/// trace event emitted with `content` and `metadata`.
pub fn kept_trace(content: &Value, metadata: &Value, max_bytes: Option<usize>) -> (Value, Value) {
    let whole = (content.clone(), metadata.clone());
    let Some(max) = max_bytes else {
        return whole;
    };
    let text = content
        .as_str()
        .map_or_else(|| content.to_string(), str::to_owned);
    if text.len() <= max {
        return whole;
    }
    let mut kept = String::new();
    for c in text.chars() {
        if kept.len() + c.len_utf8() > max {
            break;
        }
        kept.push(c);
    }
    let mut marks = match metadata {
        Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    };
    marks.insert("content_truncated".into(), json!(true));
    marks.insert("original_byte_length".into(), json!(text.len()));
    (Value::String(kept), Value::Object(marks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_keeps_whole_characters_within_the_bound() {
        // "😀" is four bytes: a bound of 5 keeps "ab" and drops the split emoji.
        let (c, m) = kept_trace(&json!("ab😀cd"), &json!({"x": 1}), Some(5));
        assert_eq!(c, json!("ab"));
        assert_eq!(
            m,
            json!({"x": 1, "content_truncated": true, "original_byte_length": 8})
        );
    }

    #[test]
    fn structured_content_is_measured_as_compact_json_and_short_ones_are_kept() {
        let (c, _) = kept_trace(&json!({"k": "vvvv"}), &json!({}), Some(4));
        assert_eq!(c, json!("{\"k\""));
        let short = json!({"k": "v"});
        assert_eq!(
            kept_trace(&short, &json!({}), Some(100)),
            (short.clone(), json!({}))
        );
        assert_eq!(kept_trace(&short, &json!({}), None), (short, json!({})));
    }
}
