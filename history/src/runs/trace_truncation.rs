//! Trace-content truncation: the run journal keeps a trace event's content within
//! [`super::RunJournalOptions::max_trace_content_bytes`], as DeerFlow bounds what its stores keep
//! of traces (`max_trace_content`, 10240 bytes by default), so that one long model output cannot
//! bloat every backend.
//!
//! Only `trace` events are cut; messages, lifecycle and every other category are kept whole. The
//! size is that of the content's UTF-8 text: a string as it is, any other JSON value as its
//! compact serialization. A content over the bound becomes that text cut to the longest prefix
//! of whole characters within the bound (a character the bound splits is dropped, never half
//! kept), a string; its metadata gains `content_truncated: true` and `original_byte_length` (the
//! text's size before the cut). A metadata that is not an object is replaced by one holding the
//! two marks. A content within the bound is left exactly as it was.
//!
//! Planted R30 restores a legacy cut: the bound's bytes taken and decoded leniently, so a
//! character the bound splits is kept as U+FFFD, a character the writer never wrote (DeerFlow's
//! DB store decodes the cut with errors ignored for this reason).

use serde_json::{Map, Value};

use super::event::Category;
use crate::planted::{BugId, Planted};

/// The metadata key that marks a cut content.
pub const CONTENT_TRUNCATED: &str = "content_truncated";
/// The metadata key that keeps the content's size, in bytes, before the cut.
pub const ORIGINAL_BYTE_LENGTH: &str = "original_byte_length";

/// The content and metadata to keep of an event of `category` whose content is `content`, when
/// at most `max_bytes` bytes of it may be kept; `None` when the event is kept as it is (not a
/// trace, or within the bound).
pub fn truncate_trace(
    category: Category,
    content: &Value,
    metadata: &Value,
    max_bytes: usize,
    planted: Planted,
) -> Option<(Value, Value)> {
    if category != Category::Trace {
        return None;
    }
    let text = match content {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.len() <= max_bytes {
        return None;
    }
    let kept = if planted.is(BugId::R30) {
        // planted R30: the legacy cut decoded the bound's bytes leniently, so a split
        // character became U+FFFD.
        String::from_utf8_lossy(&text.as_bytes()[..max_bytes]).into_owned()
    } else {
        let mut cut = max_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        debug_assert!(cut <= max_bytes);
        text[..cut].to_string()
    };
    let mut marked = match metadata {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    marked.insert(CONTENT_TRUNCATED.into(), Value::Bool(true));
    marked.insert(ORIGINAL_BYTE_LENGTH.into(), Value::from(text.len()));
    Some((Value::String(kept), Value::Object(marked)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_long_trace_is_cut_to_whole_characters_and_marked() {
        // "é" is two bytes: a bound of 5 splits the third one.
        let (content, metadata) = truncate_trace(
            Category::Trace,
            &json!("éééé"),
            &json!({"k": 1}),
            5,
            Planted::none(),
        )
        .unwrap();
        assert_eq!(content, json!("éé"));
        assert_eq!(
            metadata,
            json!({"k": 1, "content_truncated": true, "original_byte_length": 8})
        );
    }

    #[test]
    fn structured_content_is_measured_and_cut_as_its_json_text() {
        let (content, metadata) = truncate_trace(
            Category::Trace,
            &json!({"a": "xyz"}),
            &json!(null),
            6,
            Planted::none(),
        )
        .unwrap();
        assert_eq!(content, json!("{\"a\":\""));
        assert_eq!(
            metadata,
            json!({"content_truncated": true, "original_byte_length": 11})
        );
    }

    #[test]
    fn messages_and_contents_within_the_bound_are_kept() {
        let long = json!("x".repeat(200));
        assert_eq!(
            truncate_trace(Category::Message, &long, &json!({}), 100, Planted::none()),
            None
        );
        assert_eq!(
            truncate_trace(Category::Trace, &long, &json!({}), 200, Planted::none()),
            None
        );
    }

    #[cfg(feature = "planted")]
    #[test]
    fn planted_r30_keeps_a_split_character_as_a_replacement() {
        let (content, _) = truncate_trace(
            Category::Trace,
            &json!("éééé"),
            &json!({}),
            5,
            Planted::only(BugId::R30),
        )
        .unwrap();
        assert_eq!(content, json!("éé\u{FFFD}"));
    }
}
