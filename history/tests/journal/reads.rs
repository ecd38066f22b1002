//! Incremental reads (J11), last-resort truncation (J13) and token counters (J17).

use std::sync::Arc;

use history::journal::{
    plan_truncation, CountsReads, Journal, JournalReader, MemStorage, Origin, Tokenizer,
    TruncationOptions,
};
#[cfg(feature = "planted")]
use history::BugId;
use history::Planted;
use proptest::prelude::*;

use super::*;

/// Bytes one statistics read costs right after one append at `rows_before` rows, and the bytes
/// that append wrote.
fn stats_read_after_one_append(o: &JournalOptions, rows_before: usize) -> (u64, u64) {
    let mem = Arc::new(MemStorage::new());
    let mut j = Journal::create(mem.clone(), "j", o.clone(), None).expect("create");
    let mut reader = JournalReader::new(mem.clone(), "j", o.clone());
    for chunk in 0..rows_before / 64 {
        let batch: Vec<Row> = (0..64)
            .map(|i| row(&format!("row {chunk}.{i:02}")))
            .collect();
        j.append(Origin::Main, batch).expect("append");
    }
    reader.statistics().expect("first read");
    let before = j.end_offset();
    j.append(Origin::Main, rows(&["one more"])).expect("append");
    let appended = j.end_offset() - before;
    mem.reset_read_counters();
    let stats = reader.statistics().expect("read");
    assert_eq!(stats, j.fold().statistics());
    assert_eq!(stats.rows as usize, rows_before + 1);
    let range = reader
        .context_range(rows_before - 1..rows_before + 5)
        .expect("range");
    assert_eq!(range.len(), 2);
    let last = reader.last_entry().expect("last").expect("a row");
    assert_eq!(text_of(&last.row), "one more");
    (mem.bytes_read("j"), appended)
}

#[test]
fn j11_a_statistics_read_costs_what_was_appended_since_the_last_one() {
    let (small, appended_small) = stats_read_after_one_append(&opts(), 1_024);
    let (large, appended_large) = stats_read_after_one_append(&opts(), 8_192);
    assert_eq!(
        small, appended_small,
        "at 1,024 rows a read costs the appended record"
    );
    assert_eq!(
        large, appended_large,
        "at 8,192 rows a read costs the appended record"
    );
    // The two records differ only in the digits of their sequence numbers.
    assert!(
        large.abs_diff(small) <= 2,
        "{small} bytes versus {large} bytes"
    );
}

#[cfg(feature = "planted")]
#[test]
fn planted_j11_every_read_rescans_from_byte_0() {
    let o = opts_with(Planted::only(BugId::J11));
    let (small, _) = stats_read_after_one_append(&o, 1_024);
    let (large, _) = stats_read_after_one_append(&o, 8_192);
    assert!(
        large > 7 * small,
        "1,024 rows: {small} bytes; 8,192 rows: {large} bytes"
    );
}

fn tool_rows(n: usize) -> Vec<Row> {
    (0..n)
        .map(|i| {
            let content = "x".repeat(4_000 + i % 7);
            Row::tool_result(Origin::Main, format!("call-{i}"), "read_file", content)
        })
        .collect()
}

fn truncation(planted: Planted, n: usize) -> history::journal::TruncationPlan {
    let rows = tool_rows(n);
    let refs: Vec<&Row> = rows.iter().collect();
    plan_truncation(
        &refs,
        TruncationOptions {
            budget_bytes: (n as u64) * 1_000,
            keep_bytes: 256,
            planted,
        },
    )
}

#[test]
fn j13_last_resort_truncation_decides_every_replacement_in_one_pass() {
    let plan = truncation(Planted::none(), 1_024);
    assert!(plan.fits);
    assert!(plan.replacements.len() > 700, "{}", plan.replacements.len());
    assert_eq!(plan.rows_visited, 1_024);
}

#[cfg(feature = "planted")]
#[test]
fn planted_j13_truncation_reprojects_after_every_replacement() {
    let fixed = truncation(Planted::none(), 128);
    let legacy = truncation(Planted::only(BugId::J13), 128);
    assert_eq!(legacy.replacements, fixed.replacements, "same decisions");
    let c = legacy.replacements.len() as u64;
    assert!(
        legacy.rows_visited >= 128 * c,
        "{} visits",
        legacy.rows_visited
    );
}

/// Counts `texts` on separate counters: at each entry of `order` the chosen counter is fed its
/// next piece, or ends its row when it has none left; counters still open end at the close.
fn interleaved_counts(planted: Planted, texts: &[Vec<String>], order: &[usize]) -> Vec<u64> {
    let t = Tokenizer::o200k();
    let mut counters: Vec<_> = texts.iter().map(|_| t.counter(planted)).collect();
    let mut fed = vec![0usize; texts.len()];
    let mut counts: Vec<Option<u64>> = vec![None; texts.len()];
    for k in order.iter().map(|k| k % texts.len()) {
        if counts[k].is_some() {
            continue;
        }
        if fed[k] < texts[k].len() {
            counters[k].push(&texts[k][fed[k]]);
            fed[k] += 1;
        } else {
            counts[k] = Some(counters[k].end_row());
        }
    }
    for (k, c) in counters.iter_mut().enumerate() {
        if counts[k].is_none() {
            for piece in &texts[k][fed[k]..] {
                c.push(piece);
            }
            counts[k] = Some(c.end_row());
        }
    }
    counts.into_iter().map(|c| c.unwrap_or_default()).collect()
}

fn sequential_counts(texts: &[Vec<String>]) -> Vec<u64> {
    let t = Tokenizer::o200k();
    texts
        .iter()
        .map(|pieces| t.count(&pieces.concat()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn j17_token_counts_do_not_depend_on_interleaving(
        texts in proptest::collection::vec(
            proptest::collection::vec("[a-z ]{1,12}|[0-9]{1,6}|[{}();]{1,3}", 1..5), 2..4),
        order in proptest::collection::vec(0usize..4, 0..24),
    ) {
        prop_assert_eq!(
            interleaved_counts(Planted::none(), &texts, &order),
            sequential_counts(&texts)
        );
    }
}

#[cfg(feature = "planted")]
#[test]
fn planted_j17_interleaved_counters_miscount() {
    let texts = vec![
        vec!["The quick brown ".to_string(), "fox jumps".to_string()],
        vec!["fn main() {".to_string(), " println!(); }".to_string()],
    ];
    let order = [0, 1, 0, 1];
    assert_ne!(
        interleaved_counts(Planted::only(BugId::J17), &texts, &order),
        sequential_counts(&texts)
    );
}
