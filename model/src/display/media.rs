//! What one block of a user message becomes (P13).
//!
//! Text: non-empty becomes a text part, empty becomes nothing. Image: needs a non-empty url. Audio:
//! only wav/mp3; its bytes (a legacy byte list, or the bytes a base64 string encodes) are the
//! payload, except that bytes which are themselves strict base64 text stand for what they encode
//! (the llama_index convention: already-encoded bytes are kept, others get encoded); the payload
//! goes out as standard padded base64. Anything else drops: a `bad_media` warning naming the field,
//! never the rest of the message. A legacy byte list holding anything but integers in 0..=255 is
//! not a bad block but a bad message ([`message_is_malformed`]): the whole user event is skipped.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::conversation::{AudioData, LegacyByte, UserBlock};
use super::transcript::Part;

/// Audio formats the client accepts.
const AUDIO_FORMATS: [&str; 2] = ["wav", "mp3"];

/// Block types that the contract converts; [`UserBlock::Other`] must name something else.
pub const KNOWN_BLOCK_TYPES: [&str; 3] = ["text", "image", "audio"];

/// The outcome of converting one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Converted {
    /// The block becomes this part.
    Part(Part),
    /// The block is valid but shows nothing (an empty text block).
    Nothing,
    /// The block drops with a `bad_media` warning naming `field`.
    Dropped { field: &'static str },
}

/// Whether the message fails as a whole: some audio block carries a legacy byte list with an
/// element that is not an integer in 0..=255 (a bool, a float, an out-of-range integer). Such a
/// list is never turned into bytes, so the message as a whole does not validate, whatever the
/// block's format.
pub fn message_is_malformed(blocks: &[UserBlock]) -> bool {
    blocks.iter().any(|block| match block {
        UserBlock::Audio {
            data: AudioData::Legacy(list),
            ..
        } => legacy_bytes(list).is_none(),
        _ => false,
    })
}

/// Converts one block.
pub fn convert_block(block: &UserBlock) -> Converted {
    match block {
        UserBlock::Text(text) if text.is_empty() => Converted::Nothing,
        UserBlock::Text(text) => Converted::Part(Part::Text(text.clone())),
        UserBlock::Image { url: Some(url) } if !url.is_empty() => {
            Converted::Part(Part::ImageUrl(url.clone()))
        }
        UserBlock::Image { .. } => Converted::Dropped { field: "url" },
        UserBlock::Audio { data, format } => convert_audio(data, format),
        UserBlock::Other { block_type } => {
            // A typed Other that claims a known type would be ambiguous (which field was bad?):
            // the generator must express malformed known blocks through their own variants.
            assert!(
                !KNOWN_BLOCK_TYPES.contains(&block_type.as_str()),
                "UserBlock::Other must not name a converted block type, got {block_type:?}"
            );
            Converted::Dropped {
                field: "block_type",
            }
        }
    }
}

/// Audio: the format is checked first, then the data.
fn convert_audio(data: &AudioData, format: &str) -> Converted {
    if !AUDIO_FORMATS.contains(&format) {
        return Converted::Dropped { field: "format" };
    }
    let bytes: Vec<u8> = match data {
        // The row holds these bytes' base64 text, which decodes back to them.
        AudioData::Base64(bytes) => bytes.clone(),
        AudioData::Legacy(list) => match legacy_bytes(list) {
            Some(bytes) => decode_if_base64_text(&bytes).unwrap_or(bytes),
            None => return Converted::Dropped { field: "audio" },
        },
    };
    Converted::Part(Part::Audio {
        data_base64: STANDARD.encode(bytes),
        format: format.to_string(),
    })
}

/// The bytes of a legacy list, or `None` when any element is not an integer in 0..=255.
fn legacy_bytes(list: &[LegacyByte]) -> Option<Vec<u8>> {
    list.iter()
        .map(|element| match element {
            LegacyByte::Int(value) => u8::try_from(*value).ok(),
            LegacyByte::Bool(_) | LegacyByte::Float(_) => None,
        })
        .collect()
}

/// The bytes that `text` encodes when it is strict base64 (the standard alphabet; a length that
/// is a multiple of four; at most two `=`, only at the very end); `None` otherwise. Bits of the
/// last character beyond the encoded bytes are ignored.
fn decode_if_base64_text(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let padding = text.iter().rev().take_while(|&&c| c == b'=').count();
    if padding > 2 {
        return None;
    }
    let sextets: Vec<u32> = text[..text.len() - padding]
        .iter()
        .map(|&c| sextet(c))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(sextets.len() * 3 / 4);
    for group in sextets.chunks(4) {
        let bits = group
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, s)| acc | (s << (18 - 6 * i)));
        let bytes = [(bits >> 16) as u8, (bits >> 8) as u8, bits as u8];
        // Four characters carry three bytes, three carry two, two carry one.
        out.extend_from_slice(&bytes[..group.len() - 1]);
    }
    Some(out)
}

/// The value of one character of the standard base64 alphabet.
fn sextet(c: u8) -> Option<u32> {
    let value = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audio(data: AudioData, format: &str) -> UserBlock {
        UserBlock::Audio {
            data,
            format: format.to_string(),
        }
    }

    fn audio_part(data_base64: &str, format: &str) -> Converted {
        Converted::Part(Part::Audio {
            data_base64: data_base64.to_string(),
            format: format.to_string(),
        })
    }

    #[test]
    fn text_blocks() {
        assert_eq!(
            convert_block(&UserBlock::Text("hi".into())),
            Converted::Part(Part::Text("hi".into()))
        );
        assert_eq!(
            convert_block(&UserBlock::Text(String::new())),
            Converted::Nothing
        );
    }

    #[test]
    fn images_need_a_non_empty_url() {
        assert_eq!(
            convert_block(&UserBlock::Image {
                url: Some("https://x/y.png".into())
            }),
            Converted::Part(Part::ImageUrl("https://x/y.png".into()))
        );
        assert_eq!(
            convert_block(&UserBlock::Image { url: None }),
            Converted::Dropped { field: "url" }
        );
        assert_eq!(
            convert_block(&UserBlock::Image {
                url: Some(String::new())
            }),
            Converted::Dropped { field: "url" }
        );
    }

    #[test]
    fn audio_base64_is_re_encoded_standard_padded() {
        assert_eq!(
            convert_block(&audio(AudioData::Base64(vec![0xfb, 0xff]), "wav")),
            audio_part("+/8=", "wav")
        );
        assert_eq!(
            convert_block(&audio(AudioData::Base64(vec![]), "mp3")),
            audio_part("", "mp3")
        );
    }

    #[test]
    fn audio_only_wav_or_mp3() {
        for format in ["ogg", "WAV", "", "mp3 "] {
            assert_eq!(
                convert_block(&audio(AudioData::Base64(vec![1]), format)),
                Converted::Dropped { field: "format" },
                "format {format:?}"
            );
        }
        // The format is checked before the data.
        assert_eq!(
            convert_block(&audio(
                AudioData::Legacy(vec![LegacyByte::Bool(true)]),
                "ogg"
            )),
            Converted::Dropped { field: "format" }
        );
    }

    #[test]
    fn legacy_byte_lists_accept_only_integers_0_to_255() {
        let ok = AudioData::Legacy(vec![
            LegacyByte::Int(0),
            LegacyByte::Int(255),
            LegacyByte::Int(104),
        ]);
        assert_eq!(convert_block(&audio(ok, "mp3")), audio_part("AP9o", "mp3"));
        let rejects = [
            LegacyByte::Int(256),
            LegacyByte::Int(-1),
            LegacyByte::Int(i64::MAX),
            LegacyByte::Bool(true),
            LegacyByte::Bool(false),
            LegacyByte::Float(1.0),
            LegacyByte::Float(0.5),
        ];
        for bad in rejects {
            let data = AudioData::Legacy(vec![LegacyByte::Int(1), bad.clone()]);
            assert_eq!(
                convert_block(&audio(data, "wav")),
                Converted::Dropped { field: "audio" },
                "element {bad:?}"
            );
        }
        assert_eq!(
            convert_block(&audio(AudioData::Legacy(vec![]), "wav")),
            audio_part("", "wav")
        );
    }

    fn legacy(text: &[u8]) -> AudioData {
        AudioData::Legacy(
            text.iter()
                .map(|&b| LegacyByte::Int(i64::from(b)))
                .collect(),
        )
    }

    #[test]
    fn legacy_bytes_that_spell_base64_stand_for_what_they_encode() {
        assert_eq!(
            convert_block(&audio(legacy(b"ZW5jb2RlZC1hdWRpbw=="), "wav")),
            audio_part("ZW5jb2RlZC1hdWRpbw==", "wav")
        );
        assert_eq!(
            convert_block(&audio(legacy(b"RIFF"), "wav")),
            audio_part("RIFF", "wav")
        );
        // Canonical on output: unused trailing bits are dropped.
        assert_eq!(
            convert_block(&audio(legacy(b"QR=="), "mp3")),
            audio_part("QQ==", "mp3")
        );
        // Not strict base64: the bytes themselves are the payload.
        for text in [
            &b"QQ"[..],
            b"QQ=",
            b"Q===",
            b"=QQ=",
            b"QQ==QQ==",
            b"A A=",
            b"RIF\n",
        ] {
            assert_eq!(
                convert_block(&audio(legacy(text), "wav")),
                audio_part(&STANDARD.encode(text), "wav"),
                "{text:?}"
            );
        }
        assert_eq!(
            convert_block(&audio(AudioData::Base64(b"QUJD".to_vec()), "wav")),
            audio_part("UVVKRA==", "wav"),
            "decoded base64 bytes are the payload as they are"
        );
    }

    #[test]
    fn a_bad_legacy_list_fails_the_message_whatever_the_format() {
        let bad = AudioData::Legacy(vec![LegacyByte::Int(1), LegacyByte::Bool(true)]);
        let text = UserBlock::Text("kept?".into());
        assert!(message_is_malformed(&[
            text.clone(),
            audio(bad.clone(), "wav")
        ]));
        assert!(message_is_malformed(&[audio(bad, "ogg")]));
        let fine = AudioData::Legacy(vec![LegacyByte::Int(1)]);
        assert!(!message_is_malformed(&[text, audio(fine, "ogg")]));
        assert!(!message_is_malformed(&[UserBlock::Image { url: None }]));
    }

    #[test]
    fn other_blocks_drop() {
        for block_type in ["video", "file", "", "Text"] {
            assert_eq!(
                convert_block(&UserBlock::Other {
                    block_type: block_type.into()
                }),
                Converted::Dropped {
                    field: "block_type"
                }
            );
        }
    }
}
