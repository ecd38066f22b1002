//! Synthetic histories of a chosen size, generated one row at a time.
//!
//! The memory proof, the bench and the simulator need histories of 1 MiB and 8 MiB whose source
//! holds nothing: [`SyntheticRows`] keeps only its counters and the ids of the calls of the current
//! turn. Rows are deterministic in the seed and mix ASCII, non-ASCII and every kind of character
//! JSON must escape. Tool-heavy histories repeat raw tool ids across turns, as some models do, so
//! the id mapping is exercised. A generator of test data: compiled with the `testing` feature.

use crate::journal::{Block, Origin, Row, Speaker};

use super::{RowSource, SpoolError};

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyntheticOptions {
    /// The rows' content bytes the history stops at (at the end of a turn).
    pub content_bytes_target: u64,
    /// Turns with 1 to 3 tool calls and their (larger) results, instead of plain text turns.
    pub tool_heavy: bool,
    /// The longest text block; tool results are up to twice as long.
    pub text_bytes_max: usize,
    pub seed: u64,
}

impl Default for SyntheticOptions {
    fn default() -> Self {
        SyntheticOptions {
            content_bytes_target: 1 << 20,
            tool_heavy: false,
            text_bytes_max: 4096,
            seed: 0,
        }
    }
}

const WORDS: [&str; 16] = [
    "lorem",
    "ipsum",
    "naïve",
    "日本語",
    "🚀",
    "\"quoted\"",
    "back\\slash",
    "tab\there",
    "line\nbreak",
    "ctrl\u{1}\u{1f}",
    "café",
    "</script>",
    "a/b",
    "{\"k\":1}",
    "\r\n",
    "\u{7f}del",
];

const TOOLS: [&str; 4] = ["read_file", "grep", "run_shell", "list_dir"];

/// The generator. Iterate it through [`RowSource`].
#[derive(Debug)]
pub struct SyntheticRows {
    opts: SyntheticOptions,
    rng: u64,
    produced_bytes: u64,
    /// Position in the turn: 0 human, 1 AI (calls), 2 tool results, 3 AI answer.
    step: u8,
    turn: u64,
    /// (raw id, tool name) of this turn's calls, answered by the next tool row.
    calls: Vec<(String, &'static str)>,
}

impl SyntheticRows {
    pub fn new(opts: SyntheticOptions) -> Self {
        assert!(
            opts.text_bytes_max >= 16,
            "text blocks need room for a word"
        );
        SyntheticRows {
            opts,
            rng: opts.seed ^ 0x9E37_79B9_7F4A_7C15,
            produced_bytes: 0,
            step: 0,
            turn: 0,
            calls: Vec::new(),
        }
    }

    /// Content bytes produced so far.
    pub fn produced_bytes(&self) -> u64 {
        self.produced_bytes
    }

    /// splitmix64.
    fn next_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    fn text(&mut self, bytes_max: usize) -> String {
        let len = bytes_max / 2 + self.below(bytes_max as u64 / 2) as usize;
        let mut s = String::with_capacity(len + 16);
        while s.len() < len {
            s.push_str(WORDS[self.below(WORDS.len() as u64) as usize]);
            s.push(' ');
        }
        s
    }

    fn arguments(&mut self, k: usize) -> String {
        match self.below(8) {
            0 => String::new(),
            1 => "{\"broken\":".to_string(),
            _ => {
                let line = self.below(5000);
                format!(
                    "{{\"path\": \"src/{}/mod_{k}.rs\", \"line\": {line}}}",
                    self.turn
                )
            }
        }
    }

    fn row(&mut self) -> Row {
        let text_max = self.opts.text_bytes_max;
        let (speaker, blocks) = match (self.opts.tool_heavy, self.step) {
            (_, 0) => (
                Speaker::Human,
                vec![Block::Text {
                    text: self.text(text_max),
                }],
            ),
            (false, _) => (
                Speaker::Ai,
                vec![Block::Text {
                    text: self.text(text_max),
                }],
            ),
            (true, 1) => {
                let mut blocks = vec![Block::Text {
                    text: self.text(text_max / 4),
                }];
                for k in 0..1 + self.below(3) as usize {
                    // Raw ids repeat every 5 turns.
                    let id = format!("toolu_{}_{k}", self.turn % 5);
                    let name = TOOLS[self.below(TOOLS.len() as u64) as usize];
                    let arguments = self.arguments(k);
                    self.calls.push((id.clone(), name));
                    blocks.push(Block::ToolCall {
                        id,
                        name: name.to_string(),
                        arguments,
                    });
                }
                (Speaker::Ai, blocks)
            }
            (true, 2) => {
                let calls = std::mem::take(&mut self.calls);
                let blocks = calls
                    .into_iter()
                    .map(|(call_id, name)| Block::ToolResult {
                        call_id,
                        name: name.to_string(),
                        content: self.text(2 * text_max),
                    })
                    .collect();
                (Speaker::Tool, blocks)
            }
            (true, _) => (
                Speaker::Ai,
                vec![Block::Text {
                    text: self.text(text_max),
                }],
            ),
        };
        let turn_len = if self.opts.tool_heavy { 4 } else { 2 };
        self.step = (self.step + 1) % turn_len;
        if self.step == 0 {
            self.turn += 1;
        }
        let origin = if self.below(16) == 0 {
            Origin::Subagent(format!("agent-{}", self.turn % 3))
        } else {
            Origin::Main
        };
        let row = Row {
            speaker,
            origin,
            blocks,
        };
        self.produced_bytes += row.content_bytes() as u64;
        row
    }
}

impl RowSource for SyntheticRows {
    fn next_row(&mut self) -> Option<Result<Row, SpoolError>> {
        if self.step == 0 && self.produced_bytes >= self.opts.content_bytes_target {
            return None;
        }
        Some(Ok(self.row()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(opts: SyntheticOptions) -> Vec<Row> {
        let mut g = SyntheticRows::new(opts);
        let rows = std::iter::from_fn(|| g.next_row());
        rows.map(|r| r.expect("the generator does not fail"))
            .collect()
    }

    #[test]
    fn histories_reach_the_target_and_are_deterministic() {
        for tool_heavy in [false, true] {
            let opts = SyntheticOptions {
                content_bytes_target: 100_000,
                tool_heavy,
                seed: 7,
                ..SyntheticOptions::default()
            };
            let rows = all(opts);
            let bytes: usize = rows.iter().map(Row::content_bytes).sum();
            assert!(bytes >= 100_000);
            assert!(bytes < 100_000 + 4 * 3 * 2 * 4096 + 64);
            assert_eq!(rows, all(opts));
            let results = rows
                .iter()
                .flat_map(|r| &r.blocks)
                .filter(|b| matches!(b, Block::ToolResult { .. }))
                .count();
            assert_eq!(results > 0, tool_heavy);
        }
    }
}
