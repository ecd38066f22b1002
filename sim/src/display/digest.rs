//! What an answer shows as the checkers read it, hashed for the trace (`shows=` on each
//! replica's answer line).
//!
//! Its messages and each warning's code and ids; not a warning's prose, nor an error's text:
//! those are a system's own wording, so two systems that show the same history (`histsim
//! diff`) are alike. The protocol lines in the trace still hash every byte a system answered.
//! Warnings are taken as a set, in a fixed order: the contract leaves their order open.
//! Warnings that a known difference of `alike_up_to` covers are left out (`histsim diff`
//! compares up to those).
//!
//! The bytes hashed are the compact JSON that a `serde_json::Value` of the answer writes (keys
//! sorted at every level, warnings without `text`, sorted by their own text). The digest wrote
//! that tree and then its text for every answer, 5 % of the display workload; it now writes the
//! same bytes straight into the text buffer `json_digest` keeps (the test below compares them
//! with the tree's over the answers of hundreds of seeds), so no trace hash changed.

use crate::json_digest::xxh3_of_text;
use history::display::{ChatMessage, ContentPart, Projection, Role, Warning};
use model::display as m;
use std::io::{self, Write};

/// The digest of an answer (0 for an error).
pub fn answer_digest(result: &Result<Projection, String>, alike_up_to: &m::Declared) -> u64 {
    let Ok(projection) = result else {
        return 0;
    };
    // Writing into a buffer cannot fail.
    xxh3_of_text(|text| write_shown(text, projection, alike_up_to))
}

/// `{"messages":[...],"warnings":[...]}`, as the value tree writes it.
fn write_shown(w: &mut impl Write, p: &Projection, alike_up_to: &m::Declared) -> io::Result<()> {
    w.write_all(b"{\"messages\":[")?;
    for (i, message) in p.messages.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write_message(w, message)?;
    }
    w.write_all(b"],\"warnings\":[")?;
    let mut warnings: Vec<Vec<u8>> = p
        .warnings
        .iter()
        .filter(|x| !super::view::covers(alike_up_to, x.code.as_str(), x.field.as_deref()))
        .map(warning_bytes)
        .collect::<io::Result<_>>()?;
    // The tree sorted its warnings by their text, which is these bytes.
    warnings.sort();
    for (i, warning) in warnings.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        w.write_all(warning)?;
    }
    w.write_all(b"]}")
}

/// `{"content":[...],"role":...}`.
fn write_message(w: &mut impl Write, m: &ChatMessage) -> io::Result<()> {
    w.write_all(b"{\"content\":[")?;
    for (i, part) in m.content.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write_part(w, part)?;
    }
    w.write_all(match m.role {
        Role::User => b"],\"role\":\"user\"}",
        Role::Assistant => b"],\"role\":\"assistant\"}",
    })
}

/// A part in the OpenAI shape, its `type` tag last (sorted).
fn write_part(w: &mut impl Write, part: &ContentPart) -> io::Result<()> {
    match part {
        ContentPart::Text { text } => {
            w.write_all(b"{\"text\":")?;
            string(w, text)?;
            w.write_all(b",\"type\":\"text\"}")
        }
        ContentPart::ImageUrl { url } => {
            w.write_all(b"{\"image_url\":{\"url\":")?;
            string(w, url)?;
            w.write_all(b"},\"type\":\"image_url\"}")
        }
        ContentPart::InputAudio { data, format } => {
            w.write_all(b"{\"input_audio\":{\"data\":")?;
            string(w, data)?;
            w.write_all(b",\"format\":")?;
            string(w, format)?;
            w.write_all(b"},\"type\":\"input_audio\"}")
        }
    }
}

/// `{"code":...,"display_id":...,"event_id":...,"field":...}`: a warning without its text.
fn warning_bytes(x: &Warning) -> io::Result<Vec<u8>> {
    let mut w = Vec::with_capacity(96);
    w.write_all(b"{\"code\":")?;
    string(&mut w, x.code.as_str())?;
    w.write_all(b",\"display_id\":")?;
    optional(&mut w, x.display_id.as_deref())?;
    w.write_all(b",\"event_id\":")?;
    optional(&mut w, x.event_id.as_deref())?;
    w.write_all(b",\"field\":")?;
    optional(&mut w, x.field.as_deref())?;
    w.write_all(b"}")?;
    Ok(w)
}

/// A JSON string, escaped as serde_json escapes it.
fn string(w: &mut impl Write, s: &str) -> io::Result<()> {
    serde_json::to_writer(w, s).map_err(io::Error::other)
}

fn optional(w: &mut impl Write, s: Option<&str>) -> io::Result<()> {
    match s {
        Some(s) => string(w, s),
        None => w.write_all(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::{generate::generate, DisplayOptions, StoreKind, WorldConfig};
    use crate::rng::SeedRng;
    use history::display::WarningCode;
    use history::Planted;
    use std::rc::Rc;

    /// The digest as it was computed before: a value tree of the answer, edited, then its text.
    fn by_value_tree(result: &Result<Projection, String>, alike_up_to: &m::Declared) -> u64 {
        let Ok(projection) = result else {
            return 0;
        };
        let mut shown = serde_json::to_value(projection).unwrap();
        if let Some(warnings) = shown.get_mut("warnings").and_then(|w| w.as_array_mut()) {
            warnings.retain(|w| !crate::display::view::covered_by(w, alike_up_to));
            for w in warnings.iter_mut().filter_map(|w| w.as_object_mut()) {
                w.remove("text");
            }
            warnings.sort_by_cached_key(|w| w.to_string());
        }
        xxhash_rust::xxh3::xxh3_64(&serde_json::to_vec(&shown).unwrap())
    }

    fn declared_sets() -> Vec<m::Declared> {
        let all: m::Declared = m::KnownDifference::ALL.iter().copied().collect();
        let mut sets = vec![m::Declared::new(), all];
        sets.extend(m::KnownDifference::ALL.iter().map(|d| [*d].into()));
        sets
    }

    #[test]
    fn the_digest_of_every_answer_of_many_seeds_is_the_value_trees() {
        let (mut answers, mut warnings, mut parts) = (0, 0, std::collections::BTreeSet::new());
        for seed in 0..250 {
            let rng = SeedRng::new(seed);
            let scenario = generate(rng, &DisplayOptions::from_seed(rng, None));
            let config = WorldConfig::new(StoreKind::Memory, Planted::none());
            let plan = Rc::new(super::super::faults::FaultPlan::new(&scenario));
            let (record, _) = super::super::play_and_model(&scenario, &plan, &config);
            for read in &record.reads {
                for declared in declared_sets() {
                    assert_eq!(
                        answer_digest(&read.result, &declared),
                        by_value_tree(&read.result, &declared),
                        "seed {seed}, answer at {} us, declared {declared:?}",
                        read.at_us
                    );
                }
                if let Ok(p) = &read.result {
                    answers += 1;
                    warnings += p.warnings.len();
                    for part in p.messages.iter().flat_map(|m| &m.content) {
                        parts.insert(match part {
                            ContentPart::Text { .. } => "text",
                            ContentPart::ImageUrl { .. } => "image",
                            ContentPart::InputAudio { .. } => "audio",
                        });
                    }
                }
            }
        }
        assert!(answers > 1_000, "{answers} answers compared");
        assert!(warnings > 50, "{warnings} warnings compared");
        assert_eq!(parts.len(), 3, "text, image and audio parts compared");
    }

    #[test]
    fn warnings_sort_by_their_text_and_escapes_are_serde_jsons() {
        let warning = |code, event: &str, field: Option<&str>| {
            Warning::new(code, Some(event.into()), None, field)
        };
        let projection = Projection {
            messages: vec![ChatMessage {
                role: Role::Assistant,
                content: vec![
                    ContentPart::Text {
                        text: "a \"quote\", a tab\t, a \u{1} and é".into(),
                    },
                    ContentPart::ImageUrl { url: "".into() },
                ],
            }],
            warnings: vec![
                warning(WarningCode::BadPayload, "e2", Some("messages")),
                warning(WarningCode::BadMedia, "e1", Some("url")),
                warning(WarningCode::BadIdentity, "e\\3", None),
                warning(WarningCode::BadMedia, "e0", Some("block_type")),
            ],
        };
        for declared in declared_sets() {
            let answer = Ok(projection.clone());
            assert_eq!(
                answer_digest(&answer, &declared),
                by_value_tree(&answer, &declared)
            );
        }
        assert_eq!(answer_digest(&Err("down".into()), &m::Declared::new()), 0);
    }
}
