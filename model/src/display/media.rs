//! What one block of a user message becomes (P13).
//!
//! Text: non-empty becomes a text part, empty becomes nothing. Image: needs a non-empty url. Audio:
//! only wav/mp3; legacy byte lists accept only integers in 0..=255 (a bool, a float or an
//! out-of-range integer rejects the block); the bytes go out as standard padded base64. Anything
//! else drops. A dropped block is a `bad_media` warning naming the field; it never drops the rest
//! of the message.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::conversation::{AudioData, LegacyByte, UserBlock};
use super::transcript::Part;

/// Audio formats the client accepts.
const AUDIO_FORMATS: [&str; 2] = ["wav", "mp3"];

/// Block types that the contract converts; [`UserBlock::Other`] must name something else.
const KNOWN_BLOCK_TYPES: [&str; 3] = ["text", "image", "audio"];

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
        AudioData::Base64(bytes) => bytes.clone(),
        AudioData::Legacy(list) => match legacy_bytes(list) {
            Some(bytes) => bytes,
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
