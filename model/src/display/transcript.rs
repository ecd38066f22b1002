//! What the client must see: the model's output.
//!
//! Besides the messages, a transcript states what the system under test must warn about and which
//! losses the contract accepts, each with its catalog ID, so that no checker weakens silently.

use serde::Serialize;
use std::borrow::Cow;

/// The expected client view of one conversation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Transcript {
    /// The chat messages, in order.
    pub messages: Vec<Message>,
    /// One per defective emission that the projector reads, one per dropped media block, or the
    /// single `no_visible_display`. In emission order; the projector may report them in another
    /// order (identity and created_at checks come before its sort), so compare as a multiset.
    pub expected_warnings: Vec<ExpectedWarning>,
    /// Every way in which the transcript legitimately differs from what was emitted.
    pub accepted_losses: Vec<AcceptedLoss>,
}

/// A chat role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One chat message: the merge of consecutive same-role contributions on one display.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: Role,
    /// The display it came from (not part of the OpenAI shape; kept for checking).
    pub display: String,
    /// Never empty; a text part is never empty.
    pub parts: Vec<Part>,
}

impl Message {
    /// The concatenation of the message's text parts (media parts contribute nothing).
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// One content part, in the OpenAI chat shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Part {
    /// `{"type":"text","text":...}`, never empty.
    Text(String),
    /// `{"type":"image_url","image_url":{"url":...}}`, never empty.
    ImageUrl(String),
    /// `{"type":"input_audio","input_audio":{"data":...,"format":...}}`: standard padded base64,
    /// format `"wav"` or `"mp3"`.
    Audio { data_base64: String, format: String },
}

/// Warning codes of the contract (P10).
pub mod code {
    pub const BAD_IDENTITY: &str = "bad_identity";
    pub const BAD_CREATED_AT: &str = "bad_created_at";
    pub const BAD_PAYLOAD: &str = "bad_payload";
    pub const BAD_MEDIA: &str = "bad_media";
    pub const NO_VISIBLE_DISPLAY: &str = "no_visible_display";
}

/// A warning the projector must report.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ExpectedWarning {
    /// One of the constants in [`code`].
    pub code: &'static str,
    /// The emission it is about; `None` for `no_visible_display`.
    pub emission: Option<usize>,
    /// The field named by the warning; `None` for `no_visible_display`.
    pub field: Option<String>,
}

/// A difference between emitted and shown that the contract accepts, with the rule that allows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AcceptedLoss {
    /// Catalog ID: `"P5"`, `"P9"`, `"P14"`, or the rule a declared known difference weakens
    /// (`"P10"` for D1).
    pub rule: &'static str,
    /// The emission concerned.
    pub emission: usize,
    /// Why, in words (ids and indices only, never payload text). Most are fixed texts, and the
    /// simulator models each seed's conversation once for every set of rows stored by a read's
    /// time, where most emissions are not stored yet: formatting the same two texts for each
    /// was a hundredth of the display workload's time.
    pub why: Cow<'static, str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_text_skips_media() {
        let message = Message {
            role: Role::User,
            display: "d".into(),
            parts: vec![
                Part::Text("a".into()),
                Part::ImageUrl("u".into()),
                Part::Text("b".into()),
            ],
        };
        assert_eq!(message.text(), "ab");
    }
}
