//! Replacements (J1, J3) and record shapes (J15, J16).

use std::sync::Arc;

use history::journal::storage::read_all;
use history::journal::{
    dump_records, DensityReplacement, Journal, MemStorage, Origin, RowId, MAX_RECORD_BYTES,
    MAX_RECORD_ROWS,
};
#[cfg(feature = "planted")]
use history::{BugId, Planted};
use proptest::prelude::*;

use super::*;

/// A journal holding `old`, then a replacement with `new` in two row records, committed.
/// Returns the bytes before the replacement and after it.
fn replaced(storage: SharedStorage, opts: JournalOptions) -> (Vec<u8>, Vec<u8>) {
    let mut j = Journal::create(storage.clone(), "j", opts, None).expect("create");
    j.append(Origin::Main, rows(&["old 1", "old 2"]))
        .expect("append");
    let before = read_all(&*storage, "j").expect("read");
    let mut g = j.begin_replace(Origin::Main).expect("begin");
    g.push_rows(rows(&["new 1"])).expect("rows");
    g.push_rows(rows(&["new 2", "new 3"])).expect("rows");
    g.commit().expect("commit");
    (before, read_all(&*storage, "j").expect("read"))
}

/// What a reader shows for every prefix of `after` longer than `before`.
fn shown_at_every_cut(before: &[u8], after: &[u8], opts: JournalOptions) -> Vec<Vec<String>> {
    (before.len()..=after.len())
        .map(|cut| {
            let s = Arc::new(MemStorage::with_file("j", &after[..cut]));
            let j = Journal::open(s, "j", opts.clone()).expect("every cut reopens");
            texts(j.fold())
        })
        .collect()
}

#[test]
fn j1_a_crash_anywhere_in_a_replacement_shows_the_old_or_the_new_history() {
    on_every_storage(|_, storage| {
        let (before, after) = replaced(storage, opts());
        let old = vec!["old 1".to_string(), "old 2".into()];
        let new = vec!["new 1".to_string(), "new 2".into(), "new 3".into()];
        let shown = shown_at_every_cut(&before, &after, opts());
        assert!(shown.iter().all(|s| *s == old || *s == new), "{shown:?}");
        assert_eq!(shown.last(), Some(&new));
        assert_eq!(shown.iter().filter(|s| **s == new).count(), 1);
    });
}

#[test]
fn j1_an_abandoned_replacement_stays_invisible() {
    on_every_storage(|_, storage| {
        let mut j = Journal::create(storage.clone(), "j", opts(), None).expect("create");
        j.append(Origin::Main, rows(&["kept"])).expect("append");
        {
            let mut g = j.begin_replace(Origin::Main).expect("begin");
            g.push_rows(rows(&["dropped"])).expect("rows");
        }
        assert_eq!(texts(j.fold()), ["kept"]);
        assert_eq!(j.open_txn(), None, "the guard's drop aborted it");
        let reopened = Journal::open(storage, "j", opts()).expect("reopen");
        assert_eq!(texts(reopened.fold()), ["kept"]);
    });
}

#[cfg(feature = "planted")]
#[test]
fn planted_j1_a_crash_mid_replacement_shows_a_mix() {
    let p = opts_with(Planted::only(BugId::J1));
    let (before, after) = replaced(Arc::new(MemStorage::new()), p.clone());
    let shown = shown_at_every_cut(&before, &after, p);
    assert!(shown.iter().any(|s| *s == ["new 1"]), "{shown:?}");
}

/// Appends another producer queues while a replacement runs; returns the journal's rows and
/// whether any record landed inside the transaction.
fn replace_with_arrival(opts: JournalOptions) -> (Vec<String>, bool) {
    let storage: SharedStorage = Arc::new(MemStorage::new());
    let mut j = Journal::create(storage.clone(), "j", opts.clone(), None).expect("create");
    j.append(Origin::Main, rows(&["before"])).expect("append");
    let inbox = j.inbox();
    let mut g = j.begin_replace(Origin::Main).expect("begin");
    inbox.submit(Origin::Subagent("s".into()), vec![sub_row("s", "arrived")]);
    g.push_rows(rows(&["restored"])).expect("rows");
    g.commit().expect("commit");
    let reopened = Journal::open(storage, "j", opts).expect("reopen");
    assert_eq!(texts(reopened.fold()), texts(j.fold()));
    (
        texts(reopened.fold()),
        !reopened.fold().interleaved().is_empty(),
    )
}

#[test]
fn j3_appends_queued_during_a_replacement_land_after_its_terminator() {
    let (shown, interleaved) = replace_with_arrival(opts());
    assert_eq!(shown, ["restored", "arrived"]);
    assert!(!interleaved);
}

#[cfg(feature = "planted")]
#[test]
fn planted_j3_an_append_lands_inside_the_replacement_and_is_lost() {
    let (shown, interleaved) = replace_with_arrival(opts_with(Planted::only(BugId::J3)));
    assert!(interleaved);
    assert_eq!(shown, ["restored"]);
}

/// Records each single-record shape wrote.
fn shape_records(opts: JournalOptions) -> [usize; 3] {
    let s: SharedStorage = Arc::new(MemStorage::new());
    let mut j = Journal::create(s, "j", opts, None).expect("create");
    j.append(Origin::Main, rows(&["a", "b", "c", "d", "e"]))
        .expect("append");
    let cut = j.suffix_cut(Origin::Main, 2).expect("cut").records;
    let compress = j
        .compress(Origin::Main, row("summary"), 2)
        .expect("compress")
        .records;
    let clear = j.clear(Origin::Main).expect("clear").records;
    assert!(j.rows().is_empty());
    [cut, compress, clear]
}

#[test]
fn j15_a_suffix_cut_a_clear_and_a_compression_are_one_record_each() {
    assert_eq!(shape_records(opts()), [1, 1, 1]);
}

#[cfg(feature = "planted")]
#[test]
fn planted_j15_compound_shapes_take_several_records() {
    let counts = shape_records(opts_with(Planted::only(BugId::J15)));
    assert!(counts.iter().all(|&n| n > 1), "{counts:?}");
}

/// Payload rows and bytes of every density record of a large density mutation.
fn density_shapes(opts: JournalOptions) -> Vec<(usize, usize)> {
    let s = Arc::new(MemStorage::new());
    let mut j = Journal::create(s.clone(), "j", opts, None).expect("create");
    let many: Vec<Row> = (0..300).map(|i| row(&format!("row {i}"))).collect();
    j.append(Origin::Main, many).expect("append");
    let removed: Vec<RowId> = (0..200).map(RowId).collect();
    let replacements: Vec<DensityReplacement> = (200..300)
        .map(|i| DensityReplacement {
            id: RowId(i),
            row: row(&"x".repeat(2_000)),
        })
        .collect();
    j.density_mutation(Origin::Main, &removed, &replacements)
        .expect("density");
    assert_eq!(j.rows().len(), 100);
    let reopened = Journal::open(s.clone(), "j", super::opts()).expect("reopen");
    assert_eq!(reopened.rows(), j.rows());
    dump_records(&s.bytes("j"))
        .map(|l| l.expect("good record"))
        .filter(|v| v["kind"] == "density_mutation")
        .map(|v| {
            let rows = v["removed"].as_array().map_or(0, Vec::len)
                + v["replacements"].as_array().map_or(0, Vec::len);
            (rows, v["frame_bytes"].as_u64().unwrap_or(0) as usize - 12)
        })
        .collect()
}

#[test]
fn j16_density_records_hold_at_most_64_rows_or_64_kib() {
    let shapes = density_shapes(opts());
    assert!(shapes.len() > 1);
    for (rows, bytes) in shapes {
        assert!(rows <= MAX_RECORD_ROWS, "{rows} rows");
        assert!(bytes <= MAX_RECORD_BYTES || rows == 1, "{bytes} bytes");
    }
}

#[cfg(feature = "planted")]
#[test]
fn planted_j16_one_unbounded_density_record() {
    let shapes = density_shapes(opts_with(Planted::only(BugId::J16)));
    assert_eq!(shapes.len(), 1);
    assert!(shapes[0].0 > MAX_RECORD_ROWS && shapes[0].1 > MAX_RECORD_BYTES);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever replacements commit, abort or are abandoned, a reopened journal equals the
    /// writer, on every storage.
    #[test]
    fn reopening_always_equals_the_writer(
        plan in proptest::collection::vec((0u8..4, 0usize..4), 1..16)
    ) {
        on_every_storage(|_, storage| {
            let mut j = Journal::create(storage.clone(), "j", opts(), None).expect("create");
            for (i, (kind, n)) in plan.iter().enumerate() {
                let new: Vec<Row> = (0..*n).map(|k| row(&format!("{i}.{k}"))).collect();
                match kind {
                    0 if !new.is_empty() => { j.append(Origin::Main, new).expect("append"); }
                    1 => { j.replace_all(Origin::Main, new).expect("replace"); }
                    2 => {
                        let mut g = j.begin_replace(Origin::Main).expect("begin");
                        g.push_rows(new).expect("rows");
                        g.abort().expect("abort");
                    }
                    _ => {
                        let mut g = j.begin_replace(Origin::Main).expect("begin");
                        g.push_rows(new).expect("rows");
                    }
                }
            }
            let reopened = Journal::open(storage, "j", opts()).expect("reopen");
            assert_eq!(reopened.rows(), j.rows());
            assert_eq!(reopened.fold().statistics(), j.fold().statistics());
        });
    }
}
