//! The spelling of a generated thread's id. A client may name its thread by a UUID of its own,
//! in any spelling a UUID parser accepts: persistence stores the rows under the thread's
//! canonical id and a history read must find them under the spelling the client sent (P16,
//! docs/display-projection.md, "Thread ids"). Rows and reads of one scenario use one spelling,
//! so a system that compares ids as sent (the published aihub store does) answers alike.
//!
//! A sub-stream of its own decides it, so a seed keeps the rest of its scenario.

use crate::rng::{SeedRng, Stream};
use rand::Rng;

/// The workload sub-stream of the thread id's spelling (the catalog number of its rule, P16).
pub const SUBSTREAM: u64 = 16;

/// How one spelling writes a UUID, from its canonical form.
pub type Spell = fn(&str) -> String;

/// Each spelling of a UUID the generator draws, by name (its coverage probe is
/// `display.thread_id.<name>`), and how it spells the canonical (lower-case hyphenated) id.
pub const SPELLINGS: &[(&str, Spell)] = &[
    ("uuid", |id| id.to_string()),
    ("uuid_upper", |id| id.to_uppercase()),
    ("uuid_braces", |id| format!("{{{id}}}")),
    ("uuid_urn", |id| format!("urn:uuid:{id}")),
    ("uuid_simple", |id| id.replace('-', "")),
    ("uuid_spaces", |id| format!(" {id} ")),
    ("uuid_mixed", |id| format!(" {{{}}}", id.to_uppercase())),
];

/// The thread's id: half the seeds keep `object_id` (the platform's own 24-hex ids), the other
/// half a random UUID (version 4) in one of [`SPELLINGS`].
pub fn spelled(object_id: String, seed: SeedRng) -> String {
    let mut rng = seed.substream(Stream::Workload, SUBSTREAM);
    if !rng.random_bool(0.5) {
        return object_id;
    }
    let uuid = uuid::Builder::from_random_bytes(rng.random()).into_uuid();
    let canonical = uuid.hyphenated().to_string();
    let (_, spell) = SPELLINGS[rng.random_range(0..SPELLINGS.len())];
    spell(&canonical)
}

/// The name of the spelling `thread_id` has (`None`: not a UUID).
pub fn spelling_of(thread_id: &str) -> Option<&'static str> {
    let canonical = uuid::Uuid::try_parse(thread_id.trim())
        .ok()?
        .hyphenated()
        .to_string();
    SPELLINGS
        .iter()
        .find(|(_, spell)| spell(&canonical) == thread_id)
        .map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_is_recognised_and_has_its_probe() {
        let id = "6d30913e-dcd4-41c8-8941-f66c716cf359";
        for (name, spell) in SPELLINGS {
            assert_eq!(spelling_of(&spell(id)), Some(*name));
            assert!(super::super::probes::PROBES
                .contains(&format!("display.thread_id.{name}").as_str()));
        }
        assert_eq!(spelling_of("65f0c0ffee0000000000abcd"), None);
    }
}
