//! Spool bytes == oracle bytes (J14): the streamed builders of `history` against the in-memory
//! oracle of `model` (`sim::spool::check::oracle_body`), for generated histories on both shapes,
//! in memory and through a real spool file.

use history::journal::{Row, Speaker};
use history::spool::{
    build, streamed_in_memory, write_body, BufferTracker, BuildOptions, Compressed, NeverAbort,
    RequestHead, Shape, SpoolDir, SyntheticOptions, SyntheticRows, VecSource,
};
use proptest::prelude::*;
use serde_json::Value;

use sim::spool::check::oracle_body;

use super::strategies::{head, history, maybe_invalid_history, well_formed_tool_history};

/// The one data-driven check of this area: streamed and oracle agree, as bytes or as errors.
fn check(shape: Shape, head: &RequestHead, rows: &[Row]) -> Result<(), TestCaseError> {
    let want = oracle_body(shape, head, rows);
    let got = streamed_in_memory(shape, head, rows.to_vec());
    match (want, got) {
        (Ok(want), Ok(got)) => {
            prop_assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want),
                "{:?}",
                shape
            );
            prop_assert_eq!(&got, &want);
            let parsed: Result<Value, _> = serde_json::from_slice(&got);
            prop_assert!(parsed.is_ok(), "not JSON: {:?}", parsed.err());
        }
        (Err(want), Err(got)) => prop_assert_eq!(got.to_string(), want.to_string()),
        (want, got) => prop_assert!(
            false,
            "oracle {:?} but streamed {:?}",
            want.map(|b| b.len()),
            got.map(|b| b.len())
        ),
    }
    Ok(())
}

fn non_empty(rows: &[Row]) -> usize {
    rows.iter().filter(|r| !r.blocks.is_empty()).count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn plain_histories_stream_to_the_oracle_bytes(head in head(), rows in history(false)) {
        for shape in Shape::ALL {
            check(shape, &head, &rows)?;
        }
    }

    #[test]
    fn tool_heavy_histories_stream_to_the_oracle_bytes(head in head(), rows in history(true)) {
        for shape in Shape::ALL {
            check(shape, &head, &rows)?;
        }
    }

    #[test]
    fn invalid_rows_fail_both_routes_at_the_same_row(rows in maybe_invalid_history()) {
        for shape in Shape::ALL {
            check(shape, &RequestHead::default(), &rows)?;
        }
    }

    #[test]
    fn a_compressed_history_is_the_summary_then_the_kept_rows(
        summary in super::strategies::valid_row(false),
        kept in history(true),
    ) {
        let mut whole = vec![summary.clone()];
        whole.extend(kept.iter().cloned());
        for shape in Shape::ALL {
            let want = oracle_body(shape, &RequestHead::default(), &whole)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut out = Vec::new();
            let mut source = Compressed::new(summary.clone(), VecSource::new(kept.clone()));
            write_body(shape, &RequestHead::default(), &mut source, &mut out, &NeverAbort,
                &mut BufferTracker::new(0)).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(out, want);
        }
    }

    /// Properties of the Anthropic shape that do not lean on the oracle: roles alternate and
    /// exactly min(2, non-empty rows) blocks carry a cache marker, each a row's last block.
    #[test]
    fn anthropic_roles_alternate_and_two_rows_are_marked(rows in history(true)) {
        let body = streamed_in_memory(Shape::AnthropicMessages, &RequestHead::default(), rows.clone())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let body: Value = serde_json::from_slice(&body)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        for pair in messages.windows(2) {
            prop_assert_ne!(&pair[0]["role"], &pair[1]["role"]);
        }
        let marked = messages
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b.get("cache_control").is_some())
            .count();
        prop_assert_eq!(marked, non_empty(&rows).min(2));
        let blocks: usize = rows.iter().map(|r| r.blocks.len()).sum();
        let sent: usize = messages.iter().map(|m| m["content"].as_array().map_or(0, Vec::len)).sum();
        prop_assert_eq!(sent, blocks);
    }

    /// Every tool message answers an earlier, still unanswered call when every result follows
    /// its call (raw ids repeat across turns; mapped ids never do).
    #[test]
    fn openai_results_reference_their_calls(rows in well_formed_tool_history()) {
        let body = streamed_in_memory(Shape::OpenAiChat, &RequestHead::default(), rows)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let body: Value = serde_json::from_slice(&body)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut called = Vec::new();
        for m in body["messages"].as_array().cloned().unwrap_or_default() {
            for c in m["tool_calls"].as_array().cloned().unwrap_or_default() {
                called.push(c["id"].clone());
            }
            if m["role"] == "tool" {
                let id = &m["tool_call_id"];
                let at = called.iter().position(|c| c == id);
                prop_assert!(at.is_some(), "{} answers no call", id);
                if let Some(at) = at {
                    called.remove(at);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The same through the real path: a spool file in a request directory, sealed.
    #[test]
    fn spool_files_hold_the_oracle_bytes(head in head(), rows in history(true)) {
        let tmp = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut dir = SpoolDir::open(tmp.path().join("request"))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for shape in Shape::ALL {
            let want = oracle_body(shape, &head, &rows)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let opts = BuildOptions { write_buffer_bytes: 64, ..BuildOptions::default() };
            let built = build(shape, &head, &mut VecSource::new(rows.clone()), &mut dir, &opts,
                &NeverAbort).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(built.spool.size_bytes(), want.len() as u64);
            prop_assert_eq!(std::fs::read(built.spool.path())
                .map_err(|e| TestCaseError::fail(e.to_string()))?, want);
            prop_assert!(built.stats.peak_buffered_bytes <= built.stats.buffered_bound_bytes);
        }
        prop_assert_eq!(std::fs::read_dir(dir.path()).map(|d| d.count()).unwrap_or(99), 0);
        dir.close().map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}

/// Large synthetic histories (the memory proof's generator) agree too, both shapes, both kinds.
#[test]
fn synthetic_histories_stream_to_the_oracle_bytes() {
    for tool_heavy in [false, true] {
        let opts = SyntheticOptions {
            content_bytes_target: 256 * 1024,
            tool_heavy,
            seed: 3,
            ..SyntheticOptions::default()
        };
        let mut rows = Vec::new();
        let mut source = SyntheticRows::new(opts);
        while let Some(row) = history::spool::RowSource::next_row(&mut source) {
            rows.push(row.expect("the generator does not fail"));
        }
        assert!(rows.iter().any(|r| r.speaker == Speaker::Tool) == tool_heavy);
        for shape in Shape::ALL {
            let want = oracle_body(shape, &RequestHead::default(), &rows).expect("valid rows");
            let mut out = Vec::new();
            let mut track = BufferTracker::new(4096);
            write_body(
                shape,
                &RequestHead::default(),
                &mut SyntheticRows::new(opts),
                &mut out,
                &NeverAbort,
                &mut track,
            )
            .expect("build");
            assert!(out == want, "{shape:?} tool_heavy={tool_heavy}");
            let stats = track.finish(out.len() as u64);
            assert!(
                stats.peak_buffered_bytes <= stats.buffered_bound_bytes,
                "{stats:?}"
            );
        }
    }
}
