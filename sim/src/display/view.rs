//! What an answer and the model's transcript are compared on: messages reduced to roles and
//! parts, and the words of their text.

use history::display::{ChatMessage, ContentPart, Projection, Role};
use model::display as m;

/// Whether `projection` warns with `code` about the row of `event_id` (a bad identity may have
/// lost the id itself, so any warning of that code will do).
pub fn warning_named(projection: &Projection, code: &str, event_id: &str) -> bool {
    projection.warnings.iter().any(|x| {
        x.code.as_str() == code
            && (x.event_id.as_deref() == Some(event_id) || code == m::code::BAD_IDENTITY)
    })
}

/// Whether a known difference of `declared` covers `warning` (a protocol warning as JSON): the
/// warning one side gives and the other, declaring the difference, does not.
pub fn covered_by(warning: &serde_json::Value, declared: &m::Declared) -> bool {
    covers(
        declared,
        warning["code"].as_str().unwrap_or_default(),
        warning["field"].as_str(),
    )
}

/// Whether a known difference of `declared` covers the warning of `code` on `field`: the
/// warning the difference silences. (D3's `bad_payload` on `output_messages` also covers a
/// primary stop whose answer has the wrong shape, which the published projector does warn
/// about: a comparison up to the differences leaves both out.)
pub fn covers(declared: &m::Declared, code: &str, field: Option<&str>) -> bool {
    declared.iter().any(|d| {
        let (silenced_code, silenced_field) = d.silenced_warning();
        code == silenced_code && field == Some(silenced_field)
    })
}

/// Whether an answer shows what the model says: the same messages, and a warning for every
/// malformed row the model expects one for. The liveness phase waits for this.
pub fn matches_model(
    projection: &Projection,
    conversation: &m::Conversation,
    transcript: &m::Transcript,
) -> bool {
    SettledHistory::of(conversation, transcript).shown_by(projection)
}

/// The history the replicas must converge on once every fault healed, as an answer is compared
/// with it: the model's messages, and the warnings it expects. Made once from the model, outside
/// the world, and handed to the world read-only, which polls until every replica shows it.
#[derive(Clone, Debug)]
pub struct SettledHistory {
    messages: Vec<ViewMessage>,
    /// Each expected warning's code and the event id of the row it must name (`None`: any
    /// row's warning of that code will do, as for a thread with no visible display).
    warnings: Vec<(&'static str, Option<String>)>,
}

impl SettledHistory {
    /// The history `transcript`, the model of `conversation`, says the client must see.
    pub fn of(conversation: &m::Conversation, transcript: &m::Transcript) -> SettledHistory {
        let warnings: Vec<(&'static str, Option<String>)> = (transcript.expected_warnings.iter())
            .filter_map(|w| match w.emission {
                // A warning about an emission the conversation does not hold constrains nothing.
                Some(i) => {
                    (conversation.emissions.get(i)).map(|e| (w.code, Some(e.event_id.clone())))
                }
                None => Some((w.code, None)),
            })
            .collect();
        debug_assert!(
            warnings.len() <= transcript.expected_warnings.len(),
            "one expected warning at most for each the model states"
        );
        SettledHistory {
            messages: view_of_model(&transcript.messages),
            warnings,
        }
    }

    /// Whether `projection` shows this history: the same messages, and every expected warning.
    pub fn shown_by(&self, projection: &Projection) -> bool {
        view_of_projection(&projection.messages) == self.messages
            && self.warnings.iter().all(|(code, event_id)| match event_id {
                Some(event_id) => warning_named(projection, code, event_id),
                None => projection.warnings.iter().any(|x| x.code.as_str() == *code),
            })
    }
}

/// A message reduced to what both sides can be compared on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewMessage {
    pub role: &'static str,
    pub parts: Vec<ViewPart>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewPart {
    Text(String),
    Image(String),
    Audio { data: String, format: String },
}

/// `parts` in order as view parts, each run of adjacent text parts (`text_of` gives their text)
/// merged into one text; `other` makes the view part of any other part. Each merged text is
/// sized once: growing it part by part was 3 % of display's allocations.
fn merged_parts<T>(
    parts: &[T],
    text_of: impl Fn(&T) -> Option<&str>,
    other: impl Fn(&T) -> ViewPart,
) -> Vec<ViewPart> {
    let mut out = Vec::with_capacity(parts.len());
    let mut rest = parts;
    while let Some(first) = rest.first() {
        let run = rest.iter().take_while(|p| text_of(p).is_some()).count();
        if run == 0 {
            out.push(other(first));
            rest = &rest[1..];
            continue;
        }
        let texts = rest[..run].iter().filter_map(&text_of);
        let mut text = String::with_capacity(texts.clone().map(str::len).sum());
        texts.for_each(|t| text.push_str(t));
        out.push(ViewPart::Text(text));
        rest = &rest[run..];
    }
    out
}

pub fn view_of_projection(messages: &[ChatMessage]) -> Vec<ViewMessage> {
    messages
        .iter()
        .map(|msg| ViewMessage {
            role: match msg.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            },
            parts: merged_parts(
                &msg.content,
                |p| match p {
                    ContentPart::Text { text } => Some(text),
                    _ => None,
                },
                |p| match p {
                    ContentPart::Text { .. } => unreachable!("text parts merge as texts"),
                    ContentPart::ImageUrl { url } => ViewPart::Image(url.clone()),
                    ContentPart::InputAudio { data, format } => ViewPart::Audio {
                        data: data.clone(),
                        format: format.clone(),
                    },
                },
            ),
        })
        .collect()
}

pub fn view_of_model(messages: &[m::Message]) -> Vec<ViewMessage> {
    messages
        .iter()
        .map(|msg| ViewMessage {
            role: match msg.role {
                m::Role::User => "user",
                m::Role::Assistant => "assistant",
            },
            parts: merged_parts(
                &msg.parts,
                |p| match p {
                    m::Part::Text(t) => Some(t),
                    _ => None,
                },
                |p| match p {
                    m::Part::Text(_) => unreachable!("text parts merge as texts"),
                    m::Part::ImageUrl(u) => ViewPart::Image(u.clone()),
                    m::Part::Audio {
                        data_base64,
                        format,
                    } => ViewPart::Audio {
                        data: data_base64.clone(),
                        format: format.clone(),
                    },
                },
            ),
        })
        .collect()
}

/// Every (role, word) of a view's text, in order.
pub fn words(view: &[ViewMessage]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for msg in view {
        for part in &msg.parts {
            if let ViewPart::Text(t) = part {
                for token in t.split_whitespace() {
                    split_glued(token, |w| out.push((msg.role, w.to_string())));
                }
            }
        }
    }
    out
}

/// Bool HITL answers render as `true`/`false` with no trailing space, so they can glue onto the
/// next text of the same role (`trueu12a`); splits them off again, handing each word to `word`.
/// Generated words end with a space and never glue.
fn split_glued<'t>(token: &'t str, mut word: impl FnMut(&'t str)) {
    let mut rest = token;
    while !rest.is_empty() {
        let bool_word = ["true", "false"].into_iter().find(|b| rest.starts_with(b));
        match bool_word {
            Some(b) if rest.len() > b.len() => {
                word(b);
                rest = &rest[b.len()..];
            }
            _ => {
                word(rest);
                break;
            }
        }
    }
}

pub fn media(view: &[ViewMessage]) -> Vec<ViewPart> {
    view.iter()
        .flat_map(|m| m.parts.iter())
        .filter(|p| !matches!(p, ViewPart::Text(_)))
        .cloned()
        .collect()
}

pub fn describe_media(parts: &[ViewPart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            ViewPart::Image(_) => "image".to_string(),
            ViewPart::Audio { format, data } => format!("{format}:{}B64", data.len()),
            ViewPart::Text(_) => "text".to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_text_parts_merge_in_views() {
        fn part(p: &&str) -> ViewPart {
            let url = p.strip_prefix("img:").expect("only other parts come here");
            ViewPart::Image(url.into())
        }
        fn text_of<'x>(p: &'x &str) -> Option<&'x str> {
            (!p.starts_with("img:")).then_some(&**p)
        }
        let parts = ["a ", "", "b ", "img:u", "c ", "img:v", "img:w", "d"];
        assert_eq!(
            merged_parts(&parts, text_of, part),
            vec![
                ViewPart::Text("a b ".into()),
                ViewPart::Image("u".into()),
                ViewPart::Text("c ".into()),
                ViewPart::Image("v".into()),
                ViewPart::Image("w".into()),
                ViewPart::Text("d".into()),
            ]
        );
        assert_eq!(merged_parts(&[] as &[&str], text_of, part), vec![]);
    }

    #[test]
    fn glued_bool_answers_split_into_words() {
        let view = [ViewMessage {
            role: "user",
            parts: vec![ViewPart::Text("trueu12a falsefalse  x1y true".into())],
        }];
        let words: Vec<String> = words(&view).into_iter().map(|(_, w)| w).collect();
        assert_eq!(words, ["true", "u12a", "false", "false", "x1y", "true"]);
    }
}
