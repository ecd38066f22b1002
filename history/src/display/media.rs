//! Content blocks of a user message converted to chat parts (contract, "Media"; catalog P13).
//!
//! Blocks are llama_index content-block dumps carrying `block_type` `text` (`text`), `image`
//! (`url`; the `image` bytes are checked for shape, never decoded) or `audio` (`audio` bytes and
//! `format`). Media bytes are a string (its UTF-8 bytes) or, in legacy rows, a list of integers,
//! each in `0..=255`; histsim's own earlier rows put audio under `data`, read only when the block
//! has no `audio` key. Bytes that are themselves strict base64 text are that text's payload,
//! other bytes are the payload (llama_index's `AudioBlock` rule); the payload goes out as standard
//! padded base64. A media bytes field of any other shape (a list holding a bool, a float or an
//! out-of-range integer; a number; an object) makes the whole message malformed
//! ([`media_bytes_are_well_formed`]); any other bad block is dropped on its own.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use serde_json::value::RawValue;

use super::chat::ContentPart;
use super::json;
use crate::{BugId, Planted};

const BLOCK_FIELDS: [&str; 6] = ["block_type", "text", "url", "format", "audio", "data"];
const AUDIO_FORMATS: [&str; 2] = ["wav", "mp3"];

/// Python's `base64.b64decode(..., validate=True)`: the standard alphabet, padded to a multiple
/// of four, padding only at the end; unused trailing bits are ignored.
const STRICT_PYTHON_B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// Whether the block's media bytes field (`audio`, legacy `data`, or an image's `image`) is
/// absent, null, a string or a list of integers in `0..=255`. Anything else fails the whole
/// ChatMessage, as in the published projector (the list is not normalized to bytes, so the
/// message's validation fails); the caller skips the event with `bad_payload`. Blocks that are not
/// objects or of another type are left to [`convert_block`].
pub(crate) fn media_bytes_are_well_formed(block: &RawValue, planted: Planted) -> bool {
    if planted.is(BugId::P13) {
        // planted P13: the legacy reader coerced every list element (see `legacy_byte`).
        return true;
    }
    let Some([block_type, image, audio, legacy_data]) =
        json::raw_object_fields(block, &["block_type", "image", "audio", "data"])
    else {
        return true;
    };
    let bytes = match block_type.and_then(json::as_str).as_deref() {
        Some("image") => image,
        Some("audio") => audio.or(legacy_data),
        _ => None,
    };
    bytes.is_none_or(|raw| {
        raw.get() == "null"
            || json::as_str(raw).is_some()
            || json::as_array(raw).is_some_and(|items| {
                items
                    .into_iter()
                    .all(|item| legacy_byte(item, Planted::none()).is_some())
            })
    })
}

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
            // planted P13: the legacy reader kept an empty text block as an empty text part,
            // which the chat shape never holds.
            let kept = !text.is_empty() || planted.is(BugId::P13);
            Ok(kept.then(|| ContentPart::Text {
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

/// The audio payload: the field's bytes (a string's UTF-8 bytes, or a legacy list of integers in
/// `0..=255`), decoded once when they are strict base64 text.
fn audio_bytes(data: &RawValue, planted: Planted) -> Option<Vec<u8>> {
    let raw: Vec<u8> = match json::as_str(data) {
        Some(text) => text.into_owned().into_bytes(),
        None => json::as_array(data)?
            .into_iter()
            .map(|item| legacy_byte(item, planted))
            .collect::<Option<_>>()?,
    };
    Some(STRICT_PYTHON_B64.decode(&raw).unwrap_or(raw))
}

fn legacy_byte(item: &RawValue, planted: Planted) -> Option<u8> {
    if planted.is(BugId::P13) {
        // planted P13: bools became 0/1, out-of-range integers wrapped and floats were truncated
        // (`as u8`).
        return json::as_bool(item)
            .map(u8::from)
            .or_else(|| json::as_integer(item).map(|n| n as u8))
            .or_else(|| {
                serde_json::from_str::<f64>(item.get())
                    .ok()
                    .map(|f| f as u8)
            });
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
    fn images_need_a_non_empty_url_and_convert_ignores_their_bytes() {
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
        for bad in ["[true]", "[1.0]", "[-1]", "[256]", "[\"1\"]", "5", "null"] {
            let block = format!(r#"{{"block_type":"audio","format":"wav","audio":{bad}}}"#);
            assert_eq!(convert(&block), Err("audio"), "{block}");
        }
        assert_eq!(
            convert(r#"{"block_type":"audio","format":"wav"}"#),
            Err("audio")
        );
    }

    #[test]
    fn bytes_that_are_base64_text_are_decoded_once_others_are_the_payload() {
        let wav =
            |bytes: &str| format!(r#"{{"block_type":"audio","format":"wav","audio":{bytes}}}"#);
        // "ZW5jb2RlZC1hdWRpbw==" spelled as byte integers: that text is the payload's base64.
        let spelled: Vec<String> = "ZW5jb2RlZC1hdWRpbw=="
            .bytes()
            .map(|b| b.to_string())
            .collect();
        assert_eq!(
            convert(&wav(&format!("[{}]", spelled.join(",")))),
            audio("ZW5jb2RlZC1hdWRpbw==", "wav")
        );
        // "RIFF" is valid base64 text too (no padding needed at four characters).
        assert_eq!(convert(&wav("[82,73,70,70]")), audio("RIFF", "wav"));
        // Not base64 text: the bytes themselves, encoded.
        assert_eq!(convert(&wav("[0,1,2,255]")), audio("AAEC/w==", "wav"));
        assert_eq!(convert(&wav("\"AAE\"")), audio("QUFF", "wav"));
        assert_eq!(convert(&wav("\"A A=\"")), audio("QSBBPQ==", "wav"));
        assert_eq!(convert(&wav("\"QQ\"")), audio("UVE=", "wav"));
        // Unused trailing bits are ignored, as Python's strict decoder does: output is canonical.
        assert_eq!(convert(&wav("\"QR==\"")), audio("QQ==", "wav"));
    }

    #[test]
    fn malformed_media_bytes_fail_the_message() {
        let ok = |block: &str| {
            let raw = RawValue::from_string(block.to_string()).expect("test JSON is valid");
            media_bytes_are_well_formed(&raw, Planted::none())
        };
        for bytes in [
            "[true]",
            "[1,false]",
            "[1.0]",
            "[-1]",
            "[256]",
            "[\"1\"]",
            "5",
            "{}",
        ] {
            assert!(!ok(&format!(
                r#"{{"block_type":"audio","format":"ogg","audio":{bytes}}}"#
            )));
            assert!(!ok(&format!(
                r#"{{"block_type":"image","url":"https://x","image":{bytes}}}"#
            )));
            assert!(!ok(&format!(
                r#"{{"block_type":"audio","format":"wav","data":{bytes}}}"#
            )));
            // Blocks of other types are never normalized, so never fail the message.
            assert!(ok(&format!(r#"{{"block_type":"video","audio":{bytes}}}"#)));
        }
        for bytes in ["[]", "[0,255]", "\"AAEC\"", "\"not base64\"", "null"] {
            assert!(ok(&format!(
                r#"{{"block_type":"audio","format":"wav","audio":{bytes}}}"#
            )));
            assert!(ok(&format!(r#"{{"block_type":"image","image":{bytes}}}"#)));
        }
        assert!(ok(r#"{"block_type":"audio","format":"wav"}"#));
        assert!(ok("\"text\""));
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
