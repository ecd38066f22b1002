//! The options a seed derives for the spool workload (swarm testing): how large and how
//! tool-heavy the history is, whether it is compressed, where the builder reads it from, and
//! how many requests send it. Printed by the run like every workload's options.

use crate::rng::{swarm_draws, SeedRng, Stream};
use rand::Rng;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpoolSimOptions {
    /// Content bytes of the history (tens of KiB: the default campaign stays fast).
    pub content_bytes: u64,
    /// The longest text block of the history.
    pub text_bytes_max: u32,
    /// Chance that the history is tool-heavy (calls and long results).
    pub tool_heavy_probability: f64,
    /// Chance that the summarization middleware compresses it before the requests.
    pub compress_probability: f64,
    /// Chance that the builder reads the rows from a journal rather than from memory.
    pub journal_source_probability: f64,
    /// Chance that the requests carry a system prompt.
    pub system_probability: f64,
    /// Turns of requests; each turn sends both shapes.
    pub turns: u8,
    pub write_buffer_bytes: u32,
    pub chunk_bytes: u32,
}

impl SpoolSimOptions {
    /// A small plain history sent once in each shape from memory.
    pub fn quiet() -> Self {
        SpoolSimOptions {
            content_bytes: 8 * 1024,
            text_bytes_max: 512,
            tool_heavy_probability: 0.0,
            compress_probability: 0.0,
            journal_source_probability: 0.0,
            system_probability: 0.0,
            turns: 1,
            write_buffer_bytes: 4096,
            chunk_bytes: 4096,
        }
    }

    pub fn from_seed(seed: SeedRng) -> Self {
        swarm_draws!(seed.stream(Stream::Options);
            tool_heavy_probability = (0.7, 0.3, 1.0),
            compress_probability = (0.6, 0.3, 1.0),
            journal_source_probability = (0.7, 0.3, 1.0),
            system_probability = (0.5, 0.3, 1.0),
        );
        let mut rng = seed.substream(Stream::Options, 1);
        SpoolSimOptions {
            content_bytes: rng.random_range(8..=48) * 1024,
            text_bytes_max: [256, 512, 1024, 2048, 4096][rng.random_range(0..5)],
            tool_heavy_probability,
            compress_probability,
            journal_source_probability,
            system_probability,
            turns: rng.random_range(1..=3),
            write_buffer_bytes: [256, 1024, 4096, 16 * 1024][rng.random_range(0..4)],
            chunk_bytes: [100, 1024, 8192, 64 * 1024][rng.random_range(0..4)],
        }
    }
}

crate::workload_items::options_display!(SpoolSimOptions);
