//! What the payload of a user message or a stop says, read once per kept row.
//!
//! These two payloads are lists of nested objects (ChatMessage dumps with their blocks, platform
//! `Message` dumps), and reading one is a walk over every byte of it. A row a store keeps in
//! memory is projected at every read of its thread, so its reading is kept with its envelope
//! ([`PayloadCell`]) and each later projection takes it from there. What a payload says depends
//! on its bytes and on the planted bug only (P13 plants the legacy media rules), so a reading is
//! kept with the planted bug it was made under and made again under another.

use std::sync::OnceLock;

use serde_json::value::RawValue;

use super::chat::ContentPart;
use super::json;
use super::media;
use crate::Planted;

/// What a user message's last ChatMessage holds: its parts, and the fields of the media blocks
/// that could not be converted (each is a warning at every projection of the row).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct UserTurn {
    pub parts: Vec<ContentPart>,
    pub bad_media: Vec<&'static str>,
}

/// A reading of one payload: `Err(())` when it is malformed (the row is warned about).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reading {
    User(Result<UserTurn, ()>),
    Stop(Result<String, ()>),
}

/// Where a kept row keeps its payload's reading, with the planted bug it was made under.
pub(crate) type PayloadCell = OnceLock<(Planted, Reading)>;

/// The reading of `payload` as `make` reads it, taken from `cell` when it was made under
/// `planted`, else made (and kept in `cell` when it is empty).
pub(crate) fn read_once<'c>(
    cell: Option<&'c PayloadCell>,
    planted: Planted,
    make: impl Fn() -> Reading,
) -> std::borrow::Cow<'c, Reading> {
    use std::borrow::Cow;
    let Some(cell) = cell else {
        return Cow::Owned(make());
    };
    let (made_under, reading) = cell.get_or_init(|| (planted, make()));
    if *made_under == planted {
        Cow::Borrowed(reading)
    } else {
        Cow::Owned(make())
    }
}

/// A user message's payload (`messages`): the last ChatMessage's blocks (or, in legacy rows, its
/// `content`), converted part by part.
pub(crate) fn user_turn(payload: Option<&RawValue>, planted: Planted) -> Result<UserTurn, ()> {
    let messages = payload.and_then(json::as_array).ok_or(())?;
    let last = messages.last().ok_or(())?;
    let [blocks, legacy_content] =
        json::raw_object_fields(last, &["blocks", "content"]).ok_or(())?;
    let mut parts = Vec::new();
    let blocks = match (blocks, legacy_content) {
        (Some(blocks), _) => json::as_array(blocks).ok_or(())?,
        // Legacy input: histsim's earlier rows carried `content`, a string or blocks.
        (None, Some(content)) => match json::as_str(content) {
            Some(text) => {
                if !text.is_empty() {
                    parts.push(ContentPart::Text {
                        text: text.into_owned(),
                    });
                }
                Vec::new()
            }
            None => json::as_array(content).ok_or(())?,
        },
        (None, None) => return Err(()),
    };
    // The published projector validates the whole ChatMessage: one malformed media byte list
    // fails the event, not just its block.
    if !blocks
        .iter()
        .all(|block| media::media_bytes_are_well_formed(block, planted))
    {
        return Err(());
    }
    let mut bad_media = Vec::new();
    for block in blocks {
        match media::convert_block(block, planted) {
            Ok(part) => parts.extend(part),
            Err(field) => bad_media.push(field),
        }
    }
    Ok(UserTurn { parts, bad_media })
}

/// A stop's payload (`output_messages`): the text of its last output message.
pub(crate) fn stop_answer(payload: Option<&RawValue>) -> Result<String, ()> {
    let outputs = payload.and_then(json::as_array).ok_or(())?;
    let last = outputs.last().ok_or(())?;
    answer_of(last).map(std::borrow::Cow::into_owned)
}

/// An output message's text, a platform `Message` dump: the concatenated `text`
/// of its `contents` entries of `type` `"text"` (null contents: the empty answer). The dump also
/// carries the same text as the computed field `content`; a message without `contents` (histsim's
/// earlier rows) is read through that `content` string instead.
fn answer_of(message: &RawValue) -> Result<std::borrow::Cow<'_, str>, ()> {
    let [contents, content] =
        json::raw_object_fields(message, &["contents", "content"]).ok_or(())?;
    let Some(contents) = contents else {
        return content.and_then(json::as_str).ok_or(());
    };
    if contents.get().trim() == "null" {
        return Ok(std::borrow::Cow::Borrowed(""));
    }
    let mut answer = String::new();
    for entry in json::as_array(contents).ok_or(())? {
        let [kind, text] = json::raw_object_fields(entry, &["type", "text"]).ok_or(())?;
        if kind.and_then(json::as_str).as_deref() == Some("text") {
            answer.push_str(&text.and_then(json::as_str).ok_or(())?);
        }
    }
    Ok(std::borrow::Cow::Owned(answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::json::tests::raw;

    #[test]
    fn a_kept_reading_is_made_once_per_planted_bug() {
        let cell = PayloadCell::new();
        let made = std::cell::Cell::new(0);
        let payload = raw(r#"[{"contents":[{"type":"text","text":"s1a "}]}]"#);
        let read = |planted: Planted| {
            read_once(Some(&cell), planted, || {
                made.set(made.get() + 1);
                Reading::Stop(stop_answer(Some(&payload)))
            })
            .into_owned()
        };
        let want = Reading::Stop(Ok("s1a ".to_string()));
        assert_eq!(read(Planted::none()), want);
        assert_eq!(read(Planted::none()), want);
        assert_eq!(made.get(), 1, "the second read takes the kept reading");
        #[cfg(feature = "planted")]
        {
            assert_eq!(read(Planted::only(crate::BugId::P13)), want);
            assert_eq!(made.get(), 2, "another planted bug reads again");
        }
        // Without a cell (rows read from their bytes) every read is made.
        let again = read_once(None, Planted::none(), || Reading::Stop(Err(())));
        assert_eq!(*again, Reading::Stop(Err(())));
    }

    #[test]
    fn payloads_read_as_the_published_shapes_say() {
        let user = raw(
            r#"[{"role":"user","blocks":[{"block_type":"text","text":"o0 "}]},
                {"role":"user","additional_kwargs":{},"blocks":[{"block_type":"text","text":"u1a "}]}]"#,
        );
        let turn = user_turn(Some(&user), Planted::none()).expect("well formed");
        assert_eq!(
            turn.parts,
            vec![ContentPart::Text {
                text: "u1a ".into()
            }]
        );
        assert!(turn.bad_media.is_empty());
        let legacy = raw(r#"[{"role":"user","content":"u2a "}]"#);
        let turn = user_turn(Some(&legacy), Planted::none()).expect("legacy content");
        assert_eq!(turn.parts.len(), 1);
        assert_eq!(
            user_turn(Some(&raw(r#"{"last":1}"#)), Planted::none()),
            Err(())
        );
        assert_eq!(user_turn(None, Planted::none()), Err(()));
        let stop = raw(r#"[{"content":"s2a "}]"#);
        assert_eq!(stop_answer(Some(&stop)), Ok("s2a ".to_string()));
        assert_eq!(
            stop_answer(Some(&raw(r#"[{"contents":null}]"#))),
            Ok(String::new())
        );
        assert_eq!(stop_answer(Some(&raw("[]"))), Err(()));
    }
}
