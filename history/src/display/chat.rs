//! The projected chat history in the OpenAI chat shape.
//!
//! `{"role":"user"|"assistant","content":[{"type":"text","text":..} |
//! {"type":"image_url","image_url":{"url":..}} |
//! {"type":"input_audio","input_audio":{"data":BASE64,"format":..}}]}`.

use serde::{Deserialize, Serialize};

/// Who said it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One message of the reconstructed history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: Vec<ContentPart>,
}

/// One part of a message's content. A text part is never empty in a projection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "WirePart", into = "WirePart")]
pub enum ContentPart {
    Text {
        text: String,
    },
    ImageUrl {
        url: String,
    },
    /// `data` is standard padded base64; `format` is `"wav"` or `"mp3"` in a projection.
    InputAudio {
        data: String,
        format: String,
    },
}

impl ChatMessage {
    /// Appends `part`, concatenating text onto a trailing text part so that a message never
    /// holds two adjacent text parts (contract, "Merging").
    pub fn push_part(&mut self, part: ContentPart) {
        if let (Some(ContentPart::Text { text: last }), ContentPart::Text { text }) =
            (self.content.last_mut(), &part)
        {
            last.push_str(text);
            return;
        }
        self.content.push(part);
    }

    /// The concatenated text parts (for tests and diagnostics).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|p| match p {
                ContentPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// The serialized form of [`ContentPart`].
#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart {
    Text { text: String },
    ImageUrl { image_url: WireImage },
    InputAudio { input_audio: WireAudio },
}

#[derive(Clone, Serialize, Deserialize)]
struct WireImage {
    url: String,
}

#[derive(Clone, Serialize, Deserialize)]
struct WireAudio {
    data: String,
    format: String,
}

impl From<WirePart> for ContentPart {
    fn from(w: WirePart) -> Self {
        match w {
            WirePart::Text { text } => ContentPart::Text { text },
            WirePart::ImageUrl { image_url } => ContentPart::ImageUrl { url: image_url.url },
            WirePart::InputAudio { input_audio } => ContentPart::InputAudio {
                data: input_audio.data,
                format: input_audio.format,
            },
        }
    }
}

impl From<ContentPart> for WirePart {
    fn from(p: ContentPart) -> Self {
        match p {
            ContentPart::Text { text } => WirePart::Text { text },
            ContentPart::ImageUrl { url } => WirePart::ImageUrl {
                image_url: WireImage { url },
            },
            ContentPart::InputAudio { data, format } => WirePart::InputAudio {
                input_audio: WireAudio { data, format },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_in_the_openai_shape_and_back() {
        let m = ChatMessage {
            role: Role::User,
            content: vec![
                ContentPart::Text { text: "hi".into() },
                ContentPart::ImageUrl {
                    url: "https://x/y.png".into(),
                },
                ContentPart::InputAudio {
                    data: "AAE=".into(),
                    format: "wav".into(),
                },
            ],
        };
        let v = serde_json::to_value(&m).expect("serializes");
        assert_eq!(
            v,
            json!({"role":"user","content":[
                {"type":"text","text":"hi"},
                {"type":"image_url","image_url":{"url":"https://x/y.png"}},
                {"type":"input_audio","input_audio":{"data":"AAE=","format":"wav"}}]})
        );
        let back: ChatMessage = serde_json::from_value(v).expect("deserializes");
        assert_eq!(back, m);
        assert_eq!(
            serde_json::to_value(Role::Assistant).ok(),
            Some(json!("assistant"))
        );
    }

    #[test]
    fn text_concatenates_onto_a_trailing_text_part_only() {
        let mut m = ChatMessage {
            role: Role::Assistant,
            content: vec![],
        };
        m.push_part(ContentPart::Text { text: "a".into() });
        m.push_part(ContentPart::Text { text: "b".into() });
        m.push_part(ContentPart::ImageUrl { url: "u".into() });
        m.push_part(ContentPart::Text { text: "c".into() });
        assert_eq!(m.content.len(), 3);
        assert_eq!(m.text(), "abc");
    }
}
