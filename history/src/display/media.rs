//! Content blocks of a user message converted to chat parts (contract, "Media"; catalog P13).
//!
//! Blocks are llama_index content-block dumps carrying `block_type` `text` (`text`), `image`
//! (`url`; the `image` bytes are never read) or `audio` (`audio` bytes and `format`). Audio bytes are
//! standard base64 text or, in legacy rows, a list of integers, accepted only when every element is
//! an integer in `0..=255`; histsim's own earlier rows put them under `data`, read only when the
//! block has no `audio` key. A bad block is dropped on its own: the rest of the message stays.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::value::RawValue;

use super::chat::ContentPart;
use super::json;
use crate::{BugId, Planted};

const BLOCK_FIELDS: [&str; 6] = ["block_type", "text", "url", "format", "audio", "data"];
const AUDIO_FORMATS: [&str; 2] = ["wav", "mp3"];

/// The part a block becomes: `Ok(None)` for an empty text block (nothing, silently), `Err(field)`
/// when the block is dropped with a `bad_media` warning naming `field`.
pub(crate) fn convert_block(
    block: &RawValue,
    planted: Planted,
) -> Result<Option<ContentPart>, &'static str> {
    let [block_type, text, url, format, audio, legacy_data] =
        json::raw_object_fields(block, &BLOCK_FIELDS).ok_or("block_type")?;
    let block_type = block_type.and_then(json::as_str).ok_or("block_type")?;
    match block_type.as_ref() {
        "text" => {
            let text = text.and_then(json::as_str).ok_or("text")?;
            Ok((!text.is_empty()).then(|| ContentPart::Text {
                text: text.into_owned(),
            }))
        }
        "image" => {
            let url = url.and_then(json::as_str).filter(|u| !u.is_empty());
            match url {
                Some(url) => Ok(Some(ContentPart::ImageUrl {
                    url: url.into_owned(),
                })),
                // planted P13: the legacy reader kept images without a url, as an empty url.
                None if planted.is(BugId::P13) => {
                    Ok(Some(ContentPart::ImageUrl { url: String::new() }))
                }
                None => Err("url"),
            }
        }
        "audio" => {
            let format = format.and_then(json::as_str).ok_or("format")?;
            // planted P13: the legacy reader kept audio of any format.
            if !AUDIO_FORMATS.contains(&format.as_ref()) && !planted.is(BugId::P13) {
                return Err("format");
            }
            let bytes = audio
                .or(legacy_data)
                .and_then(|d| audio_bytes(d, planted))
                .ok_or("audio")?;
            Ok(Some(ContentPart::InputAudio {
                data: STANDARD.encode(bytes),
                format: format.into_owned(),
            }))
        }
        _ => Err("block_type"),
    }
}

/// The media bytes: standard padded base64, or a legacy list of integers in `0..=255`.
fn audio_bytes(data: &RawValue, planted: Planted) -> Option<Vec<u8>> {
    if let Some(b64) = json::as_str(data) {
        return STANDARD.decode(b64.as_bytes()).ok();
    }
    let items = json::as_array(data)?;
    items
        .into_iter()
        .map(|item| legacy_byte(item, planted))
        .collect()
}

fn legacy_byte(item: &RawValue, planted: Planted) -> Option<u8> {
    if planted.is(BugId::P13) {
        // planted P13: bools became 0/1 and out-of-range integers wrapped (`as u8`).
        return json::as_bool(item)
            .map(u8::from)
            .or_else(|| json::as_integer(item).map(|n| n as u8));
    }
    json::as_integer(item).and_then(|n| u8::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(block: &str) -> Result<Option<ContentPart>, &'static str> {
        let raw = RawValue::from_string(block.to_string()).expect("test JSON is valid");
        convert_block(&raw, Planted::none())
    }

    fn audio(data: &str, format: &str) -> Result<Option<ContentPart>, &'static str> {
        Ok(Some(ContentPart::InputAudio {
            data: data.into(),
            format: format.into(),
        }))
    }

    #[test]
    fn text_blocks() {
        assert_eq!(
            convert(r#"{"block_type":"text","text":"hi"}"#),
            Ok(Some(ContentPart::Text { text: "hi".into() }))
        );
        assert_eq!(convert(r#"{"block_type":"text","text":""}"#), Ok(None));
        assert_eq!(convert(r#"{"block_type":"text","text":5}"#), Err("text"));
        assert_eq!(convert(r#"{"block_type":"text"}"#), Err("text"));
    }

    #[test]
    fn images_need_a_non_empty_url_and_never_read_their_bytes() {
        assert_eq!(
            convert(
                r#"{"block_type":"image","image":[1,true],"path":null,"url":"https://x","image_mimetype":null,"detail":null}"#
            ),
            Ok(Some(ContentPart::ImageUrl {
                url: "https://x".into()
            }))
        );
        assert_eq!(
            convert(r#"{"block_type":"image","image":"iVBORw0K","url":null}"#),
            Err("url")
        );
        assert_eq!(convert(r#"{"block_type":"image","url":""}"#), Err("url"));
        assert_eq!(convert(r#"{"block_type":"image","url":7}"#), Err("url"));
    }

    #[test]
    fn audio_formats_and_byte_shapes() {
        assert_eq!(
            convert(
                r#"{"block_type":"audio","audio":"AAEC","path":null,"url":null,"format":"wav"}"#
            ),
            audio("AAEC", "wav")
        );
        assert_eq!(
            convert(r#"{"block_type":"audio","format":"mp3","audio":[0,1,255]}"#),
            audio("AAH/", "mp3")
        );
        assert_eq!(
            convert(r#"{"block_type":"audio","format":"mp3","audio":[]}"#),
            audio("", "mp3")
        );
        assert_eq!(
            convert(r#"{"block_type":"audio","format":"ogg","audio":"AAEC"}"#),
            Err("format")
        );
        assert_eq!(
            convert(r#"{"block_type":"audio","audio":"AAEC"}"#),
            Err("format")
        );
        for bad in [
            "[true]", "[1.0]", "[-1]", "[256]", "[\"1\"]", "\"AAE\"", "\"A A=\"", "\"QR==\"", "5",
            "null",
        ] {
            let block = format!(r#"{{"block_type":"audio","format":"wav","audio":{bad}}}"#);
            assert_eq!(convert(&block), Err("audio"), "{block}");
        }
        assert_eq!(
            convert(r#"{"block_type":"audio","format":"wav"}"#),
            Err("audio")
        );
    }

    #[test]
    fn legacy_data_is_read_only_without_an_audio_key() {
        assert_eq!(
            convert(r#"{"block_type":"audio","format":"wav","data":[0,1,2]}"#),
            audio("AAEC", "wav")
        );
        assert_eq!(
            convert(r#"{"block_type":"audio","format":"wav","audio":null,"data":"AAEC"}"#),
            Err("audio")
        );
    }

    #[test]
    fn unknown_or_missing_block_types() {
        for bad in [
            r#"{"block_type":"video"}"#,
            r#"{"text":"x"}"#,
            r#"{"block_type":1}"#,
            "\"text\"",
            "[]",
        ] {
            assert_eq!(convert(bad), Err("block_type"), "{bad}");
        }
    }
}
