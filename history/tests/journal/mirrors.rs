//! Shared history, origins and mirrors (J7, J8, J9), and the cost of a mutation (J12).

use std::sync::Arc;

use history::journal::{CountsReads, FaultOp, Journal, MemStorage, Origin, RowId, SharedHistory};
#[cfg(feature = "planted")]
use history::{BugId, Planted};

use super::*;

fn sub() -> Origin {
    Origin::Subagent("s".into())
}

/// A shared history with mirrors for the main session and subagent `s`, holding m1, s1, m2.
fn shared(mem: &Arc<MemStorage>, o: &JournalOptions) -> SharedHistory {
    let mut h = SharedHistory::create(mem.clone(), "shared.journal", o.clone()).expect("create");
    h.attach_mirror(Origin::Main, "main.mirror")
        .expect("mirror");
    h.attach_mirror(sub(), "s.mirror").expect("mirror");
    h.append(Origin::Main, rows(&["m1"])).expect("append");
    h.append(sub(), vec![sub_row("s", "s1")]).expect("append");
    h.append(Origin::Main, rows(&["m2"])).expect("append");
    h
}

/// Every mirror holds exactly the primary's rows of its origin, in order.
fn mirrors_consistent(h: &SharedHistory) -> Result<(), String> {
    let primary = h.primary().rows();
    for (origin, m) in h.mirrors() {
        let want: Vec<Row> = primary
            .iter()
            .filter(|r| r.origin == *origin)
            .cloned()
            .collect();
        let got = m.journal().rows();
        if got != want {
            return Err(format!(
                "mirror {origin:?} holds {:?}, the primary's rows of its origin are {:?}",
                got.iter().map(text_of).collect::<Vec<_>>(),
                want.iter().map(text_of).collect::<Vec<_>>()
            ));
        }
    }
    Ok(())
}

fn rewinds(o: JournalOptions) -> Result<(), String> {
    let mem = Arc::new(MemStorage::new());
    let mut h = shared(&mem, &o);
    h.pop(Origin::Main).map_err(|e| e.to_string())?;
    mirrors_consistent(&h)?;
    h.append(sub(), vec![sub_row("s", "s2")])
        .map_err(|e| e.to_string())?;
    h.rewind(sub(), 2).map_err(|e| e.to_string())?;
    mirrors_consistent(&h)?;
    h.insert_after(Origin::Main, Some(RowId(0)), sub_row("s", "after m1"))
        .map_err(|e| e.to_string())?;
    h.compress(Origin::Main, row("summary"), 1)
        .map_err(|e| e.to_string())?;
    mirrors_consistent(&h)
}

#[test]
fn j7_a_rewind_applies_only_to_its_origins_mirror() {
    rewinds(opts()).expect("mirrors stay consistent");
}

#[cfg(feature = "planted")]
#[test]
fn planted_j7_a_rewind_over_removes_from_other_mirrors() {
    let err = rewinds(opts_with(Planted::only(BugId::J7))).expect_err("over-removal");
    assert!(err.contains("mirror"), "{err}");
}

fn resumed_then_appended(o: JournalOptions) -> Vec<String> {
    let mem = Arc::new(MemStorage::new());
    drop(shared(&mem, &o));
    let mut h = SharedHistory::resume(
        mem.clone(),
        "shared.journal",
        &["main.mirror", "s.mirror"],
        o,
    )
    .expect("resume");
    h.append(Origin::Main, rows(&["m3"])).expect("append");
    texts(h.mirror(&sub()).expect("mirror").journal().fold())
}

#[test]
fn j7_a_resumed_mirror_keeps_its_origin_filter() {
    assert_eq!(resumed_then_appended(opts()), ["s1"]);
}

#[cfg(feature = "planted")]
#[test]
fn planted_j7_a_resumed_mirror_receives_every_origin() {
    assert_eq!(
        resumed_then_appended(opts_with(Planted::only(BugId::J7))),
        ["m1", "s1", "m2", "m3"]
    );
}

/// Runs each of clear, pop, transform and restore while the subagent mirror cannot be written,
/// then attaches a late recorder for the main session. Returns, per mutation, the primary's rows
/// after the rollback and what the late recorder received.
fn failed_mutations(o: JournalOptions) -> Vec<(Vec<Row>, Vec<String>)> {
    let mut out = Vec::new();
    for kind in 0..4 {
        let mem = Arc::new(MemStorage::new());
        let mut h =
            SharedHistory::create(mem.clone(), "shared.journal", o.clone()).expect("create");
        h.attach_mirror(sub(), "s.mirror").expect("mirror");
        h.append(Origin::Main, rows(&["m1"])).expect("append");
        h.append(sub(), vec![sub_row("s", "s1")]).expect("append");
        let before = h.primary().rows();
        mem.fail("s.mirror", FaultOp::Append);
        let result = match kind {
            0 => h.clear(Origin::Main),
            1 => h.pop(Origin::Main),
            2 => h.transform(Origin::Main, RowId(1), sub_row("s", "s1 shorter")),
            _ => h.restore(Origin::Main, rows(&["restored"])),
        };
        assert!(result.is_err(), "mutation {kind} must fail");
        mem.clear_faults();
        assert_eq!(h.primary().rows().len(), before.len(), "mutation {kind}");
        h.attach_mirror(Origin::Main, "late.mirror")
            .expect("late recorder");
        h.append(Origin::Main, rows(&["m2"])).expect("append");
        mirrors_consistent(&h).expect("resynced");
        let late = texts(h.mirror(&Origin::Main).expect("late").journal().fold());
        out.push((h.primary().rows()[..2].to_vec(), late));
        assert_eq!(before.len(), 2);
    }
    out
}

#[test]
fn j8_a_rollback_puts_every_row_back_under_its_own_origin() {
    let expected = vec![row("m1"), sub_row("s", "s1")];
    for (primary, late) in failed_mutations(opts()) {
        assert_eq!(primary, expected);
        assert_eq!(
            late,
            ["m1", "m2"],
            "the main recorder receives main rows only"
        );
    }
}

#[cfg(feature = "planted")]
#[test]
fn planted_j8_a_rollback_loses_origins_and_a_late_recorder_gets_foreign_rows() {
    let results = failed_mutations(opts_with(Planted::only(BugId::J8)));
    assert!(results
        .iter()
        .any(|(_, late)| late.iter().any(|t| t == "s1")));
}

/// After every mutation resolves, compares each mirror's durable bytes with the primary.
fn durable_after_each_mutation(o: JournalOptions) -> Result<(), String> {
    let mem = Arc::new(MemStorage::new());
    let mut h = shared(&mem, &o);
    type Step = Box<dyn Fn(&mut SharedHistory) -> Result<(), String>>;
    let steps: Vec<Step> = vec![
        Box::new(|h| {
            h.append(sub(), vec![sub_row("s", "s2")])
                .map(|_| ())
                .map_err(|e| e.to_string())
        }),
        Box::new(|h| h.pop(Origin::Main).map(|_| ()).map_err(|e| e.to_string())),
        Box::new(|h| {
            h.restore(Origin::Main, vec![row("r"), sub_row("s", "rs")])
                .map(|_| ())
                .map_err(|e| e.to_string())
        }),
        Box::new(|h| h.clear(sub()).map(|_| ()).map_err(|e| e.to_string())),
    ];
    for step in steps {
        step(&mut h)?;
        let primary = h.primary().rows();
        for (origin, m) in h.mirrors() {
            let durable = mem.durable_bytes(m.journal().name());
            let crashed = Arc::new(MemStorage::with_file("m", &durable));
            let held = Journal::open(crashed, "m", o.clone())
                .map(|j| j.rows())
                .map_err(|e| e.to_string())?;
            let want: Vec<Row> = primary
                .iter()
                .filter(|r| r.origin == *origin)
                .cloned()
                .collect();
            if held != want {
                return Err(format!(
                    "mirror {origin:?} does not hold the mutation durably"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn j9_when_a_mutation_resolves_every_mirror_holds_it_durably() {
    durable_after_each_mutation(opts()).expect("durable");
}

#[cfg(feature = "planted")]
#[test]
fn planted_j9_mutations_resolve_before_the_mirrors_write() {
    assert!(durable_after_each_mutation(opts_with(Planted::only(BugId::J9))).is_err());
}

/// Bytes read from storage by turn 1 and by turn `turns` of a shared history.
fn bytes_read_per_turn(o: JournalOptions, turns: usize) -> (u64, u64) {
    let mem = Arc::new(MemStorage::new());
    let mut h = shared(&mem, &o);
    let mut first = 0;
    let mut last = 0;
    for turn in 1..=turns {
        mem.reset_read_counters();
        h.append(
            Origin::Main,
            rows(&[&format!("q{turn}"), &format!("a{turn}")]),
        )
        .expect("turn");
        if turn % 50 == 0 {
            h.pop(Origin::Main).expect("pop");
        }
        let read = mem.total_bytes_read();
        if turn == 1 {
            first = read;
        }
        last = read;
    }
    (first, last)
}

#[test]
fn j12_a_mutation_reads_nothing_back_however_long_the_journal() {
    assert_eq!(bytes_read_per_turn(opts(), 500), (0, 0));
}

#[cfg(feature = "planted")]
#[test]
fn planted_j12_every_mutation_rereads_the_whole_journal() {
    let (first, last) = bytes_read_per_turn(opts_with(Planted::only(BugId::J12)), 200);
    assert!(
        last > 20 * first.max(1),
        "turn 1 read {first} bytes, turn 200 read {last}"
    );
}
