//! proptest strategies for histories: plain and tool-heavy, with unicode, every character JSON
//! escapes, empty rows, reused and orphan tool ids, odd tool arguments, and (when asked) rows with
//! blocks their speaker may not send.

use history::journal::{Block, Origin, Row, Speaker};
use history::spool::RequestHead;
use proptest::prelude::*;

/// Text full of what JSON escaping can get wrong.
pub fn text() -> impl Strategy<Value = String> {
    let tricky = prop_oneof![
        Just('"'),
        Just('\\'),
        Just('\n'),
        Just('\r'),
        Just('\t'),
        Just('/'),
        Just('\u{7f}'),
        Just('\u{2028}'),
        Just('é'),
        Just('日'),
        Just('🚀'),
        (0u32..0x20).prop_map(|c| char::from_u32(c).expect("control chars are chars")),
        any::<char>(),
        Just('a'),
    ];
    prop::collection::vec(tricky, 0..24).prop_map(|cs| cs.into_iter().collect())
}

/// A small pool, so calls reuse raw ids and some results are orphans.
fn raw_id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("call \"9\"".to_string()),
        text(),
    ]
}

fn arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" \n ".to_string()),
        Just(" {\"path\": \"a/b.rs\",\n \"n\": [1, 2.5, null]} ".to_string()),
        Just("{\"broken\":".to_string()),
        Just("[1, 2]".to_string()),
        Just("42".to_string()),
        text().prop_map(|t| serde_json::json!({ "q": t }).to_string()),
        text(),
    ]
}

fn text_block() -> impl Strategy<Value = Block> {
    text().prop_map(|text| Block::Text { text })
}

fn call_block() -> impl Strategy<Value = Block> {
    (raw_id(), text(), arguments()).prop_map(|(id, name, arguments)| Block::ToolCall {
        id,
        name,
        arguments,
    })
}

fn result_block() -> impl Strategy<Value = Block> {
    (raw_id(), text(), text()).prop_map(|(call_id, name, content)| Block::ToolResult {
        call_id,
        name,
        content,
    })
}

fn origin() -> impl Strategy<Value = Origin> {
    prop_oneof![Just(Origin::Main), Just(Origin::Subagent("sub".into()))]
}

fn row(speaker: Speaker, blocks: impl Strategy<Value = Vec<Block>>) -> impl Strategy<Value = Row> {
    (origin(), blocks).prop_map(move |(origin, blocks)| Row {
        speaker,
        origin,
        blocks,
    })
}

/// A valid row: human text, AI text and calls, tool results; 0 to 3 blocks (0 = an empty row).
pub fn valid_row(tool_heavy: bool) -> BoxedStrategy<Row> {
    let human = row(Speaker::Human, prop::collection::vec(text_block(), 0..3));
    if !tool_heavy {
        let ai = row(Speaker::Ai, prop::collection::vec(text_block(), 0..3));
        return prop_oneof![human, ai].boxed();
    }
    let ai = row(
        Speaker::Ai,
        prop::collection::vec(prop_oneof![text_block(), call_block()], 0..4),
    );
    let tool = row(Speaker::Tool, prop::collection::vec(result_block(), 0..3));
    prop_oneof![1 => human, 2 => ai, 2 => tool].boxed()
}

/// A history of valid rows.
pub fn history(tool_heavy: bool) -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec(valid_row(tool_heavy), 0..24)
}

/// A history that may hold one row with a block its speaker may not send.
pub fn maybe_invalid_history() -> impl Strategy<Value = Vec<Row>> {
    let any_block = prop_oneof![text_block(), call_block(), result_block()];
    let speaker = prop_oneof![Just(Speaker::Human), Just(Speaker::Ai), Just(Speaker::Tool)];
    let bad_row = (speaker, origin(), prop::collection::vec(any_block, 1..3)).prop_map(
        |(speaker, origin, blocks)| Row {
            speaker,
            origin,
            blocks,
        },
    );
    (
        history(true),
        any::<prop::sample::Index>(),
        prop::option::of(bad_row),
    )
        .prop_map(|(mut rows, at, bad)| {
            if let Some(bad) = bad {
                let i = at.index(rows.len() + 1);
                rows.insert(i, bad);
            }
            rows
        })
}

pub fn head() -> impl Strategy<Value = RequestHead> {
    (
        text(),
        prop::option::of(text()),
        any::<u32>(),
        any::<bool>(),
    )
        .prop_map(|(model, system, max_tokens, stream)| RequestHead {
            model,
            system,
            max_tokens,
            stream,
        })
}

/// A history where every tool result answers an earlier call: turns of a human row, an AI row with
/// 0 to 3 calls (raw ids from a small pool, so they repeat across turns) and a tool row answering
/// some of them in any order.
pub fn well_formed_tool_history() -> impl Strategy<Value = Vec<Row>> {
    let call = (0u8..4, arguments());
    let turn = (
        text(),
        prop::collection::vec((call, any::<bool>()), 0..4),
        any::<prop::sample::Index>(),
    );
    prop::collection::vec(turn, 0..8).prop_map(|turns| {
        let mut rows = Vec::new();
        for (ask, calls, rotate) in turns {
            rows.push(Row::text(Speaker::Human, Origin::Main, ask));
            let mut blocks = Vec::new();
            let mut results = Vec::new();
            for ((id, arguments), answered) in calls {
                let id = format!("id-{id}");
                blocks.push(Block::ToolCall {
                    id: id.clone(),
                    name: "tool".into(),
                    arguments,
                });
                if answered {
                    results.push(Block::ToolResult {
                        call_id: id,
                        name: "tool".into(),
                        content: "out".into(),
                    });
                }
            }
            rows.push(Row {
                speaker: Speaker::Ai,
                origin: Origin::Main,
                blocks,
            });
            // Answer in another order than called.
            if !results.is_empty() {
                let k = rotate.index(results.len());
                results.rotate_left(k);
            }
            rows.push(Row {
                speaker: Speaker::Tool,
                origin: Origin::Main,
                blocks: results,
            });
        }
        rows
    })
}
