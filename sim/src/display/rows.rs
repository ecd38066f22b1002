//! The agent side of the wire: how an emitted event becomes the raw bytes of a persisted row.
//!
//! This is deliberately independent of `history`'s parser: it writes rows the way the platform's
//! agents do (a JSON document per event), including the malformations a scenario asks for.
//!
//! A user message is a list of llama_index `ChatMessage` dumps, each exactly the field set
//! `ChatMessage.model_dump()` writes (`role`, `additional_kwargs`, `blocks`; no `content`), and each
//! block the field set of its class's dump (llama-index-core 0.14): `TextBlock` `block_type`,
//! `text`; `ImageBlock` `block_type`, `image`, `path`, `url`, `image_mimetype`, `detail`;
//! `AudioBlock` `block_type`, `audio`, `path`, `url`, `format`; `VideoBlock` `block_type`, `video`,
//! `path`, `url`, `video_mimetype`, `detail`, `fps`. Media bytes are base64 text, or in legacy
//! rows a list of byte integers. A stop's output messages are the platform's own `Message` dumps
//! (`role`, `name`, `tool_calls`, `function_call_name`, `function_call_arguments_json`,
//! `tool_call_id`, `contents`, and the computed `content`).

use super::scenario::{Answer, AudioData, Block, Defect, Event, LegacyByte};
use serde_json::{json, Value};

/// The stored value of the platform's topic constant for display events.
pub(crate) const DISPLAY_EVENT: &str = "display_event";

/// Everything about a row that is not the event itself.
pub struct RowEnvelope<'a> {
    pub agent_class: &'a str,
    pub agent_id: &'a str,
    pub thread_id: &'a str,
    pub display_id: &'a str,
    pub run_id: &'a str,
    pub event_id: &'a str,
    pub created_at_ns: i64,
}

/// The class chain of an event, most specific first, and its event name.
pub(crate) fn class_chain(event: &Event) -> Vec<String> {
    let base = "BaseEvent".to_string();
    match event {
        Event::UserMessage { .. } => vec!["UserMessageEvent".into(), base],
        Event::HitlQuestion { .. } => vec!["HumanInTheLoopRequestEvent".into(), base],
        Event::HitlAnswer { .. } => vec!["HumanInTheLoopResponseEvent".into(), base],
        Event::Chunk { .. } => vec!["ChunkEvent".into(), base],
        Event::Stop { .. } => vec!["StopEvent".into(), base],
        Event::Decoy { class, .. } => vec![class.clone(), base],
        Event::Custom { class, parents, .. } => {
            let mut chain = vec![class.clone()];
            chain.extend(parents.iter().cloned());
            chain
        }
        Event::Envelope { class, family, .. } => vec![
            class.clone(),
            "AgentInTheLoopResponseEvent".into(),
            family.clone(),
            base,
        ],
    }
}

/// Encodes one event as a row document.
///
/// The row is written straight into bytes: each object's keys in the order a `serde_json` object
/// (sorted) writes them, each value as `serde_json` writes it. Building the row as a `Value` tree
/// first (its maps, its copies of every text) was a third of the agents' time; the test
/// `the_bytes_are_those_of_the_value_tree` holds the bytes to the tree's.
pub fn encode_row(env: &RowEnvelope<'_>, event: &Event, defect: Option<&Defect>) -> Vec<u8> {
    let chain = class_chain(event);
    let mut members: Members<'_> = identity(env, &chain, defect)
        .into_iter()
        .map(|(name, value)| (name, Member::Text(value)))
        .collect();
    members.push(("event_data", event_data(env, event, defect, &chain)));
    members.push(("event_parents", Member::Names(&chain)));
    let mut out = Vec::with_capacity(512);
    object(members).write(&mut out);
    out
}

/// An object's members, by name.
type Members<'a> = Vec<(&'static str, Member<'a>)>;

/// A value in a row, written as `serde_json` writes the `Value` it stands for.
enum Member<'a> {
    Null,
    Text(&'a str),
    Integer(i64),
    /// A list of texts.
    Names(&'a [String]),
    List(Vec<Member<'a>>),
    /// An object, its members sorted by name (see [`object`]).
    Object(Members<'a>),
    /// The rare shapes (malformed payloads, media blocks), as a tree.
    Tree(Value),
}

/// An object of `members`, sorted as a `serde_json` object writes its keys.
fn object(mut members: Members<'_>) -> Member<'_> {
    members.sort_unstable_by_key(|(name, _)| *name);
    debug_assert!(
        members.windows(2).all(|w| w[0].0 != w[1].0),
        "an object names each member once"
    );
    Member::Object(members)
}

impl Member<'_> {
    /// Appends the JSON text `serde_json` writes for the value this member stands for.
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Member::Null => out.extend_from_slice(b"null"),
            Member::Text(text) => write_text(out, text),
            Member::Integer(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            Member::Names(names) => {
                write_each(out, b"[]", names.iter(), |out, name| write_text(out, name))
            }
            Member::List(items) => {
                write_each(out, b"[]", items.iter(), |out, item| item.write(out))
            }
            Member::Object(members) => {
                write_each(out, b"{}", members.iter(), |out, (name, value)| {
                    write_text(out, name);
                    out.push(b':');
                    value.write(out);
                })
            }
            Member::Tree(value) => {
                serde_json::to_writer(&mut *out, value).expect("a JSON value serializes")
            }
        }
    }
}

/// `items` between `brackets` (a list's or an object's), separated by commas.
fn write_each<T>(
    out: &mut Vec<u8>,
    brackets: &[u8; 2],
    items: impl Iterator<Item = T>,
    write: impl Fn(&mut Vec<u8>, T),
) {
    out.push(brackets[0]);
    for (k, item) in items.enumerate() {
        if k > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(brackets[1]);
}

/// A JSON string. Most texts here need no escape, and a whole-text check for the bytes JSON
/// escapes (control characters, `"`, `\`) is cheaper than `serde_json`'s byte-by-byte table;
/// any other text is written by `serde_json` itself.
fn write_text(out: &mut Vec<u8>, text: &str) {
    // A fold, not `all`: without the early exit the check runs over many bytes at a time.
    let escapes = text.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if !escapes {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(&mut *out, text).expect("a text serializes");
    }
}

/// The row's identity fields in a fixed order (agent_class, agent_id, thread_id, display_id,
/// run_id, event_type, event_name, event_id), blanked where the defect says.
fn identity<'a>(
    env: &RowEnvelope<'a>,
    chain: &'a [String],
    defect: Option<&Defect>,
) -> [(&'static str, &'a str); 8] {
    let mut ids = [
        ("agent_class", env.agent_class),
        ("agent_id", env.agent_id),
        ("thread_id", env.thread_id),
        ("display_id", env.display_id),
        ("run_id", env.run_id),
        ("event_type", DISPLAY_EVENT),
        ("event_name", chain[0].as_str()),
        ("event_id", env.event_id),
    ];
    if let Some(Defect::BadIdentity { field }) = defect {
        for (name, value) in ids.iter_mut() {
            if *name == field.as_str() {
                *value = "";
            }
        }
    }
    ids
}

/// `event_data`: the payload, `created_at` (as the defect writes it) and the class names.
fn event_data<'a>(
    env: &RowEnvelope<'_>,
    event: &'a Event,
    defect: Option<&Defect>,
    chain: &'a [String],
) -> Member<'a> {
    let mut data = payload(event, defect);
    let created_at = match defect {
        Some(Defect::BadCreatedAt { as_type }) => Member::Tree(match as_type.as_str() {
            "string" => Value::String(env.created_at_ns.to_string()),
            "bool" => Value::Bool(true),
            _ => json!(env.created_at_ns as f64 + 0.5),
        }),
        _ => Member::Integer(env.created_at_ns),
    };
    data.push(("created_at", created_at));
    data.push(("_event_name", Member::Text(&chain[0])));
    data.push(("_parent_event_names", Member::Names(&chain[1..])));
    object(data)
}

fn payload<'a>(event: &'a Event, defect: Option<&Defect>) -> Members<'a> {
    let bad = matches!(defect, Some(Defect::BadPayload { .. }));
    match event {
        Event::UserMessage { blocks } => vec![("messages", user_messages(blocks, bad))],
        Event::HitlQuestion { question } => {
            let v = if bad {
                Member::List(vec![Member::Text(question)])
            } else {
                Member::Text(question)
            };
            vec![("question", v)]
        }
        Event::HitlAnswer { answer } => {
            let v = match (bad, answer) {
                (true, Answer::Text(t)) => object(vec![("value", Member::Text(t))]),
                (true, Answer::Bool(b)) => object(vec![("value", Member::Tree(json!(b)))]),
                (false, Answer::Text(t)) => Member::Text(t),
                (false, Answer::Bool(b)) => Member::Tree(json!(b)),
            };
            vec![("response", v)]
        }
        Event::Chunk { text } => {
            let v = if bad {
                object(vec![("text", Member::Text(text))])
            } else {
                Member::Text(text)
            };
            vec![("content", v)]
        }
        Event::Stop { answer } => {
            let v = if bad {
                Member::Text(answer)
            } else {
                Member::List(vec![
                    output_message("o0 earlier output never shown"),
                    output_message(answer),
                ])
            };
            vec![("output_messages", v)]
        }
        Event::Decoy { class, text } => vec![decoy_payload(class, text)],
        Event::Custom { text, .. } => vec![
            (
                "nested",
                Member::Tree(
                    json!({ "event": { "_event_name": "UnknownNestedEvent", "documents": [text, { "score": 0.5 }] } }),
                ),
            ),
            ("blob", Member::Tree(json!("z".repeat(160)))),
        ],
        Event::Envelope { text, .. } => vec![(
            "event",
            Member::Tree(json!({ "_event_name": "RetrieverEvent", "documents": [text] })),
        )],
    }
}

/// A look-alike class carries the payload of the family it only looks like.
fn decoy_payload<'a>(class: &str, text: &'a str) -> (&'static str, Member<'a>) {
    if class.contains("Stop") {
        ("output_messages", Member::List(vec![output_message(text)]))
    } else if class.contains("UserMessage") {
        (
            "messages",
            Member::List(vec![chat_message(
                "user",
                Member::List(vec![text_block(text)]),
            )]),
        )
    } else if class.contains("Response") {
        ("response", Member::Text(text))
    } else if class.contains("Request") {
        ("question", Member::Text(text))
    } else {
        ("content", Member::Text(text))
    }
}

/// A user message's `messages`: an earlier ChatMessage never shown, then the one with `blocks`;
/// malformed (`bad`), an object instead of the list.
fn user_messages(blocks: &[Block], bad: bool) -> Member<'_> {
    let last = chat_message("user", blocks_json(blocks));
    if bad {
        return object(vec![("last", last)]);
    }
    let earlier = chat_message(
        "user",
        Member::List(vec![text_block("o0 earlier message never shown")]),
    );
    Member::List(vec![earlier, last])
}

/// A platform `Message.model_dump()` (a stop's output message): its text under `contents`, and
/// again under the computed field `content`.
fn output_message(text: &str) -> Member<'_> {
    object(vec![
        ("role", Member::Text("assistant")),
        ("name", Member::Null),
        ("tool_calls", Member::Null),
        ("function_call_name", Member::Null),
        ("function_call_arguments_json", Member::Null),
        ("tool_call_id", Member::Null),
        (
            "contents",
            Member::List(vec![object(vec![
                ("type", Member::Text("text")),
                ("text", Member::Text(text)),
            ])]),
        ),
        ("content", Member::Text(text)),
    ])
}

/// A `ChatMessage.model_dump()`.
fn chat_message<'a>(role: &'a str, blocks: Member<'a>) -> Member<'a> {
    object(vec![
        ("role", Member::Text(role)),
        ("additional_kwargs", Member::Object(Vec::new())),
        ("blocks", blocks),
    ])
}

/// A `TextBlock.model_dump()`.
fn text_block(text: &str) -> Member<'_> {
    object(vec![
        ("block_type", Member::Text("text")),
        ("text", Member::Text(text)),
    ])
}

/// The first bytes of a PNG file, stored the legacy way (a list of byte integers) as the image
/// bytes of a block without a url; the projector never reads image bytes.
const PNG_SIGNATURE: [u8; 8] = [137, 80, 78, 71, 13, 10, 26, 10];

fn blocks_json(blocks: &[Block]) -> Member<'_> {
    Member::List(blocks.iter().map(block_json).collect())
}

fn block_json(block: &Block) -> Member<'_> {
    match block {
        Block::Text { text } => text_block(text),
        media => Member::Tree(media_block_json(media)),
    }
}

/// A media block's dump (images, audio, video and unknown blocks: rarer than text).
fn media_block_json(block: &Block) -> Value {
    match block {
        Block::Text { text } => json!({ "block_type": "text", "text": text }),
        Block::Image { url: Some(url) } => json!({
            "block_type": "image", "image": null, "path": null, "url": url,
            "image_mimetype": mimetype_of(url), "detail": null,
        }),
        Block::Image { url: None } => json!({
            "block_type": "image", "image": PNG_SIGNATURE, "path": null, "url": null,
            "image_mimetype": "image/png", "detail": null,
        }),
        Block::Audio { format, data } => {
            let audio = match data {
                AudioData::Base64(s) => json!(s),
                AudioData::Legacy(bytes) => Value::Array(
                    bytes
                        .iter()
                        .map(|b| match b {
                            LegacyByte::Bool(v) => json!(v),
                            LegacyByte::Int(v) => json!(v),
                            LegacyByte::Float(v) => json!(v),
                        })
                        .collect(),
                ),
            };
            json!({ "block_type": "audio", "audio": audio, "path": null, "url": null, "format": format })
        }
        Block::Other { name } if name == "video" => json!({
            "block_type": "video", "video": null, "path": null,
            "url": "https://video.example/o0-other.mp4", "video_mimetype": "video/mp4",
            "detail": null, "fps": null,
        }),
        // A block type of no class llama_index knows: a plausible dump with text in it.
        Block::Other { name } => json!({ "block_type": name, "text": "o0 other" }),
    }
}

/// The mimetype `ImageBlock` guesses from a url's suffix (only the suffixes generated here).
fn mimetype_of(url: &str) -> Value {
    match url.rsplit('.').next() {
        Some("png") => json!("image/png"),
        Some("jpg" | "jpeg") => json!("image/jpeg"),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    /// The row as a `serde_json` object tree, the way `encode_row` built it before it wrote bytes
    /// directly: the oracle for its bytes.
    fn value_tree_row(env: &RowEnvelope<'_>, event: &Event, defect: Option<&Defect>) -> Vec<u8> {
        let chain = class_chain(event);
        let mut row = Map::new();
        for (name, value) in identity(env, &chain, defect) {
            row.insert(name.into(), Value::String(value.into()));
        }
        let mut data = tree_payload(event, defect);
        let created_at = match defect {
            Some(Defect::BadCreatedAt { as_type }) => match as_type.as_str() {
                "string" => Value::String(env.created_at_ns.to_string()),
                "bool" => Value::Bool(true),
                _ => json!(env.created_at_ns as f64 + 0.5),
            },
            _ => json!(env.created_at_ns),
        };
        data.insert("created_at".into(), created_at);
        data.insert("_event_name".into(), json!(chain[0]));
        data.insert("_parent_event_names".into(), json!(chain[1..]));
        row.insert("event_data".into(), Value::Object(data));
        row.insert("event_parents".into(), json!(chain));
        serde_json::to_vec(&Value::Object(row)).unwrap()
    }

    /// `event_data`'s payload as a tree (the shapes the module's documentation names).
    fn tree_payload(event: &Event, defect: Option<&Defect>) -> Map<String, Value> {
        let bad = matches!(defect, Some(Defect::BadPayload { .. }));
        let output = |text: &str| {
            json!({
                "role": "assistant", "name": null, "tool_calls": null, "function_call_name": null,
                "function_call_arguments_json": null, "tool_call_id": null,
                "contents": [{ "type": "text", "text": text }], "content": text,
            })
        };
        let chat =
            |blocks: Value| json!({ "role": "user", "additional_kwargs": {}, "blocks": blocks });
        let text_block = |text: &str| json!({ "block_type": "text", "text": text });
        let (name, value) = match event {
            Event::UserMessage { blocks } => {
                let last = chat(Value::Array(blocks.iter().map(media_block_json).collect()));
                let earlier = chat(json!([text_block("o0 earlier message never shown")]));
                let v = if bad {
                    json!({ "last": last })
                } else {
                    json!([earlier, last])
                };
                ("messages", v)
            }
            Event::HitlQuestion { question } if bad => ("question", json!([question])),
            Event::HitlQuestion { question } => ("question", json!(question)),
            Event::HitlAnswer { answer } => {
                let v = match answer {
                    Answer::Text(t) => json!(t),
                    Answer::Bool(b) => json!(b),
                };
                ("response", if bad { json!({ "value": v }) } else { v })
            }
            Event::Chunk { text } if bad => ("content", json!({ "text": text })),
            Event::Chunk { text } => ("content", json!(text)),
            Event::Stop { answer } if bad => ("output_messages", json!(answer)),
            Event::Stop { answer } => (
                "output_messages",
                json!([output("o0 earlier output never shown"), output(answer)]),
            ),
            Event::Decoy { class, text } if class.contains("Stop") => {
                ("output_messages", json!([output(text)]))
            }
            Event::Decoy { class, text } if class.contains("UserMessage") => {
                ("messages", json!([chat(json!([text_block(text)]))]))
            }
            Event::Decoy { class, text } if class.contains("Response") => ("response", json!(text)),
            Event::Decoy { class, text } if class.contains("Request") => ("question", json!(text)),
            Event::Decoy { text, .. } => ("content", json!(text)),
            Event::Custom { text, .. } => {
                let mut data = Map::new();
                data.insert(
                    "nested".into(),
                    json!({ "event": { "_event_name": "UnknownNestedEvent", "documents": [text, { "score": 0.5 }] } }),
                );
                data.insert("blob".into(), json!("z".repeat(160)));
                return data;
            }
            Event::Envelope { text, .. } => (
                "event",
                json!({ "_event_name": "RetrieverEvent", "documents": [text] }),
            ),
        };
        let mut data = Map::new();
        data.insert(name.into(), value);
        data
    }

    #[test]
    fn the_bytes_are_those_of_the_value_tree() {
        use crate::display::{generate::generate, DisplayOptions};
        use crate::rng::SeedRng;
        let mut defects = std::collections::BTreeSet::new();
        let mut events = std::collections::BTreeSet::new();
        let mut payloads = std::collections::BTreeSet::new();
        for seed in 0..400 {
            let rng = SeedRng::new(seed);
            let scenario = generate(rng, &DisplayOptions::from_seed(rng, None));
            for (k, step) in scenario.turns.iter().flat_map(|t| &t.steps).enumerate() {
                let event_id = format!("6553f1{k:018}");
                let env = RowEnvelope {
                    agent_class: "ExampleAgent \"quoted\"",
                    agent_id: &step.agent,
                    thread_id: &scenario.thread_id,
                    display_id: &step.display,
                    run_id: &step.run,
                    event_id: &event_id,
                    created_at_ns: 1_700_000_000_000_000_000 + k as i64,
                };
                let direct = encode_row(&env, &step.event, step.defect.as_ref());
                assert_eq!(
                    String::from_utf8(direct).unwrap(),
                    String::from_utf8(value_tree_row(&env, &step.event, step.defect.as_ref()))
                        .unwrap(),
                    "seed {seed}, step {}",
                    step.id
                );
                events.insert(class_chain(&step.event)[0].clone());
                let bad = matches!(step.defect, Some(Defect::BadPayload { .. }));
                for field in tree_payload(&step.event, step.defect.as_ref()).keys() {
                    payloads.insert((field.clone(), bad));
                }
                if let Some(d) = &step.defect {
                    defects.insert(format!("{d:?}").split(' ').next().unwrap().to_string());
                }
            }
        }
        assert!(events.len() >= 6, "event classes compared: {events:?}");
        assert_eq!(defects.len(), 3, "defects compared: {defects:?}");
        // Every family's payload, well formed and malformed.
        for field in [
            "content",
            "messages",
            "output_messages",
            "question",
            "response",
        ] {
            for bad in [false, true] {
                assert!(
                    payloads.contains(&(field.to_string(), bad)),
                    "{field} (malformed: {bad}) compared: {payloads:?}"
                );
            }
        }
    }

    fn env() -> RowEnvelope<'static> {
        RowEnvelope {
            agent_class: "LeadAgent",
            agent_id: "a1",
            thread_id: "t1",
            display_id: "d1",
            run_id: "r1",
            event_id: "e1",
            created_at_ns: 1_700_000_000_000_000_000,
        }
    }

    fn parse(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).expect("rows are JSON")
    }

    #[test]
    fn a_chunk_row_has_every_identity_field_and_its_class_chain() {
        let row = parse(&encode_row(
            &env(),
            &Event::Chunk {
                text: "c1a ".into(),
            },
            None,
        ));
        assert_eq!(row["event_parents"], json!(["ChunkEvent", "BaseEvent"]));
        assert_eq!(row["event_name"], "ChunkEvent");
        assert_eq!(row["event_data"]["content"], "c1a ");
        assert_eq!(
            row["event_data"]["created_at"],
            json!(1_700_000_000_000_000_000i64)
        );
        assert_eq!(row["event_type"], DISPLAY_EVENT);
    }

    #[test]
    fn defects_malform_the_named_part() {
        let e = Event::Chunk {
            text: "c1a ".into(),
        };
        let row = parse(&encode_row(
            &env(),
            &e,
            Some(&Defect::BadIdentity {
                field: "run_id".into(),
            }),
        ));
        assert_eq!(row["run_id"], "");
        let row = parse(&encode_row(
            &env(),
            &e,
            Some(&Defect::BadCreatedAt {
                as_type: "bool".into(),
            }),
        ));
        assert_eq!(row["event_data"]["created_at"], json!(true));
        let row = parse(&encode_row(
            &env(),
            &e,
            Some(&Defect::BadPayload {
                field: "content".into(),
            }),
        ));
        assert_eq!(row["event_data"]["content"]["text"], "c1a ");
    }

    #[test]
    fn an_envelope_reaches_its_family_but_lacks_its_fields() {
        let row = parse(&encode_row(
            &env(),
            &Event::Envelope {
                class: "RetrievalAgentInTheLoopResponseEvent".into(),
                family: "StopEvent".into(),
                text: "e1a ".into(),
            },
            None,
        ));
        let parents = row["event_parents"].as_array().expect("parents");
        assert!(parents.contains(&json!("StopEvent")));
        assert!(row["event_data"].get("output_messages").is_none());
    }

    fn keys(v: &Value) -> Vec<&str> {
        let mut k: Vec<&str> = v
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        k.sort_unstable();
        k
    }

    /// The field sets `model_dump()` writes, read off llama-index-core 0.14.25 (`ChatMessage`,
    /// `TextBlock`, `ImageBlock`, `AudioBlock`, `VideoBlock`).
    #[test]
    fn a_user_message_is_a_chat_message_dump_with_exactly_its_fields() {
        let event = Event::UserMessage {
            blocks: vec![
                Block::Text {
                    text: "u1a ".into(),
                },
                Block::Image {
                    url: Some("https://img.example/u1-2.png".into()),
                },
                Block::Image { url: None },
                Block::Audio {
                    format: "wav".into(),
                    data: AudioData::Base64("AAEC".into()),
                },
                Block::Audio {
                    format: "mp3".into(),
                    data: AudioData::Legacy(vec![LegacyByte::Int(0), LegacyByte::Int(255)]),
                },
                Block::Other {
                    name: "video".into(),
                },
            ],
        };
        let row = parse(&encode_row(&env(), &event, None));
        let messages = row["event_data"]["messages"].as_array().expect("a list");
        assert_eq!(messages.len(), 2);
        for m in messages {
            assert_eq!(keys(m), ["additional_kwargs", "blocks", "role"]);
        }
        let blocks = messages[1]["blocks"].as_array().expect("blocks");
        let image = [
            "block_type",
            "detail",
            "image",
            "image_mimetype",
            "path",
            "url",
        ];
        let audio = ["audio", "block_type", "format", "path", "url"];
        let video = [
            "block_type",
            "detail",
            "fps",
            "path",
            "url",
            "video",
            "video_mimetype",
        ];
        let want: [&[&str]; 6] = [
            &["block_type", "text"],
            &image,
            &image,
            &audio,
            &audio,
            &video,
        ];
        for (block, want) in blocks.iter().zip(want) {
            assert_eq!(keys(block), want, "{block}");
        }
        assert_eq!(blocks[1]["image_mimetype"], "image/png");
        assert_eq!(blocks[2]["image"], json!([137, 80, 78, 71, 13, 10, 26, 10]));
        assert_eq!(blocks[3]["audio"], "AAEC");
        assert_eq!(blocks[4]["audio"], json!([0, 255]));
        assert_eq!(blocks[5]["block_type"], "video");
    }

    #[test]
    fn a_malformed_user_message_still_holds_a_chat_message() {
        let event = Event::UserMessage {
            blocks: vec![Block::Text {
                text: "u1a ".into(),
            }],
        };
        let defect = Defect::BadPayload {
            field: "messages".into(),
        };
        let row = parse(&encode_row(&env(), &event, Some(&defect)));
        let last = &row["event_data"]["messages"]["last"];
        assert_eq!(last["blocks"][0]["text"], "u1a ");
    }
}
