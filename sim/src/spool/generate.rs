//! Seed -> spool scenario: a synthetic history, maybe compressed, sent turn by turn in both
//! shapes, each turn's requests covering a growing share of the history.

use super::options::SpoolSimOptions;
use super::scenario::{HistorySpec, RequestSpec, ShapeSpec, SourceKind, SpoolScenario};
use crate::hostile_text::{HostileMix, HostileText};
use crate::rng::chance;
use crate::rng::{SeedRng, Stream};
use rand::Rng;

/// The workload sub-stream the system prompt's hostile material is drawn from.
const TEXT_SUBSTREAM: u64 = 0x7e57;

/// Builds the scenario of `seed` under `options`.
pub fn generate(seed: SeedRng, o: &SpoolSimOptions) -> SpoolScenario {
    let mut rng = seed.stream(Stream::Workload);
    let tool_heavy = chance(&mut rng, o.tool_heavy_probability);
    let compress = chance(&mut rng, o.compress_probability);
    let journal = chance(&mut rng, o.journal_source_probability);
    let system = chance(&mut rng, o.system_probability);
    let mut rng = seed.substream(Stream::Workload, 1);
    let mut requests = Vec::new();
    for t in 0..o.turns {
        // The last turn sends the whole history; earlier turns a prefix of it.
        let rows_percent = if t + 1 == o.turns {
            100
        } else {
            rng.random_range(20..=90)
        };
        for shape in [ShapeSpec::Openai, ShapeSpec::Anthropic] {
            requests.push(RequestSpec {
                shape,
                rows_percent,
            });
        }
    }
    SpoolScenario {
        history: HistorySpec {
            seed: rng.random(),
            content_bytes: o.content_bytes,
            tool_heavy,
            text_bytes_max: o.text_bytes_max,
        },
        compress_keep: compress.then(|| rng.random_range(2..=12)),
        source: if journal {
            SourceKind::Journal
        } else {
            SourceKind::Rows
        },
        write_buffer_bytes: o.write_buffer_bytes,
        chunk_bytes: o.chunk_bytes,
        system: system.then(|| system_prompt(seed)),
        requests,
    }
}

/// The system prompt: plain words, then material of five special classes (a seed sends one
/// prompt at most, so each carries several; never long: a prompt is bounded).
fn system_prompt(seed: SeedRng) -> String {
    let rng = seed.substream(Stream::Workload, TEXT_SUBSTREAM);
    let mut texts = HostileText::new(rng, HostileMix::default());
    texts.many("You are a careful coding agent. ", "k", 5)
}
